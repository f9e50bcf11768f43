"""Sweep under load (issue #18): what a worker costs Redis and itself per second with N live
games of people, every one with a game clock, beside the same games untimed, at idle and
while scripted people move in some of them.

Two private Redis servers, one a configuration, each with ``--games`` games of two people
(bench/idle.py's ``add_games``: both joined, dealt, waiting for the first turn): on one
every game has a game clock of 1 day (it never runs out in a run), on the other none.
One real ``red7 worker`` process serves each (bench/pool.py), folding and sweeping as it
would in production.  Both configurations are measured at once, over the same stretch of
time, so whatever else the machine runs weighs on both alike:

* idle: nobody moves; each worker is measured over ``--sweeps`` whole sweep periods
  (from just after one of its sweeps to just after another: a fixed window would hold
  one sweep more or less by chance);
* under load: a driver process a configuration (bench/gateway.py's ``drive``: the view,
  then a signed turn through ``GameService.submit``) plays both people of the first
  ``--moving`` games, ``--rate`` turns/s in all, round robin, for ``--seconds``; both
  drivers start at the same instant.

Per second of wall time, for each configuration: Redis commands (``INFO commandstats``
deltas without this bench's ``INFO``; a script's commands count as well as its call, as
Redis 7 counts them; the drivers' reads and submits are in the load figures), Redis CPU
(``INFO cpu`` user + sys, less the time ``INFO commandstats`` says this bench's own
``INFO`` took), the worker's CPU (/proc), its sweeps (``SSCAN`` calls: one an
index sweep) and the turns applied; then the ratio clocked/untimed, and per turn the
load's cost above idle.

Usage:  python bench/sweep_load.py [--games 2000] [--moving 100] [--rate 50] [--seconds 20] [--sweeps 12] [--json]
Full size (issue #18):  python bench/sweep_load.py --games 10000
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from gateway import drive, load_average, moves_of  # bench/gateway.py (this script's folder is on sys.path)
from idle import add_games
from pool import applied_moves, cpu_seconds, worker_processes

from red7es import Variant
from red7es.service.client import GameService
from red7es.service.redis_server import RedisServer, free_port, redis_binary
from red7es.workers.context import WorkerContext

DAY_MS = 24 * 3600 * 1000
CLOCKS: dict[str, tuple[int, int] | None] = {"untimed": None, "clocked": (DAY_MS, 0)}
ROUNDS = 50  # round wins that end a game: no moving game ends within a run
START_MARGIN = 3.0  # seconds for the driver processes to start before their common start


@dataclass
class Setup:
    """One configuration: its Redis, its worker process, the games its driver moves."""

    url: str
    conn: redis.Redis
    moving: list[tuple[str, dict[int, tuple[str, str]]]]
    worker: list[Any]  # (the one worker process, as pool.cpu_seconds takes it)


@dataclass
class Reading:
    """What a configuration had used at one instant."""

    at: float
    calls: dict[str, int]  # INFO commandstats calls by command
    info_cpu: float  # seconds Redis spent in this bench's INFO (commandstats' usec of info)
    redis_cpu: float
    worker_cpu: float


def calls_and_info(conn: redis.Redis) -> tuple[dict[str, int], float]:
    """Commands run so far by name, and the seconds spent in INFO (the bench's own reads)."""
    stats: dict[str, Any] = conn.info("commandstats")
    calls = {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}
    return calls, float(stats.get("cmdstat_info", {}).get("usec", 0)) / 1e6


def read(setup: Setup) -> Reading:
    calls, info_cpu = calls_and_info(setup.conn)
    cpu: dict[str, Any] = setup.conn.info("cpu")
    redis_cpu = float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])
    return Reading(time.perf_counter(), calls, info_cpu, redis_cpu, cpu_seconds(setup.worker))


def window(before: Reading, after: Reading) -> dict[str, Any]:
    """Per second between two readings; ``by_command``: calls per second of each command."""
    seconds = after.at - before.at
    by_command = {
        k: (v - before.calls.get(k, 0)) / seconds
        for k, v in after.calls.items()
        if k != "info" and v > before.calls.get(k, 0)  # (this bench's own INFO)
    }
    return {
        "seconds": seconds,
        "commands": sum(by_command.values()),
        "redis_cpu_ms": (after.redis_cpu - before.redis_cpu - (after.info_cpu - before.info_cpu)) / seconds * 1000,
        "worker_cpu_ms": (after.worker_cpu - before.worker_cpu) / seconds * 1000,
        "sweeps": by_command.get("sscan", 0.0),
        "by_command": by_command,
    }


