"""End to end with separate processes: the installed ``red7`` executable, two users
(two data directories), a greedy bot, real worker processes and a real Redis.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from support import WorkerPool, wait_for

from red7es.service.redis_server import RedisServer

from .conftest import RED7

pytestmark = [pytest.mark.integration, pytest.mark.slow]


class User:
    """One person at their own terminal: their own RED7_HOME, the shared REDIS_URL."""

    def __init__(self, home: Path, url: str) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.home = home
        self.env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "NO_COLOR")}
        self.env.update(RED7_HOME=str(home), REDIS_URL=url)

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([str(RED7), *args], env=self.env, capture_output=True, text=True, timeout=60)
        if check:
            assert result.returncode == 0, (args, result.stdout, result.stderr)
            assert "Traceback" not in result.stderr
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "--json").stdout)


def test_two_people_and_a_bot_play_a_whole_game(tmp_path: Path, workers: Any, redis_server: RedisServer) -> None:
    workers.start(2)
    alice = User(tmp_path / "alice", redis_server.url)
    bob = User(tmp_path / "bob", redis_server.url)

    created = alice.json("new", "-p", "alice", "-p", "bob", "--bot", "greedy", "--seed", "e2e")
    game = created["game"]
    assert list(created["tokens"]) == ["alice"]
    joined = bob.json("join", game, "bob")
    assert joined["seat"] == "bob"
    # Each user's token is in their own private file only.
    assert json.loads((alice.home / "credentials.json").read_text())["games"][game] == created["tokens"]
    assert json.loads((bob.home / "credentials.json").read_text())["games"][game] == {"bob": joined["token"]}
    assert (alice.home / "credentials.json").stat().st_mode & 0o777 == 0o600

    people = {"alice": alice, "bob": bob}
    turns = {"alice": 0, "bob": 0}
    deadline = time.monotonic() + 120
    while True:
        assert time.monotonic() < deadline, "the game did not finish"
        view = alice.json("show", game)
        if view["status"] == "over":
            break
        mover = view["seats"][view["to_move"]]["name"] if view.get("to_move") is not None else None
        if mover not in people:
            # The bot's turn (or a deal): wait until the public view changes.
            version = view["version"]
            wait_for(lambda v=version: alice.json("show", game)["version"] != v, "the bot to move", timeout=30)
            continue
        user = people[mover]
        moves = user.json("moves", game)
        assert moves["seat"] == mover and moves["legal"], moves
        other = people["bob" if mover == "alice" else "alice"]
        assert other.json("moves", game, "--as", "bob" if mover == "alice" else "alice")["legal"] == []
        result = user.run("move", game, moves["legal"][0])
        assert result.stdout.startswith(f"{mover} "), result.stdout
        turns[mover] += 1

    assert turns["alice"] >= 1 and turns["bob"] >= 1
    final = bob.json("show", game, "--as", "bob")
    assert final["status"] == "over" and final["outcome"]["winners"]
    assert final["seed"], "the seed is revealed when the game is over"

    listed = next(g for g in alice.json("games") if g["game"] == game)
    assert listed["status"] == "over"
    assert listed["winners"] == final["outcome"]["winners"]
    winner = listed["seats"][listed["winners"][0]]["name"]
    table = alice.run("games").stdout
    row = next(line for line in table.splitlines() if line.startswith(game))
    assert f"won by {winner}" in row

    text = alice.run("show", game).stdout
    assert "Game over:" in text and winner in text
    assert "Seed revealed:" in text

    # After the end, turns are refused in one line, before anything is stored.
    late = alice.run("move", game, "fold", check=False)
    assert late.returncode == 1
    assert late.stderr == f"Error: game {game} is over\n"


def test_watch_gives_up_on_redis_after_its_timeout(tmp_path: Path, private_redis: Any) -> None:
    """watch waits for a lost Redis (saying so once) for --timeout seconds, then ends with the
    one-line error naming the URL (exit 1)."""
    server = private_redis()
    pool = WorkerPool(server.url, tmp_path, name="cli-worker")
    pool.start(1, wait=True)
    try:
        user = User(tmp_path / "u", server.url)
        game = user.json("new", "-p", "me", "-b", "greedy")["game"]
        watcher = subprocess.Popen(
            [str(RED7), "watch", game, "--timeout", "5"],
            env=user.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            connection = server.client()
            wait_for(
                lambda: any(c.get("cmd") == "xread" for c in connection.client_list()), "watch to block", timeout=30
            )
            connection.close()
            server.kill()
            started = time.monotonic()
            _out, err = watcher.communicate(timeout=60)
            waited = time.monotonic() - started
        finally:
            if watcher.poll() is None:
                watcher.kill()
                watcher.communicate()
        assert watcher.returncode == 1
        assert "Traceback" not in err
        waiting, error = err.splitlines()
        assert waiting == f"Redis at {server.url} is unreachable; waiting for it (Ctrl-C to stop).", err
        assert error.startswith(f"Error: lost the connection to Redis at {server.url}: "), err
        assert 4.5 < waited < 15, waited
    finally:
        pool.stop()


def test_watch_outlives_the_redis_read_timeout(tmp_path: Path, workers: Any, redis_server: RedisServer) -> None:
    """Waiting on a person who thinks for a while must not end watch (redis-py reads time out after 5 s)."""
    workers.start(1)
    user = User(tmp_path / "u", redis_server.url)
    game = user.json("new", "-p", "me", "-p", "you", "--seed", "slow")["game"]
    result = user.run("watch", game, "--json", "--timeout", "6")
    [line] = result.stdout.splitlines()  # the view it starts from, and no event: nobody moved
    assert json.loads(line)["type"] == "View"
    assert result.stderr.strip() == "No change for 6s; stopping."
