"""The round's turns in an observation (red7es.history): what everyone saw played."""

from __future__ import annotations

import random

from red7es import Game
from red7es.bots.greedy import GreedyBot
from red7es.cards import Color, cards_of_mask
from red7es.facts import StepApplied
from red7es.history import PastTurn, round_history
from red7es.steps import StepKind

from .helpers import public_cards
from .sampling import random_game


def _played(seed: str, turns: int, **flags: object) -> tuple[Game, list[tuple[int, list[int], int, int, int]]]:
    """A recorded game after ``turns`` greedy turns, and the state before each turn."""
    game = Game.new(2, seed=seed, **flags)  # type: ignore[arg-type]
    bot = GreedyBot()
    before = []
    for _ in range(turns):
        seat = game.turn
        before.append((seat, game.pal[:], game.rule, len(game.deck), game.hands[seat].bit_count()))
        game.apply(bot.choose(game.observation(seat)))
    return game, before


def test_history_lists_each_finished_turn_with_the_position_it_was_played_from() -> None:
    game, before = _played("history-a", 6)
    assert game.outcome is None
    history = game.observation(0).history
    steps = [f.step for f in game.log or [] if isinstance(f, StepApplied) and f.step.kind != StepKind.END]
    assert [s for t in history for s in t.steps] == steps
    for past, (seat, pal, rule, deck, hand) in zip(history, before, strict=True):
        assert past.seat == seat
        assert past.palettes == tuple(cards_of_mask(m) for m in pal)
        assert (past.rule, past.deck_size, past.hand_size, past.drew) == (Color(rule), deck, hand, False)


def test_the_same_history_for_every_seat_and_none_for_a_view() -> None:
    game, _ = _played("history-seats", 4)
    assert game.observation(0).history == game.observation(1).history
    assert len(game.observation(0).history) == 4
    assert game.observation(0, history=False).history == ()


def test_a_turn_in_progress_is_not_history_yet() -> None:
    game, _ = _played("history-open", 2)
    legal = [t for t in game.legal_turns() if len(t.steps) == 2]
    game.push(legal[0].steps[0])
    obs = game.observation(game.turn)
    assert len(obs.history) == 2
    assert obs.turn_steps == (legal[0].steps[0],)


def test_history_is_the_current_rounds_only() -> None:
    game = Game.new(2, seed="history-rounds", rounds=2)
    bot = GreedyBot()
    while game.round == 1:
        game.apply(bot.choose(game.observation(game.turn)))
    assert game.observation(0).history == ()
    game.apply(bot.choose(game.observation(game.turn)))
    assert len(game.observation(0).history) == 1


def test_a_fold_is_a_turn_of_its_own() -> None:
    game = Game.new(3, seed="history-fold")
    game.apply("fold")
    (past,) = game.observation(1).history
    assert [str(s) for s in past.steps] == ["fold"]
    assert all(p is not None for p in past.palettes)  # everyone was still in when it began


def test_a_turn_that_drew_a_card_says_so() -> None:
    for k in range(50):
        game = Game.new(2, seed=f"history-draw-{k}", draw=True)
        drawing = [t for t in game.legal_turns() if any(str(s) == "draw" for s in t.steps)]
        if drawing:
            game.apply(drawing[0])
            (past,) = game.observation(0).history
            assert past.drew and [str(s) for s in past.steps][-1] == "draw"
            return
    raise AssertionError("no opening turn could draw")  # pragma: no cover


def test_a_game_without_a_log_has_no_history() -> None:
    game = Game.new(2, seed="history-nolog", record=False)
    game.apply(game.legal_turns()[0])
    assert round_history(game) == ()
    assert game.observation(0).history == ()


def test_history_shows_only_cards_that_were_shown_to_everyone() -> None:
    """Every card in a history was public when it was played (nothing from a hand or the deck)."""
    for g in range(30):
        game = random_game(g)
        rng = random.Random(g)
        while game.outcome is None and game.round == 1:
            history = game.observation(game.turn).history
            cards = {int(c) for t in history for p in t.palettes if p is not None for c in p}
            cards |= {int(s.card) for t in history for s in t.steps if s.card is not None}
            assert cards <= public_cards(game)
            assert all(isinstance(t, PastTurn) for t in history)
            turns = game.legal_turns()
            game.apply(rng.choice([t for t in turns if not t.is_fold] or turns))
