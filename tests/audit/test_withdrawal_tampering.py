"""Withdrawal audited (RULES.md, Withdrawal): the audit passes the operator's withdrawal of a
seat and names it, and fails a record whose withdrawal cannot be (a seat out already, a time
the log or the clocks forbid) or whose forfeit has no withdrawal before it.

One genuine record, played by the worker's code on a real Redis: ann, bob and cy with a long
game clock, one turn played, then the operator withdraws cy; ann and bob play on until bob
resigns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from red7es.facts import Forfeited
from red7es.service.audit import audit_record
from red7es.service.client import GameService
from red7es.service.events import ClockStarted, SeatSpec, Withdrawn
from red7es.service.folding import Folder
from red7es.service.records import Record, export
from red7es.service.redis_server import RedisServer
from red7es.variant import Variant

from .tamper import events_of, first_divergence, rechain, settle

REASON = "cy left the club"


@pytest.fixture(scope="module")
def record(redis_server: RedisServer) -> Iterator[Record]:
    connection = redis.Redis.from_url(redis_server.url)
    connection.flushall()
    svc = GameService(connection, wake=lambda game_id: None)
    seats = [SeatSpec("ann"), SeatSpec("bob"), SeatSpec("cy")]
    made = svc.create(
        Variant(3, clock=(600_000, 0)), seats, join=["ann", "bob", "cy"], seed="wd-t", game_id="wd", wait=None
    )
    folder = Folder(svc.store)
    settle(folder, "wd")
    view: dict[str, Any] = svc.view("wd")
    mover = ("ann", "bob", "cy")[view["to_move"]]
    svc.submit("wd", mover, made.tokens[mover], svc.view("wd", view["to_move"])["legal"][0])
    settle(folder, "wd")
    svc.withdraw("wd", "cy", REASON)
    settle(folder, "wd")
    svc.submit("wd", "bob", made.tokens["bob"], "resign")
    settle(folder, "wd")
    yield export(svc, "wd")
    connection.close()


def _at(record: Record) -> int:
    return next(i for i, e in enumerate(events_of(record)) if isinstance(e, Withdrawn))


def _withdrawal(record: Record) -> Withdrawn:
    event = events_of(record)[_at(record)]
    assert isinstance(event, Withdrawn)
    return event


def _replaced(record: Record, i: int, *new: Any) -> Record:
    events = events_of(record)
    return rechain(record, [*events[:i], *new, *events[i + len(new) :]])


def test_the_genuine_record_passes_and_names_the_withdrawal(record: Record) -> None:
    report = audit_record(record)
    assert report.passed, report.line()
    assert report.withdrawals == [f"the operator withdrew cy at event {_at(record)}; reason: {REASON}"]
    assert report.checked["steps"] > 0


def test_a_withdrawal_of_another_seat_fails(record: Record) -> None:
    i = _at(record)
    forged = dataclasses.replace(_withdrawal(record), seat=0)
    problem = first_divergence(_replaced(record, i, forged))
    assert problem.event == i + 1, problem  # its forfeit is cy's, not ann's


def test_a_withdrawal_dated_after_redis_wrote_it_fails(record: Record) -> None:
    i = _at(record)
    forged = dataclasses.replace(_withdrawal(record), at=_withdrawal(record).at + 10_000_000)
    problem = first_divergence(_replaced(record, i, forged))
    assert (problem.check, problem.event) == ("withdrawal", i), problem
    assert "after Redis wrote it" in problem.reason


def test_a_withdrawal_dated_before_the_running_clock_fails(record: Record) -> None:
    i = _at(record)
    started = [e for e in events_of(record)[:i] if isinstance(e, ClockStarted)][-1]
    forged = dataclasses.replace(_withdrawal(record), at=started.at - 1)
    problem = first_divergence(_replaced(record, i, forged))
    assert (problem.check, problem.event) == ("withdrawal", i), problem


def test_a_second_withdrawal_of_a_seat_out_already_fails(record: Record) -> None:
    events = events_of(record)
    i = _at(record)
    end = i + 2 + isinstance(events[i + 2], ClockStarted)  # after what the withdrawal made
    again = events[i : i + 2]  # Withdrawn and Forfeited of cy, once more
    problem = first_divergence(rechain(record, [*events[:end], *again, *events[end:]]))
    assert (problem.check, problem.event) == ("withdrawal", end), problem
    assert "not in the game" in problem.reason


def test_a_forfeit_for_withdrawal_without_the_withdrawal_fails(record: Record) -> None:
    events = events_of(record)
    i = _at(record)
    assert events[i + 1] == Forfeited(2, "withdrawn")
    problem = first_divergence(rechain(record, events[:i] + events[i + 1 :]))
    assert problem.event == i, problem


def test_a_withdrawal_dated_before_the_commands_answered_before_it_fails(record: Record) -> None:
    """With no clock to bound it from below, the last command answered before it does: an
    operator cannot date a withdrawal back (and start clocks in the past)."""
    i = _at(record)
    forged = dataclasses.replace(_withdrawal(record), at=1_000)
    problem = first_divergence(_replaced(record, i, forged))
    assert (problem.check, problem.event) == ("withdrawal", i), problem


def test_a_running_game_checks_its_withdrawals_time_without_the_seed(redis_server: RedisServer) -> None:
    connection = redis.Redis.from_url(redis_server.url)
    svc = GameService(connection, wake=lambda game_id: None)
    seats = [SeatSpec("ann"), SeatSpec("bob"), SeatSpec("cy")]
    svc.create(
        Variant(3, clock=(600_000, 0)), seats, join=["ann", "bob", "cy"], seed="wd-r", game_id="wd-run", wait=None
    )
    folder = Folder(svc.store)
    settle(folder, "wd-run")
    svc.withdraw("wd-run", "cy", REASON)
    settle(folder, "wd-run")
    running = export(svc, "wd-run")
    connection.close()
    assert running.seed is None and audit_record(running).divergence is None
    i = _at(running)
    late = dataclasses.replace(_withdrawal(running), at=_withdrawal(running).at + 10_000_000)
    problem = first_divergence(_replaced(running, i, late))
    assert (problem.check, problem.event) == ("withdrawal", i), problem