def prepare(tmp: Path, name: str, games: int, moving: int, stack: contextlib.ExitStack) -> tuple[str, Setup]:
    """A private Redis with the games of one configuration (no worker yet)."""
    server = RedisServer(tmp / f"redis-{name}", port=free_port(), binary=redis_binary(prefer_system=True)).start()
    stack.callback(server.stop)
    conn = redis.Redis.from_url(server.url)
    variant = Variant(2, rounds=ROUNDS, clock=CLOCKS[name])
    seats = add_games(GameService(conn, wake=lambda _game: None), WorkerContext(conn, owner="setup"), 0, games, variant)
    return name, Setup(server.url, conn, list(seats.items())[:moving], [])


def sweeps(setup: Setup) -> int:
    return calls_and_info(setup.conn)[0].get("sscan", 0)  # one an index sweep (the first, full one has none)


def measure_idle(setups: dict[str, Setup], periods: int, poll: float = 0.1) -> dict[str, dict[str, Any]]:
    """Each worker over ``periods`` whole sweep periods, from just after a sweep to just after
    the ``periods``-th sweep later: a window of a fixed length would hold one sweep more or
    less by chance (a worker sweeps every 2 to 2.5 s).  Both configurations are watched at once.
    The first sweep waited for is an index sweep, so the worker's first (full) one is past."""
    seen = {name: sweeps(s) for name, s in setups.items()}
    begin: dict[str, Reading] = {}
    end: dict[str, Reading] = {}
    deadline = time.monotonic() + 120 + 5 * periods
    while len(end) < len(setups):
        if time.monotonic() > deadline:
            raise RuntimeError("the workers did not sweep as often as they should")
        time.sleep(poll)
        for name, s in setups.items():
            if name in end or sweeps(s) == seen[name]:
                continue
            reading = read(s)
            seen[name] = reading.calls.get("sscan", 0)
            if name in begin:
                if reading.calls.get("sscan", 0) - begin[name].calls.get("sscan", 0) >= periods:
                    end[name] = reading
            else:
                begin[name] = reading
    return {name: window(begin[name], end[name]) for name in setups}


def measure_load(setups: dict[str, Setup], seconds: float, rate: float) -> dict[str, dict[str, Any]]:
    """Both drivers at once, from the same instant; the readings bracket exactly their run."""
    start = time.time() + START_MARGIN
    spawn = multiprocessing.get_context("spawn")
    drivers = [spawn.Process(target=drive, args=(s.url, s.moving, seconds, rate, start)) for s in setups.values()]
    for d in drivers:
        d.start()
    time.sleep(max(0.0, start - time.time()))
    before = {name: read(s) for name, s in setups.items()}
    time.sleep(max(0.0, start + seconds - time.time()))
    after = {name: read(s) for name, s in setups.items()}
    for d in drivers:
        d.join()
        if d.exitcode != 0:
            raise RuntimeError(f"a driver failed (exit code {d.exitcode})")
    return {name: window(before[name], after[name]) for name, s in setups.items()}


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        started = time.perf_counter()
        setups = dict(prepare(Path(tmp), name, args.games, args.moving, stack) for name in CLOCKS)
        setup_seconds = time.perf_counter() - started
        for name, s in setups.items():
            (Path(tmp) / name).mkdir()
            s.worker = stack.enter_context(worker_processes(s.url, 1, Path(tmp) / name))
        idle = measure_idle(setups, args.sweeps)
        load = measure_load(setups, args.seconds, args.rate)
        for name, s in setups.items():
            # (after the windows: these reads are not in the figures)
            load[name]["applied"] = applied_moves(s.conn)  # (the idle games have none)
            load[name]["submitted"] = moves_of(s.conn, [g for g, _ in s.moving], joined_over_http=False)
            load[name]["turns"] = load[name]["applied"] / load[name]["seconds"]
    return {
        "games": args.games,
        "moving": args.moving,
        "rate": args.rate,
        "seconds": args.seconds,
        "setup_seconds": setup_seconds,
        "idle": idle,
        "load": load,
    }


