"""The worker's context in-process: leases, slices, nudges, the inbox and the sweep."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import fakeredis
import pytest
import redis

from red7es.service import work_index
from red7es.service.client import NUDGE_TTL_MS
from red7es.service.codec import encode_command
from red7es.service.events import CommandApplied, JoinCommand
from red7es.service.inbox import INBOX_KEY
from red7es.service.store import Appended, Batch, GameStore, Keys
from red7es.variant import Variant
from red7es.workers import context as context_module
from red7es.workers.context import WorkerContext

from .helpers import all_bot_game, bot, check_game, events_of, offline_service, person


def _posts(r: redis.Redis) -> list[str]:
    return [fields[b"g"].decode() for _, fields in r.xrange(INBOX_KEY)]


def test_advance_folds_releases_and_clears(fake_redis: Any) -> None:
    svc = offline_service(fake_redis)
    all_bot_game(svc, "g1")
    assert svc.store.set_nudge("g1", 10_000) is False  # create set it
    ctx = WorkerContext(fake_redis, owner="me")
    result = ctx.advance("g1")
    assert result["game"] == "g1" and result["commands"] == 1 and result["bot_moves"] > 0
    assert svc.store.lease_holder("g1") is None
    assert svc.store.set_nudge("g1", 10_000)  # cleared by the worker
    assert svc.store.meta("g1")["status"] == "over"
    check_game(svc.store, "g1")


def test_a_game_taken_after_redis_forgot_the_scripts_is_read_again(real_redis: redis.Redis) -> None:
    """The first read of a game is made with its lease as a plain EVALSHA: a Redis that
    lost its scripts (restarted, SCRIPT FLUSH) refuses it, and the worker reads again."""
    svc = offline_service(real_redis)
    all_bot_game(svc, "g1")
    ctx = WorkerContext(real_redis, owner="me")
    real_redis.script_flush()
    assert ctx.advance("g1")["commands"] == 1
    assert svc.store.meta("g1")["status"] == "over" and svc.store.lease_holder("g1") is None
    check_game(svc.store, "g1")


def test_advance_skips_a_game_someone_else_holds(fake_redis: Any) -> None:
    svc = offline_service(fake_redis)
    all_bot_game(svc, "g1")
    svc.store.acquire_lease("g1", "other", 10_000)
    result = WorkerContext(fake_redis, owner="me").advance("g1")
    assert result == {"game": "g1", "skipped": "another worker holds the game"}
    assert svc.store.meta("g1")["version"] == "0"
    assert svc.store.lease_holder("g1") == "other"


def test_advance_hands_back_unfinished_work(fake_redis: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A game cut off by the time slice is posted again for the next worker."""
    monkeypatch.setattr(context_module, "SLICE_SECONDS", 0.0)
    svc = offline_service(fake_redis)
    all_bot_game(svc, "g1", rounds=3)
    ctx = WorkerContext(fake_redis, owner="me")
    ctx.advance("g1")
    assert svc.store.meta("g1")["status"] == "playing"
    assert _posts(fake_redis) == ["g1"]
    assert not svc.store.set_nudge("g1", 10_000)  # the nudge is set again: clients will not post twice
    for _ in range(500):  # even with no time at all, each call moves the game on
        if svc.store.meta("g1")["status"] == "over":
            break
        ctx.advance("g1")
    assert svc.store.meta("g1")["status"] == "over"
    check_game(svc.store, "g1")


def test_a_stopping_worker_gives_up_a_long_decision_and_the_game_plays_the_same(fake_redis: Any) -> None:
    """Asked to stop, a worker writes the bot turns decided so far, gives up the ismcts
    decision under way and hands the game on; decided again, it is the same turn."""
    seats = [bot("quick", "greedy"), bot("deep", "ismcts:iterations=60")]
    svc = offline_service(fake_redis)
    for game in ("g1", "reference"):
        svc.create(Variant(2), seats, seed="stopping", game_id=game, wait=None)
    ctx = WorkerContext(fake_redis, owner="me")
    ctx.stopping = True
    ctx.advance("g1")  # the create, and greedy's turn if it moves first: written
    before = svc.store.meta("g1")
    assert before["status"] == "playing" and before["to_move"] == "1" and before["version"] != "0"
    fake_redis.delete(INBOX_KEY)
    result = ctx.advance("g1")
    after = svc.store.meta("g1")
    assert result["bot_moves"] == 0 and after["version"] == before["version"], "nothing decided, nothing written"
    assert svc.store.lease_holder("g1") is None and _posts(fake_redis) == ["g1"], "released and handed on"
    ctx.stopping = False
    for game in ("g1", "reference"):
        while svc.store.meta(game)["status"] != "over":
            ctx.advance(game)
    assert events_of(check_game(svc.store, "g1")) == events_of(check_game(svc.store, "reference"))


