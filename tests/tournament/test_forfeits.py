"""Forfeited seats in tournament results (RULES.md, Time and Resigning; docs/tournaments.md,
Points): under tournament rules 2 a result records the seats out of the game, and they
finish below every seat still in it, the first out lowest; tournaments created under
rules 1 keep their results, standings and audit as they were."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from red7es.facts import Outcome
from red7es.service.codec import GENESIS
from red7es.tournament.codec import decode, encode
from red7es.tournament.events import TOURNAMENT_RULES, GameFinished, RoundPaired, Seating
from red7es.tournament.points import game_points, places
from red7es.tournament.state import TournamentCorrupt, TournamentState

from .conftest import result, spec


def out(
    forfeited: tuple[int, ...], winners: tuple[int, ...] = (1,), scores: tuple[int, ...] = (9, 2, 5, 0)
) -> GameFinished:
    return dataclasses.replace(result(1, "g", winners, k=4, scores=scores), forfeited=forfeited)


def test_a_forfeited_seat_finishes_below_every_seat_still_in_the_game_whatever_its_score() -> None:
    assert places(out(())) == [2, 1, 3, 4]  # by score alone
    assert places(out((0,))) == [4, 1, 2, 3]  # seat 0 had the best score, but is out
    assert game_points(out((0,)))[0] == Fraction(0)


def test_of_two_seats_out_the_one_out_first_finishes_lower() -> None:
    assert places(out((2, 0))) == [3, 1, 4, 2]  # seat 3 is still in: second
    assert places(out((0, 2))) == [4, 1, 3, 2]


def test_a_result_with_no_forfeit_is_byte_identical_to_one_written_before_forfeits_were_recorded() -> None:
    plain = result(1, "g", (0,))
    raw = encode(plain, 1, GENESIS, 0)
    assert b"forfeited" not in raw
    assert decode(raw).event == plain
    with_out = dataclasses.replace(result(1, "g", (0,), k=3), forfeited=(2,))
    assert decode(encode(with_out, 1, GENESIS, 0)).event.forfeited == (2,)


def test_a_new_tournament_is_created_under_the_current_rules_and_an_old_one_reads_as_rules_1() -> None:
    old = spec(4)
    assert old.rules == 1 and not old.places_forfeits
    assert b"rules" not in encode(old, 0, GENESIS, 0)
    new = dataclasses.replace(old, rules=TOURNAMENT_RULES)
    assert new.places_forfeits and decode(encode(new, 0, GENESIS, 0)).event.rules == TOURNAMENT_RULES


def state_of(rules: int) -> TournamentState:
    state = TournamentState(created=dataclasses.replace(spec(4, k=4), rules=rules))
    state._fold_round(RoundPaired(1, (Seating(1, "g", (0, 1, 2, 3)),), ()), "event 1")
    return state


@pytest.mark.parametrize("forfeited", [(0, 0), (4,), (1,)], ids=["twice", "no such seat", "a winner"])
def test_a_result_cannot_record_impossible_forfeits(forfeited: tuple[int, ...]) -> None:
    with pytest.raises(TournamentCorrupt, match="forfeited seats"):
        state_of(TOURNAMENT_RULES)._fold_result(out(forfeited), "event 2")


def test_a_tournament_under_rules_1_records_no_forfeits() -> None:
    with pytest.raises(TournamentCorrupt, match="forfeited seats"):
        state_of(1)._fold_result(out((0,)), "event 2")
    state = state_of(TOURNAMENT_RULES)
    state._fold_result(out((0, 2)), "event 2")
    assert state.results["g"].forfeited == (0, 2)


def test_a_result_read_from_a_game_keeps_its_forfeits_only_under_rules_that_place_them() -> None:
    """GameFinished.of reads the rules from the spec, as both the runner and the audit call it:
    each tournament then folds the result it was given."""
    over = Outcome((1,), (9, 2, 5, 0), (0, 1, 0, 0), "time", forfeited=(0, 2))
    for rules, kept in ((1, ()), (TOURNAMENT_RULES, (0, 2))):
        state = state_of(rules)
        finished = GameFinished.of(state.spec, 1, "g", over, 7, "ab" * 32)
        assert finished == GameFinished(1, "g", (1,), (9, 2, 5, 0), (0, 1, 0, 0), "time", 7, "ab" * 32, kept)
        state._fold_result(finished, "event 2")
        assert state.results["g"] is finished


def test_rules_3_results_name_why_each_seat_went_out_and_older_ones_cannot() -> None:
    with_reasons = dataclasses.replace(out((0, 2)), forfeit_reasons=("no-show", "time"))
    raw = encode(with_reasons, 1, GENESIS, 0)
    assert decode(raw).event.forfeit_reasons == ("no-show", "time")
    assert b"forfeit_reasons" not in encode(out((0, 2)), 1, GENESIS, 0)  # none: the bytes of rules 2
    state_of(3)._fold_result(with_reasons, "event 2")
    with pytest.raises(TournamentCorrupt, match="records reasons"):
        state_of(2)._fold_result(with_reasons, "event 2")
    with pytest.raises(TournamentCorrupt, match="records reasons"):
        state_of(3)._fold_result(dataclasses.replace(with_reasons, forfeit_reasons=("time",)), "event 2")


def test_a_result_of_rules_2_keeps_no_reasons_whatever_the_game_says() -> None:
    from red7es.facts import Outcome

    outcome = Outcome((1,), (0, 0, 0, 0), (0, 1, 0, 0), "rounds", (0,))
    two = dataclasses.replace(spec(4, k=4), rules=2)
    assert GameFinished.of(two, 1, "g", outcome, 9, "00", ["time"]).forfeit_reasons == ()
    three = dataclasses.replace(spec(4, k=4), rules=3)
    assert GameFinished.of(three, 1, "g", outcome, 9, "00", ["time"]).forfeit_reasons == ("time",)
