"""RULES.md, Adjudication: an operator ends a game that is stuck with the winners it decides."""

from __future__ import annotations

import pytest

from red7es.facts import GameOver, Outcome
from red7es.game import ADJUDICATED, Game, GameOverError, IllegalStep


def test_an_adjudication_ends_the_game_with_the_winners_given_and_the_scores_as_they_stand() -> None:
    game = Game.new(3, seed="adj-mid", rounds=3)
    game.apply(game.legal_turns()[0])  # in play: moves were made
    wins = tuple(game.round_wins)
    facts = game.adjudicate([2])
    assert facts == [GameOver(Outcome((2,), (0, 0, 0), wins, ADJUDICATED))]
    assert game.over and game.legal_turns() == []


def test_an_adjudication_may_name_no_winner_or_several_in_seat_order() -> None:
    assert Game.new(2, seed="adj-none").adjudicate([])[-1] == GameOver(Outcome((), (0, 0), (0, 0), ADJUDICATED))
    shared = Game.new(3, seed="adj-shared").adjudicate([2, 0])[-1]
    assert isinstance(shared, GameOver) and shared.outcome.winners == (0, 2)


def test_an_adjudication_keeps_who_forfeited_and_refuses_them_as_winners() -> None:
    game = Game.new(3, seed="adj-forfeit")
    game.resign(1)
    with pytest.raises(IllegalStep, match="seat 1 is out of the game"):
        game.adjudicate([1])
    assert not game.over
    over = game.adjudicate([0])[-1]
    assert isinstance(over, GameOver) and over.outcome.forfeited == (1,)


@pytest.mark.parametrize(("winners", "why"), [([2], "there is no seat 2"), ([0, 0], "named twice"), ([-1], "no seat")])
def test_an_adjudication_naming_no_seat_or_a_seat_twice_is_refused(winners: list[int], why: str) -> None:
    game = Game.new(2, seed="adj-bad")
    with pytest.raises(IllegalStep, match=why):
        game.adjudicate(winners)
    assert not game.over


def test_a_finished_game_cannot_be_adjudicated() -> None:
    game = Game.new(2, seed="adj-over")
    game.abort()
    with pytest.raises(GameOverError):
        game.adjudicate([0])
