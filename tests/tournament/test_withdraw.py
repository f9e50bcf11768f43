"""Withdrawing an entrant (docs/tournaments.md, Withdrawing; RULES.md, Withdrawal): Swiss pairs
them no more, every game of theirs not recorded has their seat withdrawn (it forfeits, the
others play on), the standings mark them, and the audit re-derives it all.

In-process (fakeredis, games folded by the test's driver)."""

from __future__ import annotations

import dataclasses

import pytest

from red7es.service.events import SeatSpec
from red7es.tournament import TournamentError, TournamentRunner, create_tournament, load
from red7es.tournament.audit import audit_tournament
from red7es.tournament.events import SWISS, EntrantWithdrew, RoundPaired, Seating
from red7es.tournament.pairing import pair_round
from red7es.tournament.state import TournamentCorrupt, TournamentState
from red7es.tournament.views import show_data, standings_data
from red7es.tournament.withdrawal import withdraw_entrant
from red7es.variant import Variant

from .conftest import Inline, bots, people, spec


def _standing(inline: Inline, tournament: str, name: str) -> dict[str, object]:
    lines = standings_data(load(inline.connection, tournament))["standings"]
    return next(line for line in lines if line["name"] == name)


def test_a_swiss_entrant_withdrawn_forfeits_the_game_under_way_and_is_paired_no_more(inline: Inline) -> None:
    create_tournament(inline.connection, "sw", [*people("alice"), *bots(5)], Variant(2), SWISS, seed="w", rounds=3)
    first = TournamentRunner(inline.service, "sw", driver=inline.drive).run()
    assert not first.finished and list(first.waiting_for_people.values()) == [["alice"]]
    (game,) = first.waiting_for_people
    inline.drive(game)  # a worker has created it (it waits for alice)
    done = withdraw_entrant(inline.service, "sw", "alice", "alice had to leave")
    assert done.games == [game] and done.event == EntrantWithdrew(0, "alice had to leave")
    report = TournamentRunner(inline.service, "sw", driver=inline.drive).run()
    assert report.finished
    state = load(inline.connection, "sw")
    result = state.results[game]
    seat = state.seating(game)[1].seats.index(0)
    assert result.forfeited == (seat,) and result.reason == "withdrawn" and result.winners == (1 - seat,)
    for r in (2, 3):  # neither a table nor a bye: five bots, one bye a round
        paired = state.rounds[r]
        assert all(0 not in t.seats for t in paired.tables) and 0 not in paired.byes and len(paired.byes) == 1
    assert report.done == report.total == 3 + 2 + 2
    alice = _standing(inline, "sw", "alice")
    assert alice["withdrawn"] is True and alice["games"] == 1 and alice["forfeits"] == 1 and alice["points"] == 0
    assert show_data(state, {})["withdrawn"] == {"alice": "alice had to leave"}
    audit = audit_tournament(inline.service, "sw")
    assert audit.ok, audit.line()


def test_a_round_robin_entrant_withdrawn_before_the_run_forfeits_every_game_as_it_starts(inline: Inline) -> None:
    create_tournament(inline.connection, "rr", [*people("alice"), *bots(3)], Variant(2), "round-robin", seed="r")
    assert withdraw_entrant(inline.service, "rr", "alice", "never came").games == []  # nothing created yet
    report = TournamentRunner(inline.service, "rr", driver=inline.drive).run()
    assert report.finished and report.done == report.total == 6
    state = load(inline.connection, "rr")
    hers = [(t, state.results[t.game]) for _r, t in state.paired_games if 0 in t.seats]
    assert len(hers) == 3 and all(r.forfeited == (t.seats.index(0),) for t, r in hers)
    assert _standing(inline, "rr", "alice")["forfeits"] == 3
    assert audit_tournament(inline.service, "rr").ok


def test_at_a_table_of_three_the_others_play_the_game_out(inline: Inline) -> None:
    create_tournament(inline.connection, "t3", [*people("alice"), *bots(3)], Variant(3), "round-robin", seed="3")
    withdraw_entrant(inline.service, "t3", "alice", "gone")
    assert TournamentRunner(inline.service, "t3", driver=inline.drive).run().finished
    state = load(inline.connection, "t3")
    hers = [state.results[t.game] for _r, t in state.paired_games if 0 in t.seats]
    assert len(hers) == 3
    assert all(r.reason != "withdrawn" and len(r.forfeited) == 1 for r in hers)  # played out by the two bots
    assert audit_tournament(inline.service, "t3").ok


def test_a_withdrawal_the_tournament_cannot_take_is_refused(inline: Inline) -> None:
    create_tournament(inline.connection, "no", bots(3), Variant(2), "round-robin", seed="n")
    with pytest.raises(TournamentError, match="has no entrant 'zed'"):
        withdraw_entrant(inline.service, "no", "zed", "x")
    with pytest.raises(TournamentError, match="needs a reason"):
        withdraw_entrant(inline.service, "no", "e0", "  ")
    with pytest.raises(TournamentError, match="at most 1000 characters"):
        withdraw_entrant(inline.service, "no", "e0", "x" * 1001)
    withdraw_entrant(inline.service, "no", "e0", "x")
    with pytest.raises(TournamentError, match="has withdrawn from tournament no already"):
        withdraw_entrant(inline.service, "no", "e0", "again")
    assert TournamentRunner(inline.service, "no", driver=inline.drive).run().finished
    with pytest.raises(TournamentError, match="is finished"):
        withdraw_entrant(inline.service, "no", "e1", "late")


