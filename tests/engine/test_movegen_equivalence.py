"""The optimised move generation gives exactly what the straightforward search gives.

``Game._search_turns`` enumerates turns in closed form without applying a step
(states play never reaches go to the reference); ``Game._search_turns_reference`` is the
plain depth-first search over ``_legal_step_codes`` with a whole-game snapshot per
step, kept as the definition.  Over many seeded random positions of every variant --
starts of turns and every point in the middle of a turn, including a pending 7, 1 or
5 action and turns continued after a 3 drew a known card -- they must give the same
turns in the same order (bots break ties by that order), leave the game untouched,
and agree with ``legal_turn_codes``.  The check whether a 1 may be played is compared
with the straightforward version it replaced, reimplemented here, and the fact its
shortcut relies on (taking a card never raises a palette's key) is checked too.
"""

from __future__ import annotations

import random

import pytest

from red7es import Game, Turn, Variant
from red7es.cards import color_bit, color_mask_of
from red7es.game import NONE, ONE, PLAY5, SEVEN, _bits
from red7es.rules import KEY_FUNCTIONS, all_keys
from red7es.steps import FOLD, STEPS

from .helpers import position
from .sampling import positions

VARIANTS = [
    Variant(players, scoring=scoring, draw=draw, actions=actions)
    for players in (2, 3, 4)
    for scoring, draw, actions in [
        (False, False, False),
        (False, False, True),
        (False, True, True),
        (True, True, True),
        (True, True, False),
    ]
]


def reference_one_keeps_lead_possible(game: Game, seat: int, card: int) -> bool:
    """The straightforward check (the engine's former code): try every take and rule."""
    bit = 1 << card
    pal = game.pal[:]
    palc = game.palc[:]
    pal[seat] |= bit
    palc[seat] |= color_bit(card)
    hand = game.hands[seat] & ~bit
    size = pal[seat].bit_count()
    opponents = [s for s in range(len(pal)) if s != seat and game.alive[s]]
    targets = [s for s in opponents if pal[s].bit_count() >= size]
    choices = [(s, c) for s in targets for c in _bits(pal[s])] or [(-1, -1)]
    rules = {6 - c % 7 for c in _bits(hand)} | {game.rule}
    for owner, taken in choices:
        trial, trialc = pal[:], palc[:]
        if owner >= 0:
            trial[owner] ^= 1 << taken
            trialc[owner] ^= color_bit(taken)
        for rule in rules:
            key = KEY_FUNCTIONS[rule]
            mine = key(trial[seat], trialc[seat])
            if mine and all(key(trial[s], trialc[s]) < mine for s in opponents):
                return True
    return False


def assert_same_turns(game: Game, *, reachable: bool = True) -> str:
    """Fast and reference searches agree here and leave the game as it was; returns the state kind."""
    before = game._save()
    log = list(game.log) if game.log is not None else None
    fast: list = []
    game._search_turns((), fast)
    assert game._save() == before
    assert (list(game.log) if game.log is not None else None) == log
    reference: list = []
    game._search_turns_reference((), reference)
    assert game._save() == before
    assert fast == reference, (game, game.current_turn_steps, fast, reference)
    # With or without actions, at the start of a turn or mid-turn: the same list in the
    # same order. (Hand-built states that play never reaches are the search's alone:
    # the fast start-of-turn path does not look for them.)
    if reachable:
        assert game.legal_turn_codes() == [*reference, ((FOLD,), False)]
    for c in _bits(game.hands[game.turn]):
        if c // 7 == 0:  # a 1
            assert game._one_keeps_lead_possible(game.turn, c) == reference_one_keeps_lead_possible(
                game, game.turn, c
            ), (game, str(STEPS[c]))
    return ("none", "play5", "seven", "one")[game.pending] + ("+steps" if game.turn_steps else "")


