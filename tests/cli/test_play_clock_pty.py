"""``red7 play`` in a timed game (docs/cli.md, Time controls), on a real pseudo-terminal."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import msgpack
import pexpect
import pytest
import redis
from click.testing import CliRunner
from support import wait_for

from red7es.cli.main import cli
from red7es.service.client import GameService
from red7es.service.events import CommandApplied

from .test_play_pty import Transcript, spawn

TIMED_PROMPT = r"Your turn \((\d+\.\ds) left\) > "  # the time left as the prompt is shown
ANY_TIME_PROMPT = r"Your turn \((?:\d+\.\ds|\d+:\d\d) left\) > "  # (0:24 above 10 s: no tenths)

pytestmark = pytest.mark.integration


def test_play_shows_the_deadline_and_a_turn_after_it_shows_what_happened(tmp_path: Path, service_url: str) -> None:
    """The player's time runs out while the menu waits: the turn typed then is refused, and
    play shows the time-out and the end instead of asking again from a stale menu."""
    # 8 s: play must start and show its prompt before the time is up, on a loaded machine too
    game, first, connection = _timed_game(tmp_path, service_url, "8s")
    child = spawn(tmp_path, service_url, "play", "--game", game, "--as", first)
    t = Transcript(child)
    try:
        t.expect(TIMED_PROMPT)
        assert "8s a turn" in t.plain and "Your time is up at" in t.plain
        wait_for(lambda: _public(connection, game)["status"] == "over", "the time-out to end the game", timeout=30)
        child.sendline("fold")
        t.expect(r"Not allowed: ")
        t.expect(rf"{first}'s turn timed out: folded\.")
        t.expect(r"Game over: ")
    finally:
        child.close(force=True)
        connection.close()


def test_play_warns_once_at_ten_seconds_above_the_prompt_and_keeps_the_line_typed(
    tmp_path: Path, service_url: str
) -> None:
    """A 25 s turn: the prompt counts down in place; at 10 s or less one warning line is
    printed above it, and the prompt is drawn again under it with what was typed so far,
    which Enter then sends whole. How soon play shows its prompt, and whether the turn beats
    the deadline, is the machine's business (both are accepted: a warning before "fo" is
    typed, or after; a fold in time, or refused): what is checked is what the screen and the
    referee were given."""
    game, first, connection = _timed_game(tmp_path, service_url, "25s")
    child = spawn(tmp_path, service_url, "play", "--game", game, "--as", first)
    t = Transcript(child)
    try:
        t.expect(ANY_TIME_PROMPT)
        child.send("fo")  # half a turn, typed (on a machine not too slow) before the warning comes
        t.expect(r"Your turn \((\d+\.\ds) left\) > fo")  # tenths: 10 s or less left, "fo" still there
        shown = t.child.match.group(1)
        while t.expect([r"Your turn \((\d+\.\ds) left\) > fo", pexpect.TIMEOUT], timeout=30) == 0:
            if t.child.match.group(1) != shown:
                break  # the countdown runs in place
        else:
            pytest.fail("the prompt's time left never changed")
        t.until(lambda: _warning_above_prompt(t.visible, "fo"), "the warning, then the prompt with 'fo'")
        child.send("ld\r")
        t.expect(r"Game over: ")
    finally:
        child.close(force=True)
    plain = t.plain
    assert plain.count("Hurry:") == 1, plain  # once
    assert "> fold" in plain and "Traceback" not in plain
    logged = [r.event for r in GameService(connection).log(game)]
    applied = [e.turn for e in logged if isinstance(e, CommandApplied) and e.seat == ["ann", "bob"].index(first)]
    if "Not allowed:" not in plain:  # in time: the referee was sent the line as typed, "fold"
        assert "fold" in applied, logged
    connection.close()


@pytest.mark.parametrize("key", ["eof", "intr"])
def test_ctrl_d_and_ctrl_c_while_the_clock_runs_leave_the_game_open(tmp_path: Path, service_url: str, key: str) -> None:
    """The countdown's reader ends as the plain prompt does: Ctrl-D on an empty line leaves
    (exit 0), Ctrl-C interrupts (exit 130); either way the game stays open, and it says so."""
    game, first, connection = _timed_game(tmp_path, service_url, "1h")
    connection.close()
    child = spawn(tmp_path, service_url, "play", "--game", game, "--as", first)
    t = Transcript(child)
    try:
        t.expect(ANY_TIME_PROMPT)
        child.send("fo")
        t.expect(r"> fo")
        child.send("\x15")  # erased (Ctrl-U): Ctrl-D now ends the input
        t.until(lambda: t.visible.rstrip().endswith("left) >"), "the prompt with the line erased")
        if key == "eof":
            child.sendeof()
        else:
            child.sendintr()
        t.expect(rf"Left game {game}; it stays open")
        t.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == (0 if key == "eof" else 130)
    assert "Traceback" not in t.plain and "Aborted" not in t.plain


def _warning_above_prompt(screen: str, typed: str) -> bool:
    rows = screen.splitlines()
    return any(
        row.startswith("Hurry: ") and nxt.startswith("Your turn (") and nxt.endswith(f"> {typed}")
        for row, nxt in itertools.pairwise(rows)
    )


def _timed_game(tmp_path: Path, service_url: str, turn_time: str) -> tuple[str, str, redis.Redis]:
    """A game of ann and bob, both seats joined, with ``turn_time``: its id, the seat whose
    time runs first, and a connection to its Redis."""
    created = CliRunner().invoke(
        cli,
        ["new", "-p", "ann", "-p", "bob", "--join-all", "--turn-time", turn_time, "--json", "--url", service_url],
        env={"RED7_HOME": str(tmp_path)},
    )
    assert created.exit_code == 0, created.output
    game = json.loads(created.stdout)["game"]
    connection = redis.Redis.from_url(service_url)
    view = wait_for(lambda: (v := _public(connection, game)) and v.get("clock") and v, "the first clock")
    return game, view["seats"][view["clock"]["seat"]]["name"], connection


def _public(connection: redis.Redis, game: str) -> dict[str, Any] | None:
    raw = connection.get(f"red7:{{{game}}}:view:public")
    view: dict[str, Any] | None = None if raw is None else msgpack.unpackb(raw, raw=False)
    return view
