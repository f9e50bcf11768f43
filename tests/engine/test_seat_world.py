"""seat_world: the game determinize(observation, None) deals, built from the game's masks.

Workers ask ``random`` and ``greedy`` with it (red7es.bots.base.decide), so these tests
pin that they decide exactly as they did from the observation.
"""

from __future__ import annotations

import random

import pytest

from red7es import Game, Variant, determinize
from red7es.bots.base import decide, make_bot, observation_for
from red7es.observation import observe, seat_world

from .helpers import census
from .sampling import positions


def _fields(game: Game) -> tuple[object, ...]:
    return (game.variant, game.batch_rules, game.seed, game.log, game._stack, *game._save())


def test_seat_world_is_the_world_determinize_deals_without_a_random_source():
    checked = 0
    for game in positions(60, seed=11):
        for seat in range(game.players):
            expected = determinize(observe(game, seat, history=False), None)
            world = seat_world(game, seat)
            assert _fields(world) == _fields(expected)
            assert [type(x) for x in _fields(world)] == [type(x) for x in _fields(expected)]
            checked += 1
    assert checked > 1000


def test_seat_world_shows_the_seat_what_it_may_see_and_nothing_hidden_where_it_lies():
    for game in positions(20, seed=12):
        if game.outcome is not None:
            continue
        for seat in range(game.players):
            world = seat_world(game, seat)
            assert world.observation(seat, history=False) == observe(game, seat, history=False)
            assert census(world) == {c: 1 for c in range(49)}


def test_seat_world_rejects_a_seat_that_is_not_there():
    with pytest.raises(ValueError, match="no seat 2"):
        seat_world(Game.new(Variant(2), seed="x"), 2)


@pytest.mark.parametrize("spec", ["random", "greedy"])
def test_bots_decide_on_the_seat_world_exactly_as_from_their_observation(spec):
    for i, game in enumerate(positions(40, seed=13, every=2)):
        if game.outcome is not None:
            continue
        old = make_bot(spec, seed=i).choose(observation_for(make_bot(spec), game, game.turn))
        assert decide(make_bot(spec, seed=i), game, game.turn) == old


@pytest.mark.parametrize("spec", ["random", "greedy"])
def test_same_seed_same_game_whichever_way_the_bot_is_asked(spec):
    """Whole games: every decision through decide() against every one through choose()."""
    for g in range(12):
        variant = Variant(2 + g % 3, scoring=g % 2 == 0, draw=g % 4 < 2, actions=g % 3 != 0)
        old, new = Game.new(variant, seed=f"w{g}"), Game.new(variant, seed=f"w{g}")
        rng_old, rng_new = random.Random(g), random.Random(g)
        while old.outcome is None:
            seed = rng_old.randrange(1 << 30)
            assert seed == rng_new.randrange(1 << 30)
            old.apply(make_bot(spec, seed=seed).choose(observe(old, old.turn, history=False)))
            new.apply(decide(make_bot(spec, seed=seed), new, new.turn))
        assert new.log == old.log


def test_greedys_memo_of_palette_keys_changes_no_value_and_no_choice():
    from red7es.bots.greedy import choose_greedy, turn_value
    from red7es.rules import rival_keys
    from red7es.steps import FOLD, STEPS, Turn

    for game in positions(40, seed=14, every=2):
        if game.outcome is not None:
            continue
        opponents = rival_keys(game.pal, game.alive, game.turn)
        memo: dict[int, tuple[object, int]] = {}
        best, best_value = Turn((STEPS[FOLD],), False), float("-inf")
        for codes, is_open in game.legal_turn_codes():
            if codes == (FOLD,):
                continue
            plain = turn_value(game, codes, opponents)
            assert turn_value(game, codes, opponents, memo) == plain  # type: ignore[arg-type]
            if plain > best_value:
                best, best_value = Turn(tuple(STEPS[c] for c in codes), is_open), plain
        assert choose_greedy(game) == best


def test_greedy_and_random_decide_in_a_game_where_a_seat_forfeited() -> None:
    """seat_world carries who is out of the game for good: a world without it could not
    even be saved, and every greedy or random seat of a timed game crashed after a forfeit."""

    for spec in ("greedy", "random"):
        game = Game.new(3, seed=f"forfeit-world-{spec}", rounds=3)
        out = game.turn
        game.forfeit(out, "time")
        while not game.over:
            seat = game.turn
            world = seat_world(game, seat)
            assert world.forfeited == game.forfeited == [out]
            game.apply(decide(make_bot(spec), game, seat))
        assert game.outcome is not None and out not in game.outcome.winners
