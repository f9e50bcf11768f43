"""Turn-cost benchmark (issue #23): what one person's turn costs Redis, the worker and the client.

Plays ``--games`` person-vs-bot games (two seats: a scripted person and a ``greedy`` bot)
with ``--clients`` client threads through :class:`GameService`, against a private Redis
and ``--workers`` real ``red7 worker`` processes (bench/counted_worker.py: the real worker,
counting its own round trips). The person plays the first legal turn (or a fold when it
is the only one), looking at the game only when a change arrives, as ``red7 play`` does.

Reported per validated move (``CommandApplied`` in the logs: the person's and the bot's)
and per person turn (the person's move plus the bot's reply):

* Redis commands: the ``INFO stats`` ``total_commands_processed`` delta, less this bench's
  own INFO calls (Redis 7 counts the commands a script runs as well as the script's call;
  ``INFO commandstats`` gives them by name);
* round trips by the workers: requests their connections sent (one per command or per
  pipeline), counted inside the workers, idle polling of the inbox and sweeps included;
* round trips by the clients: the same, counted on the clients' connection pool;
* Redis CPU seconds (``INFO cpu`` user + sys delta) and the workers' CPU (/proc).

Run it from outside a checkout, with the interpreter of the venv to measure (the workers
are started with the same interpreter).

Usage:  python bench/turn_cost.py [--games 40] [--clients 4] [--workers 1] [--rounds 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
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
from redis.connection import AbstractConnection

from red7es import Variant
from red7es.service.client import GameService
from red7es.service.events import BOT, PERSON, SeatSpec
from red7es.service.redis_server import RedisServer, free_port, redis_binary

HERE = Path(__file__).resolve().parent


class SendCounter:
    """Counts the requests (round trips) the connections of one pool send."""

    def __init__(self, pool: redis.ConnectionPool) -> None:
        self.sends = 0
        self._lock = threading.Lock()
        counter = self
        base: Any = pool.connection_class

        class Counted(base):  # type: ignore[misc,valid-type]
            def send_packed_command(self, command: Any, check_health: bool = True) -> None:
                with counter._lock:
                    counter.sends += 1
                super().send_packed_command(command, check_health)

        assert issubclass(Counted, AbstractConnection)
        pool.connection_class = Counted
        pool.reset()


def worker_sends(files: list[Path]) -> int:
    return sum(int(f.read_text() or 0) for f in files)


def redis_totals(conn: redis.Redis) -> tuple[int, float]:
    """(commands, Redis CPU seconds) so far."""
    stats, cpu = conn.info("stats"), conn.info("cpu")
    return int(stats["total_commands_processed"]), float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"])


def commandstats(conn: redis.Redis) -> dict[str, int]:
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in conn.info("commandstats").items()}


def play_games(url: str, games: int, clients: int, rounds: int) -> tuple[int, int, int]:
    """Play the games; returns (person turns, client round trips, game count)."""
    pool = redis.ConnectionPool.from_url(url)
    counter = SendCounter(pool)
    turns = [0]
    lock = threading.Lock()
    errors: list[BaseException] = []
    todo = list(range(games))

    def client() -> None:
        svc = GameService(redis.Redis(connection_pool=pool))
        try:
            while True:
                with lock:
                    if not todo:
                        return
                    n = todo.pop()
                created = svc.create(
                    Variant(2, rounds=rounds),
                    [SeatSpec("me", PERSON), SeatSpec("bot", BOT, "greedy")],
                    seed=f"turn-cost-{n}",
                    join=["me"],
                )
                gid, token, cursor = created.game_id, created.tokens["me"], "0-0"
                seen = None  # the view her last answer came with (None: she reads it)
                while True:
                    cursor, turn, over = next_person_turn(svc, gid, cursor, seen)
                    seen = None
                    if over:
                        break
                    if turn is None:
                        continue
                    answer = svc.play(gid, "me", token, turn)
                    if not answer.applied:
                        raise RuntimeError(f"turn {turn} refused: {answer.reason}")
                    seen = answer.view
                    with lock:
                        turns[0] += 1
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return turns[0], counter.sends, games


def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp) / "redis", port=free_port(), binary=redis_binary(prefer_system=True)).start()
        try:
            conn = redis.Redis.from_url(server.url)
            files = [Path(tmp) / f"worker{i}.count" for i in range(args.workers)]
            counting = (str(HERE / "counted_worker.py"),)
            env = lambda i: {**os.environ, "RED7ES_COUNT_FILE": str(files[i])}  # noqa: E731
            with worker_processes(server.url, args.workers, Path(tmp), command=counting, env=env) as procs:
                while not all(f.exists() for f in files):
                    time.sleep(0.05)
                time.sleep(0.5)  # the workers' first (full) sweep done
                w0, cpu0, (c0, r0) = worker_sends(files), cpu_seconds(procs), redis_totals(conn)
                stats0 = commandstats(conn)
                start = time.perf_counter()
                turns, client_sends, games = play_games(server.url, args.games, args.clients, args.rounds)
                elapsed = time.perf_counter() - start
                time.sleep(0.1)  # the workers' counts written
                c1, r1 = redis_totals(conn)
                stats1 = commandstats(conn)
                w1, cpu1 = worker_sends(files), cpu_seconds(procs)
            moves = applied_moves(conn)
        finally:
            server.stop()
    own = 3  # this bench's INFO calls between each pair of readings (a command is counted once done)
    by_command = {k: v - stats0.get(k, 0) for k, v in stats1.items() if v - stats0.get(k, 0) > 0}
    by_command["info"] = by_command.get("info", 0) - own
    return {
        "games": games,
        "person_turns": turns,
        "moves": moves,
        "seconds": elapsed,
        "commands": c1 - c0 - own,
        "redis_cpu": r1 - r0,
        "worker_round_trips": w1 - w0,
        "client_round_trips": client_sends,
        "worker_cpu": cpu1 - cpu0,
        "by_command": dict(sorted(by_command.items(), key=lambda kv: -kv[1])),
    }


def report(r: dict[str, Any]) -> None:
    m, t = r["moves"], r["person_turns"]
    print(f"{r['games']} games, {t} person turns, {m} validated moves in {r['seconds']:.1f} s")
    print("| per | Redis commands | worker round trips | client round trips |")
    print("|---|---|---|---|")
    for label, n in (("validated move", m), ("person turn + bot reply", t)):
        print(
            f"| {label} | {r['commands'] / n:.1f}"
            f" | {r['worker_round_trips'] / n:.1f} | {r['client_round_trips'] / n:.1f} |"
        )
    print(f"Redis CPU {r['redis_cpu'] / m * 1e6:.0f} µs/move; worker CPU {r['worker_cpu'] / m * 1e6:.0f} µs/move")
    print(f"validated moves per Redis CPU second: {m / r['redis_cpu']:,.0f}")
    top = ", ".join(f"{k} {v / t:.2f}" for k, v in list(r["by_command"].items())[:14])
    print(f"commands per person turn: {top}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--clients", type=int, default=4, help="people playing at once")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3, help="round wins that end a game")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args)
    if args.json:
        print(json.dumps(result))
    else:
        report(result)


if __name__ == "__main__":
    main()
