"""How strong is the ``ismcts`` bot?  Win rates with 95% Wilson intervals.

Matches, each over seeded games in which every seed is played once with the ISMCTS
bot in each seat (so the deal's luck cancels out between seats):

* 2-player basic vs ``greedy`` and vs ``random`` (the targets of issue #21: at most 50 ms
  per move, >= 67% vs greedy and >= 92% vs random over 1,000 games);
* 2-player basic matches to 4 won rounds vs ``greedy`` (issue #21: >= 85%);
* 3- and 4-player basic vs ``greedy`` opponents (an even share would be 1/3, 1/4);
* the advanced game ``scoring+draw+actions`` (2, 3 and 4 players) vs ``greedy``.

A time budget (``--budget-ms``) is what a player would face but depends on machine
load; an iteration budget (``--iterations``) is reproducible.  Examples::

    python bench/strength.py --quick
    python bench/strength.py --games 1000 --budget-ms 50 --workers 2
    python bench/strength.py --games 1000 --iterations 300 --only 2p-greedy,2p-random
    python bench/strength.py --games 400 --only 2p-greedy --baseline ismcts:model=0

Per match: ``ms/move``, the bot's mean decision as it measures its search; ``slowest ms``,
its longest decision as the caller waits for it (the whole ``choose`` call, by the wall
clock); ``slowest CPU ms``, the most CPU time one decision took.  A decision over its budget
by the clock but not in CPU time was held up by the machine (another process on its CPU),
not by the bot.

``--baseline SPEC`` plays every game a second time with ``SPEC`` in the bot's seat,
the two interleaved in one pool, so both face the same machine load (a time budget
feels load): the baseline's rows are printed below the bot's.
"""

from __future__ import annotations

import argparse
import datetime
import math
import multiprocessing
import os
import platform
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from red7es.bots.base import Bot, make_bot, observation_for
from red7es.bots.ismcts import IsmctsBot
from red7es.game import Game
from red7es.variant import Variant

ADVANCED = {"scoring": True, "draw": True, "actions": True}


@dataclass(frozen=True)
class Match:
    """One line of the table: a variant, an opponent, and how many games to play."""

    key: str
    label: str
    players: int
    opponent: str
    flags: tuple[tuple[str, bool | int], ...]
    games: int

    @property
    def variant(self) -> Variant:
        return Variant(self.players, **dict(self.flags))

    @property
    def expected(self) -> float:
        """Share of wins of a player exactly as strong as the others."""
        return 1.0 / self.players


@dataclass(frozen=True)
class Task:
    """One game: a match, a seed, and the seat the ISMCTS bot sits in."""

    match: Match
    seed: int
    seat: int
    bot_spec: str


@dataclass(frozen=True)
class GameResult:
    key: str
    spec: str
    score: float  # 1 for a win, 1/k for a win shared by k players, else 0
    moves: int
    iterations: int
    seconds: float
    # the bot's longest decision (s), the whole ``choose`` call as its caller waits for it: a
    # time budget is the most a move may take, not a mean
    slowest: float = 0.0
    # the most CPU time a decision of the bot's took (s), the same call: a decision slower than
    # its budget by the clock but not in CPU was held up by the machine (another process ran
    # on its CPU), not by the bot
    slowest_cpu: float = 0.0


def matches(games: int, multi_games: int, advanced_games: int, rounds_games: int = 0) -> list[Match]:
    basic: tuple[tuple[str, bool | int], ...] = ()
    adv: tuple[tuple[str, bool | int], ...] = tuple(ADVANCED.items())
    return [
        Match("2p-greedy", "2p basic vs greedy", 2, "greedy", basic, games),
        Match("2p-random", "2p basic vs random", 2, "random", basic, games),
        Match("2p-greedy-r4", "2p basic, first to 4 rounds, vs greedy", 2, "greedy", (("rounds", 4),), rounds_games),
        Match("3p-greedy", "3p basic vs 2 greedy", 3, "greedy", basic, multi_games),
        Match("4p-greedy", "4p basic vs 3 greedy", 4, "greedy", basic, multi_games),
        Match("2p-adv", "2p scoring+draw+actions vs greedy", 2, "greedy", adv, advanced_games),
        Match("3p-adv", "3p scoring+draw+actions vs 2 greedy", 3, "greedy", adv, advanced_games),
        Match("4p-adv", "4p scoring+draw+actions vs 3 greedy", 4, "greedy", adv, advanced_games),
    ]