ROWS = (  # (label, phase, key, format)
    ("Redis commands/s", "idle", "commands", ",.1f"),
    ("Redis CPU, ms/s", "idle", "redis_cpu_ms", ".2f"),
    ("worker CPU, ms/s", "idle", "worker_cpu_ms", ".2f"),
    ("sweeps/s", "idle", "sweeps", ".2f"),
    ("turns applied/s", "load", "turns", ".1f"),
    ("Redis commands/s", "load", "commands", ",.1f"),
    ("Redis CPU, ms/s", "load", "redis_cpu_ms", ".2f"),
    ("worker CPU, ms/s", "load", "worker_cpu_ms", ".2f"),
    ("sweeps/s", "load", "sweeps", ".2f"),
)


def per_turn(r: dict[str, Any], name: str, key: str) -> float:
    """What a turn costs above idle: (load − idle) per second, over turns per second."""
    return float(r["load"][name][key] - r["idle"][name][key]) / r["load"][name]["turns"]


def row(when: str, label: str, untimed: float, clocked: float, fmt: str) -> str:
    ratio = f"{clocked / untimed:.2f}" if untimed else "—"
    return f"| {when} | {label} | {untimed:{fmt}} | {clocked:{fmt}} | {ratio} |"


def table(r: dict[str, Any]) -> str:
    phase = {
        "idle": f"idle ({r['games']:,} games waiting)",
        "load": f"load ({r['moving']} of them moving, {r['rate']:g} turns/s asked)",
    }
    lines = [
        "| | measure | untimed | game clock (1 day) | clocked/untimed |",
        "|---|---|---:|---:|---:|",
    ]
    for label, when, key, fmt in ROWS:
        lines.append(row(phase[when], label, r[when]["untimed"][key], r[when]["clocked"][key], fmt))
    for label, key, scale, fmt in (
        ("Redis commands", "commands", 1, ".1f"),
        ("Redis CPU, µs", "redis_cpu_ms", 1000, ".0f"),
        ("worker CPU, µs", "worker_cpu_ms", 1000, ".0f"),
    ):
        untimed, clocked = (per_turn(r, name, key) * scale for name in CLOCKS)
        lines.append(row("per turn (load − idle)", label, untimed, clocked, fmt))
    return "\n".join(lines)


def differences(r: dict[str, Any], when: str, most: int = 9) -> str:
    """The commands whose count differs most between the configurations, clocked − untimed:
    per second at idle, per turn applied (of the clocked run) under load."""
    a, b = r[when]["untimed"]["by_command"], r[when]["clocked"]["by_command"]
    per = r["load"]["clocked"]["turns"] if when == "load" else 1.0
    diff = {k: (b.get(k, 0.0) - a.get(k, 0.0)) / per for k in a.keys() | b.keys()}
    top = sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:most]
    return ", ".join(f"{k} {v:+.2f}" for k, v in top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="live games in each configuration (issue: 10000)")
    parser.add_argument("--moving", type=int, default=100, help="of them, the games the people move in under load")
    parser.add_argument("--rate", type=float, default=50, help="turns/s the people submit in all under load")
    parser.add_argument("--seconds", type=float, default=20, help="length of the window under load")
    parser.add_argument("--sweeps", type=int, default=12, help="idle: sweep periods measured (2 to 2.5 s each)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {load_average()}", flush=True)
    r = run(args)
    if args.json:
        print(json.dumps(r, indent=2))
        return
    print(f"setup {r['setup_seconds']:.0f} s; load average at the end: {load_average()}\n")
    print(table(r))
    for name in CLOCKS:
        load = r["load"][name]
        print(f"\n{name}: {load['applied']} turns applied of {load['submitted']} submitted in {load['seconds']:.1f} s")
    print(f"commands a second at idle, clocked − untimed: {differences(r, 'idle')}")
    print(f"commands a turn under load, clocked − untimed: {differences(r, 'load')}")


if __name__ == "__main__":
    main()
