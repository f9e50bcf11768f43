"""Action rules, variant flag ``actions`` (RULES.md, *Action rules*): 7, 5, 3 and 1."""

from __future__ import annotations

import pytest

from red7es import Card, Color, IllegalStep, PlayerOut, RoundWon, Turn

from .helpers import drawn, facts_of, names, position, steps_text, texts, turns_text

# ---------------------------------------------------------------- 7


def seven(**kw):
    """Seat 0 holds R7 and B3, palette V2 I1; seat 1 has O6.  Red is the rule."""
    kw.setdefault("actions", True)
    return position(hands=[["R7", "B3"], ["G4"]], palettes=[["V2", "I1"], ["O6"]], deck=["Y5"], **kw)


def test_seven_action_is_mandatory_when_another_palette_card_exists():
    game = seven()
    game.push("p:R7")
    assert steps_text(game.legal_steps()) == ["7c:I1", "7d:I1", "7c:V2", "7d:V2", "fold"]
    with pytest.raises(IllegalStep, match="the R7's action comes first"):
        game.push("end")
    with pytest.raises(IllegalStep, match="the R7's action comes first"):
        game.push("c:B3")


def test_seven_cannot_move_itself():
    game = seven()
    game.push("p:R7")
    with pytest.raises(IllegalStep, match="must move another card, not itself"):
        game.push("7c:R7")
    with pytest.raises(IllegalStep, match="must move another card, not itself"):
        game.push("7d:R7")


def test_seven_cannot_move_a_card_not_in_own_palette():
    game = seven()
    game.push("p:R7")
    with pytest.raises(IllegalStep, match="O6 is not in your palette"):
        game.push("7d:O6")


def test_seven_with_no_other_palette_card_has_no_action():
    game = position(hands=[["R7", "B3"], ["G4"]], palettes=[[], ["O6"]], actions=True)
    game.apply("p:R7")
    assert game.turn == 1


def test_seven_played_as_the_last_card_in_hand_must_still_move_another_palette_card():
    game = position(hands=[["R7"], ["G4"]], palettes=[["V2", "I1"], ["O6"]], actions=True)
    game.push("p:R7")
    assert game.hand(0) == ()
    assert steps_text(game.legal_steps()) == ["7c:I1", "7d:I1", "7c:V2", "7d:V2", "fold"]
    with pytest.raises(IllegalStep, match="the R7's action comes first"):
        game.push("end")
    game.pop()
    with pytest.raises(IllegalStep, match="the R7's action comes first"):
        game.apply("p:R7")
    assert turns_text(game.legal_turns()) == {"p:R7 7c:I1", "p:R7 7d:I1", "p:R7 7c:V2", "p:R7 7d:V2", "fold"}
    game.apply("p:R7 7d:V2")
    assert names(game.palette(0)) == ["R7", "I1"] and texts(game.deck_cards) == ["V2"]


def test_seven_to_canvas_makes_the_card_the_rule():
    game = seven()
    game.apply("p:R7 7c:V2")  # Violet: I1 is seat 0's only low card, O6 has none
    assert game.canvas_rule is Color.VIOLET
    assert names(game.canvas_cards) == ["V2"]
    assert names(game.palette(0)) == ["R7", "I1"]


def test_seven_to_canvas_still_requires_leading_at_the_end():
    game = position(hands=[["R7"], ["Y1"]], palettes=[["V2", "G4"], ["O6", "O4"]], actions=True)
    with pytest.raises(IllegalStep, match="you would not lead under Green"):
        game.apply("p:R7 7c:G4")  # Green: V2 alone against O6 O4


def test_decision_seven_to_canvas_counts_as_the_canvas_change_no_discard_may_follow():
    game = seven()
    with pytest.raises(IllegalStep, match="already changed the Canvas this turn"):
        game.apply("p:R7 7c:V2 c:B3")
    game.push("p:R7")
    game.push("7c:V2")
    assert steps_text(game.legal_steps()) == ["end", "fold"]


def test_decision_seven_to_deck_still_allows_a_discard_from_hand():
    game = seven()
    game.apply("p:R7 7d:V2 c:B3")  # Blue: I1 R7 are two colours
    assert game.canvas_rule is Color.BLUE
    assert texts(game.deck_cards) == ["V2", "Y5"]


