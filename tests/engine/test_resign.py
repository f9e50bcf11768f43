"""RULES.md, Resigning: a seat gives up the whole game, at any time it is still in it."""

from __future__ import annotations

import pytest

from red7es.facts import Forfeited, GameOver, RoundWon
from red7es.game import RESIGNED, Game, GameOverError, IllegalStep
from red7es.steps import RESIGN, StepError, command_text, is_resign


def test_a_resign_in_a_two_player_game_ends_it_the_other_winning_with_reason_resigned() -> None:
    game = Game.new(2, seed="resign-2")
    loser = game.turn
    facts = game.resign(loser)
    assert facts[0] == Forfeited(loser, RESIGNED)
    over = facts[-1]
    assert isinstance(over, GameOver)
    assert over.outcome.winners == (1 - loser,)
    assert over.outcome.reason == "resigned"
    assert over.outcome.forfeited == (loser,)


def test_a_resign_in_three_player_game_the_others_play_on_and_the_seat_ranks_last() -> None:
    game = Game.new(3, seed="resign-3", rounds=2)
    out = game.turn
    game.resign(out)
    assert not game.over and game.turn != out
    while not game.over:
        assert game.turn != out, "a seat that resigned was given a turn"
        game.apply(game.legal_turns()[0])
    assert game.outcome is not None
    assert out not in game.outcome.winners
    assert game.outcome.forfeited == (out,)
    assert game.outcome.reason == "rounds"


def test_a_seat_not_to_move_may_resign_and_the_seat_to_move_keeps_its_turn() -> None:
    game = Game.new(3, seed="resign-idle")
    mover = game.turn
    other = next(s for s in range(3) if s != mover)
    facts = game.resign(other)
    assert facts == [Forfeited(other, RESIGNED)]
    assert game.turn == mover and other not in game.in_round


def test_a_non_mover_resign_that_leaves_one_seat_in_the_round_ends_the_round() -> None:
    game = Game.new(3, seed="resign-round", rounds=3)
    mover = game.turn
    game.apply("fold")  # the mover is out of this round
    to_move = game.turn
    third = next(s for s in range(3) if s not in (mover, to_move))
    facts = game.resign(third)
    assert any(isinstance(f, RoundWon) and f.seat == to_move for f in facts)
    assert game.round == 2


def test_when_the_last_but_one_resigns_the_game_ends_with_reason_resigned() -> None:
    game = Game.new(3, seed="resign-last")
    first = game.turn
    game.forfeit(first, "time")
    second = game.turn
    over = game.resign(second)[-1]
    assert isinstance(over, GameOver)
    assert over.outcome.reason == "resigned"
    assert over.outcome.forfeited == (first, second)


def test_a_resign_after_the_game_is_over_or_twice_is_refused() -> None:
    game = Game.new(3, seed="resign-twice")
    seat = game.turn
    game.resign(seat)
    with pytest.raises(IllegalStep, match="not in the game"):
        game.resign(seat)
    game.resign(game.turn)
    assert game.over
    with pytest.raises(GameOverError):
        game.resign(game.outcome.winners[0])  # type: ignore[union-attr]


def test_resign_is_a_command_text_of_its_own_and_never_a_turn() -> None:
    assert is_resign(" Resign ") and command_text("RESIGN") == RESIGN
    assert command_text("p:r7  c:b3") == "p:R7 c:B3"
    assert not is_resign("fold")
    with pytest.raises(StepError):
        command_text("resign now")
