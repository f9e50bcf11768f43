"""Time-outs fired by real worker processes (RULES.md, Time; docs/architecture.md, Clocks).

Clocks of a few hundred milliseconds, real workers on a real Redis. Nothing here
asserts a timing: each test waits for a condition (Redis's clock past a deadline, an
event in the log) and then checks what the log holds, and that the audit passes.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import redis
from support import WorkerPool, wait_for

from red7es.deal import make_seed
from red7es.facts import GameOver
from red7es.game import Game
from red7es.service.audit import audit_game
from red7es.service.client import GameService, Rejected
from red7es.service.deadlines import DEADLINES, redis_now
from red7es.service.events import ClockStarted, CommandApplied, CommandRejected, TimedOut, TurnCommand
from red7es.service.store import Keys
from red7es.service.tokens import sign_turn
from red7es.variant import Variant

from .helpers import decoded_log, events_of, person

pytestmark = pytest.mark.integration


@pytest.fixture
def pools(tmp_path: Path) -> Iterator[Any]:
    made: list[WorkerPool] = []

    def make(url: str) -> WorkerPool:
        directory = tmp_path / f"workers{len(made)}"
        directory.mkdir()
        made.append(WorkerPool(url, directory))
        return made[-1]

    yield make
    for pool in made:
        pool.stop()


def _log(svc: GameService, game_id: str) -> list[Any]:
    return events_of(decoded_log(svc.store, game_id))


def _first_clock(svc: GameService, game_id: str) -> ClockStarted:
    def started() -> ClockStarted | None:
        if not svc.store.exists(game_id) or svc.store.meta(game_id).get("version") == "0":
            return None
        return next((e for e in _log(svc, game_id) if isinstance(e, ClockStarted)), None)

    found: ClockStarted = wait_for(started, "the first clock to start", timeout=30)
    return found


def _wait_over(svc: GameService, game_id: str, pool: WorkerPool) -> None:
    try:
        wait_for(lambda: svc.store.meta(game_id).get("status") == "over", f"game {game_id} to end", timeout=60)
    except AssertionError:
        raise AssertionError(f"{svc.store.meta(game_id)}\n{pool.logs()[-4000:]}") from None


def _audited(svc: GameService, game_id: str) -> None:
    report = audit_game(svc, game_id)
    assert report.passed, report.line()


def _answered(svc: GameService, game_id: str, command_id: str) -> bool:
    return any(isinstance(e, CommandApplied | CommandRejected) and e.id == command_id for e in _log(svc, game_id))


def _past(connection: redis.Redis, deadline: int) -> None:
    wait_for(lambda: redis_now(connection) > deadline, "Redis's clock to pass the deadline", timeout=30, every=0.01)


def test_seats_that_never_move_each_time_out_exactly_once(real_redis: redis.Redis, workers: WorkerPool) -> None:
    svc = GameService(real_redis)
    workers.start(2, wait=True)
    names = ["ann", "bob", "cy"]
    svc.create(Variant(3, clock=(300, 0)), [person(n) for n in names], join=names, seed="noshow", game_id="ns", wait=30)
    _wait_over(svc, "ns", workers)
    log = _log(svc, "ns")
    timed_out = [e for e in log if isinstance(e, TimedOut)]
    assert len(timed_out) == 2 and len({e.seat for e in timed_out}) == 2  # the third wins on time
    over = next(e for e in log if isinstance(e, GameOver))
    assert over.outcome.reason == "time" and over.outcome.forfeited == tuple(e.seat for e in timed_out)
    assert real_redis.zscore(DEADLINES, "ns") is None
    _audited(svc, "ns")


def _offline_first_turn(variant: Variant, seed: str) -> tuple[int, str]:
    """The seat to move first and a legal turn for it, from the seed (before any worker runs)."""
    game = Game.new(variant, seed=make_seed(seed))
    return game.turn, str(game.legal_turns()[0])


@pytest.mark.parametrize("order", ["turn-in-time", "turn-too-late"])
def test_a_turn_and_a_time_out_racing_give_one_outcome(
    real_redis: redis.Redis, pools: Any, redis_server: Any, order: str
) -> None:
    """Workers start only after the deadline, two at once, so both see the game due and the
    turn unanswered: the turn's stream id alone decides (at or before the deadline counts)."""
    svc = GameService(real_redis, wake=lambda game_id: None)
    variant = Variant(2, turn_time=2_000 if order == "turn-in-time" else 300)
    names = ["ann", "bob"]
    created = svc.create(
        variant, [person(n) for n in names], join=names, seed=f"race-{order}", game_id="race", wait=None
    )
    created_at = int(real_redis.xrange(Keys("race").commands)[0][0].decode().split("-")[0])
    deadline = created_at + (variant.turn_time or 0)
    seat, turn = _offline_first_turn(variant, f"race-{order}")
    token = created.tokens[names[seat]]
    if order == "turn-too-late":
        _past(real_redis, deadline)
    command = TurnCommand(
        "the-turn", seat, turn, "person", sign_turn(token, "race", "the-turn", seat, turn, created.commitment)
    )
    svc.submit_signed("race", command)
    stream_id = real_redis.hget(Keys("race").cmdids, "the-turn")
    assert stream_id is not None
    in_time = int(stream_id.decode().split("-")[0]) <= deadline
    assert in_time == (order == "turn-in-time")  # the precondition of this order
    _past(real_redis, deadline)
    pool = pools(redis_server.url)
    pool.start(2, wait=True)
    svc.schedule("race")
    wait_for(
        lambda: (
            any(isinstance(e, TimedOut) for e in _log(svc, "race"))
            or any(isinstance(e, CommandApplied) for e in _log(svc, "race"))
        ),
        "the race to be decided",
        timeout=30,
    )
    if not in_time:
        _wait_over(svc, "race", pool)
    log = _log(svc, "race")
    answers = [e for e in log if isinstance(e, CommandApplied | CommandRejected) and e.id == "the-turn"]
    assert len(answers) == 1
    if in_time:
        assert isinstance(answers[0], CommandApplied)
        first_timeout = next((i for i, e in enumerate(log) if isinstance(e, TimedOut)), len(log))
        assert log.index(answers[0]) < first_timeout
    else:
        assert isinstance(answers[0], CommandRejected)
        assert [e.seat for e in log if isinstance(e, TimedOut)][:1] == [seat]
    wait_for(lambda: audit_game(svc, "race").result in ("pass", "incomplete"), "the audit to pass", timeout=30)
    assert audit_game(svc, "race").divergence is None


