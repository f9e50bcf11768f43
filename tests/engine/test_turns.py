"""A turn (RULES.md, *A turn*): its shapes, what is rejected and why, elimination."""

from __future__ import annotations

import pytest

from red7es import Card, Color, GameOverError, IllegalStep, PlayerOut, RoundWon, Step, StepApplied

from .helpers import facts_of, names, position, steps_text, turns_text


def two_players(**kw):
    """Seat 0 to move under Red: hand R7 B3 G2, palette V1; seat 1 has O4 and a G4 in hand."""
    return position(hands=[["R7", "B3", "G2"], ["G4", "Y1"]], palettes=[["V1"], ["O4"]], **kw)


# ---------------------------------------------------------------- the basic shapes


def test_play_to_palette_then_end():
    game = two_players()
    facts = game.apply("p:R7 end")
    assert facts == [StepApplied(0, Step.parse("p:R7")), StepApplied(0, Step.parse("end"))]
    assert names(game.palette(0)) == ["R7", "V1"]
    assert names(game.hand(0)) == ["B3", "G2"]
    assert game.turn == 1


def test_discard_to_canvas_then_end_changes_the_rule():
    # Blue: V1 I2 are two colours against O4's one.
    game = position(hands=[["B3", "G2"], ["Y1"]], palettes=[["V1", "I2"], ["O4"]])
    game.apply("c:B3")
    assert game.canvas_rule is Color.BLUE
    assert names(game.canvas_cards) == ["B3"]
    assert names(game.hand(0)) == ["G2"]
    assert game.turn == 1


def test_play_then_discard_then_end():
    game = two_players()
    game.apply("p:G2 c:B3")  # Blue: V1 G2 are two colours against O4's one
    assert names(game.palette(0)) == ["G2", "V1"]
    assert game.canvas_rule is Color.BLUE
    assert game.turn == 1


def test_fold_puts_the_player_out_of_the_round():
    game = position(hands=[["R7"], ["G4"], ["Y2"]], palettes=[["V1"], ["O4"], ["B5"]])
    facts = game.apply("fold")
    assert facts == [StepApplied(0, Step.parse("fold")), PlayerOut(0, "fold")]
    assert game.in_round == (1, 2)
    assert game.turn == 1


def test_legal_turns_at_start_are_the_basic_shapes_and_fold():
    game = two_players()
    assert turns_text(game.legal_turns()) == {
        "p:R7",  # Red: R7 beats O4
        "p:R7 c:B3",  # Blue: V1 R7 are two colours, O4 one
        "p:G2 c:B3",  # Blue: V1 G2 are two colours
        "fold",
    }


# ---------------------------------------------------------------- what is rejected


def test_end_with_nothing_done_is_rejected():
    game = two_players()
    with pytest.raises(IllegalStep, match="must play or discard a card before ending"):
        game.apply("end")


def test_decision_end_while_not_leading_is_rejected_not_a_loss():
    game = two_players()
    before = game._save()
    with pytest.raises(IllegalStep, match="you would not lead under Green"):
        game.apply("c:G2")  # Green: seat 0 has no even card, O4 leads
    assert game._save() == before
    assert game.alive == [True, True] and game.turn == 0
    assert game.log == []


def test_decision_end_while_not_leading_is_rejected_step_by_step_too():
    game = two_players()
    game.push("p:B3")
    with pytest.raises(IllegalStep, match="you would not lead under Red"):
        game.push("end")
    assert game.turn == 0 and game.alive == [True, True]
    assert not any(isinstance(f, PlayerOut) for f in game.log)
    assert steps_text(game.legal_steps()) == ["c:G2", "c:R7", "fold"]


@pytest.mark.parametrize(
    ("discard", "rule"),
    [
        ("G4", "Green"),  # no live palette holds an even card
        ("V2", "Violet"),  # no live palette holds a card below 4
    ],
)
def test_nobody_leads_so_ending_the_turn_is_refused(discard, rule):
    """RULES.md: "If nobody has a qualifying card, nobody leads" - so you do not lead either.

    Seat 2 is out: its B6 and I1 no longer count.
    """
    game = position(
        hands=[["G4", "V2", "Y7"], ["Y1"], ["B2"]],
        palettes=[["R5", "O7"], ["Y5"], ["B6", "I1"]],
        out=[2],
    )
    before = game._save()
    turns = turns_text(game.legal_turns())
    assert f"c:{discard}" not in turns and f"p:Y7 c:{discard}" not in turns
    with pytest.raises(IllegalStep, match=f"^you would not lead under {rule}$"):
        game.apply(f"c:{discard}")
    with pytest.raises(IllegalStep, match=f"^you would not lead under {rule}$"):
        game.apply(f"p:Y7 c:{discard}")  # Y7 is odd and not below 4: still nobody qualifies
    assert game._save() == before and game.log == []
    game.push(f"c:{discard}")
    assert game.leader() is None
    with pytest.raises(IllegalStep, match=f"^you would not lead under {rule}$"):
        game.push("end")
    assert steps_text(game.legal_steps()) == ["fold"]