def test_seven_to_deck_puts_the_card_face_up_on_top_for_everyone():
    game = seven()
    game.apply("p:R7 7d:V2")
    assert game.deck_cards[0] == Card.parse("V2")
    for seat in (0, 1):
        assert game.observation(seat).deck_known == ((0, Card.parse("V2")),)
    assert names(game.palette(0)) == ["R7", "I1"]


def test_known_deck_card_is_no_longer_shown_once_drawn():
    game = position(hands=[["R7", "B3"], ["G3", "G4"]], palettes=[["V2", "I1"], ["O6"]], deck=["Y5"], actions=True)
    game.apply("p:R7 7d:V2")
    facts = game.apply("p:G3 c:G4")  # G3 draws V2; Green: O6 against no even card
    assert drawn(facts) == [(1, "V2", "3")]
    assert game.observation(0).deck_known == ()
    assert texts(game.deck_cards) == ["Y5"]


def test_seven_without_the_actions_variant_does_nothing():
    game = seven(actions=False)
    game.apply("p:R7")
    assert game.turn == 1 and names(game.palette(0)) == ["R7", "V2", "I1"]


# ---------------------------------------------------------------- 5


def five(**kw):
    """Seat 0 holds R5 O7 G2 B2 Y3, palette V1; seat 1 has O3.  Red is the rule."""
    kw.setdefault("actions", True)
    kw.setdefault("deck", ["G6", "Y1"])
    hand = kw.pop("hand", ["R5", "O7", "B2", "Y3", "G4"])
    return position(hands=[hand, ["I7"]], palettes=[["V1"], ["O3"]], **kw)


def test_five_requires_another_palette_play_when_the_hand_is_not_empty():
    game = five()
    game.push("p:R5")
    assert steps_text(game.legal_steps()) == ["p:B2", "p:Y3", "p:G4", "p:O7", "fold"]
    with pytest.raises(IllegalStep, match="the 5's action comes first: play another card"):
        game.push("end")
    with pytest.raises(IllegalStep, match="the 5's action comes first"):
        game.push("c:B2")


def test_five_with_an_empty_hand_afterwards_has_no_action():
    game = five(hand=["R5"])
    game.apply("p:R5")
    assert game.turn == 1


def test_five_the_second_cards_action_happens_too():
    game = five()
    game.push("p:R5")
    game.push("p:O7")
    assert steps_text(game.legal_steps()) == ["7c:V1", "7d:V1", "7c:R5", "7d:R5", "fold"]


def test_five_chain_five_then_five_then_three():
    game = five(hand=["R5", "O5", "Y3", "B2"])
    facts = game.apply("p:R5 p:O5 p:Y3")
    assert names(game.palette(0)) == ["R5", "O5", "Y3", "V1"]
    assert drawn(facts) == [(0, "G6", "3")]
    assert game.turn == 1


def test_five_a_discard_may_follow_the_extra_play():
    game = five()
    game.apply("p:R5 p:B2 c:G4")  # Green: B2 is seat 0's even card, O3 is odd
    assert game.canvas_rule is Color.GREEN
    assert names(game.palette(0)) == ["R5", "B2", "V1"]


def test_five_only_one_extra_play():
    game = five()
    with pytest.raises(IllegalStep, match="already played a card to your palette"):
        game.apply("p:R5 p:B2 p:G4")


def test_five_without_the_actions_variant_does_nothing():
    game = five(actions=False)
    game.apply("p:R5")
    assert game.turn == 1


# ---------------------------------------------------------------- 3


def three(**kw):
    """Seat 0 holds R3 and B2, palette V1; seat 1 has O2.  The deck is G6 then Y1."""
    kw.setdefault("actions", True)
    kw.setdefault("deck", ["G6", "Y1"])
    return position(hands=[["R3", "B2"], ["I7"]], palettes=[["V1"], ["O2"]], **kw)


def test_three_draws_the_top_card_of_the_deck():
    game = three()
    facts = game.apply("p:R3")
    assert drawn(facts) == [(0, "G6", "3")]
    assert names(game.hand(0)) == ["G6", "B2"]
    assert texts(game.deck_cards) == ["Y1"]


