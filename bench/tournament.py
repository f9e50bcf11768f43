"""Tournament benchmark: a 1,000-game bot tournament on the worker pool, against the engine alone.

One run, on a private Redis started here:

* **service path**: a round-robin tournament of greedy and random bots (2-player tables,
  basic variant) created and run exactly as ``red7 tournament create`` / ``run`` do —
  rounds paired by compare-and-append, games created with derived seeds, played by N
  real ``red7 worker`` processes (every turn a command, validated, appended with
  compare-and-append, views and change notices written), results recorded back into
  the tournament stream;
* **engine path**: the same games (same pairings, same seats, same deal seeds, same bot
  specs) played with :func:`red7es.play_game` in this one process, no Redis at all.

Games/min of both, and their ratio: what hosting every move as events on Redis costs.
The two paths deal identical cards, but the service seeds each bot decision from the
game's log position (so a restarted worker replays it exactly) while ``play_game``
seeds each bot once, so individual games can differ; turns per game are shown to
make plain that the workloads match.  The engine path is timed twice (before and after
the service run) and the faster run is kept.

Usage:  python bench/tournament.py [--entrants 50] [--rounds 40] [--workers 2] [--quick]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pool import worker_processes  # noqa: E402  (bench/pool.py: this script's folder is on sys.path)

from red7es import Bot, Game, Observation, Turn, make_bot, play_game  # noqa: E402
from red7es.service.client import GameService  # noqa: E402
from red7es.service.events import BOT, SeatSpec  # noqa: E402
from red7es.service.redis_server import RedisServer, free_port, redis_binary  # noqa: E402
from red7es.service.store import Keys  # noqa: E402
from red7es.tournament import RoundPaired, TournamentRunner, create_tournament, load  # noqa: E402
from red7es.tournament.ids import game_seed  # noqa: E402
from red7es.tournament.pairing import pair_round  # noqa: E402
from red7es.variant import Variant  # noqa: E402


class Progress:
    """Prints how far the run is, to stderr, every few seconds."""

    def __init__(self) -> None:
        self.last = 0.0

    def paired(self, paired: RoundPaired) -> None:
        pass

    def progress(self, done: int, total: int, round_number: int) -> None:
        now = time.monotonic()
        if now - self.last > 5 or done == total:
            self.last = now
            print(f"  service: {done}/{total} games", file=sys.stderr, flush=True)

    def needs_people(self, game: str, people: list[str], joined: dict[str, str | None]) -> None:
        pass


def entrants(n: int) -> list[SeatSpec]:
    """greedy1, random1, greedy2, random2, ..."""
    kinds = ("greedy", "random")
    return [SeatSpec(f"{kinds[i % 2]}{i // 2 + 1}", BOT, kinds[i % 2]) for i in range(n)]


def engine_games(games: list[tuple[str, bytes, list[str]]], variant: Variant) -> tuple[float, int]:
    """Play the games with play_game in this process; (seconds, turns)."""
    turns = 0
    start = time.perf_counter()
    for _game_id, seed, specs in games:
        game = Game.new(variant, seed=seed)
        bots = [make_bot(spec, seed=int.from_bytes(seed[:8], "big") + s) for s, spec in enumerate(specs)]
        counting = [_Counting(b) for b in bots]
        play_game(game, counting)
        turns += sum(c.turns for c in counting)
    return time.perf_counter() - start, turns


class _Counting:
    """A bot that counts its decisions (turns), to compare the workloads of both paths."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.name = bot.name
        self.turns = 0

    def choose(self, obs: Observation) -> Turn:
        self.turns += 1
        return self.bot.choose(obs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entrants", type=int, default=50, help="bot entrants (greedy and random, alternating)")
    parser.add_argument("--rounds", type=int, default=40, help="round-robin rounds to play (50 entrants x 40 = 1000)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--parallel", type=int, default=64, help="games in flight at once")
    parser.add_argument("--quick", action="store_true", help="10 entrants, 9 rounds (45 games): a smoke run")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "tournament.md"), help="Markdown file")
    args = parser.parse_args()
    if args.quick:
        args.entrants, args.rounds = 10, 9
    variant = Variant(2)

    with tempfile.TemporaryDirectory(prefix="red7-bench-") as tmp:
        server = RedisServer(Path(tmp) / "redis", port=free_port(), binary=redis_binary(prefer_system=True)).start()
        try:
            conn = redis.Redis.from_url(server.url)
            redis_version = conn.info("server")["redis_version"]
            with worker_processes(server.url, args.workers, Path(tmp)):
                created = create_tournament(
                    conn, "bench", entrants(args.entrants), variant, "round-robin", rounds=args.rounds, seed="bench"
                )
                service = GameService(conn)
                runner = TournamentRunner(service, "bench", parallel=args.parallel, reporter=Progress())
                total = runner.state.total_games
                state = load(conn, "bench")
                # The games to replay on the engine: round-robin pairings do not depend on results.
                rounds: list[RoundPaired] = []
                for _ in range(created.event.rounds):
                    rounds.append(pair_round(state.spec, rounds, {}))
                games = [
                    (t.game, game_seed(created.seed, t.game), [state.spec.entrants[e].bot or "random" for e in t.seats])
                    for r in rounds
                    for t in r.tables
                ]
                print(f"engine: {len(games)} games ...", file=sys.stderr, flush=True)
                engine_first, engine_turns = engine_games(games, variant)

                print(f"service: {total} games on {args.workers} workers ...", file=sys.stderr, flush=True)
                start = time.perf_counter()
                report = runner.run()
                service_seconds = time.perf_counter() - start
                assert report.finished and report.done == total == len(games)
                pipe = conn.pipeline(transaction=False)
                for game_id, _seed, _specs in games:
                    pipe.xlen(Keys(game_id).commands)
                service_turns = sum(n - 1 for n in pipe.execute())  # every command but the create is a turn

                engine_second, _ = engine_games(games, variant)
                engine_seconds = min(engine_first, engine_second)
        finally:
            server.stop()

    engine_rate = total / engine_seconds * 60
    service_rate = total / service_seconds * 60
    command = "python bench/tournament.py" + (" --quick" if args.quick else "")
    if not args.quick and (args.entrants, args.rounds, args.workers) != (50, 40, 2):
        command += f" --entrants {args.entrants} --rounds {args.rounds} --workers {args.workers}"
    now = datetime.datetime.now(datetime.timezone.utc)
    lines = [
        "# Tournament benchmark",
        "",
        f"- command: `{command}`",
        f"- date: {now:%Y-%m-%d %H:%M} UTC",
        f"- Python {platform.python_version()} ({platform.python_implementation()}), {platform.platform()}, "
        f"{os.cpu_count()} logical CPUs (shared with the workers and Redis, and with other jobs: "
        f"read the ratio rather than the absolute rates); Redis {redis_version} (private, TCP on 127.0.0.1)",
        f"- tournament: round robin of {args.entrants} bots (greedy and random), {args.rounds} rounds of "
        f"{args.entrants // 2} tables = {total} games, 2 players, basic variant; {args.parallel} games in flight",
        "- engine: the same games (pairings, seats, deal seeds, bot specs) with `play_game` in one process; "
        "bots are seeded differently (the service seeds every decision from the log position), hence turns/game",
        "",
        "| path | games | seconds | games/min | turns/game |",
        "|---|---:|---:|---:|---:|",
        f"| engine: `play_game`, one process, no Redis | {total} | {engine_seconds:.1f} | {engine_rate:,.0f} | "
        f"{engine_turns / total:.1f} |",
        f"| service: `red7 tournament run`, {args.workers} workers + Redis | {total} | {service_seconds:.1f} | "
        f"{service_rate:,.0f} | {service_turns / total:.1f} |",
        f"| service cost (engine rate / service rate) | | | {engine_rate / service_rate:.1f}x | |",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
