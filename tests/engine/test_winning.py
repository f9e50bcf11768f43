"""Winning (RULES.md, *Winning*): rounds in the basic game, Advanced scoring, the outcome."""

from __future__ import annotations

import pytest

from red7es import Card, Color, Game, GameOver, RoundDealt, RoundWon, TurnTakenBack, Variant, VariantError
from red7es.cards import cards_of_mask

from .helpers import cards, census, facts_of, names, position


def cards_in_play(game: Game) -> list[int]:
    return sorted(census(game).elements())


# ---------------------------------------------------------------- basic game


def test_basic_game_one_round_last_player_standing_wins_the_match():
    game = Game.new(2, seed="basic")
    first = game.turn
    facts = game.apply("fold")
    won = facts_of(facts, RoundWon)
    assert [(w.round, w.seat, w.cards) for w in won] == [(1, 1 - first, ())]
    over = facts_of(facts, GameOver)[0]
    assert over.outcome == game.outcome
    assert game.outcome.winners == (1 - first,)
    assert game.outcome.reason == "rounds"
    assert game.outcome.round_wins[1 - first] == 1
    assert game.turn == -1


def test_basic_game_first_to_three_round_wins_takes_the_match():
    game = Game.new(3, seed="three rounds", rounds=3)
    winners = []
    while game.outcome is None:
        facts = game.apply("fold")
        winners += [w.seat for w in facts_of(facts, RoundWon)]
        for dealt in facts_of(facts, RoundDealt):
            # all 49 cards are gathered and reshuffled between rounds
            assert cards_in_play(game) == list(range(49))
            assert all(len(game.hand(s)) == 7 and len(game.palette(s)) == 1 for s in range(3))
            assert dealt.round == len(winners) + 1
    champion = game.outcome.winners[0]
    assert winners.count(champion) == 3
    assert all(winners.count(s) < 3 for s in range(3) if s != champion)
    assert winners[-1] == champion
    assert game.outcome.round_wins == tuple(winners.count(s) for s in range(3))
    assert game.outcome.reason == "rounds"


def test_basic_game_rounds_are_dealt_with_a_fresh_shuffle():
    game = Game.new(2, seed="reshuffle", rounds=2)
    first_deal = game.log[0]
    game.apply("fold")
    second_deal = facts_of(game.log, RoundDealt)[1]
    assert second_deal.deck != first_deal.deck
    assert game.removed == 0 and game.scores == [0, 0]


def test_rounds_option_must_be_positive_and_is_only_for_the_basic_game():
    with pytest.raises(VariantError):
        Variant(2, rounds=0)
    with pytest.raises(VariantError, match="rounds is for the basic game"):
        Variant(2, scoring=True, rounds=2)


# ---------------------------------------------------------------- Advanced scoring


def test_advanced_scoring_blue_winner_takes_highest_card_of_each_colour():
    game = position(
        hands=[["Y2"], ["Y3"]],
        palettes=[["O2"], ["R1", "R5", "B2", "B3", "V7"]],
        rule="blue",
        scoring=True,
    )
    facts = game.apply("fold")
    won = facts_of(facts, RoundWon)[0]
    assert (won.seat, won.rule) == (1, Color.BLUE)
    assert names(won.cards) == ["V7", "R5", "B3"]
    assert names(game.score_pile(1)) == ["V7", "R5", "B3"]
    assert game.score(1) == 15 and game.score(0) == 0


def test_advanced_scoring_red_winner_takes_the_single_highest_card():
    game = position(hands=[["Y2"], ["Y3"]], palettes=[["O2"], ["R1", "R5", "V7"]], scoring=True)
    facts = game.apply("fold")
    assert names(facts_of(facts, RoundWon)[0].cards) == ["V7"]
    assert game.score(1) == 7


def test_advanced_scoring_uses_the_rule_in_force_when_the_round_ends():
    # Seat 0 discards to make Green the rule, then seat 1 folds: seat 0 scores its evens.
    game = position(hands=[["G1", "Y3"], ["Y5"]], palettes=[["O2", "B4", "R7"], ["I6"]], scoring=True)
    game.apply("c:G1")
    facts = game.apply("fold")
    assert names(facts_of(facts, RoundWon)[0].cards) == ["B4", "O2"]


