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
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "red7es.cli", "worker", "--url", server.url, "--name", "box"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
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
