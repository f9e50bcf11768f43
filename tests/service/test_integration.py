"""Real worker processes on a real Redis: games to the end, killed workers, Redis restarts."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis
from support import WorkerPool, wait_for

from red7es.service.client import GameService, Rejected
from red7es.service.connection import Endpoint, UnreachableError
from red7es.service.events import CommandApplied, SeatSpec, SeedRevealed
from red7es.service.folding import Folder
from red7es.service.redis_server import RedisServer, free_port, redis_binary
from red7es.variant import Variant

from .helpers import bot, check_game, events_of, fold, offline_service, person

pytestmark = pytest.mark.integration

# Bots that think a little, so that games are still in flight when a worker or Redis dies.
SLOW = [bot("a", "ismcts:iterations=200"), bot("b", "greedy"), bot("c", "ismcts:iterations=200")]
SLOW_VARIANT = Variant(3, rounds=3)


@pytest.fixture
def worker_factory(tmp_path: Path) -> Iterator[Any]:
    """Worker pools on any Redis URL (the conftest ``workers`` fixture serves the session's)."""
    pools: list[WorkerPool] = []

    def make(url: str) -> WorkerPool:
        directory = tmp_path / f"workers{len(pools)}"
        directory.mkdir()
        pools.append(WorkerPool(url, directory))
        return pools[-1]

    yield make
    for pool in pools:
        pool.stop()


def _reference(variant: Variant, seats: Sequence[SeatSpec], seed: str) -> list[Any]:
    """The events of the same game folded by one worker in this process."""
    svc = offline_service(fakeredis.FakeRedis())
    svc.create(variant, seats, seed=seed, game_id="ref", wait=None)
    fold(Folder(svc.store), "ref")
    return events_of(check_game(svc.store, "ref"))


def _wait_all_over(svc: GameService, games: Sequence[str], timeout: float, logs: Any) -> None:
    def done() -> bool:
        return all(svc.store.meta(g)["status"] == "over" for g in games)

    try:
        wait_for(done, "every game to finish", timeout=timeout, every=0.2)
    except AssertionError:
        states = {g: svc.store.meta(g) for g in games}
        raise AssertionError(f"games did not finish: {states}\n--- worker logs ---\n{logs()[-5000:]}") from None


def _check_finished(svc: GameService, game_id: str, reference: list[Any] | None = None) -> None:
    log = check_game(svc.store, game_id)  # gapless, chained, each command answered once, in order
    assert isinstance(log[-1].event, SeedRevealed)
    assert "broken" not in svc.store.meta(game_id)
    # The worker takes a finished game off the sweep list just after its last append.
    wait_for(lambda: game_id not in svc.store.active_games(), "the game to leave the sweep list", timeout=10)
    if reference is not None:
        assert events_of(log) == reference, f"{game_id} played differently from an undisturbed run"


def _lease_pid(svc: GameService, games: Sequence[str], pids: set[int]) -> int | None:
    """The pid of one of our workers holding the lease of a game in play, if any."""
    for g in games:
        holder = svc.store.lease_holder(g)
        if holder and svc.store.meta(g)["status"] != "over":
            tail = holder.rsplit(":", 1)[-1]
            if tail.isdigit() and int(tail) in pids:
                return int(tail)
    return None


# ---------------------------------------------------------------------- a person and two bots


def test_person_and_two_bots_play_to_the_end(workers: Any, real_redis: redis.Redis) -> None:
    workers.start(2)
    svc = GameService(real_redis)
    created = svc.create(Variant(3), [person("ann"), bot("cy", "greedy"), bot("di", "random")], join=["ann"], wait=60)
    gid, token = created.game_id, created.tokens["ann"]
    applied = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        mark = svc.store.last_change_id(gid)
        view = svc.view(gid, 0)
        if view["status"] == "over":
            break
        if view["to_move"] != 0:
            svc.wait_change(gid, mark, timeout=30)  # blocks until the bots have moved
            continue
        if applied == 0:  # an illegal turn first: answered with the engine's reason
            missing = next(c for c in ("R7", "V1", "B4", "G2") if c not in view["hand"])
            answer = svc.play(gid, "ann", token, f"p:{missing}", wait=60)
            assert not answer.applied and answer.reason and missing in answer.reason
        answer = svc.play(gid, "ann", token, view["legal"][0], wait=60)
        assert answer.applied, answer.reason
        assert answer.events[0]["type"] == "CommandApplied" and answer.events[0]["turn"] == view["legal"][0]
        applied += 1
    else:
        raise AssertionError(f"the game did not finish: {svc.store.meta(gid)}\n{workers.logs()[-3000:]}")
    assert applied >= 1
    _check_finished(svc, gid)
    log = check_game(svc.store, gid)
    people = [r.event for r in log if isinstance(r.event, CommandApplied) and r.event.by == "person"]
    assert len(people) == applied
    summary = next(s for s in svc.games() if s.game_id == gid)
    assert summary.status == "over" and summary.winners
    with pytest.raises(Rejected, match=rf"^game {gid} is over$"):  # refused before it is stored
        svc.play(gid, "ann", token, "fold", wait=60)
    assert len(check_game(svc.store, gid)) == len(log)


# ---------------------------------------------------------------------- a worker killed


def test_sigkill_a_worker_mid_game(workers: Any, real_redis: redis.Redis) -> None:
    svc = GameService(real_redis)
    games = [f"kill{i}" for i in range(3)]
    first = workers.start(2)
    for g in games:
        svc.create(SLOW_VARIANT, SLOW, seed=f"seed-{g}", game_id=g, wait=60)
    pids = {p.pid for p in first}
    victim = wait_for(lambda: _lease_pid(svc, games, pids), "a worker to hold a game in play", timeout=60, every=0.01)
    os.kill(victim, signal.SIGKILL)
    killed = next(p for p in first if p.pid == victim)
    killed.wait(10)
    assert killed.returncode == -signal.SIGKILL
    workers.start(1)  # a replacement (the other worker keeps going too)
    # the same games undisturbed, computed while the killed worker's lease runs out
    references = {g: _reference(SLOW_VARIANT, SLOW, f"seed-{g}") for g in games}
    _wait_all_over(svc, games, 150, workers.logs)
    for g in games:
        _check_finished(svc, g, references[g])


def test_sigterm_stops_a_worker_mid_decision_at_once(workers: Any, real_redis: redis.Redis) -> None:
    """A worker asked to stop gave its bot the whole decision first: minutes here (a million
    iterations), longer than Docker's 10 s grace.  Now it gives the decision up, writes
    nothing for it, releases the game and hands it on, and exits."""
    svc = GameService(real_redis)
    [worker] = workers.start(1, wait=True)
    thinker = [bot("deep", "ismcts:iterations=1000000"), bot("deeper", "ismcts:iterations=1000000")]
    svc.create(Variant(2), thinker, seed="sigterm", game_id="deep", wait=60)
    wait_for(lambda: _lease_pid(svc, ["deep"], {worker.pid}), "the worker to be deciding", timeout=30, every=0.01)
    version = svc.store.meta("deep")["version"]
    time.sleep(0.5)  # well into the decision
    worker.send_signal(signal.SIGTERM)
    worker.wait(10)
    assert worker.returncode == 0, workers.logs()
    assert svc.store.lease_holder("deep") is None, "released, not left to expire"
    assert svc.store.meta("deep")["version"] == version and "broken" not in svc.store.meta("deep")
    assert "Traceback" not in workers.logs()
    assert "deep" in svc.store.active_games()  # the sweep and the next worker will decide it


def test_workers_wait_out_redis_refusing_writes_at_its_maxmemory(private_redis: Any, worker_factory: Any) -> None:
    """A Redis at its maxmemory refuses writes (OOM): every worker used to exit for good."""
    server: RedisServer = private_redis()
    client = redis.Redis.from_url(server.url)
    pool = worker_factory(server.url)
    [worker] = pool.start(1, wait=True)
    client.config_set("maxmemory", 1)  # below what is used: every write is refused

    def told() -> bool:
        return "refusing writes" in pool.logs() or worker.poll() is not None

    try:
        wait_for(told, "the worker to meet the refusal", timeout=30, every=0.1)
    finally:
        client.config_set("maxmemory", 0)
    assert worker.poll() is None, pool.logs()
    svc = GameService(client)
    svc.create(Variant(2), [bot("a"), bot("b")], seed="oom", game_id="after", wait=60)
    _wait_all_over(svc, ["after"], 60, pool.logs)
    assert "refusing writes" in pool.logs()


# ---------------------------------------------------------------------- Redis restarted


@pytest.mark.parametrize("how", ["shutdown", "kill"])
def test_redis_restarted_with_aof_mid_game(private_redis: Any, worker_factory: Any, how: str) -> None:
    server: RedisServer = private_redis(appendonly=True, appendfsync="always")
    client = redis.Redis.from_url(server.url)
    svc = GameService(client)
    games = [f"aof{i}" for i in range(3)]
    pool = worker_factory(server.url)
    pool.start(2)
    for g in games:
        svc.create(SLOW_VARIANT, SLOW, seed=f"seed-{g}", game_id=g, wait=60)
    wait_for(
        lambda: any(int(svc.store.meta(g)["version"]) > 10 and svc.store.meta(g)["status"] != "over" for g in games),
        "a game in play",
        timeout=60,
        every=0.01,
    )
    before = {g: svc.store.log(g) for g in games}
    if how == "shutdown":
        server.stop()
    else:
        server.kill()
    with pytest.raises(redis.exceptions.ConnectionError):
        redis.Redis.from_url(server.url, socket_connect_timeout=2).ping()
    server.start()
    client.connection_pool.disconnect()
    # nothing acknowledged before the restart is lost
    for g in games:
        assert svc.store.log(g)[: len(before[g])] == before[g]
    references = {g: _reference(SLOW_VARIANT, SLOW, f"seed-{g}") for g in games}
    _wait_all_over(svc, games, 150, pool.logs)
    for g in games:
        _check_finished(svc, g, references[g])
    assert pool.alive(), "the workers should have survived the restart"


# ---------------------------------------------------------------------- Redis unreachable


def test_unreachable_redis_is_named() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    with pytest.raises(UnreachableError) as info:
        Endpoint(url, False).connect()
    assert f"cannot reach Redis at {url}" in str(info.value)
    with pytest.raises(UnreachableError, match="cannot reach Redis at not-a-url"):
        Endpoint("not-a-url", False).connect()


def test_service_on_a_dead_port_fails_fast(tmp_path: Path) -> None:
    port = free_port()
    svc = GameService(redis.Redis.from_url(f"redis://127.0.0.1:{port}/0", socket_connect_timeout=2))
    started = time.monotonic()
    with pytest.raises(redis.exceptions.ConnectionError, match=str(port)):
        svc.create(Variant(2), [person("a"), person("b")], wait=1)
    assert time.monotonic() - started < 5  # refused at once (it takes milliseconds), not after long retries


def _worker_meets_redis_late(tmp_path: Path, worker_factory: Any, cli: bool) -> None:
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    pool = worker_factory(url)
    (worker,) = pool.start(1, cli=cli)
    server = RedisServer(tmp_path / "late-redis", port=port, binary=redis_binary(prefer_system=True))
    try:
        # let the worker meet the dead Redis first: wait until it says so or exits
        # (a worker that retries silently gets 15 s to start up)
        with contextlib.suppress(AssertionError):
            wait_for(lambda: worker.poll() is not None or pool.logs().strip(), "the worker to try Redis", timeout=15)
        server.start()
        svc = GameService(redis.Redis.from_url(url))
        gid = svc.create(Variant(2), [bot("a", "greedy"), bot("b", "random")], seed="late", wait=None).game_id
        wait_for(
            lambda: worker.poll() is not None or svc.store.meta(gid)["status"] == "over",
            "the worker to play the game (or exit)",
            timeout=90,
            every=0.1,
        )
        assert worker.poll() is None, f"the worker exited:\n{pool.logs()}"
        _check_finished(svc, gid)
        logs = pool.logs()  # the outage is told when it starts and when it ends, not at every retry
        told = logs.count("cannot reach Redis") + logs.count("Redis unreachable")
        assert told == 1 and logs.count("Redis reachable again") == 1, logs
    finally:
        pool.stop()
        server.stop()


def test_run_worker_started_while_redis_is_down_connects_once_it_is_up(tmp_path: Path, worker_factory: Any) -> None:
    _worker_meets_redis_late(tmp_path, worker_factory, cli=False)


def test_cli_worker_started_while_redis_is_down_connects_once_it_is_up(tmp_path: Path, worker_factory: Any) -> None:
    _worker_meets_redis_late(tmp_path, worker_factory, cli=True)