def test_card_not_in_hand_is_rejected():
    game = two_players()
    with pytest.raises(IllegalStep, match="G4 is not in your hand"):
        game.apply("p:G4")
    with pytest.raises(IllegalStep, match="B5 is not in your hand"):
        game.apply("c:B5")


def test_second_palette_play_is_rejected():
    game = two_players()
    with pytest.raises(IllegalStep, match="already played a card to your palette this turn"):
        game.apply("p:R7 p:B3")


def test_palette_play_after_canvas_change_is_rejected():
    game = two_players()
    with pytest.raises(IllegalStep, match="cannot play to your palette after changing the Canvas"):
        game.apply("c:B3 p:R7")


def test_second_canvas_change_is_rejected():
    game = two_players()
    with pytest.raises(IllegalStep, match="already changed the Canvas this turn"):
        game.apply("p:R7 c:B3 c:G2")


def test_seven_card_steps_and_one_steps_need_their_action():
    game = two_players()
    with pytest.raises(IllegalStep, match="only possible as the action of a 7"):
        game.apply("p:R7 7d:V1")
    with pytest.raises(IllegalStep, match="only possible as the action of a 1"):
        game.apply("p:R7 1:O4")


def test_out_players_cards_no_longer_count():
    # Seat 2 is out: its R7 is face down, so seat 0's O6 leads under Red.
    game = position(hands=[["B2"], ["Y1"], ["G1"]], palettes=[["O6"], ["Y5"], ["R7"]], out=[2])
    game.apply("p:B2")
    assert game.turn == 1


# ---------------------------------------------------------------- batches


def test_batch_is_all_or_nothing():
    game = two_players()
    before = game._save()
    observations = [game.observation(s) for s in range(2)]
    with pytest.raises(IllegalStep):
        game.apply("p:R7 c:B3 c:G2")  # the second discard is illegal
    assert game._save() == before
    assert [game.observation(s) for s in range(2)] == observations
    assert game.log == []


def test_batch_rejected_at_the_implied_end_leaves_no_trace():
    game = two_players()
    before = game._save()
    with pytest.raises(IllegalStep, match="would not lead"):
        game.apply("p:B3 c:G2")
    assert game._save() == before


def test_end_is_implied_after_the_last_step():
    game = two_players()
    facts = game.apply("p:R7")
    assert facts[-1] == StepApplied(0, Step.parse("end"))
    assert game.turn == 1


def test_written_end_and_implied_end_give_the_same_game():
    a, b = two_players(), two_players()
    a.apply("p:R7 c:B3 end")
    b.apply("p:R7 c:B3")
    assert a._save() == b._save() and a.log == b.log


def test_push_and_pop_restore_the_state_exactly():
    game = two_players()
    states = [game._save()]
    logs = [list(game.log)]
    for step in ("p:R7", "c:B3", "end"):
        game.push(step)
        states.append(game._save())
        logs.append(list(game.log))
    assert game.turn == 1
    for state, log in zip(reversed(states[:-1]), reversed(logs[:-1]), strict=True):
        game.pop()
        assert game._save() == state
        assert game.log == log
    with pytest.raises(IndexError):
        game.pop()


def test_rejected_push_changes_nothing():
    game = two_players()
    game.push("p:R7")
    before = game._save()
    with pytest.raises(IllegalStep):
        game.push("p:B3")
    assert game._save() == before
    game.pop()
    assert game.hand(0) == tuple(sorted(Card.parse(c) for c in ("R7", "B3", "G2")))


# ---------------------------------------------------------------- turn order and elimination


def test_turns_go_in_seat_order_skipping_eliminated_players():
    game = position(
        hands=[["R7", "R6"], ["Y1"], ["O7", "O6"], ["Y7", "Y6"]],
        palettes=[["V1"], ["V2"], ["I1"], ["B1"]],
        out=[1],
    )
    game.apply("p:R6")
    assert game.turn == 2  # seat 1 is out
    game.apply("p:O7")
    assert game.turn == 3
    game.apply("fold")
    assert game.turn == 0  # wraps round, skipping seat 1 and now seat 3


def test_empty_hand_at_turn_start_puts_the_player_out_automatically():
    game = position(hands=[["R7"], [], ["Y5", "Y4"]], palettes=[["V1"], ["O2"], ["B3"]])
    facts = game.apply("p:R7")
    assert PlayerOut(1, "empty-hand") in facts
    assert game.in_round == (0, 2)
    assert game.turn == 2


def test_emptying_your_hand_does_not_put_you_out_until_your_next_turn():
    game = position(hands=[["R7"], ["G1", "G2"], ["Y5", "Y4"]], palettes=[["V1"], ["O2"], ["B3"]])
    game.apply("p:R7")
    assert game.alive[0] and game.hands[0] == 0
    game.apply("fold")  # seat 1
    game.apply("fold")  # seat 2: only seat 0 left
    assert facts_of(game.log, RoundWon)[0].seat == 0


