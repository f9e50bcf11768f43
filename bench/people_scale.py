"""People at scale (issue #23): a person's submit-to-applied time when she is one of many
thousands of people playing on one Redis, beside the same person alone, in one run.

One private Redis 7 and ``--workers`` real ``red7 worker`` processes (bench/pool.py), as
production runs them.  Three phases, each measured by the same probe: a person who plays
her own games against ``greedy`` turn after turn (bench/service.py's ``latency``: each turn
timed from submit until its answer is read back from the game's changes stream).

1. **alone** — the probe's games are the only ones: the one-game figure (the baseline);
2. **idle** — ``--games`` more live games wait for their people (bench/idle.py's
   ``add_games``: half of them two people, half a person against ``greedy``, all dealt),
   nobody moves in them: Redis commands/s and CPU with them all waiting;
3. **moving** — scripted people (``--drivers`` processes running bench/gateway.py's
   ``drive``: the view, then a signed turn through ``GameService.submit``) move in every one
   of those games, each a turn every ``--every`` seconds on average (``games / every``
   turns/s in all, round robin), for ``--seconds``; the probe plays while they do.

Reported: each phase's probe median and p90, the ratio moving/alone (issue #23's target:
within 2x), the turns the people were asked for and the moves applied in their games, Redis
commands/s and CPU per phase, and the load average.  What the machine can carry is
the sum of the CPU a turn costs the worker, Redis and the driver (see BENCHMARKS.md): a
rate beyond it only measures a queue, so the run reports the rate it reached, not the one asked.

Usage:  python bench/people_scale.py [--games 10000] [--every 30] [--seconds 60] [--workers 2] [--drivers 2] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import redis
from gateway import drive, load_average  # bench/gateway.py (this script's folder is on sys.path)
from idle import add_games
from pool import applied_moves, cpu_seconds, worker_processes
from service import latency, percentile
from sweep_load import calls_and_info

from red7es import Variant
from red7es.service.client import GameService, NoAnswer
from red7es.service.redis_server import RedisServer, free_port, redis_binary
from red7es.service.work_index import WORK
from red7es.workers.context import WorkerContext

ROUNDS = 50  # round wins that end a driven game: none ends within a run
START_MARGIN = 3.0  # seconds for the driver processes to start before their common start
WARM_UP = 2.0  # seconds of driving before the probe starts timing


def redis_usage(conn: redis.Redis) -> tuple[float, int, float]:
    """(time, commands so far less this bench's INFO, Redis CPU seconds less this bench's INFO)."""
    calls, info_cpu = calls_and_info(conn)
    cpu: dict[str, Any] = conn.info("cpu")
    used = float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]) - info_cpu
    return time.perf_counter(), sum(v for k, v in calls.items() if k != "info"), used


def per_second(before: tuple[float, int, float], after: tuple[float, int, float]) -> dict[str, float]:
    seconds = after[0] - before[0]
    return {
        "seconds": seconds,
        "commands": (after[1] - before[1]) / seconds,
        "redis_cpu_ms": (after[2] - before[2]) / seconds * 1000,
    }


def quiet(conn: redis.Redis, seconds: float) -> dict[str, float]:
    """Redis commands/s and CPU while nobody moves (the workers' sweeps and polls): ``seconds``
    should span several sweeps (one every 2 to 2.5 s a worker)."""
    before = redis_usage(conn)
    time.sleep(seconds)
    return per_second(before, redis_usage(conn))


def probe(service: GameService, seconds: float) -> dict[str, Any]:
    """The probe person's turns for ``seconds``, and what Redis did meanwhile."""
    before, cpu = redis_usage(service.redis), time.process_time()
    try:
        samples = latency(service, 1, 10**9, until=time.monotonic() + seconds)
    except NoAnswer as exc:  # the workers fell behind by more than the client waits (10 s)
        return {"no_answer": str(exc), **per_second(before, redis_usage(service.redis))}
    usage = per_second(before, redis_usage(service.redis))
    return {
        "turns": len(samples),
        "median_ms": statistics.median(samples) * 1000,
        "p90_ms": percentile(samples, 0.9) * 1000,
        "probe_cpu_ms": (time.process_time() - cpu) / usage["seconds"] * 1000,
        **usage,
    }


def backlog_drained(conn: redis.Redis, most: float = 120) -> float:
    """Seconds until no game is due in the work index (every turn asked is answered): about
    0 if the workers kept up, the queue's length in seconds if they did not."""
    started = time.monotonic()
    while time.monotonic() - started < most:
        now_ms = int(conn.time()[0]) * 1000
        if not conn.zcount(WORK, "-inf", now_ms):
            break
        time.sleep(0.05)
    return time.monotonic() - started


def add_people(url: str, games: int) -> dict[str, dict[int, tuple[str, str]]]:
    """Half the games two people, half a person against greedy; each dealt, waiting for ann."""
    conn = redis.Redis.from_url(url)
    service, context = GameService(conn, wake=lambda _game: None), WorkerContext(conn, owner="setup")
    variant = Variant(2, rounds=ROUNDS)
    seats = add_games(service, context, 0, games // 2, variant)
    seats.update(add_games(service, context, games // 2, games, variant, bot="greedy"))
    return seats


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        server = RedisServer(Path(tmp) / "redis", port=free_port(), binary=redis_binary(prefer_system=True)).start()
        stack.callback(server.stop)
        service = GameService(redis.Redis.from_url(server.url))
        workers = stack.enter_context(worker_processes(server.url, args.workers, Path(tmp)))
        result: dict[str, Any] = {"games": args.games, "every": args.every, "workers": args.workers}
        result["quiet_alone"] = quiet(service.redis, args.quiet_seconds)
        result["alone"] = probe(service, args.probe_seconds)

        started = time.perf_counter()
        seats = add_people(server.url, args.games)
        result["setup_seconds"] = time.perf_counter() - started
        time.sleep(5)  # the workers' first (full) sweep after the games appeared is past
        result["quiet_idle"] = quiet(service.redis, args.quiet_seconds)
        result["idle"] = probe(service, args.probe_seconds)

        rate = args.games / args.every
        share = rate / args.drivers
        games = list(seats.items())
        start = time.time() + START_MARGIN
        spawn = multiprocessing.get_context("spawn")
        drivers = [
            spawn.Process(target=drive, args=(server.url, games[i :: args.drivers], args.seconds, share, start))
            for i in range(args.drivers)
        ]
        for d in drivers:
            d.start()
        time.sleep(max(0.0, start + WARM_UP - time.time()))
        workers_before, drivers_before = cpu_seconds(workers), cpu_seconds(drivers)  # type: ignore[arg-type]
        moving = probe(service, args.seconds - WARM_UP - 1)
        seconds = moving["seconds"]
        moving["worker_cpu_ms"] = (cpu_seconds(workers) - workers_before) / seconds * 1000
        moving["driver_cpu_ms"] = (cpu_seconds(drivers) - drivers_before) / seconds * 1000  # type: ignore[arg-type]
        for d in drivers:
            d.join()
            if d.exitcode != 0:
                raise RuntimeError(f"a driver failed (exit code {d.exitcode})")
        moving["backlog_s"] = backlog_drained(service.redis)
        moving["asked_per_s"] = rate
        moving["applied_per_s"] = applied_moves(service.redis, [g for g, _ in games]) / args.seconds
        result["moving"] = moving
        result["load_average_end"] = load_average()
    return result


def table(r: dict[str, Any]) -> str:
    alone = r["alone"]["median_ms"]
    lines = [
        "| phase | probe turns | submit-to-applied median | p90 | ÷ alone | Redis commands/s | Redis CPU ms/s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    labels = {
        "alone": "the probe alone",
        "idle": f"{r['games']:,} games waiting",
        "moving": f"{r['games']:,} games moving (a turn each every {r['every']:g} s)",
    }
    for phase, label in labels.items():
        p = r[phase]
        timing = (
            f"{p['turns']} | {p['median_ms']:.2f} ms | {p['p90_ms']:.2f} ms | {p['median_ms'] / alone:.2f}×"
            if "no_answer" not in p
            else "— | no answer within 10 s: the workers fell behind | — | —"
        )
        lines.append(f"| {label} | {timing} | {p['commands']:,.0f} | {p['redis_cpu_ms']:.1f} |")
    return "\n".join(lines)


def ceiling(r: dict[str, Any], cores: int) -> dict[str, float]:
    """What ``cores`` CPUs can carry at the moving phase's cost per move: every CPU ms the
    workers, Redis, the drivers and the probe spent, over the moves applied (the driven games'
    and the probe's two a turn), is the CPU a move costs; ``cores`` seconds a second over it
    is the most moves/s, and at the driven games' mix of moves per person's turn, the most
    people's turns/s and the shortest time between two turns of a game at ``games`` games.
    An upper bound: it leaves out whatever else the machine runs and contention's own cost."""
    m = r["moving"]
    cpu = m["worker_cpu_ms"] + m["redis_cpu_ms"] + m["driver_cpu_ms"] + m["probe_cpu_ms"]
    moves = m["applied_per_s"] + 2 * m["turns"] / m["seconds"]
    per_move = cpu / moves
    most_moves = cores * 1000 / per_move
    per_turn = m["applied_per_s"] / m["asked_per_s"]
    shortest = r["games"] * per_turn / most_moves
    return {"cpu_ms_per_move": per_move, "most_moves_per_s": most_moves, "shortest_every_s": shortest}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="live games of people (issue #23: 10000)")
    parser.add_argument("--every", type=float, default=30, help="seconds between two turns of one game, on average")
    parser.add_argument("--seconds", type=float, default=30, help="length of the moving phase")
    parser.add_argument("--probe-seconds", type=float, default=15, help="length of the alone and idle phases")
    parser.add_argument("--quiet-seconds", type=float, default=20, help="idle windows with nobody moving")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--drivers", type=int, default=2, help="processes submitting the people's turns")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {load_average()}", flush=True)
    r = run(args)
    if "no_answer" not in r["moving"]:
        r["ceiling"] = ceiling(r, len(os.sched_getaffinity(0)))
    if args.json:
        print(json.dumps(r, indent=2))
        return
    m = r["moving"]
    print(f"setup {r['setup_seconds']:.0f} s; load average at the end: {r['load_average_end']}\n")
    print(table(r))
    q0, q1 = r["quiet_alone"], r["quiet_idle"]
    print(
        f"\nnobody moving: Redis {q0['commands']:,.1f} commands/s, {q0['redis_cpu_ms']:.2f} ms CPU/s with the probe's"
        f" games only; {q1['commands']:,.1f} commands/s, {q1['redis_cpu_ms']:.2f} ms CPU/s with {r['games']:,} games"
        f" waiting ({q1['commands'] / q0['commands']:.2f}×)"
    )
    print(
        f"moving: people's turns asked {m['asked_per_s']:.0f}/s;"
        f" moves applied in their games {m['applied_per_s']:.0f}/s;"
        f" backlog after the drivers stopped {m['backlog_s']:.1f} s; CPU ms/s: workers {m['worker_cpu_ms']:.0f},"
        f" Redis {m['redis_cpu_ms']:.0f}, drivers {m.get('driver_cpu_ms', 0):.0f}, probe {m.get('probe_cpu_ms', 0):.0f}"
    )
    if "ceiling" in r:
        c = r["ceiling"]
        print(
            f"ceiling on {len(os.sched_getaffinity(0))} CPUs at this cost"
            f" ({c['cpu_ms_per_move']:.2f} CPU ms a move, all processes): {c['most_moves_per_s']:,.0f} moves/s,"
            f" a turn every {c['shortest_every_s']:.1f} s"
            f" in each of {r['games']:,} games at the most"
        )


if __name__ == "__main__":
    main()
