"""The ``ismcts`` bot: information-set Monte Carlo tree search from one observation.

Single-observer ISMCTS (Cowling, Powley & Whitehouse, 2012).  The bot cannot see the
other hands or the deck order, so every iteration

1. *determinizes* its observation (:func:`~red7es.observation.determinize`): the
   unseen cards are dealt at random, so each iteration plays in a different world
   that agrees with everything the bot may know.  The deal is weighted by what the
   others' turns this round say about their hands (:mod:`~red7es.bots.inference`,
   option ``belief``): a card that would have given a player a better turn than the
   one they chose is less likely to be in their hand;
2. descends one shared tree whose edges are whole turns (step codes), for the bot
   and for its opponents alike.  Only the turns legal in this world are candidates,
   scored by UCB1 over their *availability* count (how often the turn was legal
   when its parent was visited) rather than the parent's visits, so turns that are
   rarely possible are not over-explored;
3. stops at the first new node and finishes the **round** with a fast playout;
4. backs up a reward in [0, 1] per seat; every node sums the reward of the seat
   that made the turn leading to it, so each seat maximises its own result
   (n players, no zero-sum assumption).

Turns are scored in the tree with a *progressive bias* (Chaslot et al., 2008): a
cheap evaluation of the position a turn leaves (:func:`turn_value`) is added to
UCB1 with a weight that fades as ``1 / (visits + 1)``.  The opponents' nodes are
wide (their turns depend on the hand dealt in each world) and seldom revisited, so
without it an opponent's reply in the tree is close to random, and the bot plans
against a careless opponent.  The same evaluation, played greedily with a little
noise, is the playout policy without actions.

Searching only to the end of the round keeps playouts short.  The reward is the
round's result: winning it in the basic game; in the ``scoring`` variant the points
scored relative to the opponents (so folding early to stop an opponent's palette
growing can pay), or the match result when the round ends the match.

Open turns (a 3 that draws an unseen card, ``actions`` variant) are ordinary edges:
the determinization decides which card is drawn, and the child is a new decision
node of the same player whose legal continuations differ from world to world, which
availability counts already handle.

**Who the opponent is** (2-player basic, option ``model``, on by default): a posterior
over three models of the opponent from its turns this round (:mod:`~red7es.bots.opponent`:
greedy, random, or half of each).  Unless it most likely plays at random, its hand is
dealt from the exact posterior given that it is greedy and each world so dealt is
solved against greedy's replies (:mod:`~red7es.bots.exploit`).  With ``model=1`` the turn
that wins in most worlds is played (a vote); with ``model=2`` (the default) the worlds are
then searched together, split by greedy's replies, so the bot plans one turn for the worlds
it will not be able to tell apart (:mod:`~red7es.bots.infoset`; out of budget, the vote).
The tree search above decides when no hand fits greedy (the opponent is not greedy),
before the opponent has played, and in every other variant;
against a random opponent it ignores what the turns say of its hand (``belief`` 0).

The decision depends only on the observation, the seed and the budget: the random
generator of each decision is seeded from a hash of both, so the same position gives
the same turn whatever happened before, and a restarted bot replays identically.
"""

from __future__ import annotations

import gc
import hashlib
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from ..cards import bits as _bits
from ..cards import mask_of
from ..game import Game
from ..observation import Dealer, Observation, determinize
from ..rules import match_winners, palette_keys, qualifying_mask, rival_keys
from ..steps import DRAW, END, FOLD, STEPS, Turn
from ..variant import Variant
from .base import QUICK_TIME, DecisionInterrupted
from .exploit import GreedyReading, Solver, WorldVotes, applies, legal_turns, solve_world, turn_codes
from .greedy import FOLD_VALUE, rules_held, turn_value, with_draw
from .inference import card_weights
from .infoset import PartitionSearch
from .opponent import opponent_posterior

