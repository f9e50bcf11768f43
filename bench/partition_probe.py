"""What the search over greedy's possible hands (``ismcts`` ``model=2``) finds at each
decision, by the bot's hand size: how many worlds it searched, how deep, whether exactly,
and the share of those worlds its turn wins beside the vote's best (issue #21).

    python bench/partition_probe.py [GAMES] [SPEC]

Plays ``GAMES`` (default 80) games of 2-player basic against greedy, each seed in both
seats, as bench/strength.py does, with ``SPEC`` (default ``ismcts:iterations=400``,
reproducible), and prints one row per hand size.  The values are shares of the *sampled*
worlds: a search exact over them is the best response to those worlds, not to greedy.
"""

from __future__ import annotations

import collections
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import strength

from red7es.bots import infoset


class Decision(NamedTuple):
    cards: int  # in the bot's hand
    worlds: int  # distinct hands of greedy searched
    weight: int  # the worlds' total weight
    vote: int  # the weight the vote's best turn wins (depth 1: every world solved alone)
    tied: int  # turns that win that much
    turns: int
    depth: int  # of the answer
    exact: bool
    value: int  # the weight the answer's turn wins


RECORDED: list[Decision] = []
_ORIGINAL = infoset.PartitionSearch.best


def _recording_best(
    self: infoset.PartitionSearch,
    turns: Sequence[Any],
    hand: int,
    pal: int,
    opal: int,
    rule: int,
    worlds: infoset.Worlds,
    max_depth: int = 64,
) -> Any:
    """PartitionSearch.best, recording the vote's bounds beside the answer."""
    bounds = [self._bound(t, hand, pal, opal, rule, worlds) for t in turns]
    answer = _ORIGINAL(self, turns, hand, pal, opal, rule, worlds, max_depth)
    top = max(bounds)
    RECORDED.append(
        Decision(
            bin(hand).count("1"),
            len(worlds),
            sum(w for _h, w in worlds),
            top,
            sum(b == top for b in bounds),
            len(turns),
            answer.depth,
            answer.exact,
            answer.value,
        )
    )
    return answer


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def probe(games: int, spec: str) -> tuple[float, list[Decision]]:
    """Play the games; the bot's score and every decision its search over worlds made."""
    RECORDED.clear()
    infoset.PartitionSearch.best = _recording_best  # type: ignore[method-assign]
    try:
        match = next(x for x in strength.matches(games, 0, 0) if x.key == "2p-greedy")
        wins = sum(strength.play(task).score for task in strength.tasks_for(match, spec))
    finally:
        infoset.PartitionSearch.best = _ORIGINAL  # type: ignore[method-assign]
    return wins, list(RECORDED)


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    spec = sys.argv[2] if len(sys.argv) > 2 else "ismcts:iterations=400"
    wins, decisions = probe(games, spec)
    print(f"{spec}: won {wins:g} of {games}")
    by_cards: dict[int, list[Decision]] = collections.defaultdict(list)
    for decision in decisions:
        by_cards[decision.cards].append(decision)
    print("| cards | decisions | worlds | vote's best | tied there | of turns | depth | exact | answer |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for cards in sorted(by_cards, reverse=True):
        rows = by_cards[cards]
        print(
            f"| {cards} | {len(rows)} | {_mean([r.worlds for r in rows]):.0f} "
            f"| {_mean([r.vote / r.weight for r in rows]):.2f} | {_mean([r.tied for r in rows]):.1f} "
            f"| {_mean([r.turns for r in rows]):.1f} | {_mean([r.depth for r in rows]):.1f} "
            f"| {_mean([float(r.exact) for r in rows]):.2f} | {_mean([r.value / r.weight for r in rows]):.2f} |"
        )


if __name__ == "__main__":
    main()
