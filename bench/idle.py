"""Idle benchmark: what a worker's sweep costs Redis and the worker per pass, by number of
live games waiting for people, with the work index and (the baseline, same run) without.

Creates N games of two people on a private Redis, each dealt and waiting for its first
turn (both seats joined), with or without a clock (``--turn-time 2d``), folded by the
same ``WorkerContext`` a ``red7 worker`` runs.  Then a fresh worker context sweeps:

* **index** — what every sweep after a worker's first does now: the games due in
  ``red7:work`` plus a slice of ``red7:active``;
* **every game** — what every sweep did before the work index (``sweep(full=True)``,
  which is now a worker's first sweep only).

For each it reports Redis commands per sweep (``INFO stats`` ``total_commands_processed``,
less the ``INFO`` itself) and worker CPU per sweep (``time.process_time``); a worker sweeps
every 2 s, so commands per second per worker are half the per-sweep figure.  Also the
deadline pass each worker runs on every loop (``post_due``), which timed games add to.

Usage:  python bench/idle.py [--games 100,1000,10000] [--sweeps 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from red7es import Variant
from red7es.service.client import GameService
from red7es.service.events import BOT, SeatSpec
from red7es.service.redis_server import RedisServer, free_port, redis_binary
from red7es.workers.context import SWEEP_SECONDS, WorkerContext

TWO_DAYS_MS = 2 * 24 * 3600 * 1000


def commands(conn: redis.Redis) -> int:
    return int(conn.info("stats")["total_commands_processed"])


def measure(conn: redis.Redis, action: Callable[[], object], times: int) -> tuple[float, float]:
    """(Redis commands, worker CPU ms) per call of ``action``."""
    before, cpu = commands(conn), time.process_time()
    for _ in range(times):
        action()
    cpu_ms = (time.process_time() - cpu) * 1000
    return (commands(conn) - before - 1) / times, cpu_ms / times  # (-1: the INFO that read it)


def add_games(
    service: GameService, context: WorkerContext, start: int, stop: int, variant: Variant, bot: str | None = None
) -> dict[str, dict[int, tuple[str, str]]]:
    """Games ``start`` to ``stop`` of two people (ann, bob: both joined), or of ann against
    the ``bot``, each dealt and waiting for its first turn; their people's seats,
    seat -> (name, token), for a bench that moves them."""
    seats: dict[str, dict[int, tuple[str, str]]] = {}
    second = SeatSpec("bob") if bot is None else SeatSpec(bot, BOT, bot)
    people = ["ann"] if bot is not None else ["ann", "bob"]
    for n in range(start, stop):
        game = f"{'t' if variant.timed else 'u'}{'b' if bot else ''}{n:06d}"
        created = service.create(variant, [SeatSpec("ann"), second], game_id=game, join=people, wait=None)
        context.advance(game)  # dealt (and the bot's first turn, if it starts): waits for ann
        seats[game] = {seat: (name, created.tokens[name]) for seat, name in enumerate(people)}
    return seats


def run(sizes: list[int], sweeps: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for timed in (False, True):
            server = RedisServer(Path(tmp) / f"redis-{timed}", port=free_port(), binary=redis_binary(True)).start()
            try:
                conn = redis.Redis.from_url(server.url)
                service = GameService(conn, wake=lambda _game: None)
                folding = WorkerContext(conn, owner="folder")
                made = 0
                for size in sizes:
                    add_games(service, folding, made, size, Variant(2, turn_time=TWO_DAYS_MS) if timed else Variant(2))
                    made = size
                    worker = WorkerContext(conn, owner="sweeper")
                    worker.sweep()  # its first: every game
                    index = measure(conn, lambda w=worker: w.sweep(full=False), sweeps)
                    every = measure(conn, lambda w=worker: w.sweep(full=True), max(2, sweeps // 5))
                    due = measure(conn, worker.post_due, sweeps)
                    rows.append(
                        {
                            "games": size,
                            "clock": "turn time 2d" if timed else "none",
                            "index_commands": index[0],
                            "index_cpu_ms": index[1],
                            "every_game_commands": every[0],
                            "every_game_cpu_ms": every[1],
                            "deadline_pass_commands": due[0],
                        }
                    )
            finally:
                server.stop()
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| live games waiting | clock | sweep with the index: commands (per s/worker) | CPU ms | "
        "every game (before): commands (per s/worker) | CPU ms | ratio | deadline pass: commands |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ratio = r["every_game_commands"] / r["index_commands"] if r["index_commands"] else float("inf")
        lines.append(
            f"| {r['games']:,} | {r['clock']} | {r['index_commands']:.1f} ({r['index_commands'] / SWEEP_SECONDS:.1f})"
            f" | {r['index_cpu_ms']:.2f} | {r['every_game_commands']:,.0f}"
            f" ({r['every_game_commands'] / SWEEP_SECONDS:,.0f}) | {r['every_game_cpu_ms']:.1f} | {ratio:,.0f}×"
            f" | {r['deadline_pass_commands']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="100,1000,10000", help="numbers of live games, comma-separated")
    parser.add_argument("--sweeps", type=int, default=20, help="sweeps measured per figure")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = run(sorted(int(n) for n in args.games.split(",")), args.sweeps)
    print(json.dumps(rows, indent=2) if args.json else table(rows))


if __name__ == "__main__":
    main()
