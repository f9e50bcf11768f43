"""How much does strategy fusion cost against greedy?  An exact count where it can be made.

The bot's vote over greedy's possible hands (``ismcts:model=1``) solves each hand with every
card in view, as if it would later know which one greedy holds; the information-set best
response (:mod:`red7es.bots.infoset`, ``model=2``) chooses one turn for the hands greedy's
replies leave indistinguishable.  Over *sampled* hands the two seldom differ, but samples
split into single hands after a reply or two, which hides fusion.  So this bench lists the
**whole** posterior where it is small enough: the ``model=1`` bot (``--iterations``) plays
the target's games (``strength-2p-greedy-{s}``, both seats) against greedy, and at each of its
decisions after greedy has played whose posterior has at most ``--cap`` candidate hands, every
hand consistent with greedy's turns (:class:`~red7es.bots.exploit.GreedyReading`) is listed,
and over all of them it counts the hands won by

* the vote's turn, when the bot then plays its best for the hands it cannot tell apart;
* the information-set best response (exact: no depth limit, no budget);
* the per-hand bound (greedy's hand known: the best any player could do).

Example::

    python bench/fusion.py --games 120 --cap 6000

Results are in ``bench/results/strength.md`` ("5 December").
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from red7es.bots.exploit import GreedyReading, Solver, legal_turns
from red7es.bots.greedy import choose_greedy
from red7es.bots.infoset import PartitionSearch
from red7es.bots.ismcts import IsmctsBot
from red7es.cards import mask_of
from red7es.game import Game
from red7es.observation import observe


def count(games: int, cap: int, iterations: int) -> dict[str, int]:
    """The totals over every listed position (see the module docstring)."""
    out = {"positions": 0, "hands": 0, "vote": 0, "best_response": 0, "bound": 0, "fused_positions": 0}
    for seed in range(games // 2):
        for seat in (0, 1):
            game = Game.new(2, seed=f"strength-2p-greedy-{seed}")
            bot = IsmctsBot(seed=seed, iterations=iterations, model=1)
            while game.outcome is None:
                if game.turn != seat:
                    game.apply(choose_greedy(game))
                    continue
                obs = observe(game, seat)
                hand, pal, opal, rule = game.hands[seat], game.pal[seat], game.pal[1 - seat], game.rule
                turns = legal_turns(hand, pal, opal, rule)
                if obs.history and len(turns) > 1:
                    reading = GreedyReading(obs)
                    if math.comb(len(reading.candidates), reading.size) <= cap:
                        listed = (mask_of(c) for c in itertools.combinations(reading.candidates, reading.size))
                        worlds = tuple(sorted((h, 1) for h in listed if reading.consistent(h)))
                        assert (game.hands[1 - seat], 1) in worlds  # the reading is exact
                        search = PartitionSearch(Solver())
                        vote = search.best(turns, hand, pal, opal, rule, worlds, max_depth=1)
                        best = search.best(turns, hand, pal, opal, rule, worlds)
                        assert best.exact
                        voted, _ = search._turn(vote.turn, hand, pal, opal, rule, worlds, len(worlds), False)
                        out["positions"] += 1
                        out["hands"] += len(worlds)
                        out["vote"] += voted
                        out["best_response"] += best.value
                        out["bound"] += vote.value
                        out["fused_positions"] += best.value > voted
                game.apply(bot.choose(obs))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=120, help="games, half with the bot in each seat (default 120)")
    ap.add_argument("--cap", type=int, default=6000, help="list posteriors of at most this many candidate hands")
    ap.add_argument("--iterations", type=int, default=200, help="the model=1 bot's budget (default 200)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    totals = count(args.games, args.cap, args.iterations)
    hands = totals["hands"] or 1
    print(f"`python bench/fusion.py --games {args.games} --cap {args.cap} --iterations {args.iterations}`")
    print(f"wall time {time.perf_counter() - start:.0f} s\n")
    print(f"{totals['positions']} positions, {totals['hands']:,} posterior hands listed")
    for key, label in (
        ("vote", "vote's turn"),
        ("best_response", "information-set best response"),
        ("bound", "hand known"),
    ):
        print(f"- {label}: {totals[key]:,} hands won ({100 * totals[key] / hands:.2f}%)")
    print(f"- positions where fusion changed the value: {totals['fused_positions']}")


if __name__ == "__main__":
    main()