def test_three_draw_is_recorded_right_after_the_play():
    game = three()
    facts = game.apply("p:R3")
    assert [type(f).__name__ for f in facts[:2]] == ["StepApplied", "CardDrawn"]


def test_three_with_an_empty_deck_draws_nothing():
    game = three(deck=[])
    facts = game.apply("p:R3")
    assert drawn(facts) == []
    assert names(game.hand(0)) == ["B2"]


def test_three_drawn_card_may_be_used_in_the_rest_of_the_turn():
    game = three()
    game.apply("p:R3 ...")
    assert game.turn == 0
    assert "c:G6" in steps_text(game.legal_steps())
    game.apply("c:B2")  # Blue: V1 R3 are two colours


def test_three_legal_turns_stop_at_an_unknown_draw_with_an_open_turn():
    game = three()
    turns = [t for t in game.legal_turns() if str(t).startswith("p:R3")]
    assert turns == [Turn.parse("p:R3 ...")]
    assert turns[0].open


def test_three_legal_turns_continue_when_the_top_card_is_known():
    game = three(known=["G6"])
    turns = [t for t in game.legal_turns() if str(t).startswith("p:R3")]
    assert turns and not any(t.open for t in turns)
    assert "p:R3 c:B2" in turns_text(turns)


def test_a_batch_goes_on_past_an_unseen_draw_with_the_cards_held_before_it():
    """RULES.md: several steps may be sent together; a 3's draw does not end the batch."""
    game = three()
    facts = game.apply("p:R3 c:B2")
    assert drawn(facts) == [(0, "G6", "3")]
    assert game.turn == 1 and names(game.hand(0)) == ["G6"]  # the drawn card is the player's once accepted
    game = three()
    game.apply("p:R3 fold")  # fold is always legal
    assert game.outcome is not None and game.outcome.winners == (1,)


def test_a_step_after_an_unseen_draw_is_judged_without_the_drawn_card():
    """A refusal must not tell what the drawn card is: the same refusal whether it is the top card or not."""
    for guess in ("G6", "Y1"):  # the top card, and another card the player has not seen
        for batch in (f"p:R3 c:{guess}", f"p:R3 p:{guess}", f"p:R3 c:{guess} ..."):
            game = three()
            with pytest.raises(IllegalStep) as refused:
                game.apply(batch)
            assert str(refused.value) == f"{guess} is not in your hand", batch
            assert names(game.hand(0)) == ["R3", "B2"] and texts(game.deck_cards) == ["G6", "Y1"]


def test_batch_rules_two_refuse_any_step_after_an_unseen_draw():
    """Games created under batch rules 2 keep them: the same refusal whatever the card."""
    for guess in ("G6", "Y1", "B2"):
        game = three()
        with pytest.raises(IllegalStep) as refused:
            game.apply(f"p:R3 c:{guess}", batch_rules=2)
        assert str(refused.value) == (
            "p:R3 draws a card nobody has seen: stop the turn there (p:R3 ...) and choose the rest once you see it"
        )
        assert names(game.hand(0)) == ["R3", "B2"] and texts(game.deck_cards) == ["G6", "Y1"]


def test_under_batch_rules_two_a_three_not_in_the_hand_is_refused_as_one_after_an_unseen_draw():
    """The reason is part of the record: batch rules 2 keep the one they first gave (the 3 is not looked at)."""
    game = three()
    with pytest.raises(IllegalStep, match=r"^p:Y3 draws a card nobody has seen"):
        game.apply("p:Y3 c:B2", batch_rules=2)
    with pytest.raises(IllegalStep, match=r"^Y3 is not in your hand"):
        game.apply("p:Y3 c:B2")  # batch rules 3 look at the 3 itself
    with pytest.raises(IllegalStep, match=r"^Y3 is not in your hand"):
        game.apply("p:Y3 ...", batch_rules=2)
    assert names(game.hand(0)) == ["R3", "B2"] and texts(game.deck_cards) == ["G6", "Y1"]


def test_batch_rules_one_apply_steps_after_an_unseen_draw():
    """Older games are refereed as they were played: the steps after the draw are judged on the card."""
    game = three()
    game.apply("p:R3 c:B2", batch_rules=1)  # refused by batch rules 2, whatever the card
    assert game.turn == 1
    game = three()
    with pytest.raises(IllegalStep, match=r"^Y1 is not in your hand"):
        game.apply("p:R3 c:Y1", batch_rules=1)
    assert names(game.hand(0)) == ["R3", "B2"]