def tasks_for(match: Match, bot_spec: str) -> Iterator[Task]:
    """Seeds 0, 1, ... each played with the bot in every seat, ``match.games`` games in all."""
    seeds = max(1, math.ceil(match.games / match.players))
    for seed in range(seeds):
        for seat in range(match.players):
            yield Task(match, seed, seat, bot_spec)


def play(task: Task) -> GameResult:
    """Play one game to its end; every bot decides from its own observation."""
    match = task.match
    # recorded, as the service's games are: observations then carry the round's turns
    game = Game.new(match.variant, seed=f"strength-{match.key}-{task.seed}", record=True)
    bots: list[Bot] = [make_bot(match.opponent, seed=1000 * task.seed + s) for s in range(match.players)]
    bots[task.seat] = make_bot(task.bot_spec, seed=task.seed)
    ismcts = bots[task.seat]
    assert isinstance(ismcts, IsmctsBot)
    moves = iterations = 0
    seconds = slowest = slowest_cpu = 0.0
    while game.outcome is None:
        seat = game.turn
        obs = observation_for(bots[seat], game, seat)
        wall, cpu = time.perf_counter(), time.thread_time()
        turn = bots[seat].choose(obs)
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        if seat == task.seat and ismcts.last_stats is not None and ismcts.last_stats.iterations:
            moves += 1
            iterations += ismcts.last_stats.iterations
            seconds += ismcts.last_stats.seconds
            slowest = max(slowest, wall)
            slowest_cpu = max(slowest_cpu, cpu)
        game.apply(turn)
    winners = game.outcome.winners
    score = 1.0 / len(winners) if task.seat in winners else 0.0
    return GameResult(match.key, task.bot_spec, score, moves, iterations, seconds, slowest, slowest_cpu)


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a proportion (sound near 0 and 1, unlike p ± 2σ)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class Tally:
    games: int = 0
    score: float = 0.0
    moves: int = 0
    iterations: int = 0
    seconds: float = 0.0
    slowest: float = 0.0
    slowest_cpu: float = 0.0

    def add(self, r: GameResult) -> None:
        self.games += 1
        self.score += r.score
        self.moves += r.moves
        self.iterations += r.iterations
        self.seconds += r.seconds
        self.slowest = max(self.slowest, r.slowest)
        self.slowest_cpu = max(self.slowest_cpu, r.slowest_cpu)


