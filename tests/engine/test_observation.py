"""Hidden information (RULES.md, *Hidden information*): what an observation holds."""

from __future__ import annotations

import dataclasses
import random

import pytest

from red7es import Card, Step, determinize
from red7es.cards import cards_of_mask
from red7es.variant import Variant

from .helpers import census, names, position, public_cards
from .sampling import positions

# ---------------------------------------------------------------- what a player sees


def scene():
    """Seat 0 to move in a 3-player Advanced game; seat 2 is out; Y5 was put on the deck by an action."""
    return position(
        hands=[["R7", "B3"], ["G4", "Y1", "I6"], ["O1", "B1"]],
        palettes=[["V1", "I2"], ["O4"], ["R6", "B6"]],
        deck=["Y5", "V4", "G3"],
        known=["Y5"],
        canvas=["B2"],
        rule="blue",
        scores=[["R1"], [], ["O7"]],
        round_wins=[1, 0, 1],
        out=[2],
        scoring=True,
        draw=True,
        actions=True,
    )


def test_observation_holds_own_hand_only():
    obs = scene().observation(1)
    assert names(obs.hand) == ["I6", "G4", "Y1"]
    assert [v.hand_size for v in obs.seats] == [2, 3, 2]


def test_observation_shows_palettes_only_of_players_in_the_round():
    obs = scene().observation(0)
    assert [None if v.palette is None else names(v.palette) for v in obs.seats] == [["I2", "V1"], ["O4"], None]
    assert [v.in_round for v in obs.seats] == [True, True, False]


def test_observation_shows_canvas_rule_deck_size_score_piles_and_known_deck_cards():
    obs = scene().observation(1)
    assert names(obs.canvas) == ["B2"] and obs.rule.title == "Blue"
    assert obs.deck_size == 3
    assert obs.deck_known == ((0, Card.parse("Y5")),)
    assert [names(v.score_pile) for v in obs.seats] == [["R1"], [], ["O7"]]
    assert [v.score for v in obs.seats] == [1, 0, 7]
    assert [v.round_wins for v in obs.seats] == [1, 0, 1]
    assert obs.to_move == 0 and not obs.my_turn


def test_observation_of_a_seat_that_does_not_exist_is_an_error():
    with pytest.raises(ValueError, match="no seat 3"):
        scene().observation(3)


def cards_seen(obj: object) -> set[int]:
    """Every card anywhere inside an observation (dataclasses, tuples, steps)."""
    if isinstance(obj, Card):
        return {int(obj)}
    if isinstance(obj, Step):
        return {int(obj.card)} if obj.card is not None else set()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return set().union(*(cards_seen(getattr(obj, f.name)) for f in dataclasses.fields(obj)))
    if isinstance(obj, tuple | list | set | frozenset):
        return set().union(*(cards_seen(x) for x in obj))
    if isinstance(obj, dict):
        return cards_seen(list(obj.items()))
    return set()


def hidden_from(game, seat: int) -> set[int]:
    """Cards ``seat`` must not see: other hands, face-down palettes, unknown deck cards."""
    hidden = {c for c in game.deck if not game.known >> c & 1}
    for s in range(game.players):
        if s != seat:
            hidden |= set(cards_of_mask(game.hands[s]))
        if not game.alive[s]:
            hidden |= set(cards_of_mask(game.pal[s]))
    return hidden


def assert_no_leak(game, seat: int) -> None:
    obs = game.observation(seat)
    # the steps of the turn in progress are public: they were made in front of everyone
    assert obs.turn_steps == game.current_turn_steps
    rest = dataclasses.replace(obs, turn_steps=(), history=())
    assert not cards_seen(rest) & hidden_from(game, seat)
    # the round's past turns show only cards everyone was shown when they were played
    assert cards_seen(obs.history) <= public_cards(game)
    # the deck order: only the cards actions put face up, at their true depth
    top_first = list(game.deck_cards)
    assert all(top_first[d] == card and game.known >> card & 1 for d, card in obs.deck_known)
    assert len(obs.deck_known) == bin(game.known).count("1")


def test_scene_observations_leak_nothing():
    game = scene()
    for seat in range(3):
        assert_no_leak(game, seat)


def test_observations_of_random_games_never_contain_another_hand_or_the_deck_order():
    for game in positions(40, seed=1):
        for seat in range(game.players):
            assert_no_leak(game, seat)


# ---------------------------------------------------------------- determinize and legal turns


def test_determinize_gives_a_game_with_the_same_observation():
    for i, game in enumerate(positions(25, seed=2)):
        if game.outcome is not None:
            continue
        for seat in range(game.players):
            obs = game.observation(seat)
            world = determinize(obs, random.Random(i))
            assert world.observation(seat) == obs
            assert census(world) == {c: 1 for c in range(49)}


def test_determinize_deals_the_unseen_cards_differently():
    game = scene()
    obs = game.observation(0)
    worlds = {tuple(determinize(obs, random.Random(i)).hands) for i in range(20)}
    assert len(worlds) > 1


def test_observation_legal_turns_equal_game_legal_turns_for_the_player_to_move():
    for game in positions(40, seed=3):
        obs = game.observation(game.turn)
        assert obs.legal_turns() == game.legal_turns()
        assert obs.legal_steps() == game.legal_steps()


def test_observation_has_no_legal_turns_when_it_is_not_your_turn():
    game = scene()
    assert game.observation(1).legal_turns() == []
    assert game.observation(1).legal_steps() == []
    assert game.observation(1).check("fold") == "it is not your turn"


def test_observation_check_accepts_legal_turns_and_explains_illegal_ones():
    for game in positions(10, seed=4, mid_turn=False):
        obs = game.observation(game.turn)
        for turn in game.legal_turns():
            assert obs.check(turn) is None
    obs = scene().observation(0)
    assert obs.check("c:G4") == "G4 is not in your hand"


def test_observation_check_judges_steps_after_a_3_whose_draw_everyone_knows():
    actions = Variant(3, actions=True)

    def table(deck=(), known=()):
        # seat 2 is out: its face-down cards hold the rest of the 49
        return position(
            [["R3", "B2"], ["O1"], []], [["V1"], ["I2"], []], deck=deck, known=known, out=[2], variant=actions
        ).observation(0)

    # the deck is empty: the 3 draws nothing, so the discard after it is judged
    assert table().check("p:R3 c:V6") == "V6 is not in your hand"
    assert table().check("p:R3 c:B2") is None
    # the top card was put there face up by an action: everyone knows it is Y6
    assert table(["Y6"], ["Y6"]).check("p:R3 c:V6") == "V6 is not in your hand"
    assert table(["Y6"], ["Y6"]).check("p:R3 c:Y6") is None
    # an unseen card on top: what follows the 3 cannot be judged from the observation
    assert table(["Y6"]).check("p:R3 c:V6") is None


def test_observation_leader_is_the_game_leader():
    for game in positions(20, seed=5):
        for seat in range(game.players):
            assert game.observation(seat).leader == game.leader()
