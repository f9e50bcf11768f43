"""The seven Canvas rules of RULES.md: who leads, the tie-breaks, and the scoring cards."""

from __future__ import annotations

import pytest

from red7es import CardError, Color, leader, scoring_cards

from .helpers import names

# ---------------------------------------------------------------- the API


def test_rule_may_be_given_as_color_english_name_or_letter():
    palettes = [["R7"], ["V1", "V2"]]
    assert leader(Color.RED, palettes) == 0
    assert leader("red", palettes) == 0
    assert leader("Violet", palettes) == 1
    assert leader("V", palettes) == 1


def test_unknown_rule_name_is_an_error_listing_the_rules():
    with pytest.raises(CardError, match=r"unknown colour 'purple'.*indigo"):
        leader("purple", [["R7"], ["V1"]])


def test_palettes_may_hold_card_notation_in_any_case():
    assert leader("red", [["r6"], ["b7"]]) == 1


@pytest.mark.parametrize("rule", list(Color))
def test_nobody_leads_when_every_palette_is_empty(rule):
    assert leader(rule, [[], [], []]) is None


@pytest.mark.parametrize("rule", list(Color))
def test_empty_palette_cannot_lead_under_any_rule(rule):
    assert leader(rule, [[], ["V1", "I2", "B3"]]) == 1


# ---------------------------------------------------------------- Red: highest card


def test_red_highest_card_leads():
    assert leader("red", [["R3", "B6"], ["V7"]]) == 1


def test_red_same_number_stronger_colour_leads():
    assert leader("red", [["O7", "Y2"], ["B7", "R6"]]) == 0


def test_red_only_the_single_highest_card_counts_not_the_palette_size():
    assert leader("red", [["V1", "V2", "V3", "V4", "V5"], ["I6"]]) == 1


def test_red_scoring_is_the_single_highest_card():
    assert names(scoring_cards("red", ["B3", "R6", "V7", "O2"])) == ["V7"]


# ---------------------------------------------------------------- Orange: one number


def test_orange_most_cards_of_one_number_leads():
    assert leader("orange", [["R7", "B6"], ["G2", "V2"]]) == 1


def test_orange_equal_groups_compare_highest_card_of_group():
    assert leader("orange", [["R3", "Y3"], ["O5", "V5"]]) == 1


def test_orange_tie_goes_to_group_with_highest_card():
    # Palette 0 has two pairs: the 6s (I6 is its highest card) and the 2s (R2 is the
    # strongest colour).  The group containing the highest card counts: top I6 > R5.
    assert leader("orange", [["V6", "I6", "R2", "O2"], ["R5", "O5"]]) == 0
    assert names(scoring_cards("orange", ["V6", "I6", "R2", "O2"])) == ["I6", "V6"]


def test_orange_nobody_has_a_pair_then_highest_single_card_leads():
    assert leader("orange", [["R1", "Y5"], ["V6", "O2"]]) == 1


def test_orange_scoring_is_the_counted_group():
    assert names(scoring_cards("orange", ["R7", "B4", "G4", "V4", "Y1", "I1"])) == ["G4", "B4", "V4"]


# ---------------------------------------------------------------- Yellow: one colour


def test_yellow_most_cards_of_one_colour_leads():
    assert leader("yellow", [["R7", "O6"], ["G1", "G2"]]) == 1


def test_yellow_equal_groups_compare_highest_card_of_group():
    assert leader("yellow", [["R1", "R2"], ["V6", "V3"]]) == 1


def test_yellow_tie_goes_to_group_with_highest_card():
    # Palette 0: a Red pair (top R2) and a Violet pair (top V6); V6 is its highest
    # card, so the Violet pair counts, and V6 beats B4.
    assert leader("yellow", [["R1", "R2", "V6", "V5"], ["B3", "B4"]]) == 0
    assert names(scoring_cards("yellow", ["R1", "R2", "V6", "V5"])) == ["V6", "V5"]


def test_yellow_scoring_is_the_counted_colour():
    assert names(scoring_cards("yellow", ["R7", "G1", "G5", "G3", "B6", "B2"])) == ["G5", "G3", "G1"]


# ---------------------------------------------------------------- Green: even cards


def test_green_most_even_cards_leads():
    assert leader("green", [["R6"], ["V2", "V4"]]) == 1


