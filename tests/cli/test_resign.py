"""``red7 resign GAME``: a seat gives up the whole game (RULES.md, Resigning), on Redis and
over the HTTP gateway, with the same answers and exit codes (refused 1, usage 2)."""

from __future__ import annotations

import pytest
from support import Red7, new_id

from .conftest import BOTH_TRANSPORTS

pytestmark = pytest.mark.integration


@BOTH_TRANSPORTS
def test_resign_ends_a_two_player_game_and_a_second_resign_is_refused(alice: Red7, bob: Red7) -> None:
    game = new_id()
    alice.ok("new", "--id", game, "-p", "alice", "-p", "bob")
    bob.ok("join", game, "bob")
    answer = alice.json("resign", game)  # whether or not it is alice's turn
    assert answer["applied"] is True and answer["seat"] == "alice"
    assert [e["type"] for e in answer["events"]][:2] == ["CommandApplied", "Forfeited"]
    assert {"type": "Forfeited", "seat": 0, "reason": "resigned"} in answer["events"]
    view = bob.json("show", game, "--as", "bob")
    assert view["status"] == "over" and view["outcome"]["reason"] == "resigned"
    assert view["outcome"]["winners"] == [1] and view["outcome"]["forfeited"] == [0]
    shown = bob.ok("show", game, "--public").stdout
    assert "Game over: bob wins: alice resigned." in shown
    again = bob("resign", game)
    assert again.exit_code == 1 and "Traceback" not in again.output
    assert f"game {game} is over" in again.stderr
    assert "PASS" in alice.ok("audit", game).stdout


@BOTH_TRANSPORTS
def test_resign_out_of_turn_in_three_player_game_prints_it_and_the_game_goes_on(alice: Red7, bob: Red7) -> None:
    game = new_id()
    alice.new("--id", game, "-p", "alice", "-p", "bob", "--bot", "greedy", "--seed", "resign-cli")
    bob.ok("join", game, "bob")
    result = bob.ok("resign", game)
    assert "bob resigned." in result.stdout
    view = alice.json("show", game, "--as", "alice")
    assert view["status"] == "playing"  # alice has not moved: nobody can have won yet
    assert view["seats"][1]["name"] == "bob" and view["seats"][1]["in_round"] is False and view["to_move"] != 1
    refused = bob("resign", game, "--json")
    assert refused.exit_code == 1


@pytest.mark.parametrize("word", ["resign", "abort"])
def test_resign_and_abort_usage_mistakes_exit_2(alice: Red7, word: str) -> None:
    assert alice(word).exit_code == 2  # no GAME
    game = new_id()
    alice.ok("new", "--id", game, "-p", "alice", "-p", "bob")
    assert alice(word, game, "extra").exit_code == 2
    assert alice(word, game, "--nosuch").exit_code == 2
    not_yours = alice(word, game, "--as", "nobody")
    assert not_yours.exit_code == 1 and "Traceback" not in not_yours.output
