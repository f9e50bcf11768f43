"""Aborting audited (RULES.md, Aborting; docs/trust.md): an abort must answer a seat's own
signed ``abort`` command, applied while nobody had moved; the audit re-checks both.

Genuine records played by the worker's code on a real Redis: one game aborted by a seat
before anyone moved (it passes), one where a seat's abort came after a turn and was
refused.  A forger turns that refusal into an applied abort; the audit must fail there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from red7es.deal import make_seed
from red7es.facts import GameOver, Outcome
from red7es.game import ABORTED
from red7es.service.audit import audit_record
from red7es.service.client import GameService
from red7es.service.events import CommandApplied, CommandRejected, SeatSpec, SeedRevealed
from red7es.service.folding import Folder
from red7es.service.records import Record, export
from red7es.service.redis_server import RedisServer
from red7es.variant import Variant

from .tamper import command_index, edit_command, events_of, first_divergence, rechain, settle

NAMES = ("ann", "bob")
SEED = "tamper-abort"


def _play(connection: redis.Redis, game_id: str, *, turn_first: bool) -> Record:
    """bob aborts; with ``turn_first`` the seat to move plays a turn before (so it is refused)."""
    svc = GameService(connection, wake=lambda game_id: None)
    made = svc.create(Variant(2), [SeatSpec(n) for n in NAMES], join=NAMES, seed=SEED, game_id=game_id, wait=None)
    folder = Folder(svc.store)
    settle(folder, game_id)
    if turn_first:
        view: dict[str, Any] = svc.view(game_id)
        mover = NAMES[view["to_move"]]
        legal = svc.view(game_id, view["to_move"])["legal"]
        svc.submit(game_id, mover, made.tokens[mover], legal[0])
        settle(folder, game_id)
    svc.submit(game_id, "bob", made.tokens["bob"], "abort", command_id="abort-by-bob")
    settle(folder, game_id)
    return export(svc, game_id)


@pytest.fixture(scope="module")
def aborted(redis_server: RedisServer) -> Iterator[Record]:
    connection = redis.Redis.from_url(redis_server.url)
    connection.flushall()
    yield _play(connection, "ab", turn_first=False)
    connection.close()


@pytest.fixture(scope="module")
def refused(redis_server: RedisServer, aborted: Record) -> Iterator[Record]:
    connection = redis.Redis.from_url(redis_server.url)
    yield _play(connection, "ar", turn_first=True)
    connection.close()


def _abort_answer(record: Record) -> int:
    return next(i for i, e in enumerate(events_of(record)) if getattr(e, "id", None) == "abort-by-bob")


def _forged_abort(record: Record, *, reveal: bool) -> tuple[Record, int]:
    """The refused abort made applied, ending the game; with ``reveal`` the seed too (the
    operator holds it), so the record looks finished."""
    i = _abort_answer(record)
    events = events_of(record)
    assert isinstance(events[i], CommandRejected)
    forged: list[Any] = [CommandApplied("abort-by-bob", 1, "abort", "person")]
    forged.append(GameOver(Outcome((), (0, 0), (0, 0), ABORTED)))
    if reveal:
        forged.append(SeedRevealed(make_seed(SEED).hex()))
    tampered = rechain(record, events[:i] + forged + events[i + 1 :])
    if reveal:
        tampered = dataclasses.replace(tampered, seed=make_seed(SEED).hex(), status="over")
    return tampered, i


def test_the_genuine_aborted_record_passes_with_no_winners(aborted: Record) -> None:
    report = audit_record(aborted)
    assert report.passed, report.line()
    events = events_of(aborted)
    i = _abort_answer(aborted)
    assert events[i] == CommandApplied("abort-by-bob", 1, "abort", "person")
    over = events[i + 1]
    assert isinstance(over, GameOver) and over.outcome.winners == () and over.outcome.reason == "aborted"


def test_the_genuine_refusal_after_a_turn_passes_while_the_game_runs(refused: Record) -> None:
    report = audit_record(refused)
    assert report.result == "incomplete" and report.divergence is None, report.line()
    answer = events_of(refused)[_abort_answer(refused)]
    assert isinstance(answer, CommandRejected) and "a turn has been played" in answer.reason


def test_an_abort_applied_after_a_turn_fails_the_audit_with_the_seed(refused: Record) -> None:
    tampered, i = _forged_abort(refused, reveal=True)
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("abort", i), problem
    assert "a turn has been played" in problem.expected


def test_an_aborted_game_that_hides_its_seed_fails_as_seed_missing(refused: Record) -> None:
    tampered, _i = _forged_abort(refused, reveal=False)
    assert first_divergence(tampered).check == "seed-missing"


def test_an_abort_applied_after_a_turn_fails_the_audit_without_the_seed(refused: Record) -> None:
    # the forger leaves the game running (no GameOver, so no seed is due): only the
    # seedless checks run, and they see the abort came after a turn
    i = _abort_answer(refused)
    events = events_of(refused)
    forged = CommandApplied("abort-by-bob", 1, "abort", "person")
    tampered = rechain(refused, [*events[:i], forged, *events[i + 1 :]])
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("abort", i), problem


def test_an_abort_not_signed_by_the_seat_fails_at_its_answer(aborted: Record) -> None:
    k = command_index(aborted, "abort-by-bob")
    tampered = edit_command(aborted, k, lambda c: dataclasses.replace(c, signature="0" * 128))
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("signature", _abort_answer(aborted)), problem


def test_an_aborted_game_given_a_winner_fails_as_outcome(aborted: Record) -> None:
    i = _abort_answer(aborted)
    events = events_of(aborted)
    over = events[i + 1]
    assert isinstance(over, GameOver)
    won = dataclasses.replace(over.outcome, winners=(1,))
    tampered = rechain(aborted, events[: i + 1] + [GameOver(won)] + events[i + 2 :])
    problem = first_divergence(tampered)
    assert (problem.check, problem.event) == ("outcome", i + 1), problem