def walk(game: Game, rng: random.Random, seen: dict[str, int], depth: int = 0) -> None:
    """Check this position, then every (or a sample of the) next single steps, recursively."""
    kind = assert_same_turns(game)
    seen[kind] = seen.get(kind, 0) + 1
    codes = [c for c in game._legal_step_codes() if c >> 6 < 6]  # no end, no fold
    if depth >= 4 or not codes:
        return
    for code in rng.sample(codes, min(len(codes), 3)):
        game.push(STEPS[code])
        try:
            walk(game, rng, seen, depth + 1)
        finally:
            game.pop()


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: f"{v.players}p-{'+'.join(v.flags) or 'basic'}")
def test_fast_search_equals_reference_search_in_random_games(variant):
    rng = random.Random(f"movegen-{variant}")
    seen: dict[str, int] = {}
    for g in range(12):
        game = Game.new(variant, seed=f"movegen-{g}", record=g % 2 == 0)
        while game.outcome is None:
            walk(game, rng, seen)
            turns = game.legal_turn_codes()
            non_fold = turns[:-1]
            codes, is_open = rng.choice(non_fold) if non_fold and rng.random() < 0.9 else rng.choice(turns)
            game.apply(Turn(tuple(STEPS[c] for c in codes), is_open))
    assert sum(seen.values()) > 300
    if variant.actions:  # the walk reached every kind of pending action mid-turn
        assert {"seven+steps", "one+steps", "play5+steps"} <= set(seen), seen


def test_fast_search_equals_reference_search_on_sampled_positions():
    # the same random positions (random variants, mid-turn too) as the other move tests
    for game in positions(120, seed=21):
        assert_same_turns(game)


def test_pending_states_outside_play_fall_back_or_agree():
    # States the engine never reaches in play, built by hand: the fast search must still
    # agree with the reference (it hands the odd ones over to it).
    rng = random.Random(5)
    checked = 0
    for game in positions(40, seed=22, mid_turn=False, every=4):
        for draw_ok, plays_left, pending in [(True, 1, NONE), (False, 2, NONE), (False, 1, PLAY5), (False, 1, SEVEN)]:
            trial = game.copy(record=False)
            trial.draw_ok, trial.plays_left, trial.pending = draw_ok, plays_left, pending
            if pending == SEVEN:
                palette = _bits(trial.pal[trial.turn])
                trial.seven_card = rng.choice(palette)
            assert_same_turns(trial, reachable=False)
            checked += 1
    assert checked > 100


def test_a_three_drawing_a_known_card_and_a_seven_and_a_one_by_hand():
    # p:G3 draws the I5 that an action put face up: the turn goes on with the I5 in hand
    game = position(
        hands=[["G3", "B5", "V2"], ["R1"]],
        palettes=[["O4", "I7"], ["Y6"]],
        deck=["I5", "V6"],
        known=["I5"],
        actions=True,
        draw=True,
    )
    assert_same_turns(game)
    turns = {str(t) for t in game.legal_turns()}
    assert any(t.startswith("p:G3 c:I5") for t in turns)
    # a 7 with other palette cards, and a 1 with targets, mid-turn
    game = position(hands=[["R7", "V1", "G2"], ["B1"]], palettes=[["O4", "I3"], ["Y6", "Y5", "B2"]], actions=True)
    for step, owed in (("p:R7", SEVEN), ("p:V1", ONE)):
        trial = game.copy()
        trial.push(step)
        assert trial.pending == owed
        assert_same_turns(trial)


def test_taking_a_card_never_raises_a_palettes_key():
    # What the 1's check relies on: under every rule, a palette minus one card has a key
    # no higher than the palette's (fewer or equal qualifying cards, never a higher top).
    rng = random.Random(6)
    for _ in range(3000):
        nm = 0
        for c in rng.sample(range(49), rng.randint(1, 12)):
            nm |= 1 << c
        keys = all_keys(nm, color_mask_of(nm))
        for c in _bits(nm):
            smaller = all_keys(nm ^ 1 << c, color_mask_of(nm ^ 1 << c))
            assert all(a <= b for a, b in zip(smaller, keys, strict=True)), (nm, c)