__all__ = [
    "DEFAULT_C",
    "DEFAULT_ITERATIONS",
    "IsmctsBot",
    "MAX_ITERATIONS",
    "MAX_TIME",
    "QUICK_ITERATIONS",
    "SearchStats",
    "decision_seed",
    "playout",
    "playout_turn",
    "round_rewards",
]

DEFAULT_ITERATIONS = 300
DEFAULT_C = 0.7  # UCB1 exploration constant, for rewards in [0, 1]
DEFAULT_BELIEF = 0.9  # how far opponents are taken to choose like greedy (red7es.bots.inference)
# Budgets beyond these are mistakes, not settings: a worker thinking for hours (or for
# ever, with time=inf) on one turn stalls every game it serves.  An hour per decision,
# and a million iterations (a few minutes at the benchmarks' 4,000-8,000 playouts/s).
MAX_TIME = 3600.0
MAX_ITERATIONS = 1_000_000
# An iteration budget a decision may take without holding a worker noticeably (about
# QUICK_TIME at the benchmarks' slowest 4,000 playouts/s): beyond it, or QUICK_TIME, a bot
# ``thinks_long`` and its turns go to the workers that take slow bots (docs/architecture.md).
QUICK_ITERATIONS = 2_000
BIAS = 1.0  # weight of the progressive bias, for the best turn of a node
FPU = 1.0  # first-play urgency: the value of a turn not yet tried
EPSILON = 0.1  # playouts: chance of a random turn instead of the best-valued one
ACTIONS_RANDOM = 0.5  # the same with actions, where the heuristic knows fewer turns
END_BIAS = 0.9  # random playout turns: chance to end as soon as the turn may end
OPPONENT_SHARE = 0.5  # a model of the opponent is acted on when this likely (red7es.bots.opponent)
WORLD_COST = 4  # an iteration budget's iterations per world solved against greedy (red7es.bots.exploit)
VOTE, PARTITIONED = 1, 2  # model levels: worlds solved and voted on; then searched together (red7es.bots.infoset)
WORLD_SHARE = 0.8  # share of a time budget spent dealing worlds when they are searched together
FINISH_SHARE = 0.1  # share of a time budget left for finishing a decision past its search's deadline

Action = tuple[tuple[int, ...], bool]  # (step codes without the implied end, open)
_Number = TypeVar("_Number", int, float)

_P, _C, _DRAW, _7C, _7D, _ONE = range(6)  # step kinds (code >> 6)


@dataclass(frozen=True)
class SearchStats:
    """What the last decision cost: for benchmarks and reports."""

    iterations: int
    seconds: float
    tree_nodes: int

    @property
    def playouts_per_second(self) -> float:
        return self.iterations / self.seconds if self.seconds > 0 else 0.0


