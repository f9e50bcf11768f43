"""How fast the bot solves a world against greedy (issue #21: early decisions are short of worlds).

    python bench/solver_speed.py [DECISIONS] [WORLDS]

At 50 ms a move the ``ismcts`` bot searches only 12-22 of greedy's possible hands at its
first decisions (6-7 cards), where a world takes milliseconds to solve, against hundreds
later in the round; and given 250 ms there alone it won 265 of 400 games against 251 at
50 ms (bench/results/strength.md).  This bench collects ``DECISIONS`` (default 40) such
decisions from the strength bench's own games, deals ``WORLDS`` (default 20) hands of
greedy's posterior for each, and times solving every world (every turn of the bot's,
as the vote does) with :class:`~red7es.bots.exploit.Solver` and with a same-run baseline
(the two alternating which goes first, since the first fills the caches both use):
the plain search it replaced, greedy's reply from
:func:`~red7es.bots.greedy.whole_turn_codes` and every turn listed before it is tried.
Both must give the same votes (checked).  It also times greedy's reply alone at
every position the solver asked it about.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import strength

from red7es.bots import ismcts
from red7es.bots.exploit import (
    FOLD_TURN,
    GreedyReading,
    MaskTurn,
    Solver,
    greedy_reply,
    legal_turns,
    mask_turn,
    turn_after,
)
from red7es.bots.greedy import whole_turn_codes
from red7es.cards import mask_of
from red7es.observation import Observation, determinize
from red7es.rules import palette_keys

Case = tuple[int, int, int, int, list[int]]  # the bot's hand, its palette, greedy's, rule, greedy's hands


class PlainSolver:
    """The baseline: the search as it was before this bench (same answers, slower)."""

    def __init__(self) -> None:
        self.memo: dict[tuple[int, int, int, int, int], bool] = {}
        self.greedy: dict[tuple[int, int, int, int], MaskTurn] = {}

    def wins_after(self, turn: MaskTurn, hand: int, other: int, pal: int, opal: int, rule: int) -> bool:
        hand, pal, rule = turn_after(turn, hand, pal, rule)
        if not other:
            return True
        key = (other, opal, pal, rule)
        reply = self.greedy.get(key)
        if reply is None:
            reply = mask_turn(whole_turn_codes(other, opal, palette_keys(pal), rule, False)) or FOLD_TURN
            self.greedy[key] = reply
        if reply == FOLD_TURN:
            return True
        other, opal, rule = turn_after(reply, other, opal, rule)
        if not hand:
            return False
        return self.wins(hand, other, pal, opal, rule)

    def wins(self, hand: int, other: int, pal: int, opal: int, rule: int) -> bool:
        key = (hand, other, pal, opal, rule)
        known = self.memo.get(key)
        if known is None:
            known = any(self.wins_after(t, hand, other, pal, opal, rule) for t in legal_turns(hand, pal, opal, rule))
            self.memo[key] = known
        return known


def collect(decisions: int, worlds: int) -> list[Case]:
    """Early decisions (6 cards or more) of the bot against greedy, with worlds dealt."""
    cases: list[Case] = []
    original = ismcts.IsmctsBot._against_greedy

    def grab(self: ismcts.IsmctsBot, obs: Observation, rng: random.Random, *rest: object) -> object:
        if len(obs.hand) >= 6 and len(cases) < decisions:
            reading = GreedyReading(obs)
            world = determinize(obs, random.Random(0))
            dealer = random.Random(len(cases))
            hands = [h for h in (reading.hand(dealer) for _ in range(worlds)) if h is not None]
            me = obs.seat
            cases.append((mask_of(obs.hand), world.pal[me], world.pal[1 - me], world.rule, hands))
        return original(self, obs, rng, *rest)  # type: ignore[arg-type]

    ismcts.IsmctsBot._against_greedy = grab  # type: ignore[method-assign,assignment]
    try:
        match = next(m for m in strength.matches(2 * decisions, 0, 0) if m.key == "2p-greedy")
        for task in strength.tasks_for(match, "ismcts:iterations=8"):
            strength.play(task)
            if len(cases) >= decisions:
                break
    finally:
        ismcts.IsmctsBot._against_greedy = original  # type: ignore[method-assign]
    return cases


def solve_all(cases: list[Case], make: Callable[[], Solver | PlainSolver]) -> tuple[float, list[list[int]]]:
    """Seconds per world, and each decision's votes."""
    votes: list[list[int]] = []
    worlds = 0
    began = time.perf_counter()
    for hand, pal, opal, rule, hands in cases:
        solver = make()
        turns = legal_turns(hand, pal, opal, rule)
        counted = [0] * len(turns)
        for other in hands:
            for i, turn in enumerate(turns):
                counted[i] += solver.wins_after(turn, hand, other, pal, opal, rule)
            worlds += 1
        votes.append(counted)
    return (time.perf_counter() - began) / worlds, votes


def main() -> None:
    decisions = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    worlds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    cases = collect(decisions, worlds)
    asked: list[tuple[int, int, tuple[int, ...], int]] = []
    probe = Solver()
    original_reply = probe.reply

    def recording(other: int, opal: int, pal: int, rule: int) -> MaskTurn:
        asked.append((other, opal, palette_keys(pal), rule))
        return original_reply(other, opal, pal, rule)

    probe.reply = recording  # type: ignore[method-assign]
    solve_all(cases, lambda: probe)  # (one solver for all: each position's reply asked once)
    rows = []
    for run in range(4):
        # who goes first alternates: the first fills the caches both share (palette keys, hands)
        if run % 2:
            fast, fast_votes = solve_all(cases, Solver)
            plain, plain_votes = solve_all(cases, PlainSolver)
        else:
            plain, plain_votes = solve_all(cases, PlainSolver)
            fast, fast_votes = solve_all(cases, Solver)
        assert plain_votes == fast_votes, "the two solvers disagree"
        began = time.perf_counter()
        for other, opal, keys, rule in asked:
            whole_turn_codes(other, opal, keys, rule, False)
        reply_plain = (time.perf_counter() - began) / len(asked)
        began = time.perf_counter()
        for other, opal, keys, rule in asked:
            greedy_reply(other, opal, keys, rule)
        reply_fast = (time.perf_counter() - began) / len(asked)
        rows.append((plain, fast, reply_plain, reply_fast))
    n = sum(len(c[4]) for c in cases)
    print(f"{len(cases)} decisions with 6-7 cards, {n} worlds, every turn of the bot's in each; four runs,")
    print(f"the plain search first in runs 1 and 3; greedy's reply timed at the {len(asked):,} positions asked")
    print("| run | plain search ms/world | Solver ms/world | ratio | whole_turn_codes µs | greedy_reply µs | ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for run, (plain, fast, rp, rf) in enumerate(rows, 1):
        print(
            f"| {run} | {plain * 1e3:.2f} | {fast * 1e3:.2f} | {plain / fast:.2f}x "
            f"| {rp * 1e6:.1f} | {rf * 1e6:.1f} | {rp / rf:.2f}x |"
        )


if __name__ == "__main__":
    main()
