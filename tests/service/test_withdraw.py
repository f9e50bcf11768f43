"""Withdrawal (RULES.md, Withdrawal): an operator puts a seat out of a game not over, as if it
had resigned; the others play on.  Appended compare-and-append like a worker's answer, at
Redis's time, after any time-out already due.

The referee (:class:`~red7es.service.table.Table`), then the service on a real Redis (folders
the test drives), then real workers; each game audited.
"""

from __future__ import annotations

import time

import pytest
import redis
from support import WorkerPool

from red7es.deal import commitment
from red7es.facts import Forfeited, GameOver
from red7es.game import IllegalStep
from red7es.service.audit import audit_game
from red7es.service.client import GameService, Rejected
from red7es.service.events import (
    ClockStarted,
    CommandRejected,
    CreateCommand,
    JoinCommand,
    SeedRevealed,
    TimedOut,
    Withdrawn,
)
from red7es.service.folding import Folder
from red7es.service.table import Table
from red7es.variant import Variant

from .helpers import bot, decoded_log, events_of, fold, offline_service, person, seated_table, signed

SEED = b"\x09" * 32


def test_withdrawing_one_of_two_seats_ends_the_game_for_the_other() -> None:
    table, _tokens = seated_table(Variant(2, clock=(60_000, 0)), SEED)
    events = table.withdraw(1, "left the club", 12_000)
    assert events[0] == Withdrawn(1, "left the club", 12_000)
    assert Forfeited(1, "withdrawn") in events
    over = next(e for e in events if isinstance(e, GameOver))
    assert over.outcome.winners == (0,) and over.outcome.reason == "withdrawn" and over.outcome.forfeited == (1,)
    assert isinstance(events[-1], SeedRevealed) and table.deadline is None


def test_at_a_table_of_three_the_others_play_on_and_the_mover_withdrawn_passes_the_clock() -> None:
    table, _tokens = seated_table(Variant(3, clock=(60_000, 1_000)), SEED)
    mover = table.to_move
    assert mover is not None
    events = table.withdraw(mover, "gone", 15_000)
    assert not table.over and table.to_move != mover and mover in table.game.forfeited
    started = events[-1]
    assert isinstance(started, ClockStarted) and started.at == 15_000 and started.seat == table.to_move
    assert started.remaining[mover] == 60_000 - 5_000 + 1_000  # charged as a turn that ended


def test_withdrawing_a_seat_not_to_move_leaves_the_movers_clock_running() -> None:
    table, _tokens = seated_table(Variant(3, clock=(60_000, 0)), SEED)
    mover = table.to_move
    assert mover is not None
    other = (mover + 1) % 3
    clock = table.clock
    events = table.withdraw(other, "gone", 15_000)
    assert not any(isinstance(e, ClockStarted) for e in events) and table.clock == clock


def test_withdrawing_the_last_seat_nobody_took_starts_the_clocks() -> None:
    table, _tokens = seated_table(Variant(3, clock=(60_000, 0)), SEED, joined=2)
    assert table.clock is None
    events = table.withdraw(2, "never came", 20_000)
    started = events[-1]
    assert isinstance(started, ClockStarted) and started.at == 20_000 and table.deadline == 80_000


@pytest.mark.parametrize(
    ("seat", "reason", "at", "why"),
    [
        (5, "x", 11_000, "cannot forfeit: it is not in the game"),
        (0, " ", 11_000, "a withdrawal needs a reason"),
        (0, "x" * 1001, 11_000, "at most 1000 characters"),
        (0, "x", 9_000, "before the running clock's start"),
        (0, "x", 70_001, "its time-out comes first"),
    ],
)
def test_a_withdrawal_the_rules_or_the_clocks_forbid_is_refused(seat: int, reason: str, at: int, why: str) -> None:
    table, _tokens = seated_table(Variant(2, clock=(60_000, 0)), SEED)
    with pytest.raises(IllegalStep, match=why):
        table.withdraw(seat, reason, at)
    assert not table.over and not table.game.forfeited


def test_a_seat_resigned_or_a_game_over_cannot_be_withdrawn() -> None:
    table, tokens = seated_table(Variant(3), SEED)
    table.handle(signed(tokens, 2, "resign", "r1"), from_client=True, at=11_000)
    with pytest.raises(IllegalStep, match="not in the game"):
        table.withdraw(2, "x", 12_000)
    table.withdraw(1, "x", 12_000)
    assert table.over
    with pytest.raises(IllegalStep, match="the game is over"):
        table.withdraw(0, "x", 13_000)


def test_a_table_rebuilt_from_a_log_with_a_withdrawal_is_the_same() -> None:
    table, _tokens = seated_table(Variant(3, clock=(60_000, 0)), SEED)
    joins = tuple((i, key) for i, key in enumerate(table.keys) if key is not None)
    create = CreateCommand("create-g", table.variant, table.seats, commitment(SEED), joins)
    _t, first = Table.start("g", create, SEED, 0, stream_at=10_000)
    answer = table.withdraw(0, "gone", 14_000)
    for seed in (SEED, None):
        rebuilt = Table.rebuild([*first, *answer], seed)
        assert rebuilt.game.forfeited == [0] and rebuilt.to_move == table.to_move and rebuilt.clock == table.clock


