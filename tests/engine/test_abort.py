"""RULES.md, Aborting: a game nobody has moved in yet can be ended with no winner."""

from __future__ import annotations

import pytest

from red7es.facts import GameOver, Outcome
from red7es.game import ABORTED, Game, GameOverError, IllegalStep
from red7es.steps import ABORT, command_text, is_abort, is_resign


def test_a_fresh_game_is_untouched_and_aborts_with_no_winners() -> None:
    game = Game.new(3, seed="abort-fresh", scoring=True)
    assert game.untouched
    facts = game.abort()
    assert facts == [GameOver(Outcome((), (0, 0, 0), (0, 0, 0), ABORTED))]
    assert game.over and game.outcome is not None and game.outcome.winners == ()
    assert not game.untouched
    assert game.legal_turns() == []


def test_a_whole_turn_played_makes_the_game_no_longer_abortable() -> None:
    game = Game.new(2, seed="abort-played")
    game.apply(game.legal_turns()[0])
    assert not game.untouched
    with pytest.raises(IllegalStep, match="a turn has been played"):
        game.abort()
    assert not game.over


def test_a_fold_as_the_first_turn_counts_as_a_move() -> None:
    game = Game.new(3, seed="abort-fold")
    game.apply("fold")
    with pytest.raises(IllegalStep, match="a turn has been played"):
        game.abort()


def test_an_open_turn_begun_counts_as_a_move() -> None:
    game = Game.new(2, seed="abort-open")
    first = game.legal_turns()[0]
    game.apply(f"{first.steps[0]} ...")
    assert game.turn_steps, "the turn is open"
    with pytest.raises(IllegalStep, match="a turn has been played"):
        game.abort()


def test_a_forfeit_counts_as_a_move() -> None:
    game = Game.new(3, seed="abort-forfeit")
    game.resign((game.turn + 1) % 3)
    with pytest.raises(IllegalStep, match="a turn has been played"):
        game.abort()


def test_a_refused_turn_is_not_a_move() -> None:
    game = Game.new(2, seed="abort-refused")
    with pytest.raises(IllegalStep):
        game.apply("end")  # an empty turn never leads
    assert game.untouched
    game.abort()
    assert game.outcome is not None and game.outcome.reason == ABORTED


def test_a_finished_game_cannot_be_aborted() -> None:
    game = Game.new(2, seed="abort-over")
    game.abort()
    with pytest.raises(GameOverError):
        game.abort()


def test_a_game_without_its_fact_log_is_never_untouched() -> None:
    game = Game.new(2, seed="abort-unrecorded", record=False)
    assert not game.untouched
    with pytest.raises(IllegalStep):
        game.abort()


def test_a_game_replayed_from_its_facts_is_untouched_until_a_step() -> None:
    played = Game.new(2, seed="abort-replay")
    deal = played.log[0] if played.log else None
    replay = Game.from_record(played.variant)
    replay.apply_fact(deal)  # type: ignore[arg-type]
    assert replay.untouched
    replay.abort()
    assert replay.outcome is not None and replay.outcome.winners == ()


def test_abort_is_a_seat_command_word_distinct_from_resign() -> None:
    assert is_abort(" Abort ") and not is_resign("abort") and not is_abort("resign")
    assert command_text("ABORT") == ABORT == "abort"
