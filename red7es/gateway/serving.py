"""How ``red7 gateway`` runs uvicorn: limits on slow and piled-up connections (slowloris).

uvicorn times out only an idle keep-alive connection: a client that sends half a
request line, or headers then fewer body bytes than its ``Content-Length``, held its
connection (and a task, and a file descriptor) for as long as it liked.  The gateway's
protocol gives each request :data:`REQUEST_TIMEOUT` seconds to arrive whole, headers and
body, from its connection's opening (or the end of the previous response); past that
the connection is closed.  Streams are unaffected: their request is whole at once, and
the time a response takes is not limited.

No client address may hold more than ``max_connections`` connections at once (64 by
default, ``red7 gateway --max-connections``), and the process no more than
:data:`LIMIT_CONCURRENCY`: without the first, one host holding 4,096 idle connections (and
opening them again as the deadline closes them) left every other client only 503s, so a
player could be kept from moving until its clock ran out.  A connection past either cap
is answered at once, one line of JSON (429 or 503), and closed; so are requests h11
cannot parse (uvicorn answered those in plain text) and a request line and headers over
:data:`MAX_INCOMPLETE` bytes, however many packets they came in (h11 alone counts only
what it buffers while a head is incomplete: 20 KiB of headers in one packet passed, and
so did any head behind another request in the same packet).  A peer
uvicorn trusts for ``X-Forwarded-For`` (``$FORWARDED_ALLOW_IPS``, loopback by default) is
a reverse proxy whose connections carry many clients: it has no per-address cap.  An
IPv6 client is counted by its /64, which one host gets whole.

It also writes a response's status line and headers in the same write as its first body
bytes (:class:`Coalescing`): uvicorn's h11 protocol writes them apart, so every answer
cost two ``send`` calls and two packets where one does (issue #17: on loopback a write
carries the delivery's cost too; a profile of the gateway under the bench's load had its
socket writes at a fifth of its CPU, half of them answers to HTTP clients).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import h11
from uvicorn.middleware.proxy_headers import _TrustedHosts
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from .settings import Limits

__all__ = [
    "Coalescing",
    "LIMIT_CONCURRENCY",
    "MAX_CONNECTIONS",
    "MAX_INCOMPLETE",
    "REQUEST_TIMEOUT",
    "TIMEOUT_KEEP_ALIVE",
    "uvicorn_options",
]

REQUEST_TIMEOUT = 10.0  # seconds for a whole request (headers and body) to arrive
TIMEOUT_KEEP_ALIVE = 5  # seconds an idle keep-alive connection is kept (uvicorn's default, made explicit)
MAX_INCOMPLETE = 16 * 1024  # bytes of a request line and headers h11 buffers before it refuses them (431/400)
LIMIT_CONCURRENCY = 4096  # connections at once, past which a new one is answered 503 (1,000 streams fit)
MAX_CONNECTIONS = Limits.connections  # connections at once from one client address (a browser opens 6, and streams)
# uvicorn's own cap on connections and tasks, a backstop past this module's (its 503 is plain text)
_UVICORN_LIMIT = LIMIT_CONCURRENCY + 64

# open connections per client address (or IPv6 /64), per running server
_OPEN: weakref.WeakKeyDictionary[ServerState, Counter[str]] = weakref.WeakKeyDictionary()


def address_key(host: str) -> str:
    """What connections are counted under: an IPv4 address (also written IPv4-mapped), an
    IPv6 address's /64, or the text as given when it is no address."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


_PROXIES: weakref.WeakKeyDictionary[Any, _TrustedHosts] = weakref.WeakKeyDictionary()


def _trusted_proxies(config: Any) -> _TrustedHosts:
    """The peers uvicorn takes ``X-Forwarded-For`` from (its ``forwarded_allow_ips``), as
    its ProxyHeadersMiddleware reads them (a private class of uvicorn's: the same answer
    for the same peer); one per server."""
    proxies = _PROXIES.get(config)
    if proxies is None:
        proxies = _PROXIES[config] = _TrustedHosts(config.forwarded_allow_ips)
    return proxies


def head_size(request: h11.Request) -> int:
    """The bytes of a request's line and headers as sent (CRLF line ends)."""
    line = len(request.method) + len(request.target) + len(request.http_version) + 9
    return line + sum(len(name) + len(value) + 4 for name, value in request.headers) + 2


