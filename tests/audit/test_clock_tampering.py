"""Tampering with time (RULES.md, Time; docs/trust.md, Time): each fails the audit at the right event.

One genuine record of a timed game of people (played by the worker's code on a real
Redis: referee time is Redis's) holds a time-out between two commands, a turn in time
and a time-out at the end; each test changes it the way a forger would (re-chained)
and checks the first divergence.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from support import wait_for

from red7es.service.audit import audit_record
from red7es.service.client import GameService
from red7es.service.deadlines import redis_now
from red7es.service.events import ClockStarted, CommandApplied, SeatSpec, TimedOut
from red7es.service.folding import Folder
from red7es.service.records import Entry, Record, export
from red7es.service.redis_server import RedisServer
from red7es.variant import Variant

from .tamper import edit_event, events_of, first_divergence, rechain, settle

NAMES = ("ann", "bob", "cy")


def _play(connection: redis.Redis, game_id: str, *, finish: bool) -> Record:
    """ann times out (her round is folded), bob moves in time, and (``finish``) cy times out:
    bob wins. Without ``finish`` the game is still running (cy to move)."""
    svc = GameService(connection, wake=lambda game_id: None)
    made = svc.create(
        Variant(3, turn_time=1_000),
        [SeatSpec(n) for n in NAMES],
        join=NAMES,
        seed="tamper-time",
        game_id=game_id,
        wait=None,
    )
    folder = Folder(svc.store)

    def time_out() -> None:
        table = folder.tables[game_id]
        deadline = table.deadline
        assert deadline is not None
        wait_for(lambda: redis_now(connection) > deadline, "the deadline to pass", timeout=10, every=0.01)
        settle(folder, game_id)

    settle(folder, game_id)
    time_out()
    view: dict[str, Any] = svc.view(game_id, folder.tables[game_id].to_move)
    name = view["seats"][view["seat"]]["name"]
    svc.submit(game_id, name, made.tokens[name], view["legal"][0])
    settle(folder, game_id)
    if finish:
        time_out()
        assert svc.store.meta(game_id)["status"] == "over"
    return export(svc, game_id)


@pytest.fixture(scope="module")
def records(redis_server: RedisServer) -> Iterator[tuple[Record, Record]]:
    """A finished record and a running one."""
    connection = redis.Redis.from_url(redis_server.url)
    connection.flushall()
    yield _play(connection, "tt", finish=True), _play(connection, "tr", finish=False)
    connection.close()


@pytest.fixture
def record(records: tuple[Record, Record]) -> Record:
    return records[0]


@pytest.fixture
def running(records: tuple[Record, Record]) -> Record:
    return records[1]


def _positions(record: Record, kind: type) -> list[int]:
    return [i for i, e in enumerate(events_of(record)) if isinstance(e, kind)]


def test_the_genuine_record_passes(record: Record) -> None:
    report = audit_record(record)
    assert report.passed, report.line()
    assert len(_positions(record, TimedOut)) == 2


def test_an_early_time_out(record: Record) -> None:
    i = _positions(record, TimedOut)[0]
    tampered = edit_event(record, i, lambda e: dataclasses.replace(e, at=e.deadline))
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("early-timeout", i)


def test_a_time_out_before_a_turn_that_came_in_time(record: Record) -> None:
    # bob's turn moved to ann's deadline: it came in time, so ann's time-out cannot precede it
    i = _positions(record, TimedOut)[0]
    deadline = events_of(record)[i].deadline  # type: ignore[union-attr]
    commands = list(record.commands)
    turn = next(k for k, c in enumerate(commands) if k > 0)
    commands[turn] = Entry(f"{deadline}-0", commands[turn].raw)
    tampered = dataclasses.replace(record, commands=tuple(commands), cursor=commands[-1].stream_id)
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("early-timeout", i)


def test_a_turn_accepted_after_its_seats_time_was_up(record: Record) -> None:
    events = events_of(record)
    applied = _positions(record, CommandApplied)[0]
    clock = [e for e in events[:applied] if isinstance(e, ClockStarted)][-1]
    commands = list(record.commands)
    turn = len(commands) - 1
    commands[turn] = Entry(f"{clock.deadline + 1}-0", commands[turn].raw)
    tampered = dataclasses.replace(record, commands=tuple(commands), cursor=commands[-1].stream_id)
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("late-turn", applied)


def test_a_missing_time_out_before_a_command(record: Record) -> None:
    events = events_of(record)
    i = _positions(record, TimedOut)[0]
    after = next(j for j in range(i, len(events)) if isinstance(events[j], ClockStarted))
    tampered = rechain(record, events[:i] + events[after + 1 :])
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("missing-timeout", i)


def test_a_missing_time_out_at_the_end(record: Record) -> None:
    events = events_of(record)
    i = _positions(record, TimedOut)[-1]
    tampered = rechain(record, events[:i] + events[i + 1 :])
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("missing-timeout", i)


def test_a_shifted_deadline(record: Record) -> None:
    i = _positions(record, TimedOut)[0]
    tampered = edit_event(record, i, lambda e: dataclasses.replace(e, deadline=e.deadline - 100))
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("timeout", i)


def test_a_shifted_clock_start(record: Record) -> None:
    i = _positions(record, ClockStarted)[1]
    tampered = edit_event(record, i, lambda e: dataclasses.replace(e, at=e.at + 1, deadline=e.deadline + 1))
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("clock", i)


def test_a_time_out_later_than_redis_wrote_it(record: Record) -> None:
    i = _positions(record, TimedOut)[-1]
    written = int(record.events[i].stream_id.split("-")[0])
    tampered = edit_event(record, i, lambda e: dataclasses.replace(e, at=written + 1))
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("timeout", i)


def test_a_running_game_audits_incomplete(running: Record) -> None:
    report = audit_record(running)
    assert report.result == "incomplete", report.line()


def test_an_early_time_out_in_a_running_game(running: Record) -> None:
    i = _positions(running, TimedOut)[0]
    tampered = edit_event(running, i, lambda e: dataclasses.replace(e, at=e.deadline))
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("early-timeout", i)


def test_a_late_turn_in_a_running_game(running: Record) -> None:
    events = events_of(running)
    applied = _positions(running, CommandApplied)[0]
    clock = [e for e in events[:applied] if isinstance(e, ClockStarted)][-1]
    commands = list(running.commands)
    commands[-1] = Entry(f"{clock.deadline + 1}-0", commands[-1].raw)
    tampered = dataclasses.replace(running, commands=tuple(commands), cursor=commands[-1].stream_id)
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("late-turn", applied)
