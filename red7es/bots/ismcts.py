"""The ``ismcts`` bot: information-set Monte Carlo tree search from one observation.

Single-observer ISMCTS (Cowling, Powley & Whitehouse, 2012).  The bot cannot see the
other hands or the deck order, so every iteration

1. *determinizes* its observation (:func:`~red7es.observation.determinize`): the
   unseen cards are dealt at random, so each iteration plays in a different world
   that agrees with everything the bot may know;
2. descends one shared tree whose edges are whole turns (step codes), for the bot
   and for its opponents alike.  Only the children legal in this world are
   candidates, and each is scored by UCB1 over its *availability* count (how often
   it was legal when its parent was visited) rather than the parent's visit count,
   so rarely-possible turns are not over-explored;
3. expands one untried turn and finishes the **round** with a fast playout;
4. backs up a reward in [0, 1] per seat; every node accumulates the reward of the
   seat that made the turn leading to it, so each seat maximises its own result
   (n players, no zero-sum assumption).

Searching only to the end of the round keeps playouts short.  The reward is the
round's result: winning it in the basic game; in the ``scoring`` variant the points
scored relative to the opponents (so folding early to stop an opponent's palette
growing can pay), or the match result when the round ends the match.

Open turns (a 3 that draws an unseen card, ``actions`` variant) are ordinary edges:
the determinization decides which card is drawn, and the child is a new decision
node of the same player whose legal continuations differ from world to world, which
availability counts already handle.

The decision depends only on the observation, the seed and the budget: the random
generator of each decision is seeded from a hash of both, so the same position gives
the same turn whatever happened before, and a restarted bot replays identically.
"""

from __future__ import annotations

import hashlib
import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..cards import color_bit
from ..game import Game
from ..observation import Observation, determinize
from ..rules import all_keys, qualifying_mask
from ..steps import DRAW, END, FOLD, STEPS, Turn
from ..variant import Variant
from .greedy import score_turn

W = 1.0
FPU = 1.0


__all__ = ["DEFAULT_C", "DEFAULT_ITERATIONS", "IsmctsBot", "SearchStats", "playout_turn", "round_rewards"]

DEFAULT_ITERATIONS = 400
DEFAULT_C = 0.7

Action = tuple[tuple[int, ...], bool]  # (step codes without the implied end, open)


@dataclass(frozen=True)
class SearchStats:
    """What the last decision cost: for benchmarks and reports."""

    iterations: int
    seconds: float
    tree_nodes: int

    @property
    def playouts_per_second(self) -> float:
        return self.iterations / self.seconds if self.seconds > 0 else 0.0


class _Node:
    """One edge of the tree (the turn that led here) and the statistics of its subtree.

    ``seat`` is who made that turn: ``reward`` sums that seat's rewards, which is what
    UCB1 maximises when that seat chooses among its parent's children.
    """

    __slots__ = ("avail", "children", "h", "reward", "seat", "visits")

    def __init__(self, seat: int, h: float = 0.0) -> None:
        self.seat = seat
        self.h = h
        self.visits = 0
        self.avail = 0
        self.reward = 0.0
        self.children: dict[Action, _Node] = {}


