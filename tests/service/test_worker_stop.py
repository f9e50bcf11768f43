"""Workers that stop at once and ride out a Redis that cannot serve them, quietly.

Real worker processes on real Redis servers (issue 24, points 1, 2 and 4): a worker stopped
with SIGTERM or SIGINT is gone within a second, idle or mid-game; a Redis busy running a
long script, at its maxmemory or restarted is waited out, told once when it starts and
once when it ends, without a traceback.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from rq import Worker
from rq.command import send_shutdown_command
from support import WorkerPool, new_id, wait_for

from red7es.service.client import GameService
from red7es.service.redis_server import RedisServer
from red7es.variant import Variant

from .helpers import bot

pytestmark = pytest.mark.integration

STOP_LIMIT = 5.0  # seconds; a worker stops within about one, the old one hung for up to 60
THINKER = "ismcts:iterations=1000000"  # a decision of minutes: the worker is always mid-decision


@pytest.fixture
def pool(private_redis: Any, tmp_path: Path) -> Iterator[tuple[RedisServer, WorkerPool]]:
    """Workers on a Redis of their own, which a test may make busy, full or restart."""
    server: RedisServer = private_redis()
    workers = WorkerPool(server.url, tmp_path)
    yield server, workers
    workers.stop()


def _stop_all(processes: list[subprocess.Popen[bytes]], sig: signal.Signals) -> list[float]:
    """Send ``sig`` to every process at once (the more at once, the busier the machine);
    the seconds each took to exit (STOP_LIMIT * 2 for one still running then)."""
    started = time.monotonic()
    for process in processes:
        process.send_signal(sig)
    took = []
    for process in processes:
        try:
            process.wait(max(0.1, started + STOP_LIMIT * 2 - time.monotonic()))
            took.append(time.monotonic() - started)
        except subprocess.TimeoutExpired:
            took.append(STOP_LIMIT * 2)
    return took


def _quiet(logs: str) -> None:
    assert "Traceback" not in logs and "unhandled exception" not in logs, logs


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_workers_are_gone_within_a_second_of_a_signal_idle_or_mid_decision(
    pool: tuple[RedisServer, WorkerPool], sig: signal.Signals
) -> None:
    """RQ listened for its commands in reads of 60 s and its teardown waited for the read under
    way: a worker asked to stop lived on for up to a minute, past Docker's 10 s grace.  Four
    workers stopped at once, three times over, idle and each mid-decision."""
    server, workers = pool
    svc = GameService(redis.Redis.from_url(server.url))
    took: list[float] = []
    for busy in (False, True, False):
        processes = workers.start(4, wait=True)
        if busy:
            games = [new_id("deep") for _ in processes]
            for game in games:
                svc.create(Variant(2), [bot("a", THINKER), bot("b", THINKER)], seed=game, game_id=game, wait=None)

            def deciding(games: list[str] = games) -> bool:
                return all(svc.store.lease_holder(g) for g in games)

            wait_for(deciding, "every worker to be deciding a turn", timeout=60, every=0.05)
        took += _stop_all(processes, sig)
        assert [p.returncode for p in processes] == [0] * len(processes), (took, workers.logs())
    assert max(took) < STOP_LIMIT, (sorted(took), workers.logs())
    _quiet(workers.logs())


def test_workers_waiting_for_redis_are_gone_within_a_second_of_a_signal(pool: tuple[RedisServer, WorkerPool]) -> None:
    """Between two RQ workers, waiting for Redis, RQ's handlers outlived its loop: a stop
    raised RQ's StopRequested out of the wait, a traceback and exit 1."""
    server, workers = pool
    processes = workers.start(2, wait=True)
    server.stop()
    wait_for(lambda: workers.logs().count("Redis unreachable") >= 2, "both workers to wait for Redis")
    took = _stop_all(processes[:1], signal.SIGTERM) + _stop_all(processes[1:], signal.SIGINT)
    assert [p.returncode for p in processes] == [0, 0] and max(took) < STOP_LIMIT, (took, workers.logs())
    _quiet(workers.logs())


@contextlib.contextmanager
def _busy_script(server: RedisServer) -> Iterator[redis.Redis]:
    """A script looping inside Redis, run from another connection, until SCRIPT KILL (the
    block's end); yields a connection that can send SCRIPT KILL while it runs."""
    runner = redis.Redis.from_url(server.url, socket_timeout=None)  # the script runs for seconds
    killer = redis.Redis.from_url(server.url)
    killer.config_set("lua-time-limit", 100)  # BUSY after 0.1 s (Redis 7 calls it busy-reply-threshold)
    failed: list[BaseException] = []

    def run() -> None:
        try:
            runner.eval("while true do end", 0)
        except redis.exceptions.RedisError as exc:  # "Script killed by user", as expected
            failed.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield killer
    finally:

        def killed() -> bool:
            with contextlib.suppress(redis.exceptions.ResponseError):  # NOTBUSY: not started yet
                killer.script_kill()
            return not thread.is_alive()

        wait_for(killed, "the script to be killed", timeout=30, every=0.1)
        assert failed and "killed" in str(failed[0]).lower(), failed
        runner.close()
        killer.close()


