"""Service benchmark: validated moves/s through the full path, and submit-to-applied latency.

Everything runs against one private Redis started here, in one run:

* baselines: PING round trip, and pipelined XADD of real encoded events (the cost of
  merely storing what the service stores);
* throughput: many concurrent all-bot games played by N real worker processes
  (command written, validated by the engine, facts appended with compare-and-append,
  views and change notices updated), counted in validated moves per second (the
  ``CommandApplied`` events of their logs), and the workers' CPU time per move (user +
  system, from /proc, before and after);
* latency: games where a person's seat is driven by client threads; each turn is timed
  from submit until its answer is read back from the game's changes stream.

Run it from outside a checkout (``python -m red7es.cli worker`` imports the package of the
current directory first, whatever the venv: a comparison of two checkouts would measure one).

Usage:  python bench/service.py [--games 200] [--workers 2] [--bots greedy] [--quick] [--no-latency]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import redis
from pool import (  # bench/pool.py (this script's folder is on sys.path)
    applied_moves,
    cpu_seconds,
    next_person_turn,
    worker_processes,
)

from red7es import Variant
from red7es.service.client import GameService
from red7es.service.events import BOT, PERSON, SeatSpec
from red7es.service.redis_server import RedisServer, free_port, redis_binary


def ping_rtt(conn: redis.Redis, n: int = 2000) -> float:
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        conn.ping()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def sample_events(service: GameService) -> list[bytes]:
    """Encoded events of one real game (played in-process) to use as XADD payloads."""
    from red7es.workers.context import WorkerContext

    created = service.create(
        Variant(2), [SeatSpec("a", BOT, "greedy"), SeatSpec("b", BOT, "greedy")], seed="sample", wait=None
    )
    context = WorkerContext(service.redis)
    while service.store.meta(created.game_id).get("status") != "over":
        context.advance(created.game_id)
    return service.store.log(created.game_id)


def xadd_rate(conn: redis.Redis, payloads: list[bytes], total: int = 50_000, batch: int = 100) -> float:
    """Events/s for pipelined XADD of the same payloads (no Lua, no checks)."""
    key = "bench:xadd"
    conn.delete(key)
    start = time.perf_counter()
    written = 0
    while written < total:
        pipe = conn.pipeline(transaction=False)
        for i in range(batch):
            pipe.xadd(key, {"e": payloads[(written + i) % len(payloads)]})
        pipe.execute()
        written += batch
    elapsed = time.perf_counter() - start
    conn.delete(key)
    return written / elapsed


def throughput(
    service: GameService, games: int, variant: Variant, bot: str, timeout: float, workers: list[Any]
) -> tuple[float, int, float, float]:
    """Validated moves/s for ``games`` concurrent all-bot games, and the workers' CPU seconds
    they took; returns (moves/s, moves, seconds, worker CPU seconds)."""
    conn = service.redis
    cpu = cpu_seconds(workers)
    start = time.perf_counter()
    ids = []
    for i in range(games):
        seats = [SeatSpec(f"bot{s}", BOT, bot) for s in range(variant.players)]
        ids.append(service.create(variant, seats, seed=f"tp-{i}", wait=None).game_id)
    deadline = time.monotonic() + timeout
    pending = set(ids)
    while pending and time.monotonic() < deadline:
        metas = service.store.metas(sorted(pending))
        for gid, meta in zip(sorted(pending), metas, strict=True):
            if meta.get("status") == "over":
                pending.discard(gid)
        time.sleep(0.02)
    elapsed = time.perf_counter() - start
    cpu = cpu_seconds(workers) - cpu
    if pending:
        raise RuntimeError(f"{len(pending)} games did not finish in {timeout}s")
    moves = applied_moves(conn, ids)
    return moves / elapsed, moves, elapsed, cpu


def latency(service: GameService, clients: int, turns_each: int, until: float | None = None) -> list[float]:
    """Submit-to-applied times of person turns, with ``clients`` people playing at once:
    ``turns_each`` turns each, or fewer if ``until`` (a ``time.monotonic()``) comes first."""
    samples: list[float] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def client(index: int) -> None:
        try:
            conn = redis.Redis(connection_pool=service.redis.connection_pool)
            svc = GameService(conn)
            done = 0
            game_no = 0
            while done < turns_each and (until is None or time.monotonic() < until):
                created = svc.create(
                    Variant(2, rounds=3),
                    [SeatSpec("me", PERSON), SeatSpec("bot", BOT, "greedy")],
                    seed=f"lat-{index}-{game_no}",
                    join=["me"],
                )
                game_no += 1
                token = created.tokens["me"]
                gid = created.game_id
                cursor = svc.store.last_change_id(gid)
                while done < turns_each and (until is None or time.monotonic() < until):
                    cursor, turn, over = next_person_turn(svc, gid, cursor)
                    if over:
                        break
                    if turn is None:
                        continue
                    t = time.perf_counter()
                    answer = svc.play(gid, "me", token, turn)
                    elapsed = time.perf_counter() - t
                    if not answer.applied:
                        raise RuntimeError(f"turn {turn} refused: {answer.reason}")
                    cursor = svc.store.last_change_id(gid)
                    with lock:
                        samples.append(elapsed)
                    done += 1
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return samples


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5, help="round wins that end each bot game")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--bots", default="greedy")
    parser.add_argument("--clients", type=int, default=4, help="people playing at once in the latency run")
    parser.add_argument("--turns", type=int, default=100, help="timed turns per client")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-latency", action="store_true", help="throughput and worker CPU only")
    args = parser.parse_args()
    if args.quick:
        args.games, args.turns = 60, 30

    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp) / "redis", port=free_port(), binary=redis_binary(prefer_system=True)).start()
        try:
            conn = redis.Redis.from_url(server.url)
            service = GameService(conn)
            payloads = sample_events(service)
            conn.flushall()
            rtt = ping_rtt(conn)
            xadd = xadd_rate(conn, payloads)
            with worker_processes(server.url, args.workers, Path(tmp)) as workers:
                variant = Variant(args.players, rounds=args.rounds)
                rate, moves, secs, cpu = throughput(service, args.games, variant, args.bots, 600, workers)
                idle = [] if args.no_latency else latency(service, 1, max(10, args.turns // 2))
                loaded = [] if args.no_latency else latency(service, args.clients, args.turns)
        finally:
            server.stop()

    version = subprocess.run([server.binary, "--version"], capture_output=True, text=True).stdout.split()[2]
    print(
        f"Redis {version}, {args.workers} worker processes, bot games: {args.players} {args.bots} bots,"
        f" first to {args.rounds} rounds\n"
    )
    print("| measure | value | same-run baseline | ratio |")
    print("|---|---|---|---|")
    print(f"| PING round trip | {rtt * 1e6:.0f} µs | — | — |")
    print(f"| pipelined XADD of real events | {xadd:,.0f} events/s | — | — |")
    print(
        f"| validated moves/s, {args.games} concurrent bot games | {rate:,.0f} moves/s ({moves} moves in {secs:.1f} s)"
        f" | {xadd:,.0f} XADD/s | {rate / xadd:.3f} |"
    )
    print(f"| worker CPU per validated move (bot games) | {cpu / moves * 1e6:.1f} µs ({cpu:.2f} s) | — | — |")
    for label, samples in (("1 person playing", idle), (f"{args.clients} people playing at once", loaded)):
        if not samples:
            continue
        med, p99 = statistics.median(samples), percentile(samples, 0.99)
        print(
            f"| submit-to-applied, {label} | median {med * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms ({len(samples)} turns)"
            f" | PING {rtt * 1e3:.3f} ms | {med / rtt:.0f}× |"
        )


if __name__ == "__main__":
    main()
