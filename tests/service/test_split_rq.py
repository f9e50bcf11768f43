"""RQ on its own Redis: games on one server, RQ's queues on another (how it scales out)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from click.testing import CliRunner

from red7es import Variant
from red7es.cli.main import cli
from red7es.service.client import GameService
from red7es.service.events import BOT, SeatSpec
from red7es.service.redis_server import RedisServer


@pytest.mark.integration
def test_games_and_rq_on_separate_servers(private_redis: Callable[..., RedisServer], tmp_path: Path) -> None:
    games_server, rq_server = private_redis(), private_redis()
    log = open(tmp_path / "serve.log", "wb")  # noqa: SIM115
    serve = subprocess.Popen(  # `red7 serve` hands --rq-url on to the workers it starts
        [sys.executable, "-m", "red7es.cli", "serve", "-w", "1", "--url", games_server.url, "--rq-url", rq_server.url],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=dict(os.environ, PYTHONUNBUFFERED="1", RED7_HOME=str(tmp_path)),
        cwd=tmp_path,
    )
    try:
        games = redis.Redis.from_url(games_server.url)
        service = GameService(games)
        created = service.create(
            Variant(2, rounds=2), [SeatSpec("a", BOT, "greedy"), SeatSpec("b", BOT, "random")], seed="split", wait=30
        )
        deadline = time.monotonic() + 60
        while service.store.meta(created.game_id).get("status") != "over":
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text(errors="replace")
            time.sleep(0.05)
        rq_keys = [k.decode() for k in redis.Redis.from_url(rq_server.url).keys("rq:*")]
        assert any(k.startswith("rq:queue:red7-shift-") or k.startswith("rq:worker") for k in rq_keys)
        assert not games.keys("rq:*"), "RQ wrote to the games' Redis"
        assert games.keys("red7:worker:*"), "the worker's heartbeat belongs with the games"
        rq = redis.Redis.from_url(rq_server.url)
        rq.rpush("rq:queue:red7", b"job-id")  # a job waiting on RQ's Redis, none on the games'
        status = ["status", "--url", games_server.url, "--json"]
        assert json.loads(CliRunner().invoke(cli, [*status, "--rq-url", rq_server.url]).stdout)["queued_jobs"] == 1
        assert json.loads(CliRunner().invoke(cli, status).stdout)["queued_jobs"] == 0
    finally:
        serve.terminate()  # stops its workers too
        serve.wait(30)
        log.close()
