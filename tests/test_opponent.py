"""The posterior over who the opponent is (red7es.bots.opponent): greedy, random or mixed."""

from __future__ import annotations

import pytest
from test_exploit import _mixed_positions
from test_inference import _greedy_positions

from red7es.bots.opponent import opponent_posterior
from red7es.game import Game
from red7es.observation import observe


def test_the_prior_is_even_before_the_opponent_has_played() -> None:
    game = Game.new(2, seed="prior", record=True)
    post = opponent_posterior(observe(game, game.turn))
    assert post.turns == 0
    assert post.greedy == pytest.approx(1 / 3) and post.random == pytest.approx(1 / 3)


def test_a_greedy_opponent_is_recognised_after_a_few_turns() -> None:
    after: dict[int, list[float]] = {}
    for game in _greedy_positions({}, 2, 30):
        post = opponent_posterior(observe(game, game.turn))
        assert abs(post.greedy + post.random + post.mixed - 1) < 1e-9
        after.setdefault(post.turns, []).append(post.greedy)
    late = [g for k, gs in after.items() if k >= 3 for g in gs]
    assert len(late) > 100
    assert sum(g >= 0.5 for g in late) >= 0.95 * len(late)
    # the evidence grows with the turns seen
    assert sum(after[3]) / len(after[3]) > sum(after[1]) / len(after[1])


def test_a_random_opponent_is_recognised_and_never_taken_for_greedy() -> None:
    seen = []
    for game in _mixed_positions(40):
        if game.turn != 1:
            continue  # seat 0 plays at random: read it from seat 1
        post = opponent_posterior(observe(game, 1))
        if post.turns >= 2:
            seen.append(post)
    assert len(seen) > 40
    assert all(p.greedy < 0.5 for p in seen)
    assert sum(p.random >= 0.5 for p in seen) >= 0.7 * len(seen)


def test_only_two_player_basic_has_a_posterior() -> None:
    with pytest.raises(ValueError, match="2-player basic"):
        opponent_posterior(observe(Game.new(3, seed="x", record=True), 0))