def test_the_fold_refuses_a_withdrawal_of_no_entrant_or_twice_and_a_swiss_round_seating_one() -> None:
    created = spec(4, fmt=SWISS, rounds=3)
    state = TournamentState(created=created)
    state.withdrawn[1] = EntrantWithdrew(1, "x")
    state.withdrawn_after[1] = 0
    assert state.pairable == [0, 2, 3]
    with_one = pair_round(created, [], {}, {1})
    assert 1 not in with_one.byes and all(1 not in t.seats for t in with_one.tables)
    state._fold_round(with_one, "event 2")
    seating_one = RoundPaired(2, (Seating(1, "g2", (0, 1)), Seating(2, "g3", (2, 3))), ())
    with pytest.raises(TournamentCorrupt, match="does not seat every entrant once"):
        TournamentState(created=created, withdrawn={1: EntrantWithdrew(1, "x")}, rounds={1: with_one})._fold_round(
            seating_one, "event 3"
        )
    assert state.withdrawn_before(2) == {1} and state.withdrawn_before(1) == {1}


def test_a_round_robin_keeps_its_schedule_whoever_withdrew() -> None:
    created = spec(4)
    assert pair_round(created, [], {}, {0, 1}) == pair_round(created, [], {})


def test_the_audit_fails_a_seat_withdrawn_in_a_game_but_not_from_the_tournament(inline: Inline) -> None:
    create_tournament(inline.connection, "q", [*people("alice"), *bots(1)], Variant(2), "round-robin", seed="q")
    report = TournamentRunner(inline.service, "q", driver=inline.drive).run()
    (game,) = report.waiting_for_people
    inline.drive(game)
    inline.service.withdraw(game, "alice", "quietly")  # the operator, behind the tournament's back
    inline.drive(game)
    assert TournamentRunner(inline.service, "q", driver=inline.drive).run().finished
    audit = audit_tournament(inline.service, "q")
    assert not audit.ok and audit.divergence is not None
    assert (
        "the operator withdrew alice" in audit.divergence and "the tournament never withdrew alice" in audit.divergence
    )


def test_a_swiss_field_withdrawn_below_a_table_pairs_byes_only(inline: Inline) -> None:
    entrants = [SeatSpec(f"p{i}") for i in range(3)]
    create_tournament(inline.connection, "few", entrants, Variant(2), SWISS, seed="f", rounds=2)
    first = TournamentRunner(inline.service, "few", driver=inline.drive).run()
    assert len(first.waiting_for_people) == 1
    (game,) = first.waiting_for_people
    inline.drive(game)
    seated = load(inline.connection, "few").seating(game)[1].seats
    for e in seated:
        withdraw_entrant(inline.service, "few", entrants[e].name, "gone")
    report = TournamentRunner(inline.service, "few", driver=inline.drive).run()
    assert report.finished
    state = load(inline.connection, "few")
    (left,) = [e for e in range(3) if e not in seated]
    assert state.rounds[2] == dataclasses.replace(state.rounds[2], tables=(), byes=(left,))
    assert audit_tournament(inline.service, "few").ok


def test_a_withdrawn_bot_plays_none_of_the_games_created_after_its_withdrawal(inline: Inline) -> None:
    """The run creates them with the entrant's seat withdrawn from the start (the create
    command's ``withdrawn``): no bot moves for it before the withdrawal, whatever the timing."""
    create_tournament(inline.connection, "rb", bots(4), Variant(2), "round-robin", seed="b")
    withdraw_entrant(inline.service, "rb", "e0", "its author pulled it")
    assert TournamentRunner(inline.service, "rb", driver=inline.drive).run().finished
    state = load(inline.connection, "rb")
    hers = [(t, state.results[t.game]) for _r, t in state.paired_games if 0 in t.seats]
    assert len(hers) == 3
    assert all(r.reason == "withdrawn" and r.forfeited == (t.seats.index(0),) for t, r in hers)
    assert all(r.round_wins == (0, 0) for _t, r in hers)  # nobody played a round
    assert audit_tournament(inline.service, "rb").ok


def test_the_audit_fails_a_game_created_after_a_withdrawal_with_the_entrant_in_it(inline: Inline) -> None:
    from red7es.tournament.ids import game_seed
    from red7es.tournament.store import TournamentStore

    create_tournament(inline.connection, "late", bots(4), Variant(2), "round-robin", seed="l")
    withdraw_entrant(inline.service, "late", "e0", "gone")
    runner = TournamentRunner(inline.service, "late", driver=inline.drive)
    runner._pair_next()
    runner.refresh()
    spec = runner.state.spec
    t = next(t for _r, t in runner.state.paired_games if 0 in t.seats)
    seed = TournamentStore(inline.connection).seed("late")
    assert seed is not None
    seats = [spec.entrants[e] for e in t.seats]  # created as if nobody had withdrawn
    inline.service.create(spec.variant, seats, seed=game_seed(seed, t.game), game_id=t.game, wait=None)
    assert TournamentRunner(inline.service, "late", driver=inline.drive).run().finished
    audit = audit_tournament(inline.service, "late")
    assert not audit.ok and audit.divergence is not None
    assert f"game {t.game}: it was created withdrawing [], but the tournament had withdrawn" in audit.divergence
