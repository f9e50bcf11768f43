"""``red7 audit --all`` audits every game, whatever one of them holds (issue 24, point 12).

``DEL red7:{G}:log`` of one finished game stopped it at that game ("Error: game G has no
log yet") and no other game was audited.  Now each game that cannot be read as a record
fails on its own line, check ``unreadable``, and the others are audited as usual.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import redis
from click.testing import CliRunner, Result

from red7es.cli.main import cli
from red7es.service.redis_server import RedisServer
from red7es.service.store import Keys
from red7es.variant import Variant

from .conftest import Games


@pytest.fixture
def served(real_redis: redis.Redis, redis_server: RedisServer) -> Iterator[tuple[Games, str]]:
    yield Games(real_redis), redis_server.url


def _audit_all(url: str, *more: str) -> Result:
    env = {"REDIS_URL": url, "NO_COLOR": "1"}
    return CliRunner().invoke(cli, ["audit", "--all", "--url", url, *more], env=env, catch_exceptions=False)


def test_audit_all_reports_each_game_it_cannot_read_and_audits_the_others(served: tuple[Games, str]) -> None:
    games, url = served
    for game in ("a0", "a1", "a2", "a3"):
        games.bots(game, Variant(2), ("random",))
    r = games.connection
    version = r.hget(Keys("a1").meta, "version")
    assert version is not None and r.delete(Keys("a1").log) == 1  # a finished game's log, deleted
    r.delete(Keys("a2").meta)
    r.set(Keys("a2").meta, "not a hash")  # a meta of another type: its status cannot be read
    result = _audit_all(url)
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert len(lines) == 3, result.output
    assert lines[0] == (
        f"FAIL a1: record: unreadable: game a1 has no log, although its meta counts {version.decode()} events; "
        "expected a game as workers store it, found a key that cannot be read"
    )
    assert lines[1].startswith("FAIL a2: record: unreadable: Redis refused a command: ")
    assert "(HGETALL red7:{a2}:meta)" in lines[1] and "WRONGTYPE" in lines[1]  # the key, and why
    assert lines[2] == "Audited 4 games: 2 passed, 2 failed, 0 incomplete."
    summary = json.loads(_audit_all(url, "--json").stdout)
    assert (summary["audited"], summary["passed"], summary["failed"]) == (4, 2, 2)
    assert [(g["game"], g["result"]) for g in summary["games"]] == [
        ("a0", "pass"),
        ("a1", "fail"),
        ("a2", "fail"),
        ("a3", "pass"),
    ]
    assert {g["divergence"]["check"] for g in summary["games"] if g["divergence"]} == {"unreadable"}
