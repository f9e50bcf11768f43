"""``red7 play`` in a timed game (docs/cli.md, Time controls), on a real pseudo-terminal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgpack
import pytest
import redis
from click.testing import CliRunner
from support import wait_for

from red7es.cli.main import cli

from .test_play_pty import Transcript, spawn

TIMED_PROMPT = r"Your turn \((\d+\.\ds) left\) > "  # the time left as the prompt is shown

pytestmark = pytest.mark.integration


def test_play_shows_the_deadline_and_a_turn_after_it_shows_what_happened(tmp_path: Path, service_url: str) -> None:
    """The player's time runs out while the menu waits: the turn typed then is refused, and
    play shows the time-out and the end instead of asking again from a stale menu."""
    created = CliRunner().invoke(
        cli,
        ["new", "-p", "ann", "-p", "bob", "--join-all", "--turn-time", "3s", "--json", "--url", service_url],
        env={"RED7_HOME": str(tmp_path)},
    )
    assert created.exit_code == 0, created.output
    game = json.loads(created.stdout)["game"]
    connection = redis.Redis.from_url(service_url)
    view = wait_for(lambda: (v := _public(connection, game)) and v.get("clock") and v, "the first clock")
    first = view["seats"][view["clock"]["seat"]]["name"]
    child = spawn(tmp_path, service_url, "play", "--game", game, "--as", first)
    t = Transcript(child)
    try:
        t.expect(TIMED_PROMPT)
        assert "3s a turn" in t.plain and "Your time is up at" in t.plain
        wait_for(lambda: _public(connection, game)["status"] == "over", "the time-out to end the game", timeout=30)
        child.sendline("fold")
        t.expect(r"Not allowed: ")
        t.expect(rf"{first}'s turn timed out: folded\.")
        t.expect(r"Game over: ")
    finally:
        child.close(force=True)
        connection.close()


def _public(connection: redis.Redis, game: str) -> dict[str, Any] | None:
    raw = connection.get(f"red7:{{{game}}}:view:public")
    view: dict[str, Any] | None = None if raw is None else msgpack.unpackb(raw, raw=False)
    return view
