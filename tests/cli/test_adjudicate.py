"""``red7 adjudicate GAME (--winner NAME ... | --no-winner) --reason TEXT``: an operator ends a
game with a recorded result (RULES.md, Adjudication); operator-only (no gateway URL), and
every command that shows the game says it was adjudicated and why."""

from __future__ import annotations

import pytest
from support import Red7, new_id

pytestmark = pytest.mark.integration


def test_adjudicate_ends_the_game_and_show_games_replay_audit_say_so(alice: Red7, bob: Red7) -> None:
    game = new_id()
    alice.ok("new", "--id", game, "-p", "alice", "-p", "bob")
    bob.ok("join", game, "bob")
    said = alice.ok("adjudicate", game, "--winner", "bob", "--reason", "alice left the club").stdout
    assert "The operator adjudicated the game (bob): alice left the club" in said
    assert "Game over: bob wins." in said
    ended = "Game over: bob wins by the operator's adjudication, not by play: alice left the club."
    assert ended in alice.ok("show", game, "--public").stdout
    view = alice.json("show", game)
    assert view["outcome"]["reason"] == "adjudicated" and view["outcome"]["adjudication"] == "alice left the club"
    listed = next(g for g in alice.json("games") if g["game"] == game)
    assert listed["winners"] == [1] and listed["reason"] == "adjudicated"
    assert ended in alice.ok("replay", game).stdout
    audit = alice.ok("audit", game).stdout
    assert "PASS" in audit and "NOT ENDED BY PLAY" in audit and "bob wins; reason: alice left the club" in audit
    again = alice("adjudicate", game, "--no-winner", "--reason", "again")
    assert again.exit_code == 1 and again.stderr.strip() == "Error: the game is over"


def test_adjudicate_with_no_winner_json(alice: Red7) -> None:
    game = new_id()
    alice.ok("new", "--id", game, "-p", "alice", "-p", "bob")
    data = alice.json("adjudicate", game, "--no-winner", "--reason", "a broken deck")
    assert data["winners"] == [] and data["reason"] == "a broken deck"
    assert [e["type"] for e in data["events"]] == ["Adjudicated", "GameOver", "SeedRevealed"]
    assert "Game over: adjudicated by the operator, no winner: a broken deck." in alice.ok("show", game).stdout
    assert "adjudicated by the operator, no winner" in alice.ok("games").stdout


def test_adjudicate_usage_mistakes_exit_2_and_refusals_1(alice: Red7) -> None:
    game = new_id()
    alice.ok("new", "--id", game, "-p", "alice", "-p", "bob")
    assert alice("adjudicate", game, "--reason", "x").exit_code == 2  # neither --winner nor --no-winner
    assert alice("adjudicate", game, "--winner", "bob", "--no-winner", "--reason", "x").exit_code == 2
    assert alice("adjudicate", game, "--winner", "bob").exit_code == 2  # no --reason
    assert alice("adjudicate", game, "--winner", "bob", "--reason", " ").exit_code == 2
    unknown = alice("adjudicate", game, "--winner", "cy", "--reason", "x")
    assert unknown.exit_code == 1 and "no seat 'cy'" in unknown.stderr and "Traceback" not in unknown.output
    assert alice("adjudicate", "nosuch", "--winner", "bob", "--reason", "x").exit_code == 1
    long = alice("adjudicate", game, "--winner", "bob", "--reason", "x" * 1001)
    assert long.exit_code == 1 and "at most 1000 characters" in long.stderr


def test_adjudicate_refuses_a_gateway_url_with_exit_2(alice: Red7) -> None:
    game = new_id()
    result = alice("adjudicate", game, "--winner", "bob", "--reason", "x", "--url", "http://127.0.0.1:9")
    assert result.exit_code == 2 and "is an operator's command" in result.stderr


def test_withdraw_puts_a_seat_out_and_show_replay_audit_say_so(alice: Red7, bob: Red7) -> None:
    game = new_id()
    alice.ok("new", "--id", game, "-p", "alice", "-p", "bob", "-p", "cy")
    bob.ok("join", game, "bob")
    said = alice.ok("withdraw", game, "cy", "--reason", "cy left the club").stdout
    assert "The operator withdrew cy: cy left the club" in said and "cy is out of the game (withdrawn)." in said
    assert alice.json("show", game)["status"] == "playing"
    data = alice.json("withdraw", game, "bob", "--reason", "bob too")
    assert data["seat"] == "bob" and [e["type"] for e in data["events"]][:2] == ["Withdrawn", "Forfeited"]
    assert data["events"][-2]["type"] == "GameOver" and data["events"][-2]["reason"] == "withdrawn"
    ended = "Game over: alice wins: bob was withdrawn by the operator (cy was already out of the game)."
    assert ended in alice.ok("show", game, "--public").stdout
    audit = alice.ok("audit", game).stdout
    assert "PASS" in audit and "the operator withdrew cy at event" in audit and "reason: bob too" in audit
    again = alice("withdraw", game, "alice", "--reason", "x")
    assert again.exit_code == 1 and again.stderr.strip() == "Error: the game is over"


def test_withdraw_usage_mistakes_exit_2_and_refusals_1(alice: Red7) -> None:
    game = new_id()
    alice.ok("new", "--id", game, "-p", "alice", "-p", "bob")
    assert alice("withdraw", game, "bob").exit_code == 2  # no --reason
    assert alice("withdraw", game, "bob", "--reason", " ").exit_code == 2
    assert alice("withdraw", game, "bob", "--reason", "x", "--url", "http://127.0.0.1:9").exit_code == 2
    unknown = alice("withdraw", game, "cy", "--reason", "x")
    assert unknown.exit_code == 1 and "no seat 'cy'" in unknown.stderr and "Traceback" not in unknown.output
