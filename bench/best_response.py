"""The exact ceiling against ``greedy``: a perfect-information best response, solved.

In 2-player basic (one round) nobody draws, and ``greedy`` is deterministic (the turn
its evaluation ranks highest, ties to the engine's first turn: ``choose_greedy``).
So a player who sees every card faces a one-player problem: depth-first search over
its own legal turns, with greedy's reply computed, not branched, memoised on the
position.  The deal is won by the best response if any line of its own turns wins.
No player, honest or not, can beat greedy in more of these games: this is the
ceiling for ``bench/strength.py``'s 2-player target, a computed bound.

It plays the target's games exactly: seeds ``strength-2p-greedy-0`` ... , each with
the solver in both seats (as ``bench/strength.py`` and ``bench/ceiling.py`` deal
them), and every game the solver counts as won is replayed through the bench's own
path (a recorded ``Game``, ``make_bot("greedy")`` deciding from its observation,
``Game.apply``) to check that greedy really plays as computed.

With ``--minimax`` it also solves each deal under perfect play by both seats
(a two-player search), to sort the games into: won under perfect play; lost under
perfect play but won by the best response because greedy blunders; lost whatever
one does.  With ``--honest N`` it also plays the shipped bot (``ismcts:iterations=N``,
as ``bench/ceiling.py --mode honest``) in each game, and counts what it converts of
each kind; ``--honest-spec SPEC`` plays that bot spec instead (``ismcts:time=0.05``).
Examples::

    python bench/best_response.py --games 400 --minimax
    python bench/best_response.py --games 400 --minimax --honest 400
    python bench/best_response.py --games 400 --minimax --honest-spec ismcts:time=0.05

Results are in ``bench/results/strength.md`` ("The exact ceiling").
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ceiling  # bench/ is the script's own folder
from strength import wilson

from red7es.bots.base import Bot, make_bot, observation_for
from red7es.bots.greedy import choose_greedy
from red7es.facts import TurnTakenBack
from red7es.game import Game
from red7es.steps import STEPS, Turn
from red7es.variant import Variant

Key = tuple[int, int, int, int, int, int]
Codes = tuple[tuple[int, ...], bool]


def _key(game: Game) -> Key:
    """Everything a 2-player basic position's future depends on (the Canvas only by its rule)."""
    return (game.hands[0], game.hands[1], game.pal[0], game.pal[1], game.rule, game.turn)


def _after(game: Game, codes: Codes) -> Game:
    child = game.copy(record=False)
    child.play_turn(*codes)
    return child


def greedy_codes(game: Game) -> Codes:
    """Greedy's turn in ``game`` as engine codes (its choice is a function of the position)."""
    turn = choose_greedy(game)
    return tuple(int(s) for s in turn.steps), turn.open


class Solver:
    """Exact solutions of one 2-player basic round, memoised on the position.

    ``best_response``: does ``me`` win against greedy from here, playing perfectly with
    every card in view?  ``minimax``: which seat wins under perfect play by both?
    """

    def __init__(self, me: int) -> None:
        self.me = me
        self._br: dict[Key, bool] = {}
        self._mm: dict[Key, int] = {}

    def best_response(self, game: Game) -> bool:
        if game.outcome is not None:
            return self.me in game.outcome.winners
        key = _key(game)
        value = self._br.get(key)
        if value is None:
            if game.turn == self.me:
                value = self.winning_turn(game) is not None
            else:
                value = self.best_response(_after(game, greedy_codes(game)))
            self._br[key] = value
        return value

    def winning_turn(self, game: Game) -> Codes | None:
        """A turn of ``me`` (to move) that wins against greedy, the engine's first one; else None."""
        for codes in game.legal_turn_codes():
            if self.best_response(_after(game, codes)):
                return codes
        return None

    def minimax(self, game: Game) -> int:
        """The seat that wins the round from ``game`` under perfect play by both seats."""
        if game.outcome is not None:
            return game.outcome.winners[0]
        key = _key(game)
        winner = self._mm.get(key)
        if winner is None:
            mover = game.turn
            winner = 1 - mover  # no turn wins: folding or any other, the mover loses
            for codes in game.legal_turn_codes():
                if self.minimax(_after(game, codes)) == mover:
                    winner = mover
                    break
            self._mm[key] = winner
        return winner


@dataclass(frozen=True)
class Result:
    seed: int
    seat: int
    best_response: bool  # the solver wins this game against greedy (and the replay agrees)
    minimax: bool | None  # the solver's seat wins the deal under perfect play (None: not solved)
    positions: int  # positions the best-response search memoised
    honest: float | None  # the shipped bot's score in this game (None: not played)