class IsmctsBot:
    """SO-ISMCTS over whole turns with round-length playouts (see module docstring).

    ``iterations`` caps the iterations per decision (reproducible); ``time_limit``
    caps the seconds per decision (depends on machine load).  With neither,
    :data:`DEFAULT_ITERATIONS` is used; with both, whichever ends first.  ``belief``
    (0 to 1) is how far the others are taken to choose like greedy's evaluation when
    their hands are read from their turns (:func:`~red7es.bots.inference.card_weights`).

    A new game's bot must also keep within :meth:`check_limits` (budgets capped,
    numbers finite), so a mistyped spec is refused when the game is created instead
    of stalling the worker that plays the bot.
    """

    name = "ismcts"

    def __init__(
        self,
        seed: int = 0,
        iterations: int | None = None,
        time_limit: float | None = None,
        c: float = DEFAULT_C,
        belief: float = DEFAULT_BELIEF,
        interrupted: Callable[[], bool] | None = None,
        max_time: float | None = None,
        model: int = 2,
    ) -> None:
        # The operator's cap on one decision (``red7 worker --max-bot-time``): a new game may
        # ask no more (check_limits), and every search ends by it, an older game's too.
        self.max_time = max_time if max_time is not None and max_time < MAX_TIME else MAX_TIME  # (nan too)
        if iterations is not None and iterations < 1:
            raise ValueError(f"iterations must be from 1 to {MAX_ITERATIONS:,}, not {iterations}")
        if time_limit is not None and not time_limit > 0:  # also refuses nan
            raise ValueError(self._time_problem(time_limit))
        if not c >= 0:
            raise ValueError(f"the exploration constant c must be 0 or more and finite, not {c}")
        if not 0.0 <= belief <= 1.0:
            raise ValueError(f"belief must be between 0 and 1, not {belief}")
        if model not in (0, VOTE, PARTITIONED):
            raise ValueError(f"model must be 0, 1 or 2, not {model!r}")
        self.seed = seed
        self.iterations = DEFAULT_ITERATIONS if iterations is None and time_limit is None else iterations
        self.time_limit = time_limit
        self.c = c
        self.belief = belief
        # Whether a 2-player basic opponent that plays like greedy is searched as greedy
        # (red7es.bots.opponent, red7es.bots.exploit): model=0 is the bot of 3 December, 1 the
        # vote over worlds of 4 December, 2 the search over them together (red7es.bots.infoset).
        self.model = int(model)
        self.reads_history = belief > 0 or self.model > 0  # see red7es.bots.base.observation_for
        # Asked after every iteration: True gives the decision up (DecisionInterrupted), so a
        # worker asked to stop need not think on for up to MAX_TIME first.
        self.interrupted = interrupted
        self.last_stats: SearchStats | None = None

    def check_limits(self) -> None:
        """Refuse a budget no new game may be created with: over :data:`MAX_ITERATIONS` or
        :data:`MAX_TIME` (or the ``max_time`` it was made with: the service's cap), or not
        finite (``time=inf`` held a worker on one turn for ever).

        Only new games are held to these (:func:`~red7es.bots.base.make_bot` ``new_game``):
        a game created before they existed keeps its bot, and its record its audit.
        """
        if self.iterations is not None and self.iterations > MAX_ITERATIONS:
            raise ValueError(f"iterations must be from 1 to {MAX_ITERATIONS:,}, not {self.iterations}")
        if self.time_limit is not None and not self.time_limit <= self.max_time:
            raise ValueError(self._time_problem(self.time_limit))
        if not self.c < math.inf:
            raise ValueError(f"the exploration constant c must be 0 or more and finite, not {self.c}")

    def _time_problem(self, time_limit: float) -> str:
        cap = "" if self.max_time == MAX_TIME else " on this service (red7 worker --max-bot-time)"
        return f"time must be above 0 and at most {self.max_time:g} seconds{cap}, not {time_limit}"

    @classmethod
    def from_options(
        cls,
        seed: int | str = 0,
        iterations: int | str | None = None,
        time: float | str | None = None,
        c: float | str | None = None,
        belief: float | str | None = None,
        interrupted: Callable[[], bool] | None = None,
        max_time: float | None = None,
        model: int | str | None = None,
    ) -> IsmctsBot:
        """Build from ``make_bot`` options, whose values arrive as strings (``interrupted`` and
        ``max_time`` are make_bot's, not options)."""
        return cls(
            seed=int(seed),
            iterations=None if iterations is None else _option("iterations", iterations, int),
            time_limit=None if time is None else _option("time", time, float),
            c=DEFAULT_C if c is None else _option("c", c, float),
            belief=DEFAULT_BELIEF if belief is None else _option("belief", belief, float),
            interrupted=interrupted,
            max_time=max_time,
            model=PARTITIONED if model is None else _level("model", model),
        )

    @property
    def thinks_long(self) -> bool:
        """Whether a decision may hold its worker for more than about :data:`QUICK_TIME`."""
        by_time = self.time_limit is not None and self.time_limit > QUICK_TIME
        by_iterations = self.iterations is not None and self.iterations > QUICK_ITERATIONS
        if self.time_limit is not None and self.iterations is not None:
            return by_time and by_iterations  # whichever ends first
        return by_time or by_iterations

    def choose(self, obs: Observation) -> Turn:
        """Search from ``obs`` within the budget and return the most visited turn.

        Python's cycle collector is paused for the decision: a search allocates hundreds
        of thousands of small objects, and a full collection over them took 10–25 ms in
        the middle of 50 ms decisions (bench/results/strength.md).  What the search makes
        is freed by reference counting; the collector, on again after, finds the rest.
        """
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._choose(obs)
        finally:
            if collecting:
                gc.enable()

    def _choose(self, obs: Observation) -> Turn:
        if not obs.my_turn:
            raise ValueError("it is not this bot's turn")
        start = time.perf_counter()  # reading the others' hands counts against the budget too
        # Who the opponent is (2-player basic): a greedy one is searched as greedy below,
        # and a random one's hand is not read, since its turns say nothing about it.
        modelled = self.model and applies(obs) and not obs.turn_steps and bool(obs.history)
        posterior = opponent_posterior(obs) if modelled else None
        belief = 0.0 if posterior is not None and posterior.random >= OPPONENT_SHARE else self.belief
        search = _Search(obs, random.Random(decision_seed(self.seed, obs)), self.c, belief)
        if len(search.root_actions) == 1:
            self.last_stats = SearchStats(0, 0.0, 1)
            return _turn(search.root_actions[0])
        # Budgets beyond the caps (an older game's bot, made before check_limits or under a
        # higher --max-bot-time) are played at the caps: a worker must never think for ever
        # on one turn.  An iteration budget ends by the cap too, played as far as it got.
        budget = min(self.max_time if self.time_limit is None else self.time_limit, self.max_time)
        # the search stops short of the budget by FINISH_SHARE of it: the unit of work under
        # way when the deadline passes (a world being solved, a depth of the search over
        # them, a tree iteration) and the choice after it end within the budget
        deadline = start + budget * (1 - FINISH_SHARE)
        iterations = None if self.iterations is None else min(self.iterations, MAX_ITERATIONS)
        # Searched as greedy unless it most likely plays at random; a player who is only half
        # greedy (the mixed model) is too while its turns fit greedy's: the first that does not
        # leaves the reading no hand (_against_greedy gives None) and the tree search decides.
        if posterior is not None and posterior.random < OPPONENT_SHARE:
            worlds = None if iterations is None else max(1, iterations // WORLD_COST)
            turn = self._against_greedy(obs, search.rng, start, deadline, worlds)
            if turn is not None:
                return turn
        interrupted = self.interrupted
        done = 0
        while iterations is None or done < iterations:
            search.iterate()
            done += 1
            if time.perf_counter() >= deadline:
                break
            if interrupted is not None and (iterations is None or done < iterations) and interrupted():
                # (asked only while iterations remain: a finished search is a decision made)
                raise DecisionInterrupted(f"ismcts gave up its decision after {done:,} iterations: asked to stop")
        self.last_stats = SearchStats(done, time.perf_counter() - start, search.nodes)
        return _turn(search.best())

    def _against_greedy(
        self, obs: Observation, rng: random.Random, start: float, deadline: float, worlds: int | None
    ) -> Turn | None:
        """The turn that wins in most worlds dealt from greedy's posterior, each solved exactly
        (:mod:`red7es.bots.exploit`); None when no world consistent with greedy is found.

        Ties (above all: every turn wins, or none does) go to the turn greedy's evaluation
        likes best, the tree's prior.  ``last_stats`` counts each world as
        :data:`WORLD_COST` iterations, as an iteration budget does.
        """
        reading = GreedyReading(obs)
        world = determinize(obs, random.Random(0))
        me, other = obs.seat, 1 - obs.seat
        hand, pal, opal, rule = mask_of(obs.hand), world.pal[me], world.pal[other], world.rule
        turns = legal_turns(hand, pal, opal, rule)
        votes = WorldVotes(turns, [0] * len(turns))
        solver = Solver()
        interrupted = self.interrupted
        partitioned = self.model >= PARTITIONED
        # Worlds are dealt for a share of the time; the search over them has the rest.
        dealing_ends = start + (deadline - start) * (WORLD_SHARE if partitioned else 1.0)
        held_count: Counter[int] = Counter()
        began = time.perf_counter()
        while worlds is None or votes.worlds < worlds:
            # a first hand is looked for within a quarter of what is left: the tree search needs the rest
            held = reading.hand(rng, start + (deadline - start) / 4 if not votes.worlds else deadline)
            if held is None:
                break
            solve_world(votes, solver, hand, held, pal, opal, rule)
            held_count[held] += 1
            # no world is begun that would end past the deadline if it took as long as the last
            now = time.perf_counter()
            if 2 * now - began >= dealing_ends:
                break
            began = now
            if interrupted is not None and interrupted():
                raise DecisionInterrupted(f"ismcts gave up its decision after {votes.worlds:,} worlds: asked to stop")
        if not votes.worlds:
            return None
        opponents = rival_keys(world.pal, world.alive, me)
        prior = [turn_value(world, turn_codes(t), opponents) for t in turns]
        wins = votes.wins
        best_turn = turns[max(range(len(turns)), key=lambda i: (wins[i], prior[i]))]
        nodes = 0
        if partitioned:
            ranked = [turns[i] for i in sorted(range(len(turns)), key=lambda i: -prior[i])]
            search = PartitionSearch(solver, self._partition_budget(deadline, worlds))
            answer = search.best(ranked, hand, pal, opal, rule, tuple(sorted(held_count.items())))
            best_turn, nodes = answer.turn, search.nodes
        self.last_stats = SearchStats(votes.worlds * WORLD_COST, time.perf_counter() - start, len(solver.memo) + nodes)
        return _turn((turn_codes(best_turn), False))

    def _partition_budget(self, deadline: float, worlds: int | None) -> Callable[[int], bool]:
        """When the search over the worlds must stop: after as many nodes as an iteration budget
        allows (reproducible), or at the deadline (the last finished depth stands); a stop asked
        gives the decision up (DecisionInterrupted)."""
        interrupted = self.interrupted
        node_cap = None if worlds is None else worlds * WORLD_COST
        asked = [0]

        def out_of_budget(nodes: int) -> bool:
            if node_cap is not None and nodes > node_cap:
                return True
            asked[0] += 1
            if interrupted is not None and asked[0] % 16 == 0 and interrupted():
                raise DecisionInterrupted(f"ismcts gave up its decision after {nodes:,} nodes: asked to stop")
            return time.perf_counter() >= deadline

        return out_of_budget


def _option(key: str, value: float | str, kind: type[_Number]) -> _Number:
    """An option's value as a number, or a ValueError that names the option."""
    try:
        return kind(value)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise ValueError(f"{key} must be {what}, not {value!r}") from None


def _level(key: str, value: int | str) -> int:
    """A 0/1/2 option as an int, or a ValueError that names the option."""
    if str(value) not in ("0", "1", "2"):
        raise ValueError(f"{key} must be 0, 1 or 2, not {value!r}")
    return int(value)


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


# ---------------------------------------------------------------------- the tree


class _Node:
    """One edge of the tree (the turn that led here) and the statistics below it.

    ``seat`` made that turn, and ``reward`` sums that seat's rewards: what UCB1
    maximises when ``seat`` chooses among its parent's children.  ``value`` is the
    heuristic value of the turn (:func:`turn_value`), which depends on public
    information only, so it is computed once, in the first world where the turn is
    legal.
    """

    __slots__ = ("avail", "children", "reward", "seat", "value", "visits")

    def __init__(self, seat: int, value: float = 0.0) -> None:
        self.seat = seat
        self.value = value
        self.visits = 0
        self.avail = 0
        self.reward = 0.0
        self.children: dict[Action, _Node] = {}


class _Search:
    """One decision's tree and the worlds it is searched in."""

    def __init__(self, obs: Observation, rng: random.Random, c: float, belief: float = 0.0) -> None:
        self.obs = obs
        self.rng = rng
        self.c = c
        self.root = _Node(obs.seat)
        self.nodes = 1  # counted as they are made: walking the tree after the deadline overran it
        # Simulations stop when the round is won: the same rules as a one-round
        # basic game make the engine end the game there instead of dealing again.
        self.sim_variant = replace(obs.variant, scoring=False, rounds=1, target=None)
        self.keep_folds = obs.variant.scoring
        # The bot's own turns never depend on the hidden cards: any world gives them.
        self.root_actions = self._options(determinize(obs, random.Random(0)))
        # Worlds are dealt as the others' turns suggest; a forced turn needs no worlds.
        self.dealer = Dealer(obs, card_weights(obs, belief) if len(self.root_actions) > 1 else None)

    def size(self) -> int:
        """Number of nodes in the tree (tried or merely seen)."""
        count, stack = 0, [self.root]
        while stack:
            node = stack.pop()
            count += 1
            stack.extend(node.children.values())
        return count

    def _world(self) -> Game:
        game = self.dealer.deal(self.rng)
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
            options = self.root_actions if node is self.root else self._options(game)
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

        A turn never tried scores ``FPU`` instead of its mean.  The bias is
        ``BIAS * h / (n + 1)``, with ``h`` the turn's heuristic value scaled to
        [0, 1] among this world's options: few-visit nodes (above all the opponents'
        wide ones) choose like a sensible player, and real statistics take over.
        """
        children = node.children
        kids = []
        hi = lo = FOLD_VALUE
        opponents: tuple[int, ...] | None = None
        for a in options:
            child = children.get(a)
            if child is None:
                if opponents is None:
                    opponents = rival_keys(game.pal, game.alive, game.turn)
                child = children[a] = _Node(game.turn, turn_value(game, a[0], opponents))
                self.nodes += 1
            kids.append(child)
            value = child.value
            if value > hi:
                hi = value
            if value > FOLD_VALUE and (value < lo or lo == FOLD_VALUE):
                lo = value
        if lo == FOLD_VALUE:
            lo = hi
        scale = BIAS / (hi - lo) if hi > lo else 0.0
        c, log, sqrt = self.c, math.log, math.sqrt
        best_score = -math.inf
        best = 0
        for i, child in enumerate(kids):
            child.avail += 1
            n = child.visits
            value = child.value
            bias = (value - lo) * scale if value >= lo else 0.0
            if n:
                score = child.reward / n + c * sqrt(log(child.avail) / n) + bias / (n + 1)
            else:
                score = FPU + bias
            if score > best_score:
                best_score, best = score, i
        return options[best], kids[best]

    def best(self) -> Action:
        """The most visited root turn (the robust choice); mean reward, then heuristic, break ties."""
        children = self.root.children

        def rank(action: Action) -> tuple[int, float, float]:
            child = children.get(action)
            if child is None:
                return (0, 0.0, -math.inf)
            mean = child.reward / child.visits if child.visits else 0.0
            return (child.visits, mean, child.value)

        return max(self.root_actions, key=rank)


# ---------------------------------------------------------------------- playouts


def playout(game: Game, rng: random.Random) -> None:
    """Finish the round in ``game``, mostly with heuristic turns.

    :func:`heuristic_turn` is cheap (masks only) and plays like a sensible player,
    which makes a playout's verdict far more telling than random play.  A share of
    the turns are random (:func:`playout_turn`) for variety: ``EPSILON`` without
    actions; with actions the heuristic only knows turns that trigger no action, so
    half the turns are random, and so is every turn the heuristic has no answer for.
    """
    actions = game.variant.actions
    random_share = ACTIONS_RANDOM if actions else EPSILON
    while game.outcome is None:
        if not game.turn_steps and rng.random() >= random_share:
            codes = heuristic_turn(game)
            if codes != (FOLD,) or not actions:
                game.play_turn(codes, False)
                continue
        if not playout_turn(game, rng):
            game.play_turn((FOLD,))


def heuristic_turn(game: Game) -> tuple[int, ...]:
    """The turn :func:`turn_value` likes best among plays and discards, at a turn's start.

    A second card spent costs 10 while a rule led earns 3, so a turn spending two
    cards is nearly never worth more than the best one-card turn: as a cheap
    approximation, two-card turns are only looked at when no one-card turn leads.  The Advanced
    draw is taken whenever the discard allows it.  With actions, only cards whose
    play triggers no action (even numbers) are played.  Returns ``(fold,)`` if
    none of these turns leads.
    """
    seat = game.turn
    opp = rival_keys(game.pal, game.alive, seat)
    nm, rule = game.pal[seat], game.rule
    cards = _bits(game.hands[seat])
    playable = [x for x in cards if x // 7 % 2] if game.variant.actions else cards
    now = palette_keys(nm)
    dominance_now = rules_held(now, opp)
    best_value = -math.inf
    best: tuple[int, ...] = (FOLD,)
    after_play = []
    for x in playable:
        keys = palette_keys(nm | 1 << x)
        after_play.append((x, keys))
        if keys[rule] > opp[rule]:
            value = _value(keys, opp, rule) + x / 49
            if value > best_value:
                best_value, best = value, (x,)
    for y in cards:
        r = 6 - y % 7
        if now[r] > opp[r]:
            value = 3.0 * dominance_now + 0.5 * min((now[r] >> 6) - (opp[r] >> 6), 3) - y / 49
            if value > best_value:
                best_value, best = value, (_C * 64 + y,)
    if best_value == -math.inf:
        for x, keys in after_play:
            for y in cards:
                r = 6 - y % 7
                if y != x and keys[r] > opp[r]:
                    value = _value(keys, opp, r) + (x - y) / 49
                    if value > best_value:
                        best_value, best = value, (x, _C * 64 + y)
    return with_draw(game, best, nm)


def _value(keys: Sequence[int], opp: Sequence[int], rule: int) -> float:
    dominance = rules_held(keys, opp)
    return 3.0 * dominance + 0.5 * min((keys[rule] >> 6) - (opp[rule] >> 6), 3)


def playout_turn(game: Game, rng: random.Random) -> bool:
    """Play one random legal turn (never ``fold``) step by step; False if none exists.

    Listing every legal turn costs a search over all step sequences; a playout
    needs only *one*, so this walks the steps in random order and backtracks only
    from a dead end.  Cheap, realistic biases: the Advanced draw is always taken,
    and the turn ends as soon as it may with probability ``END_BIAS`` (every extra
    card spent is one fewer for later).  On False the game is exactly as before.

    It drives the engine's step kernel directly (``_legal_step_codes``, ``_step``,
    ``_save``/``_restore``): the public ``push``/``pop`` validate every step again.
    """
    codes = game._legal_step_codes()
    if DRAW in codes:
        game._step(DRAW, False)
        codes = game._legal_step_codes()
    can_end = END in codes
    if can_end and rng.random() < END_BIAS:
        game._step(END, False)
        return True
    moves = [c for c in codes if c < END and c != DRAW]  # plays, discards, actions
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
    otherwise 0.5, plus half the winner's points over the target score for the
    winner, minus as much shared among the others.  Winning a round is always worth
    more than losing it, but losing a cheap round beats fighting on to lose a dear one.
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
    left = 49 - (game.removed | taken).bit_count()
    if max(totals) >= variant.target_score or left < 8 * n:
        return _match_rewards(totals, game.round_wins)
    gain = 0.5 * points / variant.target_score
    out = [0.5 - gain / (n - 1)] * n
    out[winner] = 0.5 + gain
    return out


def _match_rewards(totals: Sequence[int], round_wins: Sequence[int]) -> list[float]:
    """1 for the match winner, shared on a tie (:func:`~red7es.rules.match_winners`)."""
    winners = match_winners(totals, round_wins)
    out = [0.0] * len(totals)
    for s in winners:
        out[s] = 1.0 / len(winners)
    return out