def test_an_open_turn_past_an_unseen_draw_needs_a_way_on_without_the_drawn_card():
    game = three()
    game.apply("p:R3 c:B2 ...")  # blue: V1 R3 are two colours against O2's one, so it may end
    assert game.turn == 0 and names(game.hand(0)) == ["G6"]
    game.apply("end")
    assert game.turn == 1
    game = position(hands=[["R3", "G4"], ["I7"]], palettes=[["V1"], ["O2"]], deck=["G6", "Y1"], actions=True)
    with pytest.raises(IllegalStep, match=r"^after p:R3 c:G4 you could not end the turn leading$"):
        game.apply("p:R3 c:G4 ...")  # green: only O2 is even, and nothing may follow the discard
    assert names(game.hand(0)) == ["G4", "R3"] and texts(game.deck_cards) == ["G6", "Y1"]


def test_steps_may_follow_a_draw_everyone_saw():
    game = three(known=["G6"])
    game.apply("p:R3 c:B2")
    assert game.turn == 1


def test_an_open_turn_must_be_the_start_of_a_legal_turn():
    """Keeping a turn open never strands a player whose only way on is to fold."""
    game = position(hands=[["B5", "B2", "Y1"], ["I7"]], palettes=[["V6"], ["O6"]])  # red: O6 leads
    with pytest.raises(IllegalStep, match="after c:Y1 you could not end the turn leading"):
        game.apply("c:Y1 ...")  # yellow: one card each, O6 is higher; nothing may follow a discard
    assert names(game.hand(0)) == ["B5", "B2", "Y1"] and not game.current_turn_steps
    game.apply("p:B5 ...")  # the start of p:B5 c:B2 (blue: two colours against one)
    assert game.turn == 0
    game.apply("c:B2")
    assert game.turn == 1


def test_open_turn_keeps_the_same_player_to_move():
    game = three()
    game.apply("p:R3 ...")
    assert game.turn == 0
    assert [str(s) for s in game.current_turn_steps] == ["p:R3"]
    assert "fold" in turns_text(game.legal_turns())


def test_three_played_as_the_last_card_in_hand_draws_so_the_hand_is_not_empty():
    game = position(hands=[["R3"], ["I4", "Y2"]], palettes=[["V1"], ["O2"]], deck=["G6", "Y1"], actions=True)
    facts = game.apply("p:R3")
    assert drawn(facts) == [(0, "G6", "3")]
    assert names(game.hand(0)) == ["G6"]
    facts = game.apply("p:I4")  # Red: I4 beats R3
    assert game.turn == 0 and game.alive == [True, True]
    assert not facts_of(facts, PlayerOut)


def test_three_played_as_the_last_card_with_an_empty_deck_draws_nothing():
    game = position(hands=[["R3"], ["I4", "Y2"]], palettes=[["V1"], ["O2"]], deck=[], actions=True)
    facts = game.apply("p:R3")
    assert drawn(facts) == []
    assert game.hand(0) == ()
    facts = game.apply("p:I4")
    assert facts_of(facts, PlayerOut) == [PlayerOut(0, "empty-hand")]
    assert facts_of(facts, RoundWon)[0].seat == 1


def test_three_without_the_actions_variant_does_nothing():
    game = three(actions=False)
    facts = game.apply("p:R3")
    assert drawn(facts) == []
    assert texts(game.deck_cards) == ["G6", "Y1"]


# ---------------------------------------------------------------- 1


def test_one_takes_a_card_from_another_palette_to_the_top_of_the_deck():
    # Red: O6 loses to R7 - unless the 1 takes R7 away.
    game = position(hands=[["V1", "G2"], ["Y5"]], palettes=[["O6"], ["R7", "B2"]], deck=["Y1"], actions=True)
    game.apply("p:V1 1:R7")
    assert names(game.palette(1)) == ["B2"]
    assert texts(game.deck_cards) == ["R7", "Y1"]
    assert game.observation(1).deck_known == ((0, Card.parse("R7")),)