class _SubmitDuringAppend(GameStore):
    """A client command (and its schedule) lands while the worker is writing."""

    def __init__(self, connection: Any, client: Any) -> None:
        super().__init__(connection)
        self.client = client
        self.fired = False

    def append(self, game_id: str, batch: Batch) -> Appended:
        result = super().append(game_id, batch)
        if not self.fired:
            self.fired = True
            cmd = JoinCommand("late", 1, "ab" * 32)
            self.client.store.submit(game_id, cmd.id, encode_command(cmd, 1))
            self.client.schedule(game_id)  # the nudge is still set: this posts nothing
        return result


def test_a_command_arriving_during_a_slice_is_not_lost(fake_redis: Any) -> None:
    svc = offline_service(fake_redis)
    svc.create(Variant(2), [person("a"), person("b")], game_id="g1", join=["a"], wait=None)
    ctx = WorkerContext(fake_redis, owner="me")
    store = _SubmitDuringAppend(fake_redis, svc)
    ctx.store = ctx.folder.store = store
    ctx.advance("g1")
    assert store.fired and svc.wake.games == ["g1"]  # only the create's wake
    # the worker looked again after clearing the nudge, and woke someone for "late"
    assert _posts(fake_redis) == ["g1"]
    ctx.advance("g1")
    log = check_game(svc.store, "g1")
    assert log[-1].type == "SeatJoined"


@pytest.mark.parametrize("full", [True, False], ids=["every-game", "the-work-index"])
def test_sweep_reposts_lost_work(fake_redis: Any, monkeypatch: pytest.MonkeyPatch, full: bool) -> None:
    """The same rescues whether the sweep reads every active game (a worker's first) or only
    the games due in the work index (every later one; here due at once)."""
    monkeypatch.setattr(work_index, "CHECK_MS", 0)
    svc = offline_service(fake_redis)
    all_bot_game(svc, "held")
    all_bot_game(svc, "lost")
    all_bot_game(svc, "nudged")
    svc.create(Variant(2), [person("a"), person("b")], game_id="idle", wait=None)
    ctx = WorkerContext(fake_redis, owner="me")
    ctx.advance("idle")  # started; waits for people: nothing pending
    for g in ("held", "lost", "nudged"):
        svc.store.clear_nudge(g)
    svc.store.acquire_lease("held", "other", context_module.LEASE_MS)  # someone is on it (a longer lease: nobody)
    svc.store.set_nudge("nudged", NUDGE_TTL_MS)  # a post is on its way (or was lost)
    assert ctx.sweep(full) == 1
    assert _posts(fake_redis) == ["lost"]
    assert not svc.store.set_nudge("lost", 10_000)
    # a nudge that nobody acted on for STALL_SECONDS: its post was lost
    monkeypatch.setattr(context_module, "STALL_SECONDS", 0.0)
    assert ctx.sweep(full) == 2
    assert sorted(_posts(fake_redis)[1:]) == ["lost", "nudged"]
    # finished and broken games are left alone
    ctx.advance("lost")
    fake_redis.hset(Keys("nudged").meta, "broken", "test")
    svc.store.release_lease("held", "other")
    ctx.advance("held")
    before = len(_posts(fake_redis))
    assert ctx.sweep(full) == 0 and len(_posts(fake_redis)) == before


