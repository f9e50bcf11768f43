"""The service on a real Redis Cluster: three masters, games on any shard, RQ on its own Redis.

The store's contract suite runs on the cluster too (the ``any_redis`` fixture); here
real ``red7 worker`` processes serve games whose keys land on different shards, the
CLI lists, exports and audits them, and a tournament runs to its end.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import redis
from support import Red7, TournamentRed7, WorkerPool, one_line_error, start_cluster, wait_cluster_ok, wait_for

from red7es.cli.session import live_workers
from red7es.service.connection import client_for, is_cluster
from red7es.service.redis_server import RedisServer
from red7es.service.store import Keys


@pytest.fixture
def cluster_pool(
    redis_cluster: str, cluster_redis: redis.Redis, redis_server: RedisServer, tmp_path: Path
) -> Iterator[WorkerPool]:
    """Two real workers serving the cluster, with RQ's queues on the plain test Redis."""
    with redis.Redis.from_url(redis_server.url) as rq_redis:
        rq_redis.flushall()  # no RQ registrations left from earlier tests
    pool = WorkerPool(redis_cluster, tmp_path, rq_url=redis_server.url)
    pool.start(2, wait=True)
    yield pool
    pool.stop()


def play_out(user: Red7, game: str, name: str, pool: WorkerPool) -> dict[str, Any]:
    """Play ``name``'s first legal turn whenever it is theirs, until the game is over."""

    def settled() -> Any:
        view = user.json("show", game, "--as", name)
        return view if view["status"] == "over" or view.get("legal") else None

    for _ in range(200):
        view = wait_for(settled, f"{name}'s turn or the end of {game}", timeout=30)
        if view["status"] == "over":
            return dict(view)
        user.ok("move", game, view["legal"][0])
    raise AssertionError(f"game {game} did not end:\n{pool.logs()}")


def test_a_person_and_a_bot_play_on_a_cluster_and_the_game_audits(
    redis_cluster: str, cluster_pool: WorkerPool, redis_server: RedisServer, tmp_path: Path
) -> None:
    alice = Red7(redis_cluster, tmp_path / "alice")
    connection = client_for(redis_cluster)
    assert is_cluster(connection)
    # one game on each of the three shards
    by_node: dict[int, str] = {}
    for i in range(100):
        by_node.setdefault(connection.get_node_from_key(Keys(f"cl{i}").log).port, f"cl{i}")  # type: ignore[attr-defined]
    games = sorted(by_node.values())
    assert len(games) == 3
    for game in games:
        alice.ok("new", "-p", "alice", "-b", "greedy", "--seed", game, "--id", game)
    for game in games:
        final = play_out(alice, game, "alice", cluster_pool)
        assert final["outcome"]["reason"]
    listed = {g["game"]: g for g in alice.json("games")}
    assert all(listed[g]["status"] == "over" for g in games)
    for game in games:
        assert alice.json("audit", game)["result"] == "pass"
    out = tmp_path / "g.jsonl"
    alice.ok("export", games[0], "-o", str(out))
    assert alice.json("audit", str(out))["result"] == "pass"
    status = alice.json("status")
    assert len(status["workers"]) == 2 and status["games"] == 3 and status["active_games"] == 0
    assert status["queued_jobs"] is None  # RQ's queue is on its own Redis, not on the cluster
    assert alice.json("status", "--rq-url", redis_server.url)["queued_jobs"] == 0


def test_a_tournament_runs_on_a_cluster(redis_cluster: str, cluster_pool: WorkerPool, tmp_path: Path) -> None:
    organiser = TournamentRed7(redis_cluster, tmp_path / "org")
    organiser.ok("create", "cup", "-b", "greedy", "-b", "random", "-b", "g2=greedy", "-b", "random", "--seed", "c")
    run = organiser.json("run", "cup")
    assert run["finished"] and run["done"] == run["total"] == 6
    assert organiser.json("audit", "cup")["passed"]
    assert organiser.json("standings", "cup")["games_played"] == 6