def test_scored_cards_leave_the_game_the_next_deal_uses_the_rest():
    game = Game.new(2, seed="scored", scoring=True)
    game.apply("fold")
    won = facts_of(game.log, RoundWon)[0]
    assert len(won.cards) == 1  # Red: the winner's single palette card
    dealt = facts_of(game.log, RoundDealt)[1]
    taken = set(won.cards)
    in_play = {c for c in range(49)} - taken
    dealt_cards = {c for hand in dealt.hands for c in hand} | set(dealt.palettes) | set(dealt.deck)
    assert dealt_cards == in_play
    assert len(dealt.deck) == 49 - 1 - 16
    assert cards_in_play(game) == list(range(49))  # score pile included


@pytest.mark.parametrize(("players", "target"), [(2, 40), (3, 35), (4, 30)])
def test_advanced_scoring_target_depends_on_players(players, target):
    assert Variant(players, scoring=True).target_score == target


def test_advanced_scoring_target_option_overrides():
    assert Variant(3, scoring=True, target=12).target_score == 12
    with pytest.raises(VariantError, match="needs the scoring variant"):
        Variant(3, target=12)


def test_game_ends_when_a_score_reaches_the_target():
    # Seat 0 has 35 of 40 points; seat 1 folds and seat 0 takes I6 under Red.
    game = position(
        hands=[["Y2"], ["Y3"]],
        palettes=[["I6", "V1"], ["O2"]],
        scores=[["R7", "O7", "Y7", "G7", "B7"], []],
        turn=1,
        scoring=True,
    )
    facts = game.apply("fold")
    assert game.score(0) == 41
    assert game.outcome is not None
    assert (game.outcome.reason, game.outcome.winners, game.outcome.scores) == ("target", (0,), (41, 0))
    assert facts_of(facts, GameOver)[0].outcome == game.outcome
    assert not facts_of(facts, RoundDealt)


def test_scored_cards_leave_the_winners_palette_also_when_the_game_ends():
    game = position(
        hands=[["Y2"], ["Y3"]],
        palettes=[["I6", "V1"], ["O2"]],
        scores=[["R7", "O7", "Y7", "G7", "B7"], []],
        turn=1,
        scoring=True,
    )
    game.apply("fold")
    assert game.outcome is not None
    assert names(game.palette(0)) == ["V1"]
    assert "I6" in names(game.score_pile(0))
    assert census(game) == {c: 1 for c in census(game)}  # no card held twice


@pytest.mark.parametrize(("card", "ends"), [("I4", False), ("I5", True)])
def test_game_ends_exactly_at_the_target_and_not_below(card, ends):
    # 35 points plus 4 is 39 < 40: a new round; plus 5 is 40: the game is over.
    game = position(
        hands=[["Y2"], ["Y3"]],
        palettes=[[card, "V1"], ["O2"]],
        scores=[["R7", "O7", "Y7", "G7", "B7"], []],
        turn=1,
        scoring=True,
    )
    facts = game.apply("fold")
    assert (game.outcome is not None) is ends
    assert bool(facts_of(facts, RoundDealt)) is not ends