def test_shift_serves_the_inbox(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    ctx.inbox.ensure_group()
    for g in ("s1", "s2"):
        svc.create(Variant(3), [bot("a"), bot("b", "random"), bot("c")], seed=g, game_id=g, wait=None)
        ctx.inbox.post(g)
    result = ctx.shift(0.5, "consumer-1")
    assert result["games_served"] >= 2
    for g in ("s1", "s2"):
        assert svc.store.meta(g)["status"] == "over"
        check_game(svc.store, g)


def test_bytes_on_the_inbox_that_are_no_game_id_are_passed_over(real_redis: redis.Redis) -> None:
    """A post of non-UTF-8 bytes failed the whole shift (UnicodeDecodeError), and the games
    taken with it lost their wake-up."""
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    ctx.inbox.ensure_group()
    svc.create(Variant(2), [bot("a"), bot("b")], seed="inbox", game_id="real", wait=None)
    real_redis.xadd(INBOX_KEY, {"g": b"\xff\xfe"})
    ctx.inbox.post("real")
    assert ctx.inbox.take("me", block_ms=100) == ["real"]


def test_an_outage_ends_when_the_games_redis_answers_not_only_rqs(caplog: pytest.LogCaptureFixture) -> None:
    """With RQ on its own Redis, RQ answering first must not be told as the games' Redis being back."""
    from red7es.workers.worker import run_worker

    class GamesRedisDownTwice(fakeredis.FakeRedis):
        failures = 2

        def ping(self, **kwargs: Any) -> Any:
            if GamesRedisDownTwice.failures:
                GamesRedisDownTwice.failures -= 1
                raise redis.exceptions.ConnectionError("games' Redis down")
            return super().ping(**kwargs)

    games = GamesRedisDownTwice(server=fakeredis.FakeServer())
    rq = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    with caplog.at_level(logging.DEBUG, logger="red7es.workers"):
        run_worker(games, rq, burst=True, max_idle=1, redis_down=True)
    told = [r.getMessage() for r in caplog.records if r.name.startswith("red7es.workers") and "Redis" in r.getMessage()]
    assert told == [
        "Redis still unreachable (games' Redis down); retrying in 0.5s",
        "Redis still unreachable (games' Redis down); retrying in 1.0s",
        "Redis reachable again",
    ]


def test_a_stopping_worker_hands_back_the_games_it_took(real_redis: redis.Redis) -> None:
    """Asked to stop while it held a batch from the inbox, a worker served every game of it first."""
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    ctx.inbox.ensure_group()
    games = [f"held{i}" for i in range(3)]
    for g in games:
        all_bot_game(svc, g, rounds=3)
        ctx.inbox.post(g)
    ctx.stopping = True  # as SIGTERM sets it while the worker waits on the inbox
    assert ctx._serve("me", 0.5) == 0
    assert all(svc.store.meta(g)["version"] == "0" for g in games)
    assert ctx.inbox.take("another", block_ms=100) == games  # handed on, in order


def test_a_game_whose_keys_cannot_be_read_does_not_stop_the_sweep_of_the_others(
    fake_redis: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """One game's lease key of the wrong type failed the sweep's pipeline, so no game was
    recovered any more (a worker killed mid-game left its games for ever)."""
    svc = offline_service(fake_redis)
    for game in ("poisoned", "stalled"):
        all_bot_game(svc, game)  # created, never folded: both have work and no lease
    fake_redis.hset(Keys("poisoned").lease, "x", "y")  # a hash where a string belongs
    fake_redis.delete(INBOX_KEY)
    for game in ("poisoned", "stalled"):
        svc.store.clear_nudge(game)
    ctx = WorkerContext(fake_redis, owner="me")
    with caplog.at_level(logging.ERROR, logger="red7es.workers.context"):
        assert ctx.sweep() == 1
        ctx.sweep()
    assert _posts(fake_redis) == ["stalled"]
    told = [r.getMessage() for r in caplog.records if r.name == "red7es.workers.context"]
    assert len(told) == 1 and told[0].startswith("game poisoned cannot be swept: WRONGTYPE"), told


def test_a_shift_waits_out_redis_refusing_writes(fake_redis: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Redis at its maxmemory refuses writes with an OutOfMemoryError: the worker exited for
    good; like an outage, it is now waited out and the shift goes on."""
    ctx = WorkerContext(fake_redis, owner="me")
    served = []

    def serve(consumer: str, left: float) -> int:
        if not served:
            served.append("refused")
            raise redis.exceptions.OutOfMemoryError("command not allowed when used memory > 'maxmemory'.")
        served.append("served")
        return 0

    monkeypatch.setattr(ctx, "_serve", serve)
    ctx.shift(1.2, "me")
    assert served[:2] == ["refused", "served"]


def test_slow_bots_are_flushed_turn_by_turn_once_the_slice_is_spent(fake_redis: Any) -> None:
    """Bots move in batches of up to 32, but 32 slow decisions must not run in one slice:
    RQ would kill the job first and every decision would be lost and redone, for ever."""
    svc = offline_service(fake_redis)
    all_bot_game(svc, "slow", players=2, bots=("ismcts:time=0.2",))
    ctx = WorkerContext(fake_redis, owner="me")
    started = time.monotonic()
    progress = ctx.folder.advance("slow", max_seconds=0.3)
    assert progress.more and 1 <= progress.bot_moves <= 2, progress
    assert time.monotonic() - started < 2.0
    assert sum(isinstance(r.event, CommandApplied) for r in svc.log("slow")) == progress.bot_moves  # kept


def test_a_long_decision_keeps_the_lease_and_the_heartbeat(fake_redis: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot thinking longer than the lease: no second worker may take the game, and the
    worker must not look dead to red7 status meanwhile."""
    monkeypatch.setattr(context_module, "LEASE_MS", 1000)
    monkeypatch.setattr(context_module, "KEEPALIVE_SECONDS", 0.1)
    svc = offline_service(fake_redis)
    all_bot_game(svc, "deep", players=2, bots=("ismcts:time=2.5",))
    ctx = WorkerContext(fake_redis, owner="me")
    beats: list[float] = []
    ctx.beat = lambda: beats.append(time.monotonic())
    holders: list[str | None] = []
    watcher = threading.Timer(1.8, lambda: holders.append(svc.store.lease_holder("deep")))
    watcher.start()
    ctx.advance("deep")  # one decision of 2.5 s, more than two leases long
    watcher.join()
    assert holders == ["me"], "the lease lapsed while the bot was thinking"
    assert len(beats) >= 10
    assert svc.store.lease_holder("deep") is None  # released once the slice is done


def test_a_shift_outlasts_the_longest_bot_decision(fake_redis: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """RQ kills a job past its timeout: the shift job a worker queues for itself must allow
    for a whole shift plus the longest decision a bot may take."""
    from rq import Queue

    from red7es.bots.ismcts import MAX_TIME
    from red7es.workers.worker import SHIFT_SECONDS, Red7Worker

    class Enqueued(Exception):
        pass

    queued: dict[str, Any] = {}

    def enqueue(self: Queue, function: str, *args: Any, **kwargs: Any) -> None:
        queued.update(kwargs, function=function)
        raise Enqueued  # before RQ waits for the job

    worker = Red7Worker([], connection=fake_redis, context=WorkerContext(fake_redis, owner="me"), name="w")
    monkeypatch.setattr(Queue, "enqueue", enqueue)
    with pytest.raises(Enqueued):
        worker.dequeue_job_and_maintain_ttl(1)
    assert queued["function"] == "red7es.workers.jobs.work_shift"
    assert queued["job_timeout"] > SHIFT_SECONDS + MAX_TIME


def test_a_shift_hands_back_the_games_it_has_no_time_left_for(fake_redis: Any) -> None:
    """Slow bots can make one batch of games outlast the shift (and RQ's job timeout): past the
    shift's end the games not yet served are posted again for the next shift."""
    svc = offline_service(fake_redis)
    for gid in ("s1", "s2", "s3"):
        all_bot_game(svc, gid, players=2, bots=("ismcts:time=0.3",))
    ctx = WorkerContext(fake_redis, owner="me")
    ctx.inbox.take("me", block_ms=1)  # what create posted, read once
    for gid in ("s1", "s2", "s3"):
        ctx.inbox.post(gid)
    assert ctx._serve("me", 0.1) == 1
    assert set(ctx.inbox.take("me", block_ms=1)) >= {"s2", "s3"}


def test_the_keepalive_takes_back_a_lease_that_lapsed(fake_redis: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a Redis stall the lease may be gone while the bot still thinks: take it back,
    so a second worker does not start thinking the same turn."""
    monkeypatch.setattr(context_module, "KEEPALIVE_SECONDS", 0.1)
    svc = offline_service(fake_redis)
    all_bot_game(svc, "stall", players=2, bots=("ismcts:time=1.5",))
    ctx = WorkerContext(fake_redis, owner="me")
    holders: list[str | None] = []

    def lapse_then_look() -> None:
        fake_redis.delete(Keys("stall").lease)  # as if it expired during a stall
        time.sleep(0.4)
        holders.append(svc.store.lease_holder("stall"))

    watcher = threading.Timer(0.5, lapse_then_look)
    watcher.start()
    ctx.advance("stall")
    watcher.join()
    assert holders == ["me"]


def test_an_older_bot_beyond_the_caps_is_played_at_the_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    """ismcts:time=inf (accepted before the caps) must not hold a worker for ever on one turn."""
    from red7es.bots import ismcts
    from red7es.bots.base import make_bot
    from red7es.game import Game

    monkeypatch.setattr(ismcts, "MAX_TIME", 0.2)
    bot = make_bot("ismcts:time=inf")
    game = Game.new(2, seed="capped")
    started = time.monotonic()
    assert bot.choose(game.observation(game.turn)) in game.legal_turns()
    assert time.monotonic() - started < 1.5