class IsmctsBot:
    """SO-ISMCTS over whole turns with round-length playouts (see module docstring).

    ``iterations`` caps the number of iterations per decision (deterministic);
    ``time_limit`` caps the seconds per decision (depends on machine load).  With
    neither, :data:`DEFAULT_ITERATIONS` is used; with both, whichever ends first.
    """

    name = "ismcts"

    def __init__(
        self,
        seed: int = 0,
        iterations: int | None = None,
        time_limit: float | None = None,
        c: float = DEFAULT_C,
    ) -> None:
        if iterations is not None and iterations < 1:
            raise ValueError(f"iterations must be at least 1, not {iterations}")
        if time_limit is not None and time_limit <= 0:
            raise ValueError(f"time must be a positive number of seconds, not {time_limit}")
        if c < 0:
            raise ValueError(f"exploration constant c must not be negative, not {c}")
        self.seed = seed
        self.iterations = iterations if iterations is not None or time_limit is not None else DEFAULT_ITERATIONS
        self.time_limit = time_limit
        self.c = c
        self.last_stats: SearchStats | None = None

    @classmethod
    def from_options(
        cls,
        seed: int = 0,
        iterations: int | str | None = None,
        time: float | str | None = None,
        c: float | str | None = None,
    ) -> IsmctsBot:
        """Build from ``make_bot`` options, whose values arrive as strings."""
        return cls(
            seed=int(seed),
            iterations=None if iterations is None else int(iterations),
            time_limit=None if time is None else float(time),
            c=DEFAULT_C if c is None else float(c),
        )

    def choose(self, obs: Observation) -> Turn:
        if not obs.my_turn:
            raise ValueError("it is not this bot's turn")
        rng = random.Random(decision_seed(self.seed, obs))
        search = _Search(obs, rng, self.c)
        candidates = search.root_actions
        if len(candidates) == 1:
            self.last_stats = SearchStats(0, 0.0, 1)
            return _turn(candidates[0])
        start = time.perf_counter()
        deadline = None if self.time_limit is None else start + self.time_limit
        done = 0
        while self.iterations is None or done < self.iterations:
            search.iterate()
            done += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.last_stats = SearchStats(done, time.perf_counter() - start, search.size())
        return _turn(search.best())


