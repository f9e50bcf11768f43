"""Time controls refereed (RULES.md, Time): clocks from Redis's stream ids, time-outs in the log.

The referee (:class:`~red7es.service.table.Table`) is tested with chosen stream times;
the folder on a real Redis, driven by hand, shows the compare-and-append, the meta's
deadline and the deadline index.  Real worker processes are in test_clock_workers.py.
"""

from __future__ import annotations

from typing import Any

import pytest
import redis
from support import wait_for

from red7es.deal import commitment
from red7es.facts import Forfeited, GameOver, PlayerOut, StepApplied
from red7es.service.audit import audit_game
from red7es.service.deadlines import DEADLINES, due, redis_now
from red7es.service.events import (
    ClockStarted,
    CommandApplied,
    CommandRejected,
    CreateCommand,
    SeatSpec,
    TimedOut,
    TurnCommand,
)
from red7es.service.folding import Folder, time_out_due
from red7es.service.table import Table
from red7es.service.tokens import new_token, public_key, sign_turn
from red7es.variant import Variant

from .helpers import bot, decoded_log, events_of, fold, offline_service, person

SEED = b"\x07" * 32


def _people_table(variant: Variant, at: int = 10_000) -> tuple[Table, list[str]]:
    """A table of people all seated at creation (stream time ``at``), and their tokens."""
    tokens = [new_token() for _ in range(variant.players)]
    seats = tuple(SeatSpec(f"p{i}") for i in range(variant.players))
    joins = tuple((i, public_key(t)) for i, t in enumerate(tokens))
    command = CreateCommand("create-g", variant, seats, commitment(SEED), joins)
    table, _events = Table.start("g", command, SEED, 0, stream_at=at)
    return table, tokens


def _turn(table: Table, tokens: list[str], name: str = "t1") -> TurnCommand:
    seat = table.to_move
    assert seat is not None
    turn = str(table.game.legal_turns()[0])
    return TurnCommand(name, seat, turn, "person", sign_turn(tokens[seat], "g", name, seat, turn, table.signed_over))


def test_the_clock_starts_when_every_seat_is_taken() -> None:
    table, _tokens = _people_table(Variant(2, turn_time=1000), at=5_000)
    assert table.clock == ClockStarted(table.to_move, 5_000, 6_000)  # type: ignore[arg-type]
    assert table.deadline == 6_000


def test_a_command_at_the_deadline_counts() -> None:
    table, tokens = _people_table(Variant(2, turn_time=1000))
    due_at = table.deadline
    assert due_at is not None
    assert time_out_due(table, f"{due_at}-3") == []
    events = table.handle(_turn(table, tokens), from_client=True, at=due_at)
    assert isinstance(events[0], CommandApplied)
    assert events[-1] == ClockStarted(table.to_move, due_at, due_at + 1000)  # type: ignore[arg-type]


def test_a_command_after_the_deadline_finds_the_seat_timed_out_and_its_round_folded() -> None:
    table, tokens = _people_table(Variant(3, turn_time=1000))
    seat, due_at = table.to_move, table.deadline
    assert seat is not None and due_at is not None
    command = _turn(table, tokens)
    events = time_out_due(table, f"{due_at + 1}-0")
    assert events[0] == TimedOut(seat, due_at, due_at + 1)
    assert StepApplied(seat, events[1].step) == events[1] and str(events[1].step) == "fold"  # type: ignore[union-attr]
    assert PlayerOut(seat, "fold") in events
    assert events[-1] == ClockStarted(table.to_move, due_at + 1, due_at + 1 + 1000)  # type: ignore[arg-type]
    late = table.handle(command, from_client=True, at=due_at + 1)
    assert isinstance(late[0], CommandRejected)  # no longer that seat's turn


def test_a_game_clock_runs_down_by_the_time_used_and_gains_the_increment() -> None:
    table, tokens = _people_table(Variant(2, clock=(10_000, 2_000)), at=0)
    first = table.to_move
    assert first is not None
    events = table.handle(_turn(table, tokens), from_client=True, at=3_000)
    started = events[-1]
    assert isinstance(started, ClockStarted)
    assert started.remaining[first] == 10_000 - 3_000 + 2_000
    assert started.deadline == 3_000 + 10_000  # the other seat has its whole clock


def test_a_game_clock_running_out_forfeits_the_game_in_a_two_player_game() -> None:
    table, _tokens = _people_table(Variant(2, clock=(10_000, 0)), at=0)
    seat = table.to_move
    events = table.time_out(10_001)
    assert events[0] == TimedOut(seat, 10_000, 10_001)  # type: ignore[arg-type]
    assert Forfeited(seat, "time") in events  # type: ignore[arg-type]
    over = next(e for e in events if isinstance(e, GameOver))
    assert over.outcome.reason == "time" and over.outcome.forfeited == (seat,)
    assert table.deadline is None


