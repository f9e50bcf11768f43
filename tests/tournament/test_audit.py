"""The tournament audit: PASS on an honest tournament, the first divergence on a forged one."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
import redis
from support import one_event_per_entry

from red7es.service.codec import GENESIS
from red7es.service.store import Keys
from red7es.tournament import TournamentRunner, create_tournament
from red7es.tournament.audit import audit_tournament
from red7es.tournament.codec import encode, event_hash
from red7es.tournament.events import GameFinished, RoundPaired, TournamentEvent, TournamentFinished
from red7es.tournament.store import TournamentKeys, TournamentStore
from red7es.variant import Variant

from .conftest import Inline, bots

Edit = Callable[[list[TournamentEvent]], list[TournamentEvent]]


@pytest.fixture
def played(inline: Inline) -> Inline:
    create_tournament(inline.connection, "cup", bots(4), Variant(2), "swiss", seed="audit", rounds=2)
    TournamentRunner(inline.service, "cup", driver=inline.drive).run()
    return inline


def rewrite(env: Inline, edit: Edit) -> None:
    rewrite_stream(env.connection, "cup", edit)


def rewrite_stream(connection: redis.Redis, tournament: str, edit: Edit) -> None:
    """Replace the tournament's stream by an edited one, re-chained so only the content lies."""
    events = edit([r.event for r in TournamentStore(connection).events(tournament)])
    key = TournamentKeys(tournament).events
    connection.delete(key)
    prev = GENESIS
    for i, event in enumerate(events):
        raw = encode(event, i, prev, 0)
        connection.xadd(key, {"e": raw})
        prev = event_hash(raw)


def first_result(events: list[TournamentEvent]) -> int:
    return next(i for i, e in enumerate(events) if isinstance(e, GameFinished))


def test_an_honest_tournament_passes(played: Inline) -> None:
    report = audit_tournament(played.service, "cup")
    assert report.ok, report.line()
    assert report.line().startswith("PASS cup: 2 rounds of pairings re-derived, 4 games audited")
    assert report.to_dict()["passed"] and report.finished


def test_a_tournament_in_progress_passes_with_what_is_left(inline: Inline) -> None:
    create_tournament(inline.connection, "cup", bots(4), Variant(2), "round-robin", seed="p")
    TournamentRunner(inline.service, "cup", parallel=2).run(wait=False)  # two games created, none played
    inline.drive("t-cup-r1-1")  # one is over but not recorded yet
    report = audit_tournament(inline.service, "cup")
    assert report.ok and not report.finished
    assert report.pending == ["t-cup-r1-1"]
    assert report.unfinished[0] == "t-cup-r1-2" and len(report.unfinished) == 5  # 4 not even created
    assert "in progress" in report.line()


def change_winner(events: list[TournamentEvent]) -> list[TournamentEvent]:
    i = first_result(events)
    e = events[i]
    assert isinstance(e, GameFinished)
    events[i] = dataclasses.replace(e, winners=(1 - e.winners[0],), round_wins=tuple(reversed(e.round_wins)))
    return events


def swap_seats(events: list[TournamentEvent]) -> list[TournamentEvent]:
    e = events[1]
    assert isinstance(e, RoundPaired)
    t = e.tables[0]
    events[1] = dataclasses.replace(e, tables=(dataclasses.replace(t, seats=t.seats[::-1]), *e.tables[1:]))
    return events


def record_twice(events: list[TournamentEvent]) -> list[TournamentEvent]:
    return [*events[:-1], events[first_result(events)], events[-1]]


def wrong_seed(events: list[TournamentEvent]) -> list[TournamentEvent]:
    return [*events[:-1], TournamentFinished("00" * 32)]


def wrong_head(events: list[TournamentEvent]) -> list[TournamentEvent]:
    i = first_result(events)
    e = events[i]
    assert isinstance(e, GameFinished)
    events[i] = dataclasses.replace(e, head="ab" * 32)
    return events


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (change_winner, "the tournament recorded winners"),
        (swap_seats, "round 1: the pairing written is"),
        (record_twice, "recorded twice"),
        (wrong_seed, "does not hash to the commitment"),
        (wrong_head, "which is not in the game's log"),
    ],
)
def test_a_forged_stream_fails_at_the_first_divergence(played: Inline, edit: Edit, expected: str) -> None:
    rewrite(played, edit)
    report = audit_tournament(played.service, "cup")
    assert not report.ok
    assert expected in report.line()
    assert report.line().startswith("FAIL cup: ") and "\n" not in report.line()


def test_a_tampered_game_fails_its_own_audit(played: Inline) -> None:
    log = Keys("t-cup-r2-1").log
    entries = one_event_per_entry(played.connection, "t-cup-r2-1")
    played.connection.xdel(log, entries[5][0])  # an event vanishes from the game's log
    report = audit_tournament(played.service, "cup")
    assert not report.ok
    assert report.divergence is not None and report.divergence.startswith("game t-cup-r2-1: FAIL t-cup-r2-1:")


def test_a_game_not_played_as_paired_fails(inline: Inline) -> None:
    """A game under the tournament's id with other seats (a squatter) is caught."""
    create_tournament(inline.connection, "cup", bots(2), Variant(2), "round-robin", seed="x")
    TournamentRunner(inline.service, "cup", parallel=1).run(wait=False)
    inline.connection.delete(*inline.connection.keys("red7:{t-cup-r1-1}:*"))
    other = [dataclasses.replace(s, name=s.name.upper()) for s in bots(2)]
    inline.service.create(Variant(2), other, seed="y", game_id="t-cup-r1-1", wait=None)
    inline.drive("t-cup-r1-1")
    report = audit_tournament(inline.service, "cup")
    assert not report.ok and "game t-cup-r1-1 seats E0,E1, but round 1 paired e0,e1" in report.line()
