"""The README's Redis ACL for players: they play through ``red7`` as usual, but cannot reach
RQ's keys or channels, so cannot run code on the workers (``Queue(...).enqueue("os.system",
...)`` ran as the worker's user with the operator's URL), nor run the commands an operator
keeps (CONFIG, FLUSHALL, INFO). Real Redis 7, real worker on the operator's URL.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from click.testing import CliRunner
from rq import Queue
from support import WorkerPool, wait_for

from red7es.cli.main import cli
from red7es.service.redis_server import RedisServer

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[2] / "README.md"
PASSWORD = "player-pw"


def documented_acl() -> list[str]:
    """The arguments of the README's ``ACL SETUSER player ...`` line, with its password."""
    found = re.search(r"^\s*redis-cli .*?(ACL SETUSER player .*)$", README.read_text(encoding="utf-8"), re.M)
    assert found, "README.md shows the player ACL as a redis-cli line"
    return [word.replace("PASSWORD", PASSWORD) for word in shlex.split(found.group(1))]


def send(connection: redis.Redis, *args: str) -> object:
    """One raw command (redis-py leaves ``execute_command`` unannotated)."""
    return connection.execute_command(*args)  # type: ignore[no-untyped-call]


def test_a_player_with_the_readme_acl_plays_but_cannot_reach_rq(
    private_redis: Callable[..., RedisServer], tmp_path: Path
) -> None:
    server = private_redis()
    operator = redis.Redis.from_url(server.url)
    send(operator, *documented_acl())
    player_url = server.url.replace("redis://", f"redis://player:{PASSWORD}@")
    pool = WorkerPool(server.url, tmp_path, name="acl-worker")
    pool.start(1, wait=True)
    env = {"REDIS_URL": player_url, "RED7_HOME": str(tmp_path / "player"), "NO_COLOR": "1"}

    def red7(*args: str) -> str:
        result = CliRunner().invoke(cli, list(args), env=env, prog_name="red7")
        assert result.exit_code == 0, (args, result.output)
        return result.stdout

    try:
        game = json.loads(red7("new", "-p", "alice", "--bot", "greedy", "--json"))["game"]
        mine = wait_for(
            lambda: (view := json.loads(red7("moves", game, "--json")))["legal"] and view,
            "alice's turn",
            timeout=30,
        )
        red7("move", game, mine["legal"][0])
        assert json.loads(red7("show", game, "--json"))["version"] > 0
        player = redis.Redis.from_url(player_url)
        shift_queue = operator.smembers("rq:queues")
        with pytest.raises(redis.exceptions.NoPermissionError):
            Queue("red7-shift-x", connection=player).enqueue("os.system", "id > owned.txt")
        for command in (
            ("SET", "rq:job:x", "1"),
            ("LPUSH", "rq:queue:red7-shift-x", "x"),
            ("PUBLISH", "rq:pubsub:x", '{"command": "shutdown"}'),  # RQ's commands to its workers
            ("EVAL", "return redis.call('SET', 'rq:job:x', '1')", "0"),  # nor from inside a script
            ("CONFIG", "SET", "dir", "/tmp"),
            ("FLUSHALL",),
        ):
            with pytest.raises(redis.exceptions.ResponseError, match=r"no permissions|can't access"):
                send(player, *command)
        assert operator.smembers("rq:queues") == shift_queue and not operator.exists("rq:job:x")
        player.close()
    finally:
        pool.stop()
        operator.close()
