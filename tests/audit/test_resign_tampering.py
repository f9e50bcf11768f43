"""Resigning audited (RULES.md, Resigning; docs/trust.md): a forfeit for a resign must follow
the seat's own signed ``resign`` command, which the audit re-checks.

One genuine record (played by the worker's code on a real Redis): in a game of three,
cy resigns while ann is to move, the others play on, and then bob resigns, so ann wins
with reason ``resigned``.  Each test changes it as a forger would and checks the first
divergence.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from red7es.facts import Forfeited, GameOver
from red7es.service.audit import audit_record
from red7es.service.client import GameService
from red7es.service.events import CommandApplied, SeatSpec
from red7es.service.folding import Folder
from red7es.service.records import Record, export
from red7es.service.redis_server import RedisServer
from red7es.variant import Variant

from .tamper import command_index, edit_command, events_of, first_divergence, rechain, settle

NAMES = ("ann", "bob", "cy")


def _play(connection: redis.Redis, game_id: str, *, finish: bool = True) -> Record:
    """cy-or-bob resigns out of turn, the mover plays, and (``finish``) the last but one
    resigns: the game is over.  Without ``finish`` it is still running (no seed revealed)."""
    svc = GameService(connection, wake=lambda game_id: None)
    made = svc.create(
        Variant(3), [SeatSpec(n) for n in NAMES], join=NAMES, seed="tamper-resign", game_id=game_id, wait=None
    )
    folder = Folder(svc.store)
    settle(folder, game_id)

    def to_move() -> str:
        view: dict[str, Any] = svc.view(game_id)
        return str(view["seats"][view["to_move"]]["name"])

    mover = to_move()
    quitter = next(n for n in NAMES if n != mover)
    svc.submit(game_id, quitter, made.tokens[quitter], "resign", command_id="resign-first-seat")
    settle(folder, game_id)
    assert to_move() == mover  # a resign out of turn leaves the turn where it was
    view: dict[str, Any] = svc.view(game_id, NAMES.index(mover))
    svc.submit(game_id, mover, made.tokens[mover], view["legal"][0])
    settle(folder, game_id)
    if not finish:
        return export(svc, game_id)
    last = next(n for n in NAMES if n not in (quitter, to_move()))
    svc.submit(game_id, last, made.tokens[last], "resign", command_id="resign-second-seat")
    settle(folder, game_id)
    assert svc.store.meta(game_id)["status"] == "over"
    return export(svc, game_id)


@pytest.fixture(scope="module")
def record(redis_server: RedisServer) -> Iterator[Record]:
    connection = redis.Redis.from_url(redis_server.url)
    connection.flushall()
    yield _play(connection, "rs")
    connection.close()


@pytest.fixture(scope="module")
def running(redis_server: RedisServer, record: Record) -> Iterator[Record]:
    connection = redis.Redis.from_url(redis_server.url)
    yield _play(connection, "rr", finish=False)
    connection.close()


def _resigns(record: Record) -> list[int]:
    return [i for i, e in enumerate(events_of(record)) if isinstance(e, CommandApplied) and e.turn == "resign"]


def test_the_genuine_record_passes_and_ends_resigned(record: Record) -> None:
    report = audit_record(record)
    assert report.passed, report.line()
    events = events_of(record)
    assert len(_resigns(record)) == 2
    for i in _resigns(record):
        assert events[i + 1] == Forfeited(events[i].seat, "resigned")  # type: ignore[union-attr]
    over = next(e for e in events if isinstance(e, GameOver))
    assert over.outcome.reason == "resigned" and len(over.outcome.forfeited) == 2


def test_a_forfeit_with_no_resign_command_fails_at_that_event(record: Record) -> None:
    # the operator writes a seat's forfeit without its command: the answer and the command go
    tampered, i = _without_first_resign(record)
    problem = first_divergence(tampered)
    assert problem.event == i, problem
    assert "Forfeited" in problem.found


def test_a_resign_not_signed_by_the_seat_fails_at_its_answer(record: Record) -> None:
    # the operator signs cy's resign with a made-up signature
    k = command_index(record, "resign-first-seat")
    tampered = edit_command(record, k, lambda c: dataclasses.replace(c, signature="0" * 128))
    problem = first_divergence(tampered)
    assert problem.event == _resigns(record)[0], problem


def test_a_resign_by_another_seat_than_the_forfeit_fails(record: Record) -> None:
    i = _resigns(record)[0]
    events = events_of(record)
    forfeit = events[i + 1]
    assert isinstance(forfeit, Forfeited)
    other = next(s for s in range(3) if s != forfeit.seat and s != events[i].seat)  # type: ignore[union-attr]
    tampered = rechain(record, events[: i + 1] + [Forfeited(other, "resigned")] + events[i + 2 :])
    problem = first_divergence(tampered)
    assert problem.event == i + 1, problem


def _without_first_resign(record: Record) -> tuple[Record, int]:
    i = _resigns(record)[0]
    events = events_of(record)
    tampered = rechain(record, events[:i] + events[i + 1 :])
    commands = list(record.commands)
    del commands[command_index(record, "resign-first-seat")]
    return dataclasses.replace(tampered, commands=tuple(commands)), i


def test_a_running_games_forged_forfeit_fails_without_the_seed(running: Record) -> None:
    report = audit_record(running)
    assert report.result == "incomplete" and report.divergence is None, report.line()
    tampered, i = _without_first_resign(running)
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("forfeit", i), problem


def test_a_running_games_resign_forfeit_given_to_another_seat_fails_without_the_seed(running: Record) -> None:
    i = _resigns(running)[0]
    events = events_of(running)
    seat = events[i].seat  # type: ignore[union-attr]
    tampered = rechain(running, events[: i + 1] + [Forfeited((seat + 1) % 3, "resigned")] + events[i + 2 :])
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("forfeit", i + 1), problem
