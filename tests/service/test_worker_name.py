"""A named worker keeps its name for clients and healthchecks across a Redis restart."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from red7es.service.redis_server import RedisServer


def _alive(url: str, name: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_timeout=1).exists(f"red7:worker:{name}"))
    except redis.exceptions.ConnectionError:
        return False


def _wait(condition: Callable[[], bool], seconds: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}:\n{log.read_text()}"
        time.sleep(0.1)


@pytest.mark.integration
def test_named_worker_is_known_by_its_name_after_redis_restarts(
    private_redis: Callable[..., RedisServer], tmp_path: Path
) -> None:
    server = private_redis(appendonly=True, appendfsync="always")
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "red7es.cli", "worker", "--url", server.url, "--name", "box"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
    try:
        _wait(lambda: _alive(server.url, "box"), 30, "the worker's heartbeat", log)
        server.stop()
        server.start()
        # what `red7 status --worker box` (the compose healthcheck) looks for
        _wait(lambda: _alive(server.url, "box"), 60, "the heartbeat under the same name after the restart", log)
        assert worker.poll() is None
    finally:
        worker.terminate()
        worker.wait(15)