def test_one_action_is_mandatory_when_a_card_can_be_taken():
    game = position(hands=[["V1", "G2"], ["Y5"]], palettes=[["O6"], ["R7", "B2"]], actions=True)
    game.push("p:V1")
    assert steps_text(game.legal_steps()) == ["1:B2", "1:R7", "fold"]
    with pytest.raises(IllegalStep, match="the 1's action comes first"):
        game.push("end")
    with pytest.raises(IllegalStep, match="the 1's action comes first"):
        game.push("c:G2")


def test_one_may_be_played_only_thanks_to_its_take():
    # Red: R7 leads.  After V1 seat 0 has three cards, so it may take from R7 B2 B4:
    # taking R7 leaves B4 below O6.  Taking B2 or B4 leaves R7 leading, and
    # discarding Y3 (Yellow) loses to the Blue pair or to R7.
    game = position(hands=[["V1", "Y3"], ["Y5"]], palettes=[["O6", "I6"], ["R7", "B2", "B4"]], actions=True)
    assert {str(t) for t in game.legal_turns() if str(t).startswith("p:V1")} == {"p:V1 1:R7"}
    with pytest.raises(IllegalStep, match="you would not lead under Red"):
        game.apply("p:V1 1:B2")
    game.apply("p:V1 1:R7")


def test_one_may_be_played_only_thanks_to_a_discard():
    # After R1 seat 0 has two cards, R7's palette one: nothing can be taken.  Red
    # still goes to R7, but discarding V5 makes Violet the rule: V3 R1 lead.
    game = position(hands=[["R1", "V5"], ["Y5"]], palettes=[["V3"], ["R7"]], actions=True)
    assert {str(t) for t in game.legal_turns() if str(t).startswith("p:R1")} == {"p:R1 c:V5"}
    game.push("p:R1")
    assert not game.pending
    with pytest.raises(IllegalStep, match="you would not lead under Red"):
        game.push("end")
    game.push("c:V5")
    game.push("end")


def test_one_may_not_be_played_when_no_continuation_ends_leading():
    # Taking R7 leaves O7, taking O7 leaves R7; discarding G6 gives Green, where seat 0
    # has no even card: no way to end the turn leading, so R1 may not be played.
    game = position(hands=[["R1", "G6"], ["Y5"]], palettes=[["V3"], ["R7", "O7"]], actions=True)
    assert "p:R1" not in steps_text(game.legal_steps())
    assert not any(str(t).startswith("p:R1") for t in game.legal_turns())
    before = game._save()
    with pytest.raises(IllegalStep, match="you may not play R1: no way to finish this turn leading"):
        game.push("p:R1")
    assert game._save() == before


def test_one_refused_even_as_the_extra_play_of_a_five():
    game = position(hands=[["R5", "R1", "G6"], ["Y5"]], palettes=[["V3"], ["R7", "O7", "Y7"]], actions=True)
    game.push("p:R5")
    assert "p:R1" not in steps_text(game.legal_steps())


def test_decision_one_counts_itself_so_a_smaller_palette_cannot_be_targeted():
    # After R1 seat 0 has two cards (V3 R1): seat 1's single R7 is too small a palette,
    # seat 2's O2 O3 is big enough.
    game = position(
        hands=[["R1"], ["Y5"], ["Y6"]], palettes=[["V3"], ["R7"], ["O2", "O3"]], rule="violet", actions=True
    )
    game.push("p:R1")
    assert steps_text(game.legal_steps()) == ["1:O2", "1:O3", "fold"]
    with pytest.raises(IllegalStep, match="R7 is in a palette with fewer cards than yours"):
        game.push("1:R7")
    game.push("1:O3")
    game.push("end")


