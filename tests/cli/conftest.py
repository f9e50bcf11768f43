"""Fixtures for the ``red7`` CLI tests.

Every test runs with ``RED7_HOME`` in a temporary directory (so the user's data
directory and credentials are never touched) and with ``REDIS_URL`` pointing at the
session's private test Redis (so the embedded server is never started by accident).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from support import Gateway, Red7, WorkerPool

from red7es.gateway.settings import Limits
from red7es.service.redis_server import RedisServer, free_port

RED7 = Path(sys.executable).with_name("red7")


@pytest.fixture(scope="module")
def service_url(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The test Redis, flushed, with two real worker processes for this module's tests."""
    connection = redis.Redis.from_url(redis_server.url)
    connection.flushall()
    connection.close()
    pool = WorkerPool(redis_server.url, tmp_path_factory.mktemp("cli-workers"), name="cli-worker")
    pool.start(2, wait=True)
    yield redis_server.url
    pool.stop()


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never the user's data directory, never the embedded Redis by accident.

    RED7_HOME is a temporary directory, and REDIS_URL points at a closed port unless a
    test sets it (a command that forgot --url fails fast instead of starting Redis).
    """
    monkeypatch.setenv("RED7_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.fixture
def homes(tmp_path: Path) -> Callable[[str], Path]:
    """Data directories of separate users (one RED7_HOME each)."""

    def home(user: str) -> Path:
        path = tmp_path / f"home-{user}"
        path.mkdir(exist_ok=True)
        return path

    return home


@pytest.fixture
def cli_gateway(service_url: str) -> Iterator[Gateway]:
    """A gateway in front of the module's Redis and workers, for one test over HTTP (none
    outlives it: tests on Redis count the clients blocked reading it)."""
    served = Gateway(service_url, heartbeat=0.5, limits=Limits.off())
    yield served
    served.stop()


@pytest.fixture
def transport(request: pytest.FixtureRequest) -> str:
    """How ``alice`` and ``bob`` reach games: "redis", or "http" through a gateway for the
    tests marked :data:`BOTH_TRANSPORTS` (red7 --url http://...; docs/gateway.md)."""
    return str(getattr(request, "param", "redis"))


@pytest.fixture
def player_url(transport: str, service_url: str, request: pytest.FixtureRequest) -> str:
    if transport == "http":
        gateway: Gateway = request.getfixturevalue("cli_gateway")
        return gateway.base
    return service_url


@pytest.fixture
def alice(player_url: str, service_url: str, homes: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch) -> Red7:
    monkeypatch.setenv("REDIS_URL", player_url)
    return Red7(player_url, homes("alice"), behind=service_url)


@pytest.fixture
def bob(player_url: str, service_url: str, homes: Callable[[str], Path]) -> Red7:
    return Red7(player_url, homes("bob"), behind=service_url)


# A test that runs as it is on Redis and again over the HTTP gateway (alice and bob then
# hold no Redis URL at all): the same commands, the same output and exit codes.
BOTH_TRANSPORTS = pytest.mark.parametrize("transport", ["redis", "http"], indirect=True)
