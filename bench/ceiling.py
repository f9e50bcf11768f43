"""How far does the ``ismcts`` search get against ``greedy`` when told more than it may know?

Issue #7 asks the ``ismcts`` bot for 70% against greedy in 2-player basic.  This script
measures how far the search can get when it is given, step by step, more than an
honest bot may have, on the same seeds as ``bench/strength.py`` (``strength-2p-greedy-N``,
each seed once with the bot in each seat):

``honest``
    the shipped bot (``ismcts:iterations=N``, its default hand reading).
``posterior``
    the same tree, but the worlds are dealt from the **exact posterior** of the
    opponent's hand *given that the opponent is greedy*: a world is kept only if
    greedy, holding that hand, would have chosen every turn it chose this round
    (rejection sampling from the reading's candidates).  No bot can read a greedy
    hand better.
``exploit``
    the exact posterior, and the opponent played as **exactly greedy** in the tree
    and in the playouts.  The search is then a single-agent problem over what the
    bot sees, so with enough iterations it tends to the best possible reply to
    greedy by a player who cannot see the cards (a tendency, not a bound: at the
    iterations measured it is a score).  (A bot built this way would only be good
    against greedy.)
``sighted``
    a cheat, for reference: every iteration is played in the true deal.  Not a
    ceiling: it models greedy as a maximiser; the exact bound is computed by
    ``bench/best_response.py``.

Examples::

    python bench/ceiling.py --mode exploit --iterations 2000 --games 400
    python bench/ceiling.py --mode honest --iterations 400 --games 400

Results are in ``bench/results/strength.md`` ("What searches told more ... reach").
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strength import wilson  # bench/ is the script's own folder

from red7es.bots.base import Bot, make_bot, observation_for
from red7es.bots.greedy import choose_greedy
from red7es.bots.inference import _position
from red7es.bots.ismcts import (
    DEFAULT_C,
    EPSILON,
    Action,
    _Node,
    _Search,
    _turn,
    decision_seed,
    heuristic_turn,
    playout_turn,
    round_rewards,
)
from red7es.cards import color_mask_of
from red7es.game import Game
from red7es.observation import Observation
from red7es.steps import FOLD, StepKind, Turn
from red7es.variant import Variant

MODES = ("honest", "posterior", "exploit", "sighted")
MAX_TRIES = 5000  # rejection sampling: deals tried per world before taking an inconsistent one
FROM_HAND = (StepKind.PLAY, StepKind.CANVAS)  # the steps that take a card from the hand


def _codes(turn: Turn) -> Action:
    return tuple(int(step) for step in turn.steps), turn.open


@dataclass(frozen=True)
class _Check:
    """One past turn of an opponent: the public position, and the cards played since."""

    seat: int
    played_since: int  # cards the seat played in this turn and later ones (a mask)
    position: Game
    codes: tuple[int, ...]  # the turn it chose


class _Posterior(_Search):
    """Worlds dealt from the exact posterior against a greedy opponent (rejection sampling).

    The proposal is the shipped reading with ``belief=1``, which never rules out a card
    greedy may hold; keeping only the deals consistent with every turn it chose makes
    the worlds a sample of the exact posterior.
    """

    def __init__(self, obs: Observation, rng: random.Random) -> None:
        super().__init__(obs, rng, DEFAULT_C, belief=1.0)
        self.inconsistent = 0  # worlds for which MAX_TRIES deals found no consistent hand
        self.checks: list[_Check] = []
        for i, past in enumerate(obs.history):
            if past.seat == obs.seat:
                continue
            played = 0
            for later in obs.history[i:]:
                if later.seat == past.seat:
                    for step in later.steps:
                        if step.kind in FROM_HAND:
                            played |= 1 << (int(step) & 63)
            position = _position(obs, past)
            position.palc = [color_mask_of(m) for m in position.pal]
            self.checks.append(_Check(past.seat, played, position, tuple(int(s) for s in past.steps)))

    def _consistent(self, game: Game) -> bool:
        for check in self.checks:
            check.position.hands[check.seat] = game.hands[check.seat] | check.played_since
            if _codes(choose_greedy(check.position))[0] != check.codes:
                return False
        return True

    def _world(self) -> Game:
        for _ in range(MAX_TRIES):
            game = self.dealer.deal(self.rng)
            if self._consistent(game):
                break
        else:
            self.inconsistent += 1
        game.variant = self.sim_variant
        return game


class _Exploit(_Posterior):
    """The exact posterior, with the opponent played as exactly greedy everywhere.

    The bot's own playout turns are as in ``ismcts`` without actions (the 2-player basic
    game this script measures): the heuristic turn, or a random one with ``EPSILON``.
    """

    def iterate(self) -> None:
        game = self._world()
        me = self.obs.seat
        path, node = [self.root], self.root
        while game.outcome is None:
            if game.turn == me:
                options = self.root_actions if node is self.root else self._options(game)
                action, node = self._select(node, options, game)
            else:
                action = _codes(choose_greedy(game))
                node = node.children.setdefault(action, _Node(game.turn))
            game.play_turn(*action)
            path.append(node)
            if not node.visits:
                break
        while game.outcome is None:  # the bot as in ismcts' playouts, the opponent as greedy
            if game.turn != me:
                game.play_turn(*_codes(choose_greedy(game)))
            elif self.rng.random() >= EPSILON:
                game.play_turn(heuristic_turn(game), False)
            elif not playout_turn(game, self.rng):
                game.play_turn((FOLD,))
        rewards = round_rewards(game, self.obs.variant)
        for n in path[1:]:
            n.visits += 1
            n.reward += rewards[n.seat]


class _Sighted(_Search):
    """Every iteration in the true deal (a cheat: a reference, not a bot)."""

    def __init__(self, obs: Observation, rng: random.Random, truth: Game) -> None:
        super().__init__(obs, rng, DEFAULT_C, belief=0.0)
        self.truth = truth.copy(record=False)
        self.truth.variant = self.sim_variant

    def _world(self) -> Game:
        return self.truth.copy(record=False)


class CeilingBot:
    """A bot for one mode; ``truth`` is the live game (read only by ``sighted``)."""

    name = "ceiling"
    reads_history = True

    def __init__(self, mode: str, seed: int, iterations: int, truth: Game) -> None:
        if mode not in ("posterior", "exploit", "sighted"):
            raise ValueError(f"no ceiling bot for mode {mode!r}")
        self.mode, self.seed, self.iterations, self.truth = mode, seed, iterations, truth
        self.inconsistent = 0  # worlds dealt without a consistent hand, over all decisions

    def choose(self, obs: Observation) -> Turn:
        rng = random.Random(decision_seed(self.seed, obs))
        search: _Search
        if self.mode == "sighted":
            search = _Sighted(obs, rng, self.truth)
        else:
            search = _Exploit(obs, rng) if self.mode == "exploit" else _Posterior(obs, rng)
        if len(search.root_actions) == 1:
            return _turn(search.root_actions[0])
        for _ in range(self.iterations):
            search.iterate()
        if isinstance(search, _Posterior):
            self.inconsistent += search.inconsistent
        return _turn(search.best())


def play(task: tuple[str, int, int, int | str]) -> tuple[float, int]:
    """One game: (the bot's score, worlds the posterior could not find).

    ``honest`` with a bot spec in place of the iterations plays that spec.
    """
    mode, seed, seat, budget = task
    iterations = budget if isinstance(budget, int) else 0
    game = Game.new(Variant(2), seed=f"strength-2p-greedy-{seed}", record=True)
    bots: list[Bot] = [make_bot("greedy", seed=1000 * seed + s) for s in range(2)]
    ceiling = None if mode == "honest" else CeilingBot(mode, seed, iterations, game)
    bots[seat] = ceiling or make_bot(budget if isinstance(budget, str) else f"ismcts:iterations={budget}", seed=seed)
    while game.outcome is None:
        bot = bots[game.turn]
        game.apply(bot.choose(observation_for(bot, game, game.turn)))
    score = 1.0 / len(game.outcome.winners) if seat in game.outcome.winners else 0.0
    return score, ceiling.inconsistent if ceiling else 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=MODES, required=True)
    ap.add_argument("--iterations", type=int, default=400, help="iterations per decision (default 400)")
    ap.add_argument("--games", type=int, default=400, help="games, half with the bot in each seat (default 400)")
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    args = ap.parse_args(argv)
    if args.games < 2 or args.games % 2:
        ap.error("--games must be even: every seed is played with the bot in each seat")
    tasks = [(args.mode, s, seat, args.iterations) for s in range(args.games // 2) for seat in (0, 1)]
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(args.workers) as pool:
        results = pool.map(play, tasks, chunksize=2)
    wins = sum(score for score, _ in results)
    rejected = sum(r for _, r in results)
    lo, hi = wilson(wins, len(results))
    print("| mode | iterations | games | wins | win rate | 95% CI (Wilson) | wall s |")
    print("|---|---:|---:|---:|---:|---|---:|")
    print(
        f"| {args.mode} | {args.iterations} | {len(results)} | {wins:g} | {wins / len(results):.1%} "
        f"| {lo:.1%} – {hi:.1%} | {time.perf_counter() - start:.0f} |"
    )
    if rejected:
        print(f"({rejected} worlds were dealt without a consistent hand after {MAX_TRIES} tries)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
