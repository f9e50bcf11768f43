"""How fast is the pure-Python rules engine?  Leader evaluations and random rounds per second.

Figures, each the median of ``--repeats`` timed runs (the runs of all measurements are
interleaved, so a burst of load on this shared machine hits them all alike):

* ``leader`` over random 2-4-player positions (random rule, disjoint random palettes of
  1 to 7 cards): the mask kernel ``red7es.rules.leader_of_masks(rule, nms, cms)`` on
  precomputed masks, and the public ``red7es.leader(rule, palettes)`` on lists of
  :class:`Card` (which also converts the cards to masks on every call);
* the **baseline measured in the same run**: :func:`straightforward_leader` below, a
  plain implementation of RULES.md on lists of ``Card`` objects with per-rule Python
  grouping (dicts and lists, no bit tricks) -- what one would write first;
* random complete games: ``Game.new(..., record=False)``, then
  ``game.play_turn(*rng.choice(game.legal_turn_codes()))`` until the game is over, with
  fixed game seeds and a fixed ``random.Random`` seed, so every run plays exactly the
  same games (the ``turns`` checksum column shows it; it must not change when the
  engine is optimised).  A basic game is one round; a ``scoring`` game is several.
  Rounds/s counts completed rounds (dealing included), turns/s the turns played.

Because the machine is shared and noisy, every rounds/s figure is also given as a ratio
to the baseline measured in the same run: ``cost`` = how many straightforward leader
evaluations the same time buys, i.e. a round costs as much as that many evaluations.

``--compare DIR`` loads a second copy of the package from ``DIR/red7es`` (e.g. a copy
of the code before an optimisation) under another module name and measures it in the
same run, interleaved, for a before/after table.  A copy of an earlier commit's
package, without touching the work tree: ``mkdir -p /tmp/before_tree && git archive
COMMIT red7es | tar -x -C /tmp/before_tree``.

    python bench/engine.py --quick
    python bench/engine.py --repeats 7 --compare /tmp/before_tree
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib.util
import os
import platform
import random
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import red7es  # noqa: E402
from red7es.cards import ALL_CARDS, Card, Color  # noqa: E402

# ---------------------------------------------------------------------- the baseline


def _straightforward_strength(rule: Color, palette: Sequence[Card]) -> tuple[int, Card] | None:
    """(number of qualifying cards, highest of them), or None: RULES.md done plainly.

    BASELINE, deliberately straightforward: Card objects, ``card.number`` and
    ``card.color``, Python dicts and lists per rule.  Not used by the engine.
    """
    if not palette:
        return None
    if rule == Color.RED:
        return (1, max(palette))
    if rule == Color.ORANGE or rule == Color.YELLOW:
        groups: dict[object, list[Card]] = {}
        for card in palette:
            groups.setdefault(card.number if rule == Color.ORANGE else card.color, []).append(card)
        best = max(groups.values(), key=lambda g: (len(g), max(g)))
        return (len(best), max(best))
    if rule == Color.GREEN or rule == Color.VIOLET:
        wanted = (2, 4, 6) if rule == Color.GREEN else (1, 2, 3)
        q = [c for c in palette if c.number in wanted]
        return (len(q), max(q)) if q else None
    if rule == Color.BLUE:
        tops: dict[Color, Card] = {}
        for card in palette:
            if card.color not in tops or card > tops[card.color]:
                tops[card.color] = card
        return (len(tops), max(tops.values()))
    if rule == Color.INDIGO:
        rep: dict[int, Card] = {}
        for card in palette:
            if card.number not in rep or card > rep[card.number]:
                rep[card.number] = card
        best_run: list[Card] = []
        run: list[Card] = []
        for n in range(1, 8):
            run = [*run, rep[n]] if n in rep else []
            # ties between equally long runs go to the higher one (it holds the higher card)
            if run and len(run) >= len(best_run):
                best_run = run
        return (len(best_run), best_run[-1])
    raise ValueError(rule)


def straightforward_leader(rule: Color, palettes: Sequence[Sequence[Card]]) -> int | None:
    """BASELINE: index of the leading palette, computed the straightforward way."""
    best = None
    who = None
    for i, palette in enumerate(palettes):
        s = _straightforward_strength(rule, palette)
        if s is not None and (best is None or s > best):
            best, who = s, i
    return who


# ---------------------------------------------------------------------- workloads


def leader_positions(count: int, seed: int = 7) -> list[tuple[Color, list[list[Card]]]]:
    """Random positions: a rule, and 2-4 disjoint palettes of 1 to 7 cards each."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        deck = list(ALL_CARDS)
        rng.shuffle(deck)
        palettes = []
        for _ in range(rng.choice((2, 3, 4))):
            size = rng.randint(1, 7)
            palettes.append(sorted(deck[:size]))
            del deck[:size]
        out.append((Color(rng.randrange(7)), palettes))
    return out