def decision_seed(seed: int, obs: Observation) -> int:
    """A seed for one decision from the bot's seed and what it sees, nothing else.

    ``repr`` of the frozen observation is stable across processes (unlike ``hash``),
    so the same position always gets the same random stream.
    """
    digest = hashlib.sha256(f"{seed}|{obs!r}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _turn(action: Action) -> Turn:
    codes, is_open = action
    return Turn(tuple(STEPS[c] for c in codes), is_open)


class _Search:
    """One decision's tree and the worlds it is searched in."""

    def __init__(self, obs: Observation, rng: random.Random, c: float) -> None:
        self.obs = obs
        self.rng = rng
        self.c = c
        self.root = _Node(obs.seat)
        # Simulations stop when the round is won: a basic one-round variant with the
        # same rules makes the engine end the game there instead of dealing again.
        self.sim_variant = replace(obs.variant, scoring=False, rounds=1, target=None)
        self.keep_folds = obs.variant.scoring
        self.root_actions = self._options(determinize(obs, random.Random(0)))

    def size(self) -> int:
        count, stack = 0, [self.root]
        while stack:
            node = stack.pop()
            count += 1
            stack.extend(node.children.values())
        return count

    def _world(self) -> Game:
        game = determinize(self.obs, self.rng)
        game.variant = self.sim_variant
        return game

    def _options(self, game: Game) -> list[Action]:
        """The turns worth searching: all legal turns, minus ``fold`` where it cannot pay.

        Without scoring, folding loses the round for sure (reward 0, the minimum), so
        it is weakly dominated by every other turn and only kept when it is the only one.
        """
        turns = game.legal_turn_codes()
        if not self.keep_folds and len(turns) > 1:
            turns.pop()  # fold is always last
        return turns

    def iterate(self) -> None:
        """One determinize-select-expand-playout-backpropagate cycle."""
        game = self._world()
        path = [self.root]
        node = self.root
        while game.outcome is None:
            options = self._options(game)
            action, node = self._select(node, options, game)
            game.play_turn(*action)
            path.append(node)
            if not node.visits:
                break  # a new node: expanded, now play out
        playout(game, self.rng)
        rewards = round_rewards(game, self.obs.variant)
        for n in path[1:]:
            n.visits += 1
            n.reward += rewards[n.seat]

    def _select(self, node: _Node, options: Sequence[Action], game: Game) -> tuple[Action, _Node]:
        """UCB1 with availability counts plus a progressive heuristic bias.

        Every turn legal in this world is a candidate; one never tried is scored
        ``FPU`` (first-play urgency) instead of its mean.  The bias ``W * h / (n + 1)``
        (``h`` the greedy evaluation, scaled to [0, 1] among this world's options)
        makes few-visit nodes, above all the opponents' wide nodes, play like a
        sensible player, and fades as real statistics accumulate.
        """
        children = node.children
        seat = game.turn
        raws = []
        for a in options:
            child = children.get(a)
            if child is None:
                child = children[a] = _Node(seat, _heuristic(game, a[0]))
            raws.append(child.h)
        lo, hi = min(raws), max(raws)
        scale = W / (hi - lo) if hi > lo else 0.0
        c, fpu = self.c, FPU
        log, sqrt = math.log, math.sqrt
        best_value = -1e9
        best: tuple[Action, _Node] | None = None
        for a, raw in zip(options, raws):
            child = children[a]
            child.avail += 1
            n = child.visits
            bias = (raw - lo) * scale
            if n:
                value = child.reward / n + c * sqrt(log(child.avail) / n) + bias / (n + 1)
            else:
                value = fpu + bias
            if value > best_value:
                best_value, best = value, (a, child)
        assert best is not None
        return best

    def best(self) -> Action:
        """The most visited root turn (the robust choice); mean reward, then the heuristic, break ties."""
        children = self.root.children

        def rank(action: Action) -> tuple[int, float, float]:
            child = children.get(action)
            if child is None or not child.visits:
                return (0, 0.0, child.h if child else 0.0)
            return (child.visits, child.reward / child.visits, child.h)

        return max(self.root_actions, key=rank)


def _heuristic(game: Game, codes: tuple[int, ...]) -> float:
    """The greedy evaluation of a turn (public information only); fold is the worst."""
    if codes[-1] == FOLD:
        return -100.0
    return score_turn(game, codes)


# ---------------------------------------------------------------------- playouts

END_BIAS = 0.9  # chance to end a turn as soon as it may end: spend few cards, like real players


EPSILON = 0.1


def playout(game: Game, rng: random.Random) -> None:
    """Finish the round in ``game`` with :func:`playout_turn` for every seat."""
    simple = not game.variant.actions
    while game.outcome is None:
        if simple and not game.turn_steps and rng.random() >= EPSILON:
            game.play_turn(heuristic_turn(game), False)
        elif not playout_turn(game, rng):
            game.play_turn((FOLD,))


def heuristic_turn(game: Game) -> tuple[int, ...]:
    """The greedy bot's choice, computed fast from the masks (no actions in play)."""
    seat = game.turn
    pal, palc, alive = game.pal, game.palc, game.alive
    best = [0, 0, 0, 0, 0, 0, 0]
    for s in range(len(pal)):
        if s != seat and alive[s]:
            ks = all_keys(pal[s], palc[s])
            best = [a if a > b else b for a, b in zip(best, ks)]
    nm, cm, rule = pal[seat], palc[seat], game.rule
    cards = _bits(game.hands[seat])
    cur = all_keys(nm, cm)
    dom_cur = sum(1 for r in range(7) if cur[r] > best[r])
    top_value = -1e9
    top: tuple[int, ...] = (FOLD,)
    played = []
    for x in cards:
        keys = all_keys(nm | 1 << x, cm | color_bit(x))
        played.append((x, keys))
        if keys[rule] > best[rule]:
            dom = sum(1 for r in range(7) if keys[r] > best[r])
            value = 3.0 * dom + 0.5 * min((keys[rule] >> 6) - (best[rule] >> 6), 3) + x / 49
            if value > top_value:
                top_value, top = value, (x,)
    for y in cards:
        r = 6 - y % 7
        if cur[r] > best[r]:
            value = 3.0 * dom_cur + 0.5 * min((cur[r] >> 6) - (best[r] >> 6), 3) - y / 49
            if value > top_value:
                top_value, top = value, (64 + y,)
    if top_value > -1e9:
        return _with_draw(game, top, nm)
    for x, keys in played:
        dom = sum(1 for r in range(7) if keys[r] > best[r])
        for y in cards:
            r = 6 - y % 7
            if y != x and keys[r] > best[r]:
                value = 3.0 * dom + 0.5 * min((keys[r] >> 6) - (best[r] >> 6), 3) + (x - y) / 49
                if value > top_value:
                    top_value, top = value, (x, 64 + y)
    if top_value > -1e9:
        return _with_draw(game, top, nm | 1 << top[0])
    return top


def _with_draw(game: Game, codes: tuple[int, ...], palette: int) -> tuple[int, ...]:
    """Add the Advanced draw when the turn's discard allows it: a card more is never worse."""
    last = codes[-1]
    if game.variant.draw and game.deck and 64 <= last < 128 and (last - 64) // 7 + 1 > palette.bit_count():
        return (*codes, DRAW)
    return codes


def playout_turn(game: Game, rng: random.Random) -> bool:
    """Play one random legal turn (never ``fold``) step by step; False if none exists.

    Enumerating every legal turn (``legal_turn_codes``) costs a search over all step
    sequences, which with actions is ~65 snapshots per turn; a playout only needs
    *one* turn, so this walks the steps in random order and backtracks only from a
    dead end.  Its biases are cheap and realistic: the Advanced draw is always taken,
    and a turn ends as soon as it may (with probability :data:`END_BIAS`), since
    every extra card spent is one fewer for later turns.  When it returns False the
    game is exactly as before.
    """
    codes = game._legal_step_codes()
    if DRAW in codes:
        game._step(DRAW, False)
        codes = game._legal_step_codes()
    can_end = END in codes
    if can_end and rng.random() < END_BIAS:
        game._step(END, False)
        return True
    moves = [c for c in codes if c < END]  # plays, discards and actions (no draw left)
    count = len(moves)
    if count:
        first = int(rng.random() * count)
        for i in range(count):
            snap = game._save()
            game._step(moves[(first + i) % count], False)
            if playout_turn(game, rng):
                return True
            game._restore(snap)
    if can_end:
        game._step(END, False)
        return True
    return False


# ---------------------------------------------------------------------- rewards


def round_rewards(game: Game, variant: Variant) -> list[float]:
    """Reward in [0, 1] per seat for a simulated round that has just been won.

    ``game`` ran under a one-round basic variant, so its outcome names the round
    winner and the winner's palette and the rule are still on the table.  Basic:
    1 for the winner.  Scoring: if this round ends the match, the match result;
    otherwise 0.5 plus half the seat's points this round minus the mean of the
    others', over the target score.  Winning a round is always worth more than
    losing it, but losing a cheap round beats fighting on and losing a dear one.
    """
    assert game.outcome is not None
    n = variant.players
    winner = game.outcome.winners[0]
    if not variant.scoring:
        out = [0.0] * n
        out[winner] = 1.0
        return out
    taken = qualifying_mask(game.rule, game.pal[winner])
    points = sum(card // 7 + 1 for card in _bits(taken))
    totals = [game.score(s) for s in range(n)]
    totals[winner] += points
    removed = (game.removed | taken).bit_count()
    if max(totals) >= variant.target_score or 49 - removed < 8 * n:
        return _match_rewards(totals, game.round_wins)
    norm = 2.0 * variant.target_score
    loss = points / ((n - 1) * norm)
    out = [0.5 - loss] * n
    out[winner] = 0.5 + points / norm
    return out


def _match_rewards(totals: Sequence[int], round_wins: Sequence[int]) -> list[float]:
    """1 for the match winner (shared equally on a tie), 0 for the others."""
    best = max(totals)
    tied = [s for s, t in enumerate(totals) if t == best]
    most = max(round_wins[s] for s in tied)
    winners = [s for s in tied if round_wins[s] == most]
    out = [0.0] * len(totals)
    for s in winners:
        out[s] = 1.0 / len(winners)
    return out


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