def test_a_worker_killed_at_the_deadline_leaves_the_time_out_to_another(
    real_redis: redis.Redis, pools: Any, redis_server: Any
) -> None:
    svc = GameService(real_redis)
    first = pools(redis_server.url)
    (process,) = first.start(1, wait=True)
    names = ["ann", "bob"]
    svc.create(Variant(2, turn_time=1_000), [person(n) for n in names], join=names, seed="killed", game_id="k", wait=30)
    clock = _first_clock(svc, "k")
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    # What a worker killed while folding the game at its deadline leaves: its lease, for 5 s.
    real_redis.set(Keys("k").lease, "dead-worker", px=5_000)
    _past(real_redis, clock.deadline)
    second = pools(redis_server.url)
    second.start(1, wait=True)
    _wait_over(svc, "k", second)
    log = _log(svc, "k")
    fired = [e for e in log if isinstance(e, TimedOut)]
    assert [(e.seat, e.deadline) for e in fired] == [(clock.seat, clock.deadline)]
    _audited(svc, "k")


def test_a_redis_restart_across_a_deadline_still_fires_it(private_redis: Any, pools: Any) -> None:
    server = private_redis(appendonly=True, appendfsync="always")
    connection = redis.Redis.from_url(server.url)
    svc = GameService(connection)
    pool = pools(server.url)
    pool.start(1, wait=True)
    names = ["ann", "bob"]
    svc.create(
        Variant(2, turn_time=3_000), [person(n) for n in names], join=names, seed="restart", game_id="rs", wait=30
    )
    clock = _first_clock(svc, "rs")
    # The worker is paused from before the outage until the index is looked at after it: a
    # loaded machine must not let it fire the time-out before the outage, or, reconnecting
    # at once, before that look (it finds its connections dead when it goes on).
    for process in pool.alive():
        os.kill(process.pid, signal.SIGSTOP)
    try:
        assert redis_now(connection) < clock.deadline  # (the outage starts before the deadline)
        server.stop()
        wait_for(
            lambda: time.time() * 1000 > clock.deadline + 200, "the deadline to pass while Redis is down", timeout=30
        )
        server.start()
        connection.connection_pool.disconnect()
        assert connection.zscore(DEADLINES, "rs") == clock.deadline  # the index survived the restart (AOF)
    finally:
        for process in pool.alive():
            os.kill(process.pid, signal.SIGCONT)
    _wait_over(svc, "rs", pool)
    assert [e.seat for e in _log(svc, "rs") if isinstance(e, TimedOut)] == [clock.seat]
    _audited(svc, "rs")


def test_turns_sent_at_their_deadline_with_two_workers_running_each_have_one_outcome(
    real_redis: redis.Redis, workers: WorkerPool
) -> None:
    """Turns sent within a few ms of their deadline while two workers watch the game: whichever
    way each race goes (the machine decides which happen), the turn's stream id decides the
    outcome, exactly one of the turn and the time-out takes effect, and every record audits."""
    svc = GameService(real_redis)
    workers.start(2, wait=True)
    variant = Variant(2, turn_time=300)
    names = ["ann", "bob"]
    for i in range(8):
        game = f"edge{i}"
        created = svc.create(variant, [person(n) for n in names], join=names, seed=game, game_id=game, wait=30)
        clock = _first_clock(svc, game)
        seat, turn = _offline_first_turn(variant, game)
        command = TurnCommand(
            "edge",
            seat,
            turn,
            "person",
            sign_turn(created.tokens[names[seat]], game, "edge", seat, turn, created.commitment),
        )
        aim = clock.deadline - 3 + i  # from just before the deadline to just after it
        _past(real_redis, aim - 1)
        try:
            svc.submit_signed(game, command)
        except Rejected as refused:
            # The machine held this client past the deadline and a worker timed the seat out
            # first, which ends a 2-player game: the turn is refused before it is stored.
            assert "is over" in str(refused)
            assert [e.seat for e in _log(svc, game) if isinstance(e, TimedOut)] == [seat]
            assert real_redis.hget(Keys(game).cmdids, "edge") is None
            _audited(svc, game)
            continue
        stream_id = real_redis.hget(Keys(game).cmdids, "edge")
        assert stream_id is not None
        in_time = int(stream_id.decode().split("-")[0]) <= clock.deadline
        wait_for(partial(_answered, svc, game, "edge"), "the turn's answer", timeout=30)
        log = _log(svc, game)
        answer = next(e for e in log if isinstance(e, CommandApplied | CommandRejected) and e.id == "edge")
        before = log[: log.index(answer)]
        timed_out = [e for e in before if isinstance(e, TimedOut)]
        if in_time:
            assert isinstance(answer, CommandApplied) and not timed_out
        else:
            assert isinstance(answer, CommandRejected) and [e.seat for e in timed_out] == [seat]
        _wait_over(svc, game, workers)
        _audited(svc, game)