def load_tree(directory: str, name: str) -> ModuleType:
    """Import ``directory/red7es`` as a package called ``name`` (its imports are relative)."""
    pkg = Path(directory) / "red7es"
    spec = importlib.util.spec_from_file_location(name, pkg / "__init__.py", submodule_search_locations=[str(pkg)])
    if spec is None or spec.loader is None:
        raise SystemExit(f"no red7es package in {directory}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class Engine:
    """One copy of the engine under test: ``now`` (this tree) or ``before`` (--compare)."""

    label: str
    pkg: ModuleType

    @property
    def game_cls(self) -> type:
        return self.pkg.Game  # type: ignore[no-any-return]

    @property
    def leader_of_masks(self) -> Callable[..., int | None]:
        return sys.modules[self.pkg.__name__ + ".rules"].leader_of_masks  # type: ignore[no-any-return]


@dataclass(frozen=True)
class RoundCase:
    key: str
    players: int
    flags: tuple[str, ...]
    games: int

    def variant(self, pkg: ModuleType) -> object:
        return pkg.Variant(self.players, **{f: True for f in self.flags})

    @property
    def label(self) -> str:
        return f"{self.players}p {'+'.join(self.flags) or 'basic'}"


# The clock: CPU time of this process by default, which a shared machine's other
# processes disturb much less than wall time (--clock wall to use wall time).
CLOCK = time.process_time


def play_games(engine: Engine, case: RoundCase) -> tuple[float, int, int]:
    """Play ``case.games`` random games; (seconds, rounds completed, turns played)."""
    game_cls = engine.game_cls
    variant = case.variant(engine.pkg)
    rng = random.Random(1234)
    rounds = turns = 0
    t0 = CLOCK()
    for g in range(case.games):
        game = game_cls.new(variant, seed=f"bench-{g}", record=False)
        choice = rng.choice
        while game.outcome is None:
            game.play_turn(*choice(game.legal_turn_codes()))
            turns += 1
        rounds += game.round
    return CLOCK() - t0, rounds, turns


@dataclass
class Series:
    """Repeated timings of one measurement: median rate, and a checksum of the work."""

    unit: str
    rates: list[float] = field(default_factory=list)
    extra: list[float] = field(default_factory=list)  # turns/s for rounds
    check: object = None

    @property
    def median(self) -> float:
        return statistics.median(self.rates)

    @property
    def extra_median(self) -> float:
        return statistics.median(self.extra) if self.extra else 0.0


def time_leader(fn: Callable[[], object], evals: int) -> float:
    t0 = CLOCK()
    fn()
    return evals / (CLOCK() - t0)


# ---------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (fewer positions, games, repeats)")
    parser.add_argument("--repeats", type=int, help="timed runs per measurement (median reported)")
    parser.add_argument("--compare", metavar="DIR", help="also measure DIR/red7es, e.g. a copy before a change")
    parser.add_argument(
        "--compare-label", default="before", help="what the --compare copy is, for the table (e.g. a commit)"
    )
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "engine.md"), help="Markdown file to write")
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    parser.add_argument("--only", help="comma-separated keys of round cases (default: all)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="CPU time (default) or wall time")
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter

    pinned = "no"
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {0})
            pinned = "core 0"
        except OSError:
            pass

    quick = args.quick
    repeats = args.repeats or (3 if quick else 5)
    scale = 0.2 if quick else 1.0
    positions = leader_positions(4_000 if quick else 20_000)
    inner = 5  # passes over the positions per timed run

    cases = [
        RoundCase("2p", 2, (), 2400),
        RoundCase("3p", 3, (), 1500),
        RoundCase("4p", 4, (), 1200),
        RoundCase("2p-a", 2, ("actions",), 600),
        RoundCase("3p-a", 3, ("actions",), 360),
        RoundCase("4p-a", 4, ("actions",), 240),
        RoundCase("2p-sda", 2, ("scoring", "draw", "actions"), 80),
        RoundCase("3p-sda", 3, ("scoring", "draw", "actions"), 50),
        RoundCase("4p-sda", 4, ("scoring", "draw", "actions"), 40),
    ]
    if args.only:
        keep = set(args.only.split(","))
        cases = [c for c in cases if c.key in keep]
    cases = [RoundCase(c.key, c.players, c.flags, max(2, int(c.games * scale))) for c in cases]

    engines = [Engine("now", red7es)]
    if args.compare:
        engines.insert(0, Engine("before", load_tree(args.compare, "red7es_before")))

    # Workloads for the leader measurements (built once, outside the timings).
    pos_masks = []
    for rule, palettes in positions:
        nms = [red7es.cards.mask_of(p) for p in palettes]
        pos_masks.append((int(rule), nms, [red7es.cards.color_mask_of(m) for m in nms]))
    expected = [straightforward_leader(rule, pals) for rule, pals in positions]
    evals = len(positions) * inner

    def run_baseline() -> list[object]:
        out = []
        for _ in range(inner):
            out = [straightforward_leader(rule, pals) for rule, pals in positions]
        return out

    leader_runs: dict[str, Callable[[], list[object]]] = {"baseline": run_baseline}
    for eng in engines:
        kernel = eng.leader_of_masks
        public = eng.pkg.leader
        # the engine's own Card and Color objects (a --compare copy has its own classes)
        own = [
            (eng.pkg.Color(int(rule)), [[eng.pkg.ALL_CARDS[int(c)] for c in p] for p in pals])
            for rule, pals in positions
        ]

        def run_kernel(kernel: Callable[..., int | None] = kernel) -> list[object]:
            out: list[object] = []
            for _ in range(inner):
                out = [kernel(r, nms, cms) for r, nms, cms in pos_masks]
            return out

        def run_public(public: Callable[..., int | None] = public, own: list = own) -> list[object]:
            out: list[object] = []
            for _ in range(inner):
                out = [public(rule, pals) for rule, pals in own]
            return out

        leader_runs[f"kernel-{eng.label}"] = run_kernel
        leader_runs[f"public-{eng.label}"] = run_public
        # every implementation must agree with the baseline on every position
        for name, fn in (("kernel", run_kernel), ("public", run_public)):
            got = fn()
            if got != expected:
                bad = next(i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b)
                raise SystemExit(f"{name} ({eng.label}) disagrees with the baseline at position {bad}")

    leader_series = {k: Series("evals/s") for k in leader_runs}
    round_series = {(eng.label, c.key): Series("rounds/s") for eng in engines for c in cases}

    gc.collect()
    print(
        f"pinned to {pinned}; {repeats} repeats; {len(positions)} leader positions; games: "
        + ", ".join(f"{c.key}={c.games}" for c in cases),
        file=sys.stderr,
    )
    for rep in range(repeats):
        for name, fn in leader_runs.items():
            leader_series[name].rates.append(time_leader(fn, evals))
        for case in cases:
            for eng in engines:
                secs, rounds, turns = play_games(eng, case)
                s = round_series[(eng.label, case.key)]
                s.rates.append(rounds / secs)
                s.extra.append(turns / secs)
                s.check = (rounds, turns)
        print(f"  repeat {rep + 1}/{repeats} done", file=sys.stderr)

    base = leader_series["baseline"].median
    lines = []
    lines.append("| measurement | " + " | ".join(e.label for e in engines) + " | ratio |")
    lines.append("|---|" + "---:|" * len(engines) + "---|")
    lines.append(
        "| leader, BASELINE straightforward (Card lists, per-rule grouping), evals/s | "
        + " | ".join(f"{base:,.0f}" for _ in engines)
        + " | 1.0x |"
    )
    for kind, desc in (
        ("kernel", "leader, mask kernel `leader_of_masks` (masks precomputed), evals/s"),
        ("public", "leader, public `red7es.leader(rule, Card lists)` (converts to masks each call), evals/s"),
    ):
        cells = [leader_series[f"{kind}-{e.label}"].median for e in engines]
        lines.append(f"| {desc} | " + " | ".join(f"{v:,.0f}" for v in cells) + f" | {cells[-1] / base:.1f}x baseline |")
    lines.append("")
    lines.append(
        "| random complete games | "
        + " | ".join(f"{e.label} rounds/s | {e.label} turns/s | {e.label} cost" for e in engines)
        + (" | speed-up" if len(engines) > 1 else "")
        + " | rounds, turns (checksum) |"
    )
    lines.append("|---|" + "---:|---:|---:|" * len(engines) + ("---:|" if len(engines) > 1 else "") + "---|")
    for case in cases:
        cells = []
        for eng in engines:
            s = round_series[(eng.label, case.key)]
            cells.append(f"{s.median:,.0f} | {s.extra_median:,.0f} | {base / s.median:,.0f}")
        row = f"| {case.label} ({case.games} games) | " + " | ".join(cells)
        if len(engines) > 1:
            before, now = (round_series[(e.label, case.key)].median for e in engines)
            row += f" | {now / before:.2f}x"
        checks = {round_series[(e.label, case.key)].check for e in engines}
        check = ", ".join(f"{r}, {t}" for r, t in checks)  # type: ignore[misc]
        if len(checks) > 1:
            check += " **(differ!)**"
        lines.append(row + f" | {check} |")
    table = "\n".join(lines)

    command = shlex.join(["python", "bench/engine.py", *(sys.argv[1:] if argv is None else argv)])
    header = [
        "# Engine speed",
        "",
        f"- command: `{command}`",
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"- Python {platform.python_version()} ({platform.python_implementation()}), {platform.platform()}",
        *(
            [f"- `before`: the package in `{args.compare}` ({args.compare_label}), measured in the same run"]
            if args.compare
            else []
        ),
        f"- machine: {platform.machine()}, {os.cpu_count()} logical CPUs, shared and noisy; process pinned to {pinned}",
        f"- each figure is the median of {repeats} interleaved runs, timed in"
        f" {'CPU time of the process' if args.clock == 'cpu' else 'wall time'};"
        f" leader: {len(positions):,} random positions x {inner} passes per run",
        "- `cost` = straightforward-baseline leader evaluations per round in the same run"
        " (a machine-speed-independent round cost: lower is better)",
        "- targets (issue): leader >= 1,000,000 evals/s on one core, about 10x a straightforward"
        " implementation; 2-player basic rounds >= 2,000 rounds/s",
        "",
    ]
    text = "\n".join(header) + "\n" + table + "\n"
    print(text)
    if not args.no_write:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        print(f"written to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
