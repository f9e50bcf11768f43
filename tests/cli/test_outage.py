"""``watch`` and ``play`` ride out a Redis restart (append-only: nothing is lost) and carry on.

Each test runs its own Redis with AOF and a worker, stops that Redis while the client
follows the game and starts it again on the same directory and port.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest
from support import WorkerPool, wait_for

from red7es.service.redis_server import RedisServer

from .test_e2e import User
from .test_play_pty import PROMPT, Transcript, spawn

pytestmark = [pytest.mark.integration, pytest.mark.slow]

WAITING = "is unreachable; waiting for it (Ctrl-C to stop)."
BACK = "is back; carrying on."


@pytest.fixture
def served(tmp_path: Path, private_redis: Callable[..., RedisServer]) -> Iterator[RedisServer]:
    """A private Redis with append-only persistence, and a worker on it."""
    server = private_redis(appendonly=True)
    (tmp_path / "workers").mkdir()
    pool = WorkerPool(server.url, tmp_path / "workers", name="outage")
    pool.start(1, wait=True)
    yield server
    pool.stop()


def _blocked_on_xread(server: RedisServer) -> None:
    connection = server.client()
    try:
        wait_for(lambda: any(c.get("cmd") == "xread" for c in connection.client_list()), "the client to block")
    finally:
        connection.close()


def _rode_it_out(t: Transcript) -> None:
    """The client ended as asked (exit 0), having said once that Redis was gone and once that it was back."""
    assert t.child.exitstatus == 0, t.plain
    assert t.plain.count(WAITING) == 1 and t.plain.count(BACK) == 1, t.plain
    assert "Traceback" not in t.plain and "Error" not in t.plain


def test_watch_rides_out_a_redis_restart(tmp_path: Path, served: RedisServer) -> None:
    user = User(tmp_path / "u", served.url)
    game = user.json("new", "-p", "me", "-b", "greedy", "--seed", "outage")["game"]
    child = spawn(user.home, served.url, "watch", game, "--as", "me", no_color=True)
    t = Transcript(child)
    try:
        t.expect("Your hand:")
        _blocked_on_xread(served)
        served.stop()
        t.expect(re.escape(f"Redis at {served.url} {WAITING}"))
        served.start()
        t.expect(re.escape(f"Redis at {served.url} {BACK}"))
        legal = user.json("moves", game)["legal"]
        user.run("move", game, legal[0])
        t.expect(r"me (plays|discards|folds)")  # the move made after the restart
        t.expect(r"greedy (plays|discards|folds)")  # and the worker's bot, reconnected too
        # What watch said on stderr meanwhile is above the live table, which is still one board.
        t.until(lambda: t.visible.count("Rule: ") == 1 and BACK in t.visible, "one board, the notices above it")
        assert t.visible.index(BACK) < t.visible.index("Rule: "), t.visible
        child.sendintr()
        t.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    _rode_it_out(t)


def test_ctrl_c_while_watch_waits_for_redis(tmp_path: Path, served: RedisServer) -> None:
    user = User(tmp_path / "u", served.url)
    game = user.json("new", "-p", "me", "-b", "greedy")["game"]
    child = spawn(tmp_path / "w", served.url, "watch", game)
    t = Transcript(child)
    try:
        t.expect("Rule:")
        _blocked_on_xread(served)
        served.stop()
        t.expect(re.escape(WAITING))
        child.sendintr()
        t.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, t.plain  # Ctrl-C is how watch ends
    assert "Traceback" not in t.plain and "Error" not in t.plain


def _playing(tmp_path: Path, server: RedisServer) -> tuple[pexpect.spawn, Transcript, str]:
    child = spawn(tmp_path, server.url, "play", "--bots", "greedy", "--name", "ann", "--seed", "outage")
    t = Transcript(child)
    t.expect(r"New game ([0-9a-f]{8})")
    game: str = child.match.group(1)
    t.expect(PROMPT)
    return child, t, game


def test_play_rides_out_a_redis_restart(tmp_path: Path, served: RedisServer) -> None:
    """The turn sent while Redis is down is not played; what is typed during the wait is
    dropped; once Redis is back the seat's view is shown again and the game goes on."""
    child, t, game = _playing(tmp_path, served)
    try:
        served.stop()
        child.sendline("fold")  # Redis is down: not stored
        t.expect(re.escape(f"Redis at {served.url} {WAITING}"))
        child.sendline("fold")  # typed during the wait: must not be played
        served.start()
        t.expect(re.escape(f"Redis at {served.url} {BACK}"))
        t.expect("Your hand:")  # the view, read again
        t.expect(PROMPT)
        assert child.expect([r"ann (plays|discards|folds)", pexpect.TIMEOUT], timeout=2) == 1, "type-ahead was played"
        child.sendline("fold")
        t.expect(r"ann (plays|discards|folds)")
        if t.expect([PROMPT, "Game over"]) == 0:
            child.sendline("q")
            t.expect(rf"Left game {game}; it stays open")
        t.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    _rode_it_out(t)
    # Nothing was played for ann before Redis came back: the turn sent while it was down was not stored.
    first = re.search(r"^ann (?:plays|discards|folds)", t.plain, re.M)
    assert first is not None and first.start() > t.plain.index(BACK), t.plain


def test_ctrl_c_while_play_waits_for_redis(tmp_path: Path, served: RedisServer) -> None:
    child, t, game = _playing(tmp_path, served)
    try:
        served.stop()
        child.sendline("fold")
        t.expect(re.escape(WAITING))
        child.sendintr()
        t.expect(rf"Left game {game}; it stays open: red7 play --game {game} --as ann --url {served.url}")
        t.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 130, t.plain
    assert "Traceback" not in t.plain and "Error" not in t.plain
