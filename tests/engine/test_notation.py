"""Cards and step/turn notation (RULES.md, *Cards* and *A turn*)."""

from __future__ import annotations

import pytest

from red7es import ALL_CARDS, Card, CardError, Color, Step, StepError, StepKind, Turn, parse_cards

# ---------------------------------------------------------------- cards


def test_there_are_49_cards_numbers_1_to_7_in_seven_colours():
    assert len(ALL_CARDS) == 49
    assert {(c.color, c.number) for c in ALL_CARDS} == {(col, n) for col in Color for n in range(1, 8)}


def test_colour_rank_strongest_first_is_roygbiv():
    assert [c.letter for c in sorted(Color)] == list("ROYGBIV")
    assert [c.title for c in Color] == ["Red", "Orange", "Yellow", "Green", "Blue", "Indigo", "Violet"]


@pytest.mark.parametrize("card", ALL_CARDS)
def test_card_notation_round_trips(card):
    assert Card.parse(str(card)) is card
    assert Card.of(card.color, card.number) is card
    assert str(card) == f"{card.color.letter}{card.number}"


@pytest.mark.parametrize("text", ["r7", "R7", " r7 ", "R7\n"])
def test_card_notation_is_case_insensitive_on_input_upper_case_on_output(text):
    assert str(Card.parse(text)) == "R7"


def test_card_id_layout_is_number_major_weakest_colour_first():
    assert int(Card.parse("V1")) == 0
    assert int(Card.parse("R1")) == 6
    assert int(Card.parse("V2")) == 7
    assert int(Card.parse("R7")) == 48


def test_r7_is_the_highest_card_and_v1_the_lowest():
    assert max(ALL_CARDS) == Card.parse("R7")
    assert min(ALL_CARDS) == Card.parse("V1")


def test_higher_number_beats_any_colour():
    assert Card.parse("V2") > Card.parse("R1")
    assert Card.parse("V7") > Card.parse("R6")


def test_same_number_the_stronger_colour_wins():
    threes = sorted(parse_cards("V3 I3 B3 G3 Y3 O3 R3"), reverse=True)
    assert [str(c) for c in threes] == ["R3", "O3", "Y3", "G3", "B3", "I3", "V3"]


def test_no_two_cards_are_equal():
    assert len(set(ALL_CARDS)) == 49


@pytest.mark.parametrize("text", ["X9", "R8", "", "R", "R0", "7R", "RR7", "R 7", "Red7"])
def test_malformed_card_is_rejected_with_a_clear_message(text):
    with pytest.raises(CardError, match=r"not a card: .*colour letter R O Y G B I V and a number 1-7"):
        Card.parse(text)


def test_card_id_out_of_range_is_rejected():
    with pytest.raises(CardError, match="out of range"):
        Card(49)


def test_card_of_rejects_bad_number():
    with pytest.raises(CardError, match="1 to 7"):
        Card.of("red", 8)


def test_parse_cards_accepts_spaces_and_commas():
    assert [str(c) for c in parse_cards("R7 b3,g2")] == ["R7", "B3", "G2"]


def test_cards_carry_an_action_when_odd():
    assert [c.number for c in ALL_CARDS if c.is_action] == sorted([1, 3, 5, 7] * 7)


# ---------------------------------------------------------------- steps

ALL_STEP_TEXTS = ["draw", "end", "fold"] + [f"{p}:{c}" for p in ("p", "c", "7c", "7d", "1") for c in ALL_CARDS]


@pytest.mark.parametrize("text", ALL_STEP_TEXTS)
def test_step_notation_round_trips(text):
    step = Step.parse(text)
    assert str(step) == text
    assert Step.parse(text.lower()) is step
    assert Step.parse(text.upper()) is step


def test_step_knows_kind_and_card():
    step = Step.parse("7d:G2")
    assert step.kind is StepKind.SEVEN_DECK
    assert step.card == Card.parse("G2")
    assert Step.parse("draw").card is None
    assert Step(StepKind.PLAY, "r7") is Step.parse("p:R7")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x:R7", "not a step"),
        ("play:R7", "not a step"),
        ("", "not a step"),
        ("p", "needs a card"),
        ("7c", "needs a card"),
        ("end:R7", "takes no card"),
        ("p:X9", r"in step 'p:X9': not a card"),
        ("c:R8", "not a card"),
    ],
)
def test_malformed_step_is_rejected_with_a_clear_message(text, message):
    with pytest.raises(StepError, match=message):
        Step.parse(text)


# ---------------------------------------------------------------- turns


@pytest.mark.parametrize(
    "text",
    ["p:R7", "c:B3", "p:R7 c:B3", "p:R7 c:B3 draw", "p:R7 7c:G2", "p:R5 p:V7 7d:G2 c:B3", "p:O1 1:O4", "fold"],
)
def test_turn_notation_round_trips(text):
    turn = Turn.parse(text)
    assert str(turn) == text
    assert Turn.parse(str(turn)) == turn


def test_turn_canonical_form_leaves_the_implied_end_out():
    assert str(Turn.parse("p:R7 c:B3 end")) == "p:R7 c:B3"
    assert Turn.parse("p:R7 c:B3 end") == Turn.parse("P:r7, C:b3")


def test_open_turn_ends_with_dots():
    turn = Turn.parse("p:G3 ...")
    assert turn.open and not turn.ends
    assert str(turn) == "p:G3 ..."


def test_fold_turn_is_a_fold():
    assert Turn.parse("p:R7 fold").is_fold
    assert not Turn.parse("p:R7").is_fold


def test_bare_end_is_a_turn_with_no_steps():
    turn = Turn.parse("end")
    assert turn.steps == ()
    assert str(turn) == "end"


@pytest.mark.parametrize("text", ["end p:R7", "p:R7 end c:B3", "fold p:R7", "fold end", "p:R7 end end"])
def test_end_or_fold_must_be_the_last_step(text):
    with pytest.raises(StepError, match="must be the last step"):
        Turn.parse(text)


def test_turn_with_a_step_missing_its_card_is_rejected():
    with pytest.raises(StepError, match="needs a card"):
        Turn.parse("p:R7 c")


def test_turn_with_unknown_step_is_rejected():
    with pytest.raises(StepError, match="not a step"):
        Turn.parse("p:R7 discard:B3")


def test_empty_turn_is_rejected():
    with pytest.raises(StepError, match="empty turn"):
        Turn.parse("")


def test_open_turn_cannot_end_or_fold():
    with pytest.raises(StepError, match="open turn"):
        Turn.parse("p:G3 fold ...")
    with pytest.raises(StepError, match="open turn"):
        Turn.parse("...")
