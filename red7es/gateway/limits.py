"""Rate limits per client and per seat, and a cap on each client's open streams.

Any number of gateway processes may serve one Redis behind a load balancer, so the
request counters live in Redis, not in a process: a fixed window per key, counted by
one Lua call (``INCR``, and ``PEXPIRE`` on the window's first request) under
``red7:gateway:rate:*``.  A client is its remote address (as uvicorn sees it: behind a
reverse proxy on loopback, the ``X-Forwarded-For`` it sets); a seat is a game's seat,
counted only once a request has proved it comes from the seat's token, so nobody else
can use up a seat's allowance.  Over a limit: 429, ``{"error": ...}`` and
``Retry-After`` (the seconds left in the window).

Open streams are counted per process, in memory (a stream lives in one process, and
its count dies with it): a load balancer spreading one client over N processes lets
it hold up to N times the cap.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from typing import Any

import redis.asyncio as aioredis
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from red7es.service.store import OverLimit, RateGuard

from .errors import GatewayError, error_response
from .settings import Limits

__all__ = ["Limits", "Limiter", "RateLimit", "ClientRate", "PREFIX", "client_address", "too_many"]

log = logging.getLogger(__name__)

PREFIX = "red7:gateway:rate:"

# KEYS: the counters to bump; ARGV[1]: the window in ms.  Returns, per key, its count
# in this window and the ms left in it.  A counter left without an expiry (written by
# hand, or a crash between the two calls, which a script cannot have) gets one here.
_COUNT = """
local out = {}
for i, key in ipairs(KEYS) do
  local n = redis.call('INCR', key)
  local left = redis.call('PTTL', key)
  if n == 1 or left < 0 then
    redis.call('PEXPIRE', key, ARGV[1])
    left = tonumber(ARGV[1])
  end
  out[#out + 1] = n
  out[#out + 1] = left
end
return out
"""


class RateLimit(GatewayError):
    """429: over a limit, with the seconds to wait."""

    def __init__(self, message: str, retry_after: int | None) -> None:
        super().__init__(429, message)
        self.retry_after = retry_after


class Limiter:
    """Counts requests in Redis and open streams in this process."""

    def __init__(self, redis: aioredis.Redis, limits: Limits) -> None:
        self.redis = redis
        self.limits = limits
        self._count = redis.register_script(_COUNT)
        self._streams: Counter[str] = Counter()

    async def client(self, address: str) -> None:
        """Count one request from ``address``; :class:`RateLimit` past ``limits.rate``."""
        await self._bump(f"{PREFIX}client:{address}", self.limits.rate, "requests from this address")

    async def seat(self, game_id: str, seat: int) -> None:
        """Count one request of a seat (signed by its token); :class:`RateLimit` past ``limits.seat_rate``."""
        await self._bump(seat_key(game_id, seat), self.limits.seat_rate, _seat_requests(seat))

    def seat_guard(self, game_id: str, seat: int) -> RateGuard | None:
        """A seat's count for a signed turn's append to make (``submit.lua`` counts it and
        refuses the turn past the limit: one round trip for both, issue #17); None when
        the limit is off.  :meth:`over` words its refusal."""
        if self.limits.seat_rate <= 0:
            return None
        return RateGuard(seat_key(game_id, seat), self.limits.seat_rate, self._window_ms())

    def over(self, seat: int, refused: OverLimit) -> RateLimit:
        """The 429 of a turn its append refused past the seat's limit."""
        return self._refusal(self.limits.seat_rate, _seat_requests(seat), refused.left_ms)

    async def create(self, address: str) -> None:
        """Count one game creation from ``address``; :class:`RateLimit` past ``limits.create``."""
        await self._bump(f"{PREFIX}create:{address}", self.limits.create, "games created from this address")

    def _window_ms(self) -> int:
        return max(1, int(self.limits.window * 1000))

    async def _bump(self, key: str, limit: int, what: str) -> None:
        if limit <= 0:
            return
        reply: Any = await self._count(keys=[key], args=[self._window_ms()])
        count, left_ms = int(reply[0]), int(reply[1])
        if count > limit:
            raise self._refusal(limit, what, left_ms)

    def _refusal(self, limit: int, what: str, left_ms: int) -> RateLimit:
        seconds = max(1, math.ceil(left_ms / 1000))
        window = f"{self.limits.window:g}"
        return RateLimit(f"too many {what}: at most {limit} in {window} s; try again in {seconds} s", seconds)

    def open_stream(self, address: str) -> None:
        """Count a stream opening; :class:`RateLimit` (no Retry-After) past ``limits.streams``."""
        cap = self.limits.streams
        if cap > 0 and self._streams[address] >= cap:
            raise RateLimit(f"too many open streams from this address: at most {cap}; close one first", None)
        self._streams[address] += 1

    def close_stream(self, address: str) -> None:
        self._streams[address] -= 1
        if self._streams[address] <= 0:
            del self._streams[address]

    def open_streams(self, address: str) -> int:
        return self._streams[address]


def seat_key(game_id: str, seat: int) -> str:
    """A seat's counter, in its game's slot ({G}) so that ``submit.lua`` may count it."""
    return f"{PREFIX}seat:{{{game_id}}}:{seat}"


def _seat_requests(seat: int) -> str:
    return f"requests for seat {seat}"


def client_address(scope: Scope) -> str:
    """The client's address as the server saw it (``-`` when it has none: a Unix socket)."""
    client = scope.get("client")
    return str(client[0]) if client else "-"


class ClientRate:
    """ASGI middleware: count every HTTP request against its client address's limit,
    before its body is read; 429 past it (or 503 when Redis cannot count it)."""

    def __init__(self, app: ASGIApp, limiter: Limiter) -> None:
        self.app = app
        self.limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.limiter.limits.rate > 0:
            try:
                await self.limiter.client(client_address(scope))
            except RateLimit as exc:
                await too_many(exc)(scope, receive, send)
                return
            except Exception as exc:  # Redis down or refusing: one line, as every other route says it
                log.warning("gateway: cannot count a request: %s", exc)
                await error_response(503, "Redis is unavailable: try again shortly")(scope, receive, send)
                return
        await self.app(scope, receive, send)


def too_many(exc: RateLimit) -> JSONResponse:
    """The 429 response of ``exc``, with ``Retry-After`` when it has one."""
    response = error_response(429, exc.message)
    if exc.retry_after is not None:
        response.headers["Retry-After"] = str(exc.retry_after)
    return response
