"""The background worker the CLI starts must not import a red7es/ folder from the working directory."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import redis

from red7es.cli.session import live_workers, spawn_worker
from red7es.service.redis_server import RedisServer


def test_spawned_worker_ignores_a_red7es_folder_in_the_working_directory(
    redis_server: RedisServer, real_redis: redis.Redis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a user running the README's quick start from a checkout looks like: a red7es/
    # package in the working directory that has no cli/ (it is mapped from elsewhere).
    checkout = tmp_path / "checkout"
    (checkout / "red7es").mkdir(parents=True)
    (checkout / "red7es" / "__init__.py").write_text("")
    monkeypatch.chdir(checkout)
    monkeypatch.setenv("RED7_HOME", str(tmp_path / "home"))
    process = spawn_worker(redis_server.url, max_idle=60)
    try:
        deadline = time.monotonic() + 30
        while not live_workers(real_redis):
            log = (tmp_path / "home" / "worker.log").read_text() if (tmp_path / "home" / "worker.log").exists() else ""
            assert process.poll() is None, f"the worker exited: {log}"
            assert time.monotonic() < deadline, log
            time.sleep(0.05)
    finally:
        process.terminate()
        process.wait(15)
