"""The join deadline audited (RULES.md, Time, Join deadline): a JoinClosed before the deadline,
or none where a join came after it, fails the audit.

One genuine record, played by the worker's code on a real Redis: ann joined at creation, bob
never came; the worker closes the joins after 1 s, bob forfeits and ann wins ("no-show"), so
the seed is revealed and the audit re-executes everything."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator

import pytest
import redis

from red7es.facts import Forfeited
from red7es.service.audit import audit_record
from red7es.service.client import GameService
from red7es.service.events import JoinClosed, SeatJoined, SeatSpec
from red7es.service.folding import Folder
from red7es.service.records import Record, export
from red7es.service.redis_server import RedisServer
from red7es.variant import Variant

from .tamper import events_of, first_divergence, rechain, settle


@pytest.fixture(scope="module")
def record(redis_server: RedisServer) -> Iterator[Record]:
    connection = redis.Redis.from_url(redis_server.url)
    connection.flushall()
    svc = GameService(connection, wake=lambda game_id: None)
    seats = [SeatSpec("ann"), SeatSpec("bob")]
    variant = Variant(2, clock=(600_000, 0), join_time=1_000)
    svc.create(variant, seats, join=["ann"], seed="jd-t", game_id="jd", wait=None)
    folder = Folder(svc.store)
    settle(folder, "jd")
    time.sleep(1.1)
    settle(folder, "jd")  # the deadline has passed: JoinClosed, bob's no-show
    yield export(svc, "jd")
    connection.close()


def _at(record: Record) -> int:
    return next(i for i, e in enumerate(events_of(record)) if isinstance(e, JoinClosed))


def test_the_genuine_record_has_the_no_show_and_passes(record: Record) -> None:
    i = _at(record)
    assert events_of(record)[i + 1] == Forfeited(1, "no-show")
    report = audit_record(record)
    assert report.passed, report.line()


def test_a_join_closed_at_the_deadline_is_early(record: Record) -> None:
    events = events_of(record)
    i = _at(record)
    closed = events[i]
    assert isinstance(closed, JoinClosed)
    early = rechain(record, [*events[:i], dataclasses.replace(closed, at=closed.deadline), *events[i + 1 :]])
    problem = first_divergence(early)
    assert (problem.check, problem.event) == ("early-timeout", i), problem


def test_a_no_show_without_its_join_closed_fails(record: Record) -> None:
    events = events_of(record)
    i = _at(record)
    problem = first_divergence(rechain(record, events[:i] + events[i + 1 :]))
    assert problem.event == i, problem


def test_a_seat_taken_in_place_of_the_no_show_fails(record: Record) -> None:
    events = events_of(record)
    i = _at(record)
    assert events[i + 1] == Forfeited(1, "no-show")
    taken = [*events[:i], SeatJoined(1, "bob", "ab" * 32), *events[i + 2 :]]  # no JoinClosed, no forfeit: a join
    problem = first_divergence(rechain(record, taken))
    # a join no command asked: after the last command's answer only the time-out may follow
    assert (problem.check, problem.event) == ("missing-timeout", i), problem


@pytest.fixture(scope="module")
def running(redis_server: RedisServer) -> Iterator[Record]:
    """A game still running (its seed secret: the audit checks without it): ann joined, bob
    never came and forfeited at the join deadline, the bot and ann play on."""
    connection = redis.Redis.from_url(redis_server.url)
    svc = GameService(connection, wake=lambda game_id: None)
    seats = [SeatSpec("ann"), SeatSpec("bob"), SeatSpec("g", "bot", "greedy")]
    variant = Variant(3, clock=(600_000, 0), join_time=1_000)
    svc.create(variant, seats, join=["ann"], seed="jd-r", game_id="jd-run", wait=None)
    folder = Folder(svc.store)
    settle(folder, "jd-run")
    time.sleep(1.1)
    settle(folder, "jd-run")
    yield export(svc, "jd-run")
    connection.close()


def test_a_running_game_checks_its_join_closed_and_no_shows_without_the_seed(running: Record) -> None:
    assert running.seed is None and audit_record(running).divergence is None
    events = events_of(running)
    i = _at(running)
    closed = events[i]
    assert isinstance(closed, JoinClosed) and events[i + 1] == Forfeited(1, "no-show")
    early = rechain(running, [*events[:i], dataclasses.replace(closed, at=closed.deadline), *events[i + 1 :]])
    problem = first_divergence(early)
    assert (problem.check, problem.event) == ("early-timeout", i), problem
    wrong_seat = rechain(running, [*events[: i + 1], Forfeited(0, "no-show"), *events[i + 2 :]])
    problem = first_divergence(wrong_seat)
    assert (problem.check, problem.event) == ("forfeit", i + 1), problem
