"""Adjudication audited (RULES.md, Adjudication; docs/trust.md, Adjudication): the audit passes
the play before an operator's adjudication, says the game did NOT end by play, and fails a
record whose adjudication cannot be (a game over, no such seat) or whose GameOver is not the
adjudication's.  A winner list or reason changed consistently is the operator's word against
nobody's: the audit alone cannot see it, a seat holder's remembered heads can.

One genuine record, played by the worker's code on a real Redis: ann and bob, one turn
played, then the operator adjudicates it to ann, "bob left the club".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from red7es.facts import GameOver
from red7es.service.audit import audit_as, audit_record
from red7es.service.client import GameService
from red7es.service.events import Adjudicated, SeatJoined, SeatSpec
from red7es.service.folding import Folder
from red7es.service.records import Record, export
from red7es.service.redis_server import RedisServer
from red7es.variant import Variant

from .tamper import events_of, first_divergence, rechain, settle

REASON = "bob left the club"


@pytest.fixture(scope="module")
def record(redis_server: RedisServer) -> Iterator[Record]:
    connection = redis.Redis.from_url(redis_server.url)
    connection.flushall()
    svc = GameService(connection, wake=lambda game_id: None)
    made = svc.create(
        Variant(2), [SeatSpec("ann"), SeatSpec("bob")], join=["ann", "bob"], seed="adj-t", game_id="adj", wait=None
    )
    folder = Folder(svc.store)
    settle(folder, "adj")
    view: dict[str, Any] = svc.view("adj")
    mover = ("ann", "bob")[view["to_move"]]
    svc.submit("adj", mover, made.tokens[mover], svc.view("adj", view["to_move"])["legal"][0])
    settle(folder, "adj")
    svc.adjudicate("adj", ["ann"], REASON)
    yield export(svc, "adj")
    connection.close()


def _at(record: Record) -> int:
    return next(i for i, e in enumerate(events_of(record)) if isinstance(e, Adjudicated))


def _replaced(record: Record, i: int, *new: Any) -> Record:
    events = events_of(record)
    return rechain(record, [*events[:i], *new, *events[i + len(new) :]])


def test_the_genuine_record_passes_and_says_it_did_not_end_by_play(record: Record) -> None:
    report = audit_record(record)
    assert report.passed, report.line()
    assert (
        report.adjudicated
        == f"NOT ENDED BY PLAY: the operator adjudicated it at event {_at(record)}: ann wins; reason: {REASON}"
    )
    assert report.adjudicated in report.line() and report.to_dict()["adjudicated"] == report.adjudicated
    assert report.checked["steps"] > 0  # the play before it was re-executed


def test_a_game_over_not_the_adjudications_fails_as_outcome(record: Record) -> None:
    i = _at(record)
    over = events_of(record)[i + 1]
    assert isinstance(over, GameOver)
    forged = GameOver(dataclasses.replace(over.outcome, winners=(1,)))  # the GameOver says bob
    problem = first_divergence(_replaced(record, i + 1, forged))
    assert (problem.check, problem.event) == ("outcome", i + 1), problem


def test_an_adjudication_naming_no_seat_fails(record: Record) -> None:
    i = _at(record)
    problem = first_divergence(_replaced(record, i, Adjudicated((7,), REASON)))
    assert (problem.check, problem.event) == ("adjudication", i), problem
    assert "there is no seat 7" in problem.reason


def test_an_adjudication_of_a_game_already_over_fails(record: Record) -> None:
    # a second adjudication appended after the end (and a GameOver for it)
    events = events_of(record)
    i = _at(record)
    tampered = rechain(record, [*events, Adjudicated((1,), "again"), events[i + 1]])
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("adjudication", len(events)), problem


def test_a_game_over_without_its_adjudication_fails(record: Record) -> None:
    events = events_of(record)
    i = _at(record)
    problem = first_divergence(rechain(record, events[:i] + events[i + 1 :]))
    assert problem.event == i, problem


def test_winners_and_reason_changed_together_pass_the_audit_but_are_shown(record: Record) -> None:
    """The operator's act is not signed: rewritten consistently, the record alone cannot
    tell (docs/trust.md). The audit still says who won by adjudication and why."""
    i = _at(record)
    over = events_of(record)[i + 1]
    assert isinstance(over, GameOver)
    forged = _replaced(
        record, i, Adjudicated((1,), "ann cheated"), GameOver(dataclasses.replace(over.outcome, winners=(1,)))
    )
    report = audit_record(forged)
    assert report.passed and "bob wins; reason: ann cheated" in report.line()


def test_a_seat_holder_who_saw_the_adjudication_catches_its_rewrite(record: Record) -> None:
    """``audit --as``: ann's client remembers the head it was shown after the adjudication."""
    i = _at(record)
    over = events_of(record)[i + 1]
    assert isinstance(over, GameOver)
    forged = _replaced(
        record, i, Adjudicated((1,), "ann cheated"), GameOver(dataclasses.replace(over.outcome, winners=(1,)))
    )
    ann_key = next(e.key for e in events_of(record) if isinstance(e, SeatJoined) and e.name == "ann")
    heads = {record.version: record.head}
    assert audit_as(record, "ann", ann_key, heads).passed
    report = audit_as(forged, "ann", ann_key, heads)
    assert not report.passed and report.divergence is not None and report.divergence.check == "rewritten"