def test_a_worker_waits_out_a_redis_busy_running_a_script(pool: tuple[RedisServer, WorkerPool]) -> None:
    """A script running past lua-time-limit makes Redis answer BUSY to every other command:
    the worker exited ("Error: Redis refused a command: BUSY"), as for a wrong command."""
    server, workers = pool
    [worker] = workers.start(1, wait=True)
    with _busy_script(server):
        # A worker blocked on the inbox as the script starts times out first: "Redis unreachable".
        wait_for(lambda: _told_busy(workers.logs()) or worker.poll() is not None, "the worker to meet BUSY")
        time.sleep(1.5)  # not a synchronisation: the worker's retries while Redis stays busy are what is tested
        assert worker.poll() is None, workers.logs()
    svc = GameService(redis.Redis.from_url(server.url))
    game = svc.create(Variant(2), [bot("a"), bot("b")], seed="busy", wait=None).game_id
    wait_for(lambda: svc.store.meta(game)["status"] == "over", "the game to be played", timeout=60, every=0.1)
    wait_for(lambda: "Redis reachable again" in workers.logs(), "the worker to tell Redis is back")
    logs = workers.logs()
    assert _told_busy(logs) == 1 and logs.count("Redis reachable again") == 1, logs
    _quiet(logs)


def _told_busy(logs: str) -> int:
    return logs.count("Redis busy") + logs.count("Redis unreachable")


def test_a_redis_at_its_maxmemory_is_told_once_when_it_starts_and_once_when_it_ends(
    pool: tuple[RedisServer, WorkerPool],
) -> None:
    """At maxmemory the worker said "refusing writes" about once a second, where the
    architecture promises once."""
    server, workers = pool
    client = redis.Redis.from_url(server.url)
    [worker] = workers.start(1, wait=True)
    client.config_set("maxmemory", 1)  # below what is used: every write is refused
    try:
        wait_for(lambda: _refused(client) >= 6 or worker.poll() is not None, "the worker to retry, refused", timeout=60)
    finally:
        client.config_set("maxmemory", 0)
    assert worker.poll() is None, workers.logs()
    svc = GameService(client)
    game = svc.create(Variant(2), [bot("a"), bot("b")], seed="full", wait=None).game_id
    wait_for(lambda: svc.store.meta(game)["status"] == "over", "the game to be played", timeout=60, every=0.1)
    wait_for(lambda: "Redis reachable again" in workers.logs(), "the worker to tell Redis is back")
    logs = workers.logs()
    assert logs.count("refusing writes") == 1 and logs.count("Redis reachable again") == 1, logs
    _quiet(logs)


def _refused(client: redis.Redis) -> int:
    """How many commands Redis refused for want of memory (its INFO errorstats)."""
    return int(client.info("errorstats").get("errorstat_OOM", {}).get("count", 0))


def test_a_redis_restart_is_told_once_without_tracebacks(private_redis: Any, tmp_path: Path) -> None:
    """Each worker logged RQ's "found an unhandled exception, quitting" with its traceback,
    four times an outage, and RQ's listening thread an error every 2 s."""
    server: RedisServer = private_redis(appendonly=True)
    workers = WorkerPool(server.url, tmp_path)
    try:
        processes = workers.start(2, wait=True)
        server.stop()
        wait_for(lambda: workers.logs().count("Redis unreachable") >= 2, "both workers to meet the outage")
        time.sleep(3)  # not a synchronisation: retries while Redis stays away must be quiet
        server.start()
        svc = GameService(redis.Redis.from_url(server.url))
        game = svc.create(Variant(2), [bot("a"), bot("b")], seed="restart", wait=None).game_id
        wait_for(lambda: svc.store.meta(game)["status"] == "over", "the game to be played", timeout=60, every=0.1)
        wait_for(lambda: workers.logs().count("Redis reachable again") >= 2, "both workers to tell Redis is back")
        assert all(p.poll() is None for p in processes), workers.logs()
        logs = workers.logs()
        assert logs.count("Redis unreachable") == 2 and logs.count("Redis reachable again") == 2, logs
        assert "could not connect" not in logs, logs
        _quiet(logs)
    finally:
        workers.stop()


def test_rqs_shutdown_command_still_stops_a_worker_at_once(pool: tuple[RedisServer, WorkerPool]) -> None:
    """`red7 shutdown` stops workers with RQ's shutdown command: the listening thread that
    now reads for a fifth of a second at a time must still hear it."""
    server, workers = pool
    connection = redis.Redis.from_url(server.url)
    [worker] = workers.start(1, wait=True)
    [registered] = Worker.all(connection=connection)
    started = time.monotonic()
    send_shutdown_command(connection, registered.name)
    worker.wait(STOP_LIMIT * 2)
    assert worker.returncode == 0 and time.monotonic() - started < STOP_LIMIT, workers.logs()
    _quiet(workers.logs())