def test_a_worker_on_a_cluster_needs_a_separate_redis_for_rq(redis_cluster: str, tmp_path: Path) -> None:
    class NoRqUrl(Red7):
        extra_env: ClassVar[dict[str, str]] = {"RED7_RQ_URL": ""}

    user = NoRqUrl(redis_cluster, tmp_path)
    for args in (["worker", "--burst"], ["serve"]):
        assert "is a Redis Cluster and RQ needs a single Redis server" in one_line_error(user(*args))
    plain = NoRqUrl("redis://127.0.0.1:1/0", tmp_path)
    assert one_line_error(plain("worker", "--rq-url", redis_cluster)) == (
        f"Error: --rq-url {redis_cluster} is a Redis Cluster: RQ needs a single Redis server"
    )


def test_an_unreachable_cluster_is_one_clear_line(tmp_path: Path) -> None:
    from red7es.service.redis_server import free_port

    url = f"redis+cluster://127.0.0.1:{free_port()}/0"
    assert one_line_error(Red7(url, tmp_path)("games")).startswith(f"Error: cannot reach Redis at {url}: ")


def test_a_worker_waits_for_its_cluster_and_outlives_an_outage(redis_server: RedisServer, tmp_path: Path) -> None:
    """Started before the cluster answers, the worker waits; when every node goes away
    mid-game it stays up (no stream of failed RQ jobs) and carries on once they return."""
    servers = start_cluster(tmp_path / "own-cluster", appendonly=True)
    ports = ",".join(f"127.0.0.1:{s.port}" for s in servers)
    url = f"redis+cluster://{ports}/0"  # every node named: any one of them is enough to start
    rq = redis.Redis.from_url(redis_server.url)
    rq.flushall()
    pool = WorkerPool(url, tmp_path, rq_url=redis_server.url)
    try:
        for server in servers:
            server.stop()
        (worker,) = pool.start(1)  # the cluster is down: it must wait, not crash
        wait_for(lambda: "waiting for it" in pool.logs() or worker.poll() is not None, "the worker to find no cluster")
        time.sleep(1)  # and keep waiting
        assert worker.poll() is None, pool.logs()
        for server in servers:
            server.start()
        wait_cluster_ok(servers)
        cluster = client_for(url)
        wait_for(lambda: live_workers(cluster), "the worker to report once its cluster is up", timeout=30)

        alice = Red7(url, tmp_path / "alice")
        game = alice.json("new", "-p", "alice", "-b", "greedy", "--seed", "outage")["game"]
        view = wait_for(lambda: (v := alice.json("show", game, "--as", "alice"))["legal"] and v, "alice's turn")
        alice.ok("move", game, view["legal"][0])

        for server in servers:
            server.stop()
        time.sleep(4)
        assert worker.poll() is None, pool.logs()
        failed = sum(rq.zcard(k) for k in rq.scan_iter(match="rq:registry:failed:*") or [])
        assert failed <= 1, f"{failed} failed shifts while the cluster was down"
        for server in servers:
            server.start()
        wait_cluster_ok(servers)

        final = play_out(alice, game, "alice", pool)
        assert final["status"] == "over"
        assert alice.json("audit", game)["result"] == "pass"
    finally:
        pool.stop()
        rq.close()
        for server in servers:
            server.stop()


def test_stream_reads_are_routed_without_asking_a_server(cluster_redis: redis.Redis) -> None:
    """XREAD/XREADGROUP keys are found locally, not by COMMAND GETKEYS on one fixed node."""
    asked: list[Any] = []
    parser = cluster_redis.commands_parser  # type: ignore[attr-defined]
    original = parser.get_keys
    parser.get_keys = lambda *args: asked.append(args) or original(*args)
    try:
        key = Keys("routed").changes
        cluster_redis.xadd(key, {"c": b"x"})
        assert cluster_redis.xread({key: "0-0"}, count=1)
        cluster_redis.xgroup_create(key, "g", id="0")
        assert cluster_redis.xreadgroup("g", "me", {key: ">"}, count=1)
    finally:
        parser.get_keys = original
    assert not [a for a in asked if str(a[1]).upper().startswith(("XREAD", "B'XREAD"))], asked
