"""How ``red7 gateway`` runs uvicorn: limits on slow and piled-up connections (slowloris).

uvicorn times out only an idle keep-alive connection: a client that sends half a
request line, or headers then fewer body bytes than its ``Content-Length``, held its
connection (and a task, and a file descriptor) for as long as it liked.  The gateway's
protocol gives each request :data:`REQUEST_TIMEOUT` seconds to arrive whole, headers and
body, from its connection's opening (or the end of the previous response); past that
the connection is closed.  Streams are unaffected: their request is whole at once, and
the time a response takes is not limited.

It also writes a response's status line and headers in the same write as its first body
bytes (:class:`Coalescing`): uvicorn's h11 protocol writes them apart, so every answer
cost two ``send`` calls and two packets where one does (issue #17: on loopback a write
carries the delivery's cost too; a profile of the gateway under the bench's load had its
socket writes at a fifth of its CPU, half of them answers to HTTP clients).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "Coalescing",
    "LIMIT_CONCURRENCY",
    "MAX_INCOMPLETE",
    "REQUEST_TIMEOUT",
    "TIMEOUT_KEEP_ALIVE",
    "uvicorn_options",
]

REQUEST_TIMEOUT = 10.0  # seconds for a whole request (headers and body) to arrive
TIMEOUT_KEEP_ALIVE = 5  # seconds an idle keep-alive connection is kept (uvicorn's default, made explicit)
MAX_INCOMPLETE = 16 * 1024  # bytes of a request line and headers h11 buffers before it refuses them (431/400)
LIMIT_CONCURRENCY = 4096  # connections and tasks at once, past which uvicorn answers 503 (1,000 streams fit)


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
    within ``request_timeout`` seconds."""

    request_timeout = REQUEST_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._coalescing = Coalescing(transport)
        super().connection_made(self._coalescing)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

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


def uvicorn_options(request_timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
    """The keyword arguments ``red7 gateway`` gives ``uvicorn.run`` (and the tests' gateways)."""

    class Protocol(RequestDeadline):
        pass

    Protocol.request_timeout = request_timeout
    return {
        "http": Protocol,
        "limit_concurrency": LIMIT_CONCURRENCY,
        "timeout_keep_alive": TIMEOUT_KEEP_ALIVE,
        "h11_max_incomplete_event_size": MAX_INCOMPLETE,
    }
