"""How ``red7 gateway`` runs uvicorn: limits on slow and piled-up connections (slowloris).

uvicorn times out only an idle keep-alive connection: a client that sends half a
request line, or headers then fewer body bytes than its ``Content-Length``, held its
connection (and a task, and a file descriptor) for as long as it liked.  The gateway's
protocol gives each request :data:`REQUEST_TIMEOUT` seconds to arrive whole, headers and
body, from its connection's opening (or the end of the previous response); past that
the connection is closed.  Streams are unaffected: their request is whole at once, and
the time a response takes is not limited.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["LIMIT_CONCURRENCY", "MAX_INCOMPLETE", "REQUEST_TIMEOUT", "TIMEOUT_KEEP_ALIVE", "uvicorn_options"]

REQUEST_TIMEOUT = 10.0  # seconds for a whole request (headers and body) to arrive
TIMEOUT_KEEP_ALIVE = 5  # seconds an idle keep-alive connection is kept (uvicorn's default, made explicit)
MAX_INCOMPLETE = 16 * 1024  # bytes of a request line and headers h11 buffers before it refuses them (431/400)
LIMIT_CONCURRENCY = 4096  # connections and tasks at once, past which uvicorn answers 503 (1,000 streams fit)


class RequestDeadline(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request does not arrive whole
    within ``request_timeout`` seconds."""

    request_timeout = REQUEST_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE and self.conn.their_state is not h11.SEND_BODY:
            self._disarm()  # the request is whole (or the connection is ending): no deadline

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection gets its own time

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