def table(rows: Sequence[tuple[Match, Tally]]) -> str:
    lines = [
        "| match | games | ISMCTS wins | win rate | 95% CI (Wilson) | even share | ms/move | slowest ms"
        " | slowest CPU ms | playouts/s |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    for match, t in rows:
        lo, hi = wilson(t.score, t.games)
        rate = t.score / t.games if t.games else 0.0
        ms = 1000 * t.seconds / t.moves if t.moves else 0.0
        pps = t.iterations / t.seconds if t.seconds else 0.0
        lines.append(
            f"| {match.label} | {t.games} | {t.score:g} | {rate:.1%} | {lo:.1%} – {hi:.1%} "
            f"| {match.expected:.1%} | {ms:.1f} | {1000 * t.slowest:.1f} | {1000 * t.slowest_cpu:.1f} | {pps:,.0f} |"
        )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    budget = ap.add_mutually_exclusive_group()
    budget.add_argument("--budget-ms", type=float, default=None, help="time per decision (default 50)")
    budget.add_argument("--iterations", type=int, default=None, help="iterations per decision instead of time")
    ap.add_argument("--games", type=int, default=1000, help="games per 2-player basic match (default 1000)")
    ap.add_argument("--multi-games", type=int, default=None, help="games per 3/4-player basic match")
    ap.add_argument("--advanced-games", type=int, default=None, help="games per scoring+draw+actions match")
    ap.add_argument("--rounds-games", type=int, default=None, help="games per first-to-4-rounds match")
    ap.add_argument("--baseline", default=None, help="also play every game with this bot spec (same budget)")
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--quick", action="store_true", help="a few games per match, for a smoke run")
    ap.add_argument(
        "--only", default="", help="comma-separated match keys: " + ", ".join(m.key for m in matches(0, 0, 0))
    )
    ap.add_argument("--c", type=float, default=None, help="exploration constant for the bot")
    ap.add_argument("--bot", default="ismcts", help="bot spec (options may be added, e.g. ismcts:c=0.5)")
    ap.add_argument("--output", type=Path, default=None, help="also append the report (Markdown) to this file")
    args = ap.parse_args(argv)
    if args.quick:
        args.games = min(args.games, 40)
    args.multi_games = args.multi_games if args.multi_games is not None else (24 if args.quick else args.games // 2)
    args.advanced_games = args.advanced_games if args.advanced_games is not None else (8 if args.quick else 200)
    args.rounds_games = args.rounds_games if args.rounds_games is not None else (8 if args.quick else 200)
    if args.iterations is None and args.budget_ms is None:
        args.budget_ms = 50.0
    return args


def bot_spec(args: argparse.Namespace, bot: str | None = None) -> str:
    """The bot spec for ``make_bot``: ``bot`` (default ``--bot``) plus the budget and ``--c``."""
    name, _, extra = str(args.bot if bot is None else bot).partition(":")
    opts = [p for p in extra.split(",") if p]
    if args.iterations is not None:
        opts.append(f"iterations={args.iterations}")
    else:
        opts.append(f"time={args.budget_ms / 1000:g}")
    if args.c is not None:
        opts.append(f"c={args.c}")
    return name + ":" + ",".join(opts)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    spec = bot_spec(args)
    specs = [spec] if args.baseline is None else [spec, bot_spec(args, args.baseline)]
    wanted = {k for k in args.only.split(",") if k}
    chosen = [
        m
        for m in matches(args.games, args.multi_games, args.advanced_games, args.rounds_games)
        if (not wanted or m.key in wanted) and m.games > 0
    ]
    # with a baseline, each game is played by both bots one after the other: the same load
    tasks = [t for m in chosen for pair in zip(*(tasks_for(m, s) for s in specs), strict=True) for t in pair]
    tallies = {(s, m.key): Tally() for s in specs for m in chosen}
    start = time.perf_counter()
    print(f"# {len(tasks)} games, bot {' and '.join(specs)}, {args.workers} workers", file=sys.stderr, flush=True)
    ctx = multiprocessing.get_context("spawn" if sys.platform == "darwin" else "fork")
    with ctx.Pool(args.workers) as pool:
        for i, result in enumerate(pool.imap_unordered(play, tasks, chunksize=1), 1):
            tallies[result.spec, result.key].add(result)
            if i % 50 == 0 or i == len(tasks):
                print(f"# {i}/{len(tasks)} games, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = " ".join(["python", "bench/strength.py", *(sys.argv[1:] if argv is None else argv)])
    report = (
        f"`{command}`\n\n"
        f"Bot {' and baseline '.join(f'`{s}`' for s in specs)}; {now}; "
        f"{platform.python_implementation()} {platform.python_version()} on "
        f"{os.cpu_count()} CPUs, {args.workers} workers; wall time {time.perf_counter() - start:.0f} s.\n\n"
        + "\n\n".join(f"`{s}`:\n\n" + table([(m, tallies[s, m.key]) for m in chosen]) for s in specs)
        + "\n"
    )
    print(report)
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        with args.output.open("a") as f:
            f.write(report + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
