"""Reading the other hands from the turns their owners chose (red7es.bots.inference)."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

import pytest

from red7es.bots.greedy import GreedyBot
from red7es.bots.inference import WEIGHT_FLOOR, card_weights
from red7es.bots.ismcts import IsmctsBot
from red7es.facts import RoundDealt, StepApplied
from red7es.game import Game
from red7es.observation import Observation, determinize, observe, unseen_cards

VARIANTS = {
    "basic": {},
    "draw": {"draw": True},
    "actions": {"actions": True},
    "advanced": {"scoring": True, "draw": True, "actions": True},
}


def _greedy_positions(flags: dict[str, bool], players: int, games: int) -> list[Game]:
    """Recorded positions of games among greedy players, at the start of every turn."""
    bot = GreedyBot()
    out = []
    for k in range(games):
        game = Game.new(players, seed=f"infer-{players}-{k}", **flags)
        while game.outcome is None:
            out.append(game.copy())
            game.apply(bot.choose(game.observation(game.turn)))
    return out


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_never_rules_out_a_card_a_greedy_player_holds(name: str, players: int) -> None:
    """Against players who really choose like greedy, full belief is never wrong, and it learns."""
    ruled_out = 0
    for game in _greedy_positions(VARIANTS[name], players, 6):
        seat = game.turn
        weights = card_weights(observe(game, seat), 1.0)
        for other, w in weights.items():
            assert other != seat and game.alive[other]
            held = [c for c in range(49) if game.hands[other] >> c & 1]
            assert all(w[c] == 1.0 for c in held), (name, players, other)
            ruled_out += sum(1 for x in w if x < 1.0)
    assert ruled_out > 0


def test_each_contradicting_turn_multiplies_a_cards_weight_by_one_minus_belief() -> None:
    positions = _greedy_positions({}, 2, 4)
    late = [g for g in positions if len(observe(g, g.turn).history) >= 6]
    assert late
    for game in late:
        obs = observe(game, game.turn)
        strong, mild = card_weights(obs, 0.9), card_weights(obs, 0.5)
        assert strong.keys() == mild.keys()
        for seat, w in strong.items():
            for card, (a, b) in enumerate(zip(w, mild[seat], strict=True)):
                k = round(math.log(b, 0.5))  # how many turns contradict the card
                assert a == pytest.approx(max(0.1**k, WEIGHT_FLOOR)), card
    assert any(min(w) < 0.5 for g in late for w in card_weights(observe(g, g.turn), 0.5).values())


def test_no_belief_or_no_history_gives_no_weights() -> None:
    game = _greedy_positions({}, 2, 1)[5]
    obs = observe(game, game.turn)
    assert card_weights(obs, 1.0)
    assert card_weights(obs, 0.0) == {}
    assert card_weights(replace(obs, history=()), 1.0) == {}


def test_turns_before_a_players_last_draw_say_nothing_about_their_hand() -> None:
    for game in _greedy_positions({"draw": True}, 2, 10):
        obs = observe(game, game.turn)
        other = 1 - obs.seat
        drew = [i for i, t in enumerate(obs.history) if t.seat == other and t.drew]
        if drew and any(t.seat == other for t in obs.history[: drew[-1]]):
            later = replace(obs, history=obs.history[drew[-1] + 1 :])
            assert card_weights(obs, 1.0).get(other) == card_weights(later, 1.0).get(other)
            return
    raise AssertionError("no position where the opponent had drawn after an earlier turn")  # pragma: no cover


def test_weighted_dealing_follows_the_weights() -> None:
    game = _greedy_positions({}, 2, 1)[4]
    obs = observe(game, game.turn)
    other = 1 - obs.seat
    unseen = unseen_cards(obs)
    barred = set(unseen[: len(unseen) // 2])
    favoured = unseen[-1]
    weights = [WEIGHT_FLOOR if c in barred else 1.0 for c in range(49)]
    weights[favoured] = 20.0
    rng = random.Random(1)
    counts: Counter[int] = Counter()
    for _ in range(400):
        world = determinize(obs, rng, {other: weights})
        assert world.observation(obs.seat, history=False) == replace(obs, history=())
        hand = {c for c in range(49) if world.hands[other] >> c & 1}
        assert not hand & barred
        counts.update(hand)
    # a card twenty times as likely as each other one is in nearly every hand
    assert counts[favoured] > 0.9 * 400
    assert len(counts) == len(unseen) - len(barred)


def test_weighted_dealing_is_random_among_cards_weighted_alike() -> None:
    """Cards all but ruled out alike are dealt at random, not in the pool's order.

    Turns that contradict each other can leave every unseen card at the weight floor.
    The dealer does not shuffle a pool whose hands are all weighted, so this holds only
    if the weighted order itself never ties (keys as ``u ** 1e9`` are 0.0 and would).
    """
    game = _greedy_positions({}, 2, 1)[4]
    obs = observe(game, game.turn)
    other = 1 - obs.seat
    unseen = unseen_cards(obs)
    size = obs.seats[other].hand_size
    rng = random.Random(3)
    worlds = 300
    counts: Counter[int] = Counter()
    for _ in range(worlds):
        counts.update(c for c in unseen if determinize(obs, rng, {other: [WEIGHT_FLOOR] * 49}).hands[other] >> c & 1)
    expected = worlds * size / len(unseen)
    assert set(counts) == set(unseen)
    assert all(0.5 * expected < n < 1.6 * expected for n in counts.values())


def _worlds_barring(obs: Observation, seat: int, barred: set[int], worlds: int, seed: int) -> Iterator[Game]:
    """``worlds`` worlds dealt from ``obs`` with ``barred`` all but ruled out for ``seat``
    (checked: never in its hand)."""
    weights = [WEIGHT_FLOOR if c in barred else 1.0 for c in range(49)]
    rng = random.Random(seed)
    for _ in range(worlds):
        world = determinize(obs, rng, {seat: weights})
        assert not world.hands[seat] & sum(1 << c for c in barred)
        yield world


@pytest.mark.parametrize("weighted_first", [True, False])
def test_a_hand_without_weights_is_dealt_at_random_beside_a_weighted_one(weighted_first: bool) -> None:
    """In a 3-player game, a reading about one opponent says nothing about the other.

    A weighted deal leaves the pool in the weighted seat's order, unlikely cards last:
    the seat dealt after it from that order never got a card barred for the first.
    """
    game = _greedy_positions({}, 3, 1)[3]
    obs = observe(game, game.turn)
    first, second = sorted(v.seat for v in obs.seats if v.seat != obs.seat)
    weighted, plain = (first, second) if weighted_first else (second, first)
    unseen = unseen_cards(obs)
    barred = set(unseen[::2])
    worlds = 400
    held = 0
    for world in _worlds_barring(obs, weighted, barred, worlds, seed=4):
        held += sum(world.hands[plain] >> c & 1 for c in barred)
    # the plain hand is a random draw from what the weighted hand left: its share of barred cards
    size, weighted_size = obs.seats[plain].hand_size, obs.seats[weighted].hand_size
    expected = worlds * size * len(barred) / (len(unseen) - weighted_size)
    assert 0.8 * expected < held < 1.2 * expected


def _redealt(game: Game, seat: int) -> Game:
    """``game`` replayed from a deal where one card ``seat`` never played swaps with a deck card."""
    assert game.log is not None
    deal = game.log[0]
    assert isinstance(deal, RoundDealt)
    hands = [list(h) for h in deal.hands]
    kept = [c for c in hands[seat] if game.hands[seat] >> int(c) & 1]
    deck = list(deal.deck)
    a, b = kept[0], deck[-1]
    hands[seat][hands[seat].index(a)] = b
    deck[-1] = a
    other = Game.from_record(game.variant)
    other.load_deal(RoundDealt(1, tuple(tuple(sorted(h)) for h in hands), deal.palettes, tuple(deck), deal.first))
    for fact in game.log:
        if isinstance(fact, StepApplied):
            other.apply_fact(fact)
    return other


def test_a_bot_that_reads_the_history_still_never_peeks() -> None:
    """Two games with the same public turns but different hidden cards get the same decision."""
    checked = 0
    for game in _greedy_positions({}, 2, 4):
        seat = game.turn
        obs = observe(game, seat)
        if len(obs.history) < 3 or obs.turn_steps:
            continue
        twin = _redealt(game, 1 - seat)
        assert twin.hands[1 - seat] != game.hands[1 - seat]
        assert observe(twin, seat) == obs
        decisions = [IsmctsBot(seed=2, iterations=40, belief=1.0).choose(observe(g, seat)) for g in (game, twin)]
        assert decisions[0] == decisions[1]
        checked += 1
    assert checked >= 3


def test_belief_must_be_between_zero_and_one() -> None:
    with pytest.raises(ValueError, match="belief"):
        IsmctsBot(belief=1.5)
    assert IsmctsBot.from_options(belief="0.25").belief == 0.25


def test_only_a_bot_that_reads_the_history_is_given_it() -> None:
    """The replay a history costs is spent only for bots that read it (hot path of a worker)."""
    from red7es.bots.base import make_bot, observation_for

    game = _greedy_positions({}, 2, 1)[4]
    assert observation_for(make_bot("greedy"), game, game.turn).history == ()
    assert observation_for(make_bot("random"), game, game.turn).history == ()
    assert observation_for(make_bot("ismcts:belief=0,model=0"), game, game.turn).history == ()
    assert observation_for(make_bot("ismcts:belief=0"), game, game.turn).history  # the opponent model reads it
    assert observation_for(make_bot("ismcts"), game, game.turn) == observe(game, game.turn)
    assert len(observe(game, game.turn).history) == 4


@pytest.mark.parametrize("flags", [{"draw": True}, {"actions": True}], ids=["draw", "actions"])
def test_weighted_dealing_leaves_the_deck_order_uniform(flags: dict[str, bool]) -> None:
    """Cards the reading finds unlikely in a hand are not therefore on top of the deck
    (in every variant that reads the deck's order: a draw, or a 3's action)."""
    game = Game.new(2, seed="infer-deck", **flags)
    obs = observe(game, game.turn)
    other = 1 - obs.seat
    unseen = unseen_cards(obs)
    barred = set(unseen[:6])
    worlds = 600
    on_top = 0
    for world in _worlds_barring(obs, other, barred, worlds, seed=2):
        on_top += world.deck[-1] in barred  # the top of the deck is the end of the list
    expected = worlds * len(barred) / len(world.deck)
    assert 0.6 * expected < on_top < 1.5 * expected