@pytest.mark.parametrize(
    ("players", "pile", "card", "score", "ends"),
    [
        (3, ["R7", "O7", "Y7", "G7"], "B7", 35, True),
        (3, ["R7", "O7", "Y7", "G7"], "B6", 34, False),
        (4, ["R7", "O7", "Y7", "G2"], "B7", 30, True),
        (4, ["R7", "O7", "Y7", "G2"], "B6", 29, False),
    ],
)
def test_default_target_with_three_and_four_players_ends_the_game_exactly_there(players, pile, card, score, ends):
    """RULES.md: the game ends when a score reaches the target, 35 with 3 players, 30 with 4."""
    # Seats 2 and up are out; seat 1 folds and seat 0 takes its single highest card (Red).
    game = position(
        hands=[["Y2"], ["Y3"], ["Y4"], ["Y5"]][:players],
        palettes=[[card, "V1"], ["O2"], ["O3"], ["O4"]][:players],
        scores=[pile, *[[] for _ in range(players - 1)]],
        out=range(2, players),
        turn=1,
        scoring=True,
    )
    facts = game.apply("fold")
    assert game.score(0) == score
    if ends:
        assert game.outcome is not None
        assert (game.outcome.reason, game.outcome.winners) == ("target", (0,))
        assert facts_of(facts, GameOver)[0].outcome == game.outcome
        assert not facts_of(facts, RoundDealt)
    else:
        assert game.outcome is None
        assert [d.round for d in facts_of(facts, RoundDealt)] == [2]
        assert all(len(game.hand(s)) == 7 for s in range(players))


def test_target_option_ends_the_game_at_its_own_score():
    game = position(hands=[["Y2"], ["Y3"]], palettes=[["I6"], ["O2"]], turn=1, scoring=True, target=6)
    game.apply("fold")
    assert game.outcome is not None and game.outcome.reason == "target"


# Four players, seats 2 and 3 already out: seat 0 folds and seat 1 wins the round,
# taking R7 (Red).  The score piles hold 17 cards, so 49 - 18 = 31 cards remain:
# too few to deal 8 to each of 4 players, and the game ends.
LOW_PILES = [["V1", "I1", "B1", "G1", "Y1", "O1"], ["V2", "I2", "B2", "G2", "Y2", "O2"]]


def deck_end(pile0, pile1, round_wins, extra=()):
    return position(
        hands=[["R5"], ["R4"], ["Y4"], ["G5"]],
        palettes=[["R6"], ["R7"], ["O6"], ["Y6"]],
        scores=[pile0, pile1, *LOW_PILES],
        round_wins=round_wins,
        out=[2, 3],
        deck=list(extra),
        scoring=True,
        target=100,
    )


def test_game_ends_when_too_few_cards_remain_to_deal_8_per_player():
    game = deck_end(["O7", "Y7", "G7"], ["B7", "I7"], [0, 0, 0, 0])
    assert 49 - game.removed.bit_count() == 32
    game.apply("fold")
    assert game.outcome is not None and game.outcome.reason == "deck"


def test_game_continues_when_exactly_8_per_player_remain():
    game = deck_end(["O7", "Y7"], ["B7", "I7"], [0, 0, 0, 0])  # 16 scored, 16 + 1 after the round
    game.apply("fold")
    assert game.outcome is None
    dealt = facts_of(game.log, RoundDealt)[-1]
    assert dealt.deck == ()  # all 32 remaining cards dealt, none left for the deck
    assert sorted(c for s in range(4) for c in game.hand(s) + game.palette(s)) == sorted(
        set(range(49)) - {c for s in range(4) for c in cards_of_mask(game.scores[s])}
    )


def deck_limit(players, scored):
    """Seat 0 folds and seat 1 wins the round, taking R7 (Red); seat 2, if any, is out.

    ``scored`` cards (the lowest not otherwise placed) are already in seat 0's score pile,
    so ``scored + 1`` cards have left the game when the round ends.  The target is more
    points than the deck holds: only the deck can end the game.
    """
    hands = [["R5"], ["R4"], ["Y4"]][:players]
    palettes = [["R6"], ["R7"], ["O6"]][:players]
    placed = {c for cs in hands + palettes for c in cards(cs)}
    pile = [Card(c) for c in range(49) if Card(c) not in placed][:scored]
    return position(
        hands=hands,
        palettes=palettes,
        scores=[pile, *[[] for _ in range(players - 1)]],
        out=range(2, players),
        scoring=True,
        target=200,
    )