def refusal(status: int, reason: str, message: str) -> bytes:
    """A whole HTTP/1.1 response, one line of JSON, that closes its connection: written
    before any request when a connection is refused (h11 sends a response only to one)."""
    body = json.dumps({"error": message}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class Coalescing(asyncio.Transport):
    """A transport that, while :meth:`hold` is in effect, keeps what is written and sends
    it with the next write after :meth:`release` (or at close): one ``send`` for a
    response's head and its body.  Everything else goes to the real transport."""

    def __init__(self, transport: asyncio.Transport) -> None:
        super().__init__()
        self.real = transport
        self._held = bytearray()
        self._holding = False

    def hold(self) -> None:
        self._holding = True

    def release(self) -> None:
        self._holding = False

    def _flush(self) -> None:
        if self._held:
            data, self._held = bytes(self._held), bytearray()
            self.real.write(data)

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._holding:
            self._held += data
        elif self._held:
            self._held += data
            self._flush()
        elif data:
            self.real.write(data)

    def writelines(self, list_of_data: Any) -> None:
        self.write(b"".join(list_of_data))

    def close(self) -> None:
        self._holding = False
        self._flush()
        self.real.close()

    def abort(self) -> None:
        self.real.abort()

    def is_closing(self) -> bool:
        return self.real.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.real.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self.real.pause_reading()

    def resume_reading(self) -> None:
        self.real.resume_reading()

    def is_reading(self) -> bool:
        return self.real.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.real.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self.real.get_protocol()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self.real.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        return self.real.get_write_buffer_size() + len(self._held)

    def can_write_eof(self) -> bool:
        return self.real.can_write_eof()

    def write_eof(self) -> None:
        self._flush()
        self.real.write_eof()


class RequestDeadline(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request does not arrive whole
    within ``request_timeout`` seconds, refusing connections past the caps, and answering
    what it cannot parse in JSON."""

    request_timeout = REQUEST_TIMEOUT
    max_connections = MAX_CONNECTIONS  # per client address; 0: no cap
    open_cap = LIMIT_CONCURRENCY

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._counted: str | None = None  # the address key this connection is counted under
        self._proxies = _trusted_proxies(self.config)
        self._head_too_large = False
        parse = self.conn.next_event

        def next_event() -> Any:
            # Every request's head is measured whole as h11 hands it over: h11 itself
            # limits only what it buffers while a head is incomplete, so a head that came
            # in one packet, or behind another request in the same packet, was not.
            event = parse()
            if isinstance(event, h11.Request) and head_size(event) > MAX_INCOMPLETE:
                self._head_too_large = True
                raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
            return event

        self.conn.next_event = next_event  # type: ignore[method-assign]

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._coalescing = Coalescing(transport)
        super().connection_made(self._coalescing)
        if len(self.connections) > self.open_cap:
            full = f"the gateway is full ({self.open_cap:,} connections): try again shortly"
            self._refuse(503, "Service Unavailable", full)
            return
        host = self.client[0] if self.client else None
        if host is not None and self.max_connections and host not in self._proxies:
            counts = _OPEN.setdefault(self.server_state, Counter())
            key = address_key(host)
            if counts[key] >= self.max_connections:
                self._refuse(
                    429,
                    "Too Many Requests",
                    f"too many connections from this address: at most {self.max_connections} at once",
                )
                return
            counts[key] += 1
            self._counted = key
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._uncount()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        # (only with a ws protocol configured, which red7 gateway's options do not: the
        # connection goes to another protocol object, and this one hears no more of it)
        self._disarm()
        self._uncount()
        super().handle_websocket_upgrade(event)

    def _uncount(self) -> None:
        """Take this connection off its address's count (once)."""
        if self._counted is not None:
            counts = _OPEN.get(self.server_state)
            if counts is not None:
                counts[self._counted] -= 1
                if counts[self._counted] <= 0:
                    del counts[self._counted]
            self._counted = None

    def _refuse(self, status: int, reason: str, message: str) -> None:
        """Answer ``status`` with ``message`` at once and close: no request of this connection is read."""
        self.transport.pause_reading()
        self.transport.write(refusal(status, reason, message))
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """What h11 cannot parse (a garbled request line, a bad ``Content-Length``), and a
        request line and headers over MAX_INCOMPLETE bytes: JSON, as every error (uvicorn's
        was plain text, and 400 for both). Mid-response (a bad chunk of a body sent while
        the answer streams) nothing more can be said: the connection is closed."""
        if self.conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            self.transport.close()
        elif self._head_too_large or len(self.conn.trailing_data[0]) > MAX_INCOMPLETE:
            too_large = f"request line and headers over {MAX_INCOMPLETE:,} bytes"
            self._refuse(431, "Request Header Fields Too Large", too_large)
        else:
            self._refuse(400, "Bad Request", "malformed HTTP request")

    def handle_events(self) -> None:
        super().handle_events()
        cycle = self.cycle
        if cycle is not None and "send" not in vars(cycle):  # a new request's (its task has not run yet)
            cycle.send = self._coalesced(cycle.send)  # type: ignore[method-assign,assignment]
        if self.conn.their_state is not h11.IDLE and self.conn.their_state is not h11.SEND_BODY:
            self._disarm()  # the request is whole (or the connection is ending): no deadline

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection gets its own time

    def _coalesced(self, send: Callable[[Any], Awaitable[None]]) -> Callable[[Any], Awaitable[None]]:
        """A request's ASGI ``send`` that holds the response's head for its first body write."""
        transport = self._coalescing

        async def coalesced(message: Any) -> None:
            if message["type"] != "http.response.start":
                await send(message)
                return
            transport.hold()
            try:
                await send(message)
            finally:
                transport.release()

        return coalesced

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
            self.transport.close()


def uvicorn_options(request_timeout: float = REQUEST_TIMEOUT, max_connections: int = MAX_CONNECTIONS) -> dict[str, Any]:
    """The keyword arguments ``red7 gateway`` gives ``uvicorn.run`` (and the tests' gateways)."""

    class Protocol(RequestDeadline):
        pass

    Protocol.request_timeout = request_timeout
    Protocol.max_connections = max_connections
    return {
        "http": Protocol,
        # No WebSocket (the API has none): an upgrade hands the connection to another
        # protocol object, so this one's count of its address would never be taken back.
        "ws": "none",
        "limit_concurrency": _UVICORN_LIMIT,
        "timeout_keep_alive": TIMEOUT_KEEP_ALIVE,
        "h11_max_incomplete_event_size": MAX_INCOMPLETE,
    }