def new_game(seed: int) -> Game:
    """The target's deal for ``seed``, as bench/strength.py makes it (recorded)."""
    return Game.new(Variant(2), seed=f"strength-2p-greedy-{seed}", record=True)


def replay(seed: int, seat: int, solver: Solver) -> bool:
    """Play the game through the bench's path, the solver's turns against ``make_bot('greedy')``."""
    game = new_game(seed)
    greedy: Bot = make_bot("greedy", seed=1000 * seed + 1 - seat)  # strength.py's opponent seed
    while game.outcome is None:
        if game.turn == seat:
            codes = solver.winning_turn(game) or game.legal_turn_codes()[0]
            game.apply(Turn(tuple(STEPS[c] for c in codes[0]), codes[1]))
        else:
            game.apply(greedy.choose(observation_for(greedy, game, game.turn)))
    # batch rules 4 (a fold takes back its turn) never applies here: every turn is whole,
    # so a fold is a turn of its own, with nothing to take back
    assert game.log is not None and not any(isinstance(f, TurnTakenBack) for f in game.log)
    return seat in game.outcome.winners


def solve(task: tuple[int, int, bool, int | str]) -> Result:
    """Solve one game; ``honest`` (iterations > 0, or a bot spec) also plays the shipped bot."""
    seed, seat, with_minimax, honest = task
    solver = Solver(seat)
    wins = solver.best_response(new_game(seed))
    if wins != replay(seed, seat, solver):
        raise AssertionError(f"seed {seed} seat {seat}: greedy did not play as computed")
    minimax = solver.minimax(new_game(seed)) == seat if with_minimax else None
    score = ceiling.play(("honest", seed, seat, honest))[0] if honest else None
    return Result(seed, seat, wins, minimax, len(solver._br), score)


def report(results: Sequence[Result], seconds: float, command: str) -> str:
    n = len(results)
    wins = sum(r.best_response for r in results)
    lo, hi = wilson(wins, n)
    lines = [
        f"`{command}`: wall time {seconds:.0f} s",
        "",
        "| player against greedy | games | wins | win rate | 95% CI (Wilson) |",
        "|---|---:|---:|---:|---|",
        f"| exact best response (every card seen) | {n} | {wins} | {wins / n:.1%} | {lo:.1%} – {hi:.1%} |",
    ]
    lost = sum(not r.best_response for r in results)
    if all(r.minimax is not None for r in results):
        won = sum(bool(r.minimax) for r in results)
        blunders = sum(r.best_response and not r.minimax for r in results)
        lines += [
            "",
            f"won under perfect play: {won}; lost under perfect play but won by the best response "
            f"(greedy blunders): {blunders}; lost whatever one does: {lost}",
        ]
        if any(r.minimax and not r.best_response for r in results):
            lines.append("inconsistent: a game won under perfect play but lost by the best response")
    else:
        lines += ["", f"lost whatever one does: {lost}"]
    if all(r.honest is not None for r in results):
        lines += ["", _converted(results)]
    return "\n".join(lines)


def _converted(results: Sequence[Result]) -> str:
    """What the shipped bot won of each kind of game (as many kinds as were solved)."""
    kinds: dict[str, list[Result]] = {"all": list(results)}
    if all(r.minimax is not None for r in results):
        kinds["won under perfect play"] = [r for r in results if r.minimax]
        kinds["greedy blunders"] = [r for r in results if r.best_response and not r.minimax]
    kinds["lost whatever one does"] = [r for r in results if not r.best_response]
    parts = [f"{k}: {sum(r.honest or 0.0 for r in rs):g} of {len(rs)}" for k, rs in kinds.items()]
    return "the shipped bot won " + "; ".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=400, help="games, half with the solver in each seat (default 400)")
    ap.add_argument("--minimax", action="store_true", help="also solve each deal under perfect play by both")
    ap.add_argument("--honest", type=int, default=0, help="also play ismcts at N iterations a move (default: not)")
    ap.add_argument("--honest-spec", default="", help="also play this bot spec (instead of --honest)")
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    args = ap.parse_args(argv)
    if args.games < 2 or args.games % 2:
        ap.error("--games must be even: every seed is played with the solver in each seat")
    honest: int | str = args.honest_spec or args.honest
    tasks = [(s, seat, args.minimax, honest) for s in range(args.games // 2) for seat in (0, 1)]
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        results = pool.map(solve, tasks, chunksize=4)
    command = " ".join(["python", "bench/best_response.py", *(sys.argv[1:] if argv is None else argv)])
    print(report(results, time.perf_counter() - start, command))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