def test_a_time_out_before_the_deadline_is_refused() -> None:
    table, _tokens = _people_table(Variant(2, turn_time=1000), at=0)
    with pytest.raises(ValueError):
        table.time_out(1000)


# ---------------------------------------------------------------------- on a real Redis


def _past(connection: redis.Redis, deadline: int) -> None:
    wait_for(lambda: redis_now(connection) > deadline, "Redis's clock to pass the deadline", timeout=10, every=0.01)


def test_an_untimed_game_writes_no_deadline(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    svc.create(Variant(2), [person("ann"), bot("b")], join=["ann"], seed="untimed", game_id="u", wait=None)
    fold(Folder(svc.store), "u")
    assert "deadline" not in svc.store.meta("u")
    assert real_redis.zcard(DEADLINES) == 0


def test_a_time_out_is_written_once_and_the_audit_passes(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    svc.create(
        Variant(2, turn_time=2_000),
        [person("ann"), person("bob")],
        join=["ann", "bob"],
        seed="t",
        game_id="t",
        wait=None,
    )
    # (2 s, not less: the first fold and the look at the index below must come before the
    # deadline on a loaded machine too)
    folder = Folder(svc.store)
    fold(folder, "t")
    meta = svc.store.meta("t")
    deadline = int(meta["deadline"])
    assert real_redis.zscore(DEADLINES, "t") == deadline
    _now, games = due(real_redis)
    assert games == []  # not yet
    _past(real_redis, deadline)
    assert due(real_redis)[1] == ["t"]
    fold(folder, "t")
    fold(Folder(svc.store), "t")  # a second folder (another worker) finds nothing to do
    log = events_of(decoded_log(svc.store, "t"))
    assert [type(e) for e in log].count(TimedOut) == 1
    assert log[-1].__class__.__name__ == "SeedRevealed"  # a 2-player basic game: the fold ends it
    assert real_redis.zscore(DEADLINES, "t") is None  # taken off the index at game over
    assert audit_game(svc, "t").passed


def test_the_append_refuses_a_time_out_while_a_command_in_time_is_unanswered(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    created = svc.create(
        Variant(2, turn_time=2_000),  # the fold, the view and the turn all come before the deadline
        [person("ann"), person("bob")],
        join=["ann", "bob"],
        seed="race",
        game_id="r",
        wait=None,
    )
    folder = Folder(svc.store)
    fold(folder, "r")
    table = folder.tables["r"]
    deadline = table.deadline
    assert deadline is not None
    view: dict[str, Any] = svc.view("r", table.to_move)
    name = view["seats"][table.to_move]["name"]
    svc.submit("r", name, created.tokens[name], view["legal"][0])  # in time: its stream id is before the deadline
    _past(real_redis, deadline)
    # A folder that read the game before the turn came would time the seat out: the script refuses it.
    now = redis_now(real_redis)
    events = table.time_out(now)
    from red7es.service.store import AppendConflict

    with pytest.raises(AppendConflict):
        folder._flush(table, events, table.cursor, [], (now, deadline))
    folder.tables.pop("r", None)
    fold(folder, "r")
    log = events_of(decoded_log(svc.store, "r"))
    applied = [e for e in log if isinstance(e, CommandApplied)]
    assert applied and applied[0].seat == view["seat"]  # the turn in time counted
    assert audit_game(svc, "r").result in ("pass", "incomplete")


def test_bots_with_a_clock_play_a_game_to_the_end_and_it_audits(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    svc.create(
        Variant(3, clock=(60_000, 1_000)), [bot("a"), bot("b", "random"), bot("c")], seed="bots", game_id="b", wait=None
    )
    fold(Folder(svc.store), "b")
    assert svc.store.meta("b")["status"] == "over"
    log = events_of(decoded_log(svc.store, "b"))
    assert not any(isinstance(e, TimedOut) for e in log)
    clocks = [e for e in log if isinstance(e, ClockStarted)]
    assert clocks and all(len(c.remaining) == 3 for c in clocks)
    report = audit_game(svc, "b")
    assert report.passed, report.line()


def test_an_ismcts_bot_with_a_clock_thinks_a_share_of_its_time_never_more(real_redis: redis.Redis) -> None:
    """ismcts asking 5 s a turn on a 2 s clock: it would lose on time at its first turn, but
    thinks a tenth of what is left each turn, so the game ends without a time-out.  (The
    0.2 s a turn adds covers the fold's own work, which the clock counts too: without it a
    loaded machine's 40 ms a turn would use the clock up in the second round.)"""
    svc = offline_service(real_redis)
    seats = [bot("deep", "ismcts:time=5"), bot("deeper", "ismcts:time=5")]
    svc.create(Variant(2, clock=(2_000, 200), rounds=2), seats, seed="share", game_id="share", wait=None)
    fold(Folder(svc.store), "share")
    log = events_of(decoded_log(svc.store, "share"))
    assert isinstance(log[-2], GameOver) and log[-2].outcome.reason == "rounds"
    assert not any(isinstance(e, TimedOut) for e in log)
    assert audit_game(svc, "share").passed


def test_a_timed_game_on_a_cluster_fires_its_time_out_and_audits(cluster_redis: redis.Redis) -> None:
    svc = offline_service(cluster_redis)
    svc.create(Variant(2, turn_time=2_000), [person("ann"), bot("b")], join=["ann"], seed="c", game_id="c", wait=None)
    folder = Folder(svc.store)
    fold(folder, "c")
    deadline = folder.tables["c"].deadline
    assert deadline is not None and cluster_redis.zscore(DEADLINES, "c") == deadline
    _past(cluster_redis, deadline)
    assert due(cluster_redis)[1] == ["c"]
    fold(folder, "c")
    assert [type(e) for e in events_of(decoded_log(svc.store, "c"))].count(TimedOut) == 1
    assert audit_game(svc, "c").passed


def test_the_sweep_puts_back_a_deadline_lost_between_the_append_and_the_index(real_redis: redis.Redis) -> None:
    from red7es.workers.context import WorkerContext

    worker = WorkerContext(real_redis)
    svc = worker.service
    svc.create(
        Variant(2, turn_time=60_000),
        [person("ann"), person("bob")],
        join=["ann", "bob"],
        seed="lost",
        game_id="lost",
        wait=None,
    )
    worker.advance("lost")
    deadline = int(svc.store.meta("lost")["deadline"])
    real_redis.zrem(DEADLINES, "lost")  # what a worker killed right after its append leaves
    real_redis.zadd(DEADLINES, {"later": 10**15})
    worker.sweep()
    assert real_redis.zscore(DEADLINES, "lost") == deadline
    # an entry later than the meta says is lowered: a time-out is never fired late
    real_redis.zadd(DEADLINES, {"lost": deadline + 5_000})
    worker.sweep()
    assert real_redis.zscore(DEADLINES, "lost") == deadline
    # a broken game is no longer timed
    svc.store.mark_broken("lost", "broken by the test")
    assert real_redis.zscore(DEADLINES, "lost") is None


def test_a_due_game_is_posted_to_the_inbox_and_again_only_after_a_second(real_redis: redis.Redis) -> None:
    from red7es.workers.context import WorkerContext

    worker = WorkerContext(real_redis)
    real_redis.zadd(DEADLINES, {"due": 1, "later": redis_now(real_redis) + 600_000})
    posted: list[str] = []
    worker.inbox.post = posted.append  # type: ignore[method-assign]
    assert worker.post_due() == 1 and posted == ["due"]
    assert worker.post_due() == 0  # not again within the second: its lease may be elsewhere


def test_the_index_is_written_from_the_meta_in_the_appends_transaction(real_redis: redis.Redis) -> None:
    """On one Redis the append's transaction copies meta.deadline into the index, whatever the
    append did: a refused append (another worker was first) leaves the winner's deadline."""
    import dataclasses

    from red7es.service.store import AppendConflict, Batch

    svc = offline_service(real_redis)
    svc.create(
        Variant(2, turn_time=60_000),
        [person("ann"), person("bob")],
        join=["ann", "bob"],
        seed="tx",
        game_id="tx",
        wait=None,
    )
    fold(Folder(svc.store), "tx")
    deadline = int(svc.store.meta("tx")["deadline"])
    real_redis.zadd(DEADLINES, {"tx": 1})  # whatever the index held before
    stale = Batch(0, "0-0", "0-0", [], [], b"\0" * 32, "playing", 0, False, b"", {}, timed=True, deadline=5)
    with pytest.raises(AppendConflict):
        svc.store.append("tx", stale)
    assert real_redis.zscore(DEADLINES, "tx") == deadline
    with pytest.raises(AppendConflict):
        svc.store.append("tx", dataclasses.replace(stale, deadline=None))
    assert real_redis.zscore(DEADLINES, "tx") == deadline
