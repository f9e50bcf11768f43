"""A named worker keeps its name for clients and healthchecks across a Redis restart."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from support import wait_for

from red7es.service.redis_server import RedisServer


def _alive(url: str, name: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_timeout=1).exists(f"red7:worker:{name}"))
    except redis.exceptions.ConnectionError:
        return False


@pytest.mark.integration
def test_named_worker_is_known_by_its_name_after_redis_restarts(
    private_redis: Callable[..., RedisServer], tmp_path: Path
) -> None:
    server = private_redis(appendonly=True, appendfsync="always")
    worker = _worker(server.url, "box", tmp_path / "worker.log")
    try:
        wait_for(lambda: _alive(server.url, "box"), "the worker's heartbeat", timeout=30, every=0.1)
        server.stop()
        server.start()
        # what `red7 status --worker box` (the compose healthcheck) looks for
        wait_for(
            lambda: _alive(server.url, "box"),
            "the heartbeat under the same name after the restart",
            timeout=60,
            every=0.1,
        )
        assert worker.poll() is None
    finally:
        worker.terminate()
        worker.wait(15)


def _worker(url: str, name: str, log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "red7es.cli", "worker", "--url", url, "--name", name],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )


@pytest.mark.integration
def test_a_worker_killed_with_sigkill_restarts_under_its_name(
    private_redis: Callable[..., RedisServer], tmp_path: Path
) -> None:
    """Its RQ registration outlives it (by up to an hour when it died in a shift), and RQ
    refused a new worker of that name with a traceback: docker-compose's restart of the
    container (--name is the hostname) failed for as long."""
    server = private_redis()
    first = _worker(server.url, "box", tmp_path / "first.log")
    try:
        wait_for(lambda: _alive(server.url, "box"), "the first worker's heartbeat", timeout=30, every=0.1)
    finally:
        first.kill()
        first.wait(15)
    assert redis.Redis.from_url(server.url).ttl("rq:worker:box") > 60, "RQ still lists the killed worker"
    wait_for(lambda: not _alive(server.url, "box"), "the killed worker's heartbeat to lapse", timeout=10, every=0.1)
    second = _worker(server.url, "box", tmp_path / "second.log")
    try:
        wait_for(lambda: _alive(server.url, "box"), "the restarted worker's heartbeat", timeout=30, every=0.1)
        assert second.poll() is None
        log = (tmp_path / "second.log").read_text()
        assert "RQ still lists a worker named box: registering with RQ as box-" in log and "Traceback" not in log
    finally:
        second.terminate()
        second.wait(15)