def test_last_player_standing_wins_the_round_at_once():
    game = position(hands=[["R7"], ["G1"], ["Y5"]], palettes=[["V1"], ["O2"], ["B3"]], out=[2])
    facts = game.apply("fold")
    assert RoundWon(1, 1, Color.RED, ()) in facts
    assert game.outcome is not None and game.outcome.winners == (1,)


def test_last_player_standing_after_an_empty_hand_wins_the_round():
    game = position(hands=[["R7"], []], palettes=[["V1"], ["O2"]])
    facts = game.apply("p:R7")
    assert PlayerOut(1, "empty-hand") in facts
    assert facts_of(facts, RoundWon)[0].seat == 0


def test_several_players_out_for_an_empty_hand_in_one_pass_in_seat_order_from_the_mover():
    # Seat 2 plays; seats 3, 0 and 1 have no cards when their turns would begin, so they go
    # out in that order (the pass wraps round after seat 3), and seat 2 is left to win.
    game = position(hands=[[], [], ["R7"], []], palettes=[["V1"], ["O2"], ["B3"], ["Y4"]], turn=2)
    facts = game.apply("p:R7")
    assert facts_of(facts, PlayerOut) == [
        PlayerOut(3, "empty-hand"),
        PlayerOut(0, "empty-hand"),
        PlayerOut(1, "empty-hand"),
    ]
    assert facts_of(facts, RoundWon) == [RoundWon(1, 2, Color.RED, ())]
    assert facts.index(PlayerOut(1, "empty-hand")) < facts.index(RoundWon(1, 2, Color.RED, ()))
    assert game.outcome is not None and game.outcome.winners == (2,)


def test_players_out_for_an_empty_hand_then_a_fold_leaves_the_last_player_standing():
    # Seat 0 plays its last card; seats 1 and 2 go out for an empty hand, seat 3 still has
    # cards and takes its turn.  It folds: seat 0 is the last player standing and wins the
    # round at once, though its own hand is empty.
    game = position(hands=[["R7"], [], [], ["Y1", "Y2"]], palettes=[["V1"], ["O2"], ["B3"], ["Y4"]])
    facts = game.apply("p:R7")
    assert facts_of(facts, PlayerOut) == [PlayerOut(1, "empty-hand"), PlayerOut(2, "empty-hand")]
    assert not facts_of(facts, RoundWon)
    assert game.turn == 3 and game.in_round == (0, 3)
    facts = game.apply("fold")
    assert facts_of(facts, PlayerOut) == [PlayerOut(3, "fold")]
    assert facts_of(facts, RoundWon) == [RoundWon(1, 0, Color.RED, ())]
    assert game.outcome is not None and game.outcome.winners == (0,)


def test_no_step_is_accepted_after_the_game_is_over():
    game = two_players()
    game.apply("fold")
    assert game.outcome is not None
    assert game.legal_steps() == [] and game.legal_turns() == []
    with pytest.raises(GameOverError, match="the game is over"):
        game.apply("fold")


# ---------------------------------------------------------------- fold is always legal


def test_fold_is_always_legal_at_the_start_of_a_turn():
    game = two_players()
    assert "fold" in steps_text(game.legal_steps())
    assert "fold" in turns_text(game.legal_turns())


def test_fold_is_legal_mid_turn():
    game = two_players()
    game.push("p:B3")  # not leading, and cannot end
    assert "fold" in steps_text(game.legal_steps())
    game.push("fold")
    assert not game.alive[0]


def test_fold_is_legal_in_a_batch_after_other_steps():
    game = two_players()
    facts = game.apply("p:B3 c:G2 fold")
    assert PlayerOut(0, "fold") in facts


def test_fold_is_legal_with_a_pending_action():
    game = two_players(actions=True)
    game.push("p:R7")  # the 7 must move V1
    assert game.pending
    assert "fold" in steps_text(game.legal_steps())
    game.push("fold")
    assert facts_of(game.log, RoundWon)[0].seat == 1


def test_fold_mid_turn_takes_back_the_steps_already_taken():
    # RULES.md (Decision, You must lead): a fold takes back its turn.  Seat 0 plays R7 and
    # discards G2 (Green becomes the rule), then folds: both cards go back to its hand.
    game = position(hands=[["R7", "G2"], ["G4"], ["Y1"]], palettes=[["V1"], ["O4"], ["B6"]])
    game.apply("p:R7 c:G2 fold")
    assert game.canvas_rule is Color.RED
    assert names(game.canvas_cards) == []
    assert names(game.palette(0)) == ["V1"] and names(game.hand(0)) == ["R7", "G2"]
    assert game.turn == 1 and game.in_round == (1, 2)


def test_under_batch_rules_3_a_fold_mid_turn_kept_the_steps_already_taken():
    # Games created before batch rules 4 read "fold: do nothing more": the steps stood.
    game = position(hands=[["R7", "G2"], ["G4"], ["Y1"]], palettes=[["V1"], ["O4"], ["B6"]], batch_rules=3)
    game.apply("p:R7 c:G2 fold")
    assert game.canvas_rule is Color.GREEN
    assert names(game.canvas_cards) == ["G2"]
    assert names(game.palette(0)) == ["R7", "V1"]
    assert game.turn == 1 and game.in_round == (1, 2)
