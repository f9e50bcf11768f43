"""Properties over thousands of random seeded games (2-4 players, random variant flags).

Each example is one whole game: the variant comes from Hypothesis, every turn is
``random.Random(seed).choice(game.legal_turns())``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from red7es import Color, Game, IllegalStep, Turn, Variant, replay
from red7es.rules import KEY_FUNCTIONS
from red7es.steps import END, FOLD, STEPS

from .helpers import census
from .reference import reference_leader
from .test_observation import assert_no_leak

MAX_TURNS = 3000  # far above anything random play reaches: a game that goes on is a bug

variants = st.builds(
    Variant,
    players=st.integers(2, 4),
    scoring=st.booleans(),
    draw=st.booleans(),
    actions=st.booleans(),
    rounds=st.just(1),
)
seeds = st.integers(0, 2**32 - 1)


def play(variant: Variant, seed: int, each_turn: Callable[[Game], None] = lambda g: None) -> tuple[Game, list[str]]:
    """Play a whole game with random legal turns; call ``each_turn`` before every turn and at the end."""
    rng = random.Random(seed)
    game = Game.new(variant, seed=seed.to_bytes(8, "big"))
    played: list[str] = []
    while True:
        each_turn(game)
        if game.outcome is not None:
            return game, played
        assert len(played) < MAX_TURNS, "the game does not terminate"
        turn = rng.choice(game.legal_turns())
        game.apply(turn)
        played.append(str(turn))


@settings(max_examples=1200, deadline=None)
@given(variant=variants, seed=seeds)
def test_all_49_cards_are_accounted_for_after_every_turn(variant, seed):
    everything = {c: 1 for c in range(49)}

    def check(game: Game) -> None:
        # hands + palettes + deck + Canvas + score piles, each card exactly once
        assert census(game) == everything
        assert game.removed == _union(game.scores)

    game, played = play(variant, seed, check)
    assert game.outcome is not None and len(played) < MAX_TURNS


def _union(masks: list[int]) -> int:
    out = 0
    for m in masks:
        out |= m
    return out


@settings(max_examples=300, deadline=None)
@given(variant=variants, seed=seeds)
def test_at_most_one_leader_and_it_is_the_reference_leader(variant, seed):
    def check(game: Game) -> None:
        if game.outcome is not None:
            return
        live = [s for s in range(game.players) if game.alive[s]]
        key = KEY_FUNCTIONS[game.rule]
        keys = [key(game.pal[s], game.palc[s]) for s in live]
        nonzero = [k for k in keys if k]
        assert len(nonzero) == len(set(nonzero)), "two palettes tie"
        expected = reference_leader(Color(game.rule), [game.palette(s) for s in live])
        assert game.leader() == (None if expected is None else live[expected])

    play(variant, seed, check)


@settings(max_examples=200, deadline=None)
@given(variant=variants, seed=seeds)
def test_observations_never_contain_another_hand_or_the_deck_order(variant, seed):
    def check(game: Game) -> None:
        for s in range(game.players):
            assert_no_leak(game, s)

    play(variant, seed, check)


@settings(max_examples=250, deadline=None)
@given(variant=variants, seed=seeds)
def test_replaying_the_same_seed_and_turns_reproduces_states_and_facts(variant, seed):
    states = []
    game, played = play(variant, seed, lambda g: states.append(g._save()))
    again = Game.new(variant, seed=seed.to_bytes(8, "big"))
    assert again._save() == states[0]
    for turn, state in zip(played, states[1:], strict=True):
        again.apply(Turn.parse(turn))  # through the notation and back
        assert again._save() == state
    assert again.log == game.log
    assert replay(variant, seed.to_bytes(8, "big"), played).log == game.log


@settings(max_examples=150, deadline=None)
@given(variant=variants, seed=seeds)
def test_a_rejected_turn_leaves_the_game_unchanged(variant, seed):
    rng = random.Random(seed ^ 0x5EED)
    codes = [c for c in STEPS if c not in (FOLD, END)]
    rejected = 0

    def check(game: Game) -> None:
        nonlocal rejected
        if game.outcome is not None:
            return
        legal = set(game.legal_turns())
        for _ in range(3):
            turn = Turn(tuple(STEPS[c] for c in rng.sample(codes, rng.randint(1, 3))))
            if turn in legal:
                continue
            before, log, obs = game._save(), list(game.log), game.observation(game.turn)
            try:
                game.apply(turn)
            except IllegalStep:
                rejected += 1
            else:
                # legal_turns() stops at a 3 drawing an unseen card ("p:V3 ..."): a batch
                # going on past that draw is legal without being listed.  Nothing else is.
                assert any(t.open and turn.steps[: len(t.steps)] == t.steps for t in legal), turn
                return
            assert game._save() == before and game.log == log and game.observation(game.turn) == obs

    play(variant, seed, check)
    assert rejected > 0


def _judged(game: Game, batch: str) -> str:
    """How ``batch`` is judged on a copy of ``game``: "applied", or the refusal's reason."""
    try:
        game.copy(record=False).apply(batch)
    except IllegalStep as exc:
        return str(exc)
    return "applied"


@settings(max_examples=80, deadline=None)
@given(players=st.integers(2, 4), draw=st.booleans(), scoring=st.booleans(), seed=seeds)
def test_a_batch_past_an_unseen_draw_is_judged_the_same_whatever_the_card(players, draw, scoring, seed):
    """Batch rules 3: what follows a 3's draw of a card nobody has seen is judged without it, so
    a refusal never tells the player what the card is (nor is an acceptance different)."""
    variant = Variant(players, scoring=scoring, draw=draw, actions=True)
    rng = random.Random(seed ^ 0xD3A)
    compared = 0

    def check(game: Game) -> None:
        nonlocal compared
        if game.outcome is not None or compared >= 40 or game.current_turn_steps:
            return
        hand = game.hands[game.turn]
        threes = [t for t in game.legal_turns() if t.open and len(t.steps) == 1]
        hidden = [i for i, card in enumerate(game.deck[:-1]) if not game.known >> card & 1]
        if not threes or not hidden:
            return
        other = game.copy(record=False)  # the same position with another unseen card on top
        i = rng.choice(hidden)
        other.deck[i], other.deck[-1] = other.deck[-1], other.deck[i]
        cards = [str(STEPS[c].card) for c in STEPS if c >> 6 == 1]  # every card, as c: names it
        rests = [f"c:{x}" for x in cards] + [f"c:{x} draw" for x in cards[::7]] + [f"p:{x}" for x in cards[::5]]
        rests += ["fold", "draw", f"c:{cards[rng.randrange(49)]} ...", "end"]
        for three in threes:
            for rest in rng.sample(rests, 12):
                batch = f"{three.steps[0]} {rest}"
                assert _judged(game, batch) == _judged(other, batch), (batch, hand)
                compared += 1

    play(variant, seed, check)