def _three_people(svc: GameService, game_id: str, clock: tuple[int, int] | None = None) -> dict[str, str]:
    seats = [person("ann"), person("bob"), person("cy")]
    made = svc.create(
        Variant(3, clock=clock), seats, join=["ann", "bob", "cy"], seed=game_id, game_id=game_id, wait=None
    )
    return made.tokens


def test_the_service_withdraws_a_seat_and_the_audit_names_it(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    tokens = _three_people(svc, "wd-svc", clock=(600_000, 0))
    folder = Folder(svc.store)
    fold(folder, "wd-svc")
    events = svc.withdraw("wd-svc", "cy", "cy left the club")
    assert isinstance(events[0], Withdrawn) and events[0].seat == 2
    with pytest.raises(Rejected, match="not in the game"):
        svc.withdraw("wd-svc", "cy", "again")
    view = svc.view("wd-svc")
    assert view["status"] == "playing" and view["seats"][2]["forfeited"]
    svc.submit("wd-svc", "ann", tokens["ann"], "resign")
    fold(folder, "wd-svc")
    over = svc.view("wd-svc")["outcome"]
    assert over["winners"] == [1] and over["forfeited"] == [2, 0] and over["reason"] == "resigned"
    assert over["forfeit_reasons"] == ["withdrawn", "resigned"]
    report = audit_game(svc, "wd-svc")
    assert report.passed, report.line()
    at = next(r.seq for r in decoded_log(svc.store, "wd-svc") if isinstance(r.event, Withdrawn))
    assert report.withdrawals == [f"the operator withdrew cy at event {at}; reason: cy left the club"]
    assert report.withdrawals[0] in report.line() and report.to_dict()["withdrawals"] == report.withdrawals


def test_a_time_out_already_due_is_recorded_before_the_withdrawal(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    _three_people(svc, "wd-due", clock=(2_000, 0))
    Folder(svc.store).advance("wd-due", max_seconds=1.0)  # the game created, its first clock started
    log = events_of(decoded_log(svc.store, "wd-due"))
    started = [e for e in log if isinstance(e, ClockStarted)]
    assert len(started) == 1 and not any(isinstance(e, TimedOut) for e in log)
    time.sleep(2.1)  # no worker: the first seat's time is up, and nobody has timed it out
    other = ("ann", "bob", "cy")[(started[0].seat + 1) % 3]
    svc.withdraw("wd-due", other, "gone")
    log = events_of(decoded_log(svc.store, "wd-due"))
    timed_out = next(e for e in log if isinstance(e, TimedOut))
    withdrawn = next(e for e in log if isinstance(e, Withdrawn))
    assert log.index(timed_out) < log.index(withdrawn) and withdrawn.at >= timed_out.at
    report = audit_game(svc, "wd-due")
    assert report.passed, report.line()


@pytest.mark.integration
def test_a_withdrawal_with_real_workers_lets_a_bot_play_on_and_audits(
    real_redis: redis.Redis, workers: WorkerPool
) -> None:
    svc = GameService(real_redis)
    workers.start(1, wait=True)
    made = svc.create(Variant(3), [person("ann"), person("bob"), bot("g")], join=["ann", "bob"], seed="wd-w", wait=30)
    game = made.game_id
    svc.withdraw(game, "ann", "ann never came back")
    svc.withdraw(game, "bob", "bob never came back")
    summary = next(s for s in svc.games() if s.game_id == game)
    assert summary.status == "over" and summary.winners == [2] and summary.reason == "withdrawn", summary
    report = audit_game(svc, game)
    assert report.passed, report.line()
    assert [w.split(";")[0].split(" at ")[0] for w in report.withdrawals] == [
        "the operator withdrew ann",
        "the operator withdrew bob",
    ]


def test_a_seat_withdrawn_before_anyone_took_it_cannot_be_joined() -> None:
    table, _tokens = seated_table(Variant(3), SEED, joined=2)
    table.withdraw(2, "never came", 12_000)
    refused = table.handle(JoinCommand("j", 2, "ab" * 32), from_client=True, at=13_000)
    assert isinstance(refused[0], CommandRejected) and refused[0].reason == "seat p2 is out of the game"
    assert table.keys[2] is None


def test_a_game_created_with_a_seat_withdrawn_starts_without_it(real_redis: redis.Redis) -> None:
    """A create's ``withdrawn`` (a tournament entrant withdrawn before the game): the seat is
    out from the start, so the clocks start once the others are seated (here at once)."""
    svc = offline_service(real_redis)
    seats = [person("ann"), person("bob"), person("cy")]
    variant = Variant(3, clock=(600_000, 0))
    svc.create(variant, seats, join=["ann", "bob"], seed="wd-c", game_id="wd-c", wait=None, withdrawn=[("cy", "gone")])
    fold(Folder(svc.store), "wd-c")
    log = events_of(decoded_log(svc.store, "wd-c"))
    withdrawn = next(i for i, e in enumerate(log) if isinstance(e, Withdrawn))
    started = next(i for i, e in enumerate(log) if isinstance(e, ClockStarted))
    assert log[withdrawn] == Withdrawn(2, "gone", log[withdrawn].at) and withdrawn < started
    assert svc.view("wd-c")["seats"][2]["forfeited"]
    assert audit_game(svc, "wd-c").divergence is None
