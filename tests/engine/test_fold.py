"""A fold takes back its turn (RULES.md, You must lead, Decision; batch rules 4).

Every card goes back where it was when the turn began, cards drawn this turn back on top
of the deck in the order drawn, and the player leaves the round from there.  Games
created under batch rules 1 to 3 keep the old reading: the turn's steps stood.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from red7es import Color, Game, PlayerOut, RoundWon, TurnTakenBack, Variant, determinize
from red7es.game import BATCH_RULES
from red7es.rules import qualifying_mask
from red7es.steps import END, FOLD

from .helpers import facts_of, names, position, texts

OLD, NEW = 3, 4


def test_new_games_are_refereed_under_the_take_back_rule():
    assert BATCH_RULES >= NEW  # (5 added the seats' words resign and abort, and kept the take-back)
    assert Game.new(2, seed="x").batch_rules == BATCH_RULES


# ---------------------------------------------------------------- the positions of issue 19


def discard_then_fold(batch_rules: int) -> Game:
    """Seat 0 holds V5 (palette G1); seat 1 leads with R7 B6 under Red (Advanced game)."""
    return position(
        hands=[["V5", "O2"], ["Y3"]],
        palettes=[["G1"], ["R7", "B6"]],
        scoring=True,
        draw=True,
        batch_rules=batch_rules,
    )


def test_a_fold_after_a_discard_leaves_the_winner_scoring_under_the_rule_before_it():
    facts = discard_then_fold(NEW).apply("c:V5 fold")
    won = facts_of(facts, RoundWon)[0]
    assert (won.seat, won.rule, names(won.cards)) == (1, Color.RED, ["R7"])


def test_under_batch_rules_3_a_fold_after_a_discard_left_the_winner_nothing_to_score():
    facts = discard_then_fold(OLD).apply("c:V5 fold")
    won = facts_of(facts, RoundWon)[0]
    assert (won.seat, won.rule, names(won.cards)) == (1, Color.VIOLET, [])


def one_then_fold(batch_rules: int) -> Game:
    """Seat 0 may play Y1 (a discard of V5 would then lead under Violet); seat 1 leads with R7 B2."""
    return position(
        hands=[["Y1", "V5"], ["O3"]],
        palettes=[["G1"], ["R7", "B2"]],
        scoring=True,
        draw=True,
        actions=True,
        batch_rules=batch_rules,
    )


def test_a_fold_after_a_one_puts_the_card_it_took_back_in_the_winners_palette():
    game = one_then_fold(NEW)
    facts = game.apply("p:Y1 1:R7 fold")
    won = facts_of(facts, RoundWon)[0]
    assert (won.seat, won.rule, names(won.cards)) == (1, Color.RED, ["R7"])
    assert [texts(f.steps) for f in facts_of(facts, TurnTakenBack)] == [["p:Y1", "1:R7"]]


def test_under_batch_rules_3_a_fold_after_a_one_left_the_winner_only_b2():
    facts = one_then_fold(OLD).apply("p:Y1 1:R7 fold")
    won = facts_of(facts, RoundWon)[0]
    assert (won.seat, won.rule, names(won.cards)) == (1, Color.RED, ["B2"])
    assert not facts_of(facts, TurnTakenBack)


# ---------------------------------------------------------------- what goes back where


def known(game: Game) -> list[str]:
    """The deck cards everyone knows, top first."""
    return [str(c) for c in game.deck_cards if game.known >> int(c) & 1]


def three_players(batch_rules: int = NEW, **flags: object) -> Game:
    """Three seats, so a fold does not end the round and the taken-back state stays to see."""
    return position(
        hands=[["R3", "G6", "B5", "Y7"], ["O2"], ["I2"]],
        palettes=[["V4", "I1"], ["O4", "B3"], ["B6"]],
        deck=["R1", "Y2", "G3"],
        known=["Y2"],
        rule="red",
        batch_rules=batch_rules,
        actions=True,
        draw=True,
        **flags,
    )


def test_cards_drawn_this_turn_go_back_on_top_of_the_deck_in_the_order_drawn():
    game = three_players()
    # R3 draws R1 (a 3's action); c:G6 opens the draw (6 > 3 palette cards): Y2, which was known
    facts = game.apply("p:R3 c:G6 draw fold")
    assert texts(game.deck_cards) == ["R1", "Y2", "G3"]
    assert known(game) == ["Y2"]  # Y2 was known when the turn began, R1 was not
    assert names(game.hand(0)) == ["Y7", "G6", "B5", "R3"]
    assert names(game.palette(0)) == ["V4", "I1"] and game.canvas_cards == () and game.rule == Color.RED
    assert facts_of(facts, PlayerOut) == [PlayerOut(0, "fold")]
    assert game.turn == 1


def test_a_seven_and_its_card_on_the_deck_go_back_to_the_palette():
    game = three_players()
    game.apply("p:Y7 7d:I1 fold")
    assert names(game.palette(0)) == ["V4", "I1"] and names(game.hand(0)) == ["Y7", "G6", "B5", "R3"]
    assert texts(game.deck_cards) == ["R1", "Y2", "G3"] and known(game) == ["Y2"]


def test_a_fold_as_the_first_step_takes_nothing_back_and_says_nothing_of_it():
    facts = three_players().apply("fold")
    assert not facts_of(facts, TurnTakenBack)


def test_a_fold_after_an_open_turn_takes_back_the_three_and_its_unseen_draw():
    game = three_players()
    game.apply("p:R3 ...")
    assert "R1" in texts(game.hand(0))
    game.apply("fold")
    assert texts(game.deck_cards) == ["R1", "Y2", "G3"]
    assert names(game.hand(0)) == ["Y7", "G6", "B5", "R3"]


def test_push_and_pop_around_a_take_back_restore_the_turn():
    game = three_players()
    game.push("p:R3")
    game.push("fold")
    game.pop()
    assert "R1" in texts(game.hand(0)) and game.current_turn_steps[0].card is not None
    game.pop()
    assert texts(game.deck_cards) == ["R1", "Y2", "G3"] and game.turn == 0


@pytest.mark.parametrize("batch_rules", [OLD, NEW])
def test_a_turn_judged_under_other_batch_rules_folds_under_them_and_the_game_keeps_its_own(batch_rules):
    game = three_players(batch_rules=NEW)
    game.apply("p:R3 c:G6 fold", batch_rules=batch_rules)
    assert (game.rule == Color.GREEN) == (batch_rules == OLD)
    assert game.batch_rules == NEW


def open_turn(seed: int) -> Game:
    """A real 3-player game (no card out of play, as an observation needs) where the
    player to move has just played a 3 that drew a card nobody has seen."""
    for attempt in range(seed * 20, seed * 20 + 20):
        rng = random.Random(attempt)
        game = Game.new(Variant(3, draw=True, actions=True), seed=f"open-{attempt}")
        while game.outcome is None:
            turns = [t for t in game.legal_turns() if not t.is_fold]
            opens = [t for t in turns if t.open]
            if opens:
                game.apply(opens[0])
                return game
            game.apply(rng.choice(turns or game.legal_turns()))
    raise AssertionError("no open turn in 20 games")


@pytest.mark.parametrize("seed", range(4))
def test_a_game_dealt_from_the_movers_observation_takes_the_turn_back_the_same_way(seed):
    game = open_turn(seed)
    seat = game.turn
    real = game.copy()
    real.apply("fold")
    for deal in range(3):
        world = determinize(game.observation(seat), random.Random(deal))
        world.apply("fold")
        assert world.hand(seat) == real.hand(seat)
        assert world.deck_cards[:1] == real.deck_cards[:1]  # the card the 3 drew, which the mover saw
        assert [world.palette(s) for s in game.in_round] == [real.palette(s) for s in game.in_round]
        assert (world.canvas_cards, world.rule, len(world.deck)) == (real.canvas_cards, real.rule, len(real.deck))


@pytest.mark.parametrize("seed", range(4))
def test_another_seats_observation_hides_the_card_the_mover_drew_and_its_world_still_folds(seed):
    game = open_turn(seed)
    other = (game.turn + 1) % 3
    obs = game.observation(other)
    assert obs.turn_journal != game.observation(game.turn).turn_journal  # not the other's to know
    real = game.copy()
    real.apply("fold")
    world = determinize(obs, random.Random(1))
    world.apply("fold")  # the card the 3 drew goes back: one of the mover's, the viewer cannot tell which
    assert [world.palette(s) for s in game.in_round] == [real.palette(s) for s in game.in_round]
    assert [world.hands[s].bit_count() for s in range(3)] == [real.hands[s].bit_count() for s in range(3)]
    assert (world.canvas_cards, world.rule, len(world.deck)) == (real.canvas_cards, real.rule, len(real.deck))


# ---------------------------------------------------------------- property


def _where(game: Game) -> tuple[object, ...]:
    return (game.hands[:], game.pal[:], game.deck[:], game.known, game.canvas[:], game.rule, game.scores[:])


@settings(max_examples=150, deadline=None)
@given(
    variant=st.builds(
        Variant, players=st.integers(2, 4), scoring=st.booleans(), draw=st.booleans(), actions=st.booleans()
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_after_any_turn_ending_in_fold_every_card_is_where_it_was_when_the_turn_began(variant, seed):
    rng = random.Random(seed)
    game = Game.new(variant, seed=seed.to_bytes(8, "big"))
    for _ in range(400):
        if game.outcome is not None:
            return
        assert not game.turn_steps
        turn_start = _where(game)
        steps = [s for s in game.legal_steps() if int(s) not in (FOLD, END)]
        while steps and rng.random() < 0.8:
            game.push(rng.choice(steps))
            steps = [s for s in game.legal_steps() if int(s) not in (FOLD, END)]
        seat, round_number = game.turn, game.round
        hands, pal, rule = turn_start[0], turn_start[1], turn_start[5]
        facts = game.apply("fold")
        game._stack = []
        won = facts_of(facts, RoundWon)
        if won:  # the round ended: the winner scored from the palette it had when the turn began
            w = won[0]
            assert (w.round, int(w.rule)) == (round_number, rule)
            assert sum(1 << int(c) for c in w.cards) == (qualifying_mask(rule, pal[w.seat]) if variant.scoring else 0)
        else:
            assert _where(game) == turn_start
            assert game.hands[seat] == hands[seat]
        if game.outcome is None and rng.random() < 0.7:  # play on with a real turn
            turns = [t for t in game.legal_turns() if not t.is_fold and not t.open]
            if turns:
                game.apply(rng.choice(turns))


@pytest.mark.parametrize("batch_rules", [OLD, NEW])
def test_bots_search_worlds_refereed_under_the_games_own_batch_rules(batch_rules):
    """A bot's search plays the game's version: a world dealt from a view folds as the referee does."""
    game = Game.new(Variant(3, actions=True), seed="bots", batch_rules=batch_rules)
    obs = game.observation(game.turn)
    assert obs.batch_rules == batch_rules
    assert determinize(obs, random.Random(0)).batch_rules == batch_rules
    assert determinize(obs, None).copy().batch_rules == batch_rules