@pytest.mark.parametrize("players", [2, 3])
def test_with_two_and_three_players_the_game_goes_on_while_exactly_8_per_player_remain(players):
    """RULES.md: the game ends "when too few cards remain to deal every player 7 + 1 cards"."""
    game = deck_limit(players, 49 - 8 * players - 1)
    game.apply("fold")
    assert names(facts_of(game.log, RoundWon)[0].cards) == ["R7"]
    assert 49 - game.removed.bit_count() == 8 * players
    assert game.outcome is None
    dealt = facts_of(game.log, RoundDealt)[-1]
    assert dealt.round == 2 and dealt.deck == ()
    assert all(len(game.hand(s)) == 7 and len(game.palette(s)) == 1 for s in range(players))


@pytest.mark.parametrize("players", [2, 3])
def test_with_two_and_three_players_the_game_ends_one_card_below_8_per_player(players):
    game = deck_limit(players, 49 - 8 * players)
    facts = game.apply("fold")
    assert 49 - game.removed.bit_count() == 8 * players - 1
    assert game.outcome is not None and game.outcome.reason == "deck"
    assert not facts_of(facts, RoundDealt)


def test_highest_score_wins_even_against_the_last_round_winner():
    game = deck_end(["O7", "Y7", "G7"], ["B3", "B4"], [0, 0, 0, 0])
    game.apply("fold")
    assert game.outcome.scores == (21, 14, 6, 12)
    assert game.outcome.winners == (0,)


def test_decision_score_tie_goes_to_more_rounds_won():
    game = deck_end(["O7", "Y7", "G7"], ["B7", "I7"], [3, 1, 0, 0])
    game.apply("fold")
    assert game.outcome.scores[:2] == (21, 21)
    assert game.outcome.round_wins[:2] == (3, 2)
    assert game.outcome.winners == (0,)


def test_decision_score_tie_and_round_wins_tie_is_a_shared_win():
    game = deck_end(["O7", "Y7", "G7"], ["B7", "I7"], [2, 1, 0, 0])
    game.apply("fold")
    assert game.outcome.scores[:2] == (21, 21)
    assert game.outcome.round_wins[:2] == (2, 2)
    assert game.outcome.winners == (0, 1)


def test_scoring_game_played_to_the_end_has_consistent_outcome():
    game = Game.new(3, seed="to the end", scoring=True, draw=True)
    while game.outcome is None:
        game.apply(game.legal_turns()[0])
    scores = [game.score(s) for s in range(3)]
    assert game.outcome.scores == tuple(scores)
    assert all(scores[w] == max(scores) for w in game.outcome.winners)
    if game.outcome.reason == "target":
        assert max(scores) >= 35
    assert len(facts_of(game.log, RoundWon)) == sum(game.outcome.round_wins)


def test_round_winner_after_a_mid_turn_fold_scores_under_the_rule_the_folder_left():
    # RULES.md (Decision, You must lead): a fold takes back the turn it ends.  Seat 0
    # makes Violet the rule and folds: the discard is taken back, so seat 1 scores under
    # Red, the rule seat 0 left when it gave up, and V5 is back in seat 0's hand.
    game = position(hands=[["V5", "R2"], ["Y6"]], palettes=[["O1"], ["R7", "B3", "I2"]], scoring=True)
    facts = game.apply("c:V5 fold")
    won = facts_of(facts, RoundWon)[0]
    assert (won.seat, won.rule, names(won.cards)) == (1, Color.RED, ["R7"])
    assert [str(t.steps[0]) for t in facts_of(facts, TurnTakenBack)] == ["c:V5"]


def test_under_batch_rules_3_a_mid_turn_fold_left_the_rule_the_folder_set():
    # Games created before batch rules 4: the discard stood, seat 1 took its cards below 4.
    game = position(hands=[["V5", "R2"], ["Y6"]], palettes=[["O1"], ["R7", "B3", "I2"]], scoring=True, batch_rules=3)
    facts = game.apply("c:V5 fold")
    won = facts_of(facts, RoundWon)[0]
    assert (won.seat, won.rule, names(won.cards)) == (1, Color.VIOLET, ["B3", "I2"])
    assert not facts_of(facts, TurnTakenBack)