def test_one_may_take_an_opponents_only_palette_card_which_then_cannot_lead():
    # Seat 0's palette is empty, so after R1 it holds one card: seat 1's single O6 is a
    # palette as large, and the 1 must take it.  Seat 1 is left with an empty palette.
    game = position(hands=[["R1", "G4"], ["B6", "I4"]], palettes=[[], ["O6"]], deck=["Y1"], actions=True)
    assert {str(t) for t in game.legal_turns() if str(t).startswith("p:R1")} == {"p:R1 1:O6"}
    game.push("p:R1")
    assert steps_text(game.legal_steps()) == ["1:O6", "fold"]
    game.pop()
    game.apply("p:R1 1:O6")
    assert names(game.palette(0)) == ["R1"] and game.palette(1) == ()
    assert texts(game.deck_cards) == ["O6", "Y1"]
    for seat in (0, 1):
        assert game.observation(seat).deck_known == ((0, Card.parse("O6")),)
    # Seat 1's empty palette cannot lead under any rule: a discard alone never ends its turn.
    assert game.turn == 1 and game.leader() == 0
    assert turns_text(game.legal_turns()) == {"p:B6", "p:I4", "p:B6 c:I4", "p:I4 c:B6", "fold"}
    with pytest.raises(IllegalStep, match=r"^you would not lead under Indigo$"):
        game.apply("c:I4")


def test_decision_one_played_on_an_empty_palette_counts_itself_as_one_card():
    # After R1 seat 0's palette holds one card, the 1 itself: seat 1's single O6 and seat
    # 2's Y4 B2 are both large enough to be taken from.
    game = position(hands=[["R1"], ["G7"], ["G5"]], palettes=[[], ["O6"], ["Y4", "B2"]], rule="violet", actions=True)
    game.push("p:R1")
    assert steps_text(game.legal_steps()) == ["1:B2", "1:Y4", "1:O6", "fold"]
    game.push("1:O6")  # allowed, but B2 still leads under Violet
    with pytest.raises(IllegalStep, match=r"^you would not lead under Violet$"):
        game.push("end")
    game.pop()
    game.pop()
    game.apply("p:R1 1:B2")
    assert names(game.palette(0)) == ["R1"] and names(game.palette(2)) == ["Y4"]
    assert texts(game.deck_cards) == ["B2"]


def test_one_with_no_palette_big_enough_has_no_action():
    game = position(hands=[["R1"], ["Y5"]], palettes=[["V3", "I2"], ["O7"]], rule="violet", actions=True)
    game.apply("p:R1")
    assert game.turn == 1 and names(game.palette(1)) == ["O7"]


def test_one_cannot_take_own_card_or_a_card_of_a_player_who_is_out():
    game = position(
        hands=[["V1", "B4"], ["Y5"], ["Y6"]],
        palettes=[["O6"], ["R7", "B2"], ["R6", "O5", "Y4"]],
        out=[2],
        actions=True,
    )
    game.push("p:V1")
    with pytest.raises(IllegalStep, match="O6 is not in another player's palette"):
        game.push("1:O6")
    with pytest.raises(IllegalStep, match="R6 is not in another player's palette"):
        game.push("1:R6")
    assert steps_text(game.legal_steps()) == ["1:B2", "1:R7", "fold"]


def test_one_without_the_actions_variant_does_nothing():
    # With actions the 1 would have to take Y5 or B4 (a palette as large as V1 O6).
    game = position(hands=[["V1", "G2"], ["Y1"]], palettes=[["O6"], ["Y5", "B4"]])
    game.apply("p:V1")
    assert game.turn == 1 and names(game.palette(1)) == ["Y5", "B4"]


def test_decision_five_action_is_skipped_when_the_only_cards_left_are_ones_that_may_not_be_played():
    # RULES.md, Action rules, 5 (Decision): when the only cards left in hand are 1s that
    # may not be played (no continuation would let you lead), the 5's action is skipped.
    # After R5 only I1 is left, and I1 may not be played (no take is possible and nothing
    # is left to discard, so R7 would lead under Red): the turn goes on without it.
    game = position(hands=[["R5", "I1"], ["Y1"]], palettes=[["B3", "B4"], ["R7", "V6"]], actions=True)
    assert "p:R5 c:I1" in turns_text(game.legal_turns())
    assert not any(str(t).startswith("p:R5 p:I1") for t in game.legal_turns())
    with pytest.raises(IllegalStep, match="you have already played a card to your palette"):
        game.apply("p:R5 p:I1")  # the 5 owes no play: R5 was the turn's one
    game.push("p:R5")
    assert not game.pending
    assert "p:I1" not in steps_text(game.legal_steps())
    game.push("c:I1")  # Indigo: B3 B4 R5 is a run of three, V6 R7 a run of two
    game.push("end")
    assert game.turn == 1
