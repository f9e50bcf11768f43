"""``red7 abort GAME``: a seat ends a game nobody has moved in, with no winner (RULES.md,
Aborting), on Redis and over the HTTP gateway; then every command that shows a finished
game copes with one that has no winner (show, games, replay, export, watch, audit)."""

from __future__ import annotations

import json

import pytest
from support import Red7, new_id

from .conftest import BOTH_TRANSPORTS

pytestmark = pytest.mark.integration

ENDED = "Game over: aborted before anyone moved, no winner."


@BOTH_TRANSPORTS
def test_abort_ends_a_fresh_game_with_no_winner_and_every_view_says_so(alice: Red7, bob: Red7) -> None:
    game = new_id()
    alice.ok("new", "--id", game, "-p", "alice", "-p", "bob")
    bob.ok("join", game, "bob")
    answer = bob.json("abort", game)  # whether or not it is bob's turn
    assert answer["applied"] is True and answer["seat"] == "bob"
    assert [e["type"] for e in answer["events"]] == ["CommandApplied", "GameOver", "SeedRevealed"]
    over = answer["events"][1]
    assert over["winners"] == [] and over["reason"] == "aborted"
    view = alice.json("show", game, "--as", "alice")
    assert view["status"] == "over" and view["outcome"]["winners"] == [] and view["outcome"]["reason"] == "aborted"
    assert ENDED in alice.ok("show", game, "--public").stdout
    listed = next(g for g in alice.json("games") if g["game"] == game)
    assert listed["status"] == "over" and listed["winners"] == [] and listed["reason"] == "aborted"
    assert "aborted before anyone moved, no winner" in alice.ok("games").stdout
    assert ENDED in alice.ok("replay", game).stdout
    assert ENDED in alice.ok("watch", game).stdout  # a finished game: its end, then watch returns
    assert "PASS" in alice.ok("audit", game).stdout
    again = alice("abort", game)
    assert again.exit_code == 1 and f"game {game} is over" in again.stderr


@BOTH_TRANSPORTS
def test_abort_after_a_turn_is_refused_in_one_line_exit_1(alice: Red7, bob: Red7) -> None:
    game = new_id()
    alice.ok("new", "--id", game, "-p", "alice", "-p", "bob")
    bob.ok("join", game, "bob")
    players = {"alice": alice, "bob": bob}
    mover = alice.json("show", game, "--public")["seats"][alice.json("show", game, "--public")["to_move"]]["name"]
    legal = players[mover].json("show", game, "--as", mover)["legal"]
    players[mover].ok("move", game, legal[0])
    refused = alice("abort", game)
    assert refused.exit_code == 1 and "Traceback" not in refused.output
    assert refused.stderr.strip() == (
        "Error: rejected: a turn has been played: only a game nobody has moved in can be aborted"
    )
    as_json = bob("abort", game, "--json")
    assert as_json.exit_code == 1 and json.loads(as_json.stdout)["applied"] is False
    assert alice.json("show", game, "--public")["status"] == "playing"


def test_an_aborted_game_exports_and_replays_from_its_file(alice: Red7, bob: Red7, tmp_path: object) -> None:
    game = new_id()
    alice.ok("new", "--id", game, "-p", "alice", "-p", "bob")
    alice.ok("abort", game)
    path = f"{tmp_path}/aborted.jsonl"
    alice.ok("export", game, "-o", path)
    assert ENDED in alice.ok("replay", path).stdout
    assert "PASS" in alice.ok("audit", path).stdout