def test_green_equal_count_compares_highest_even_card():
    assert leader("green", [["R2", "V6"], ["O6", "I4"]]) == 1


def test_green_odd_cards_do_not_count_even_the_highest():
    assert leader("green", [["R7", "R5", "V2"], ["V4"]]) == 1


def test_green_nobody_leads_without_even_cards():
    assert leader("green", [["R7", "R5"], ["B3", "V1"]]) is None


def test_green_scoring_is_every_even_card():
    assert names(scoring_cards("green", ["R7", "O6", "B4", "V2", "G3"])) == ["O6", "B4", "V2"]


# ---------------------------------------------------------------- Blue: different colours


def test_blue_most_colours_leads():
    assert leader("blue", [["R7", "R6"], ["V1", "I1"]]) == 1


def test_blue_colour_counted_once_however_many_cards():
    assert leader("blue", [["R1", "R2", "R3", "R4"], ["V1", "I1"]]) == 1


def test_blue_equal_colours_compares_highest_card():
    assert leader("blue", [["R1", "O7"], ["Y7", "G7"]]) == 0


def test_blue_scoring_is_highest_card_of_each_colour():
    assert names(scoring_cards("blue", ["R1", "R5", "B2", "B3", "V7"])) == ["V7", "R5", "B3"]


# ---------------------------------------------------------------- Indigo: runs


def test_indigo_longest_run_leads():
    assert leader("indigo", [["R7", "V1"], ["V2", "V3", "V4"]]) == 1


def test_indigo_equal_runs_compare_highest_card_of_run():
    assert leader("indigo", [["R1", "R2"], ["V5", "V6"]]) == 1


def test_indigo_tie_goes_to_run_with_highest_card():
    # Palette 0 has two runs of two: 1-2 (top R2) and 5-6 (top V6).  The run containing
    # the highest card counts, and V6 beats O4.
    assert leader("indigo", [["R1", "R2", "V5", "V6"], ["O3", "O4"]]) == 0
    assert names(scoring_cards("indigo", ["R1", "R2", "V5", "V6"])) == ["V6", "V5"]


def test_indigo_run_has_one_card_per_number_duplicates_do_not_lengthen_it():
    # R3 V3 V4 is a run of two (3-4), not three: so the higher run of two, G5-G6, wins.
    assert leader("indigo", [["R3", "V3", "V4"], ["G5", "G6"]]) == 1


def test_indigo_duplicate_number_is_represented_by_its_highest_card():
    # V2 R3 V3: the run 2-3 is represented by V2 and R3 (not V3), and R3 beats O3.
    assert leader("indigo", [["V2", "R3", "V3"], ["O2", "O3"]]) == 0


def test_indigo_duplicate_number_card_is_not_part_of_the_run_when_scoring():
    assert names(scoring_cards("indigo", ["R3", "V3", "V4", "B7"])) == ["V4", "R3"]


def test_indigo_single_cards_are_runs_of_one():
    assert leader("indigo", [["R1", "V5"], ["I6", "O3"]]) == 1
    assert names(scoring_cards("indigo", ["R1", "V5", "B3"])) == ["V5"]


# ---------------------------------------------------------------- Violet: below 4


def test_violet_most_cards_below_4_leads():
    assert leader("violet", [["R7", "R6"], ["V1"]]) == 1


def test_violet_equal_count_compares_highest_card_below_4():
    assert leader("violet", [["R1", "V3", "R7"], ["O3", "Y2"]]) == 1


def test_violet_a_4_does_not_count():
    assert leader("violet", [["R4"], ["V1"]]) == 1


def test_violet_nobody_leads_without_low_cards():
    assert leader("violet", [["R4", "B7"], ["I5"]]) is None


def test_violet_scoring_is_every_card_below_4():
    assert names(scoring_cards("violet", ["R1", "G3", "B4", "V2", "O7"])) == ["G3", "V2", "R1"]


# ---------------------------------------------------------------- several palettes


def test_leader_among_four_palettes():
    palettes = [["R1", "O2"], ["B2", "I4", "V6"], ["G4", "G6"], ["Y7"]]
    assert leader("green", palettes) == 1
    assert leader("red", palettes) == 3
    assert leader("yellow", palettes) == 2
    assert leader("violet", palettes) == 0


@pytest.mark.parametrize("rule", list(Color))
def test_scoring_cards_of_empty_palette_is_empty(rule):
    assert scoring_cards(rule, []) == ()
