"""The best response to greedy over a set of possible hands, without strategy fusion.

:mod:`red7es.bots.exploit` solves each world (a hand greedy may hold) with every card in
view and votes: perfect-information Monte Carlo.  A vote assumes that, later in the
round, the bot will know which world it is in, and it will not: two worlds in which
greedy answers the bot's turns alike stay indistinguishable, and the bot must then play
*one* turn for both.  A turn that wins world A only if the bot next plays ``x`` and world
B only if it next plays ``y`` is counted as winning both (*strategy fusion*).

Here the worlds are kept together.  In 2-player basic nobody draws and greedy's turn is a
function of its hand and the table (:func:`~red7es.bots.exploit.greedy_turn`), so after a
turn of the bot the worlds **split by greedy's reply**: within one part, the bot has seen
the same reply in each world and cannot tell them apart; across parts, it can.  The value
of a position for a set of worlds is the best, over the bot's turns, of the summed values
of the parts the turn's replies make, each part choosing its own next turn.  That is the
exact best response to greedy over the belief the worlds stand for (a weighted set of
hands), and at a part of one world it is the one-player solve
(:meth:`~red7es.bots.exploit.Solver.wins`).

The search is exponential in the worst case, so it is *iteratively deepened*: at depth
``d`` the parts left after ``d`` turns of the bot are valued by the per-world solve (the
vote, as fused as before but ``d`` turns later).  Depth 1 is exactly the vote; every
deeper level that finishes within the budget fuses less, and a level that finishes
without cutting anything off is exact.  The per-world solves bound every value from
above (knowing the world never hurts), which prunes the turns that cannot beat the best
found so far.  Values are memoised on ``(position, worlds, depth)``, and exact ones on
``(position, worlds)`` for every depth.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .exploit import FOLD_TURN, MaskTurn, Solver, legal_turns, turn_after

__all__ = ["OutOfBudget", "PartitionSearch", "Worlds"]

Worlds = tuple[tuple[int, int], ...]  # (greedy's hand, weight), hands distinct and sorted


class OutOfBudget(Exception):
    """The search spent its nodes or its time: the last finished depth stands."""


@dataclass(frozen=True)
class Answer:
    """A finished depth's choice at the root."""

    turn: MaskTurn
    value: int  # weight of the worlds it wins
    depth: int
    exact: bool  # nothing was cut off by the depth: the best response over these worlds


class PartitionSearch:
    """The information-set best response over ``worlds`` from one position (module docstring).

    ``solver`` is shared with the vote, so the worlds it already solved are bounds for free.
    ``out_of_budget`` is asked with the nodes searched so far at every node, and before each
    world solved for a bound below the root (a solve early in the round can take
    milliseconds): True ends the search (:class:`OutOfBudget`).
    """

    def __init__(self, solver: Solver, out_of_budget: Callable[[int], bool] | None = None) -> None:
        self.solver = solver
        self.out_of_budget = out_of_budget
        self.nodes = 0
        self.exact: dict[tuple[int, int, int, int, Worlds], int] = {}
        self.limited: dict[tuple[int, int, int, int, Worlds, int], tuple[int, bool]] = {}

    def best(
        self, turns: Sequence[MaskTurn], hand: int, pal: int, opal: int, rule: int, worlds: Worlds, max_depth: int = 64
    ) -> Answer:
        """The root turn of the deepest depth finished within the budget.

        ``turns`` are the candidates in order of preference: ties go to the earliest.  Depth 1
        (the vote) is always finished, whatever the budget; it may raise
        :class:`OutOfBudget` only from depth 2 on, and then the deeper answer is dropped.
        """
        answer = self._root(turns, hand, pal, opal, rule, worlds, 1, budgeted=False)
        depth = 2
        while not answer.exact and depth <= max_depth:
            try:
                answer = self._root(turns, hand, pal, opal, rule, worlds, depth, budgeted=True)
            except OutOfBudget:
                break
            depth += 1
        return answer

    def _root(
        self,
        turns: Sequence[MaskTurn],
        hand: int,
        pal: int,
        opal: int,
        rule: int,
        worlds: Worlds,
        depth: int,
        budgeted: bool,
    ) -> Answer:
        bounds = [self._bound(turn, hand, pal, opal, rule, worlds) for turn in turns]
        order = sorted(range(len(turns)), key=lambda i: -bounds[i])  # stable: ties keep the given order
        best, best_value, exact = order[0], -1, True
        for i in order:
            if bounds[i] <= best_value:
                break
            value, whole = self._turn(turns[i], hand, pal, opal, rule, worlds, depth, budgeted)
            exact = exact and whole
            if value > best_value:
                best, best_value = i, value
        return Answer(turns[best], best_value, depth, exact)

    def _bound(
        self, turn: MaskTurn, hand: int, pal: int, opal: int, rule: int, worlds: Worlds, budgeted: bool = False
    ) -> int:
        """The weight of the worlds the turn wins when each is solved with its cards in view."""
        wins_after = self.solver.wins_after
        if not budgeted:
            return sum(w for other, w in worlds if wins_after(turn, hand, other, pal, opal, rule))
        total = 0
        for other, w in worlds:
            self._check()
            if wins_after(turn, hand, other, pal, opal, rule):
                total += w
        return total

    def _check(self) -> None:
        if self.out_of_budget is not None and self.out_of_budget(self.nodes):
            raise OutOfBudget

    def _turn(
        self, turn: MaskTurn, hand: int, pal: int, opal: int, rule: int, worlds: Worlds, depth: int, budgeted: bool
    ) -> tuple[int, bool]:
        """The weight the bot wins by ``turn`` and its best turns after it, per part of the
        worlds greedy's reply makes; whether nothing was cut off by the depth."""
        hand, pal, rule = turn_after(turn, hand, pal, rule)
        parts: dict[MaskTurn, list[tuple[int, int]]] = {}
        won = 0
        for other, w in worlds:
            reply = self.solver.reply(other, opal, pal, rule) if other else FOLD_TURN
            if reply == FOLD_TURN:
                won += w  # greedy is out (no card, or no turn that leads): the bot has won
            else:
                parts.setdefault(reply, []).append((other, w))
        exact = True
        if not hand:
            return won, exact  # the bot is out at its next turn in every world greedy survives
        for reply, part in parts.items():
            rest: list[tuple[int, int]] = []
            for other, w in part:
                rest.append((turn_after(reply, other, opal, rule)[0], w))
            _, new_opal, new_rule = turn_after(reply, part[0][0], opal, rule)
            value, whole = self._value(hand, pal, new_opal, new_rule, tuple(sorted(rest)), depth - 1, budgeted)
            won += value
            exact = exact and whole
        return won, exact

    def _value(
        self, hand: int, pal: int, opal: int, rule: int, worlds: Worlds, depth: int, budgeted: bool
    ) -> tuple[int, bool]:
        """The weight the bot wins, to move, choosing one turn for all these worlds."""
        if len(worlds) == 1:
            other, w = worlds[0]
            return (w if self.solver.wins(hand, other, pal, opal, rule) else 0), True
        key = (hand, pal, opal, rule, worlds)
        known = self.exact.get(key)
        if known is not None:
            return known, True
        if depth <= 0:
            solver = self.solver
            return sum(w for other, w in worlds if solver.wins(hand, other, pal, opal, rule)), False
        limited = self.limited.get((hand, pal, opal, rule, worlds, depth))
        if limited is not None:
            return limited
        self.nodes += 1
        if budgeted:
            self._check()
        turns = legal_turns(hand, pal, opal, rule)
        bounds = [self._bound(turn, hand, pal, opal, rule, worlds, budgeted) for turn in turns]
        ceiling = max(bounds, default=0)
        best, exact = 0, True
        for i in sorted(range(len(turns)), key=lambda i: -bounds[i]):
            if bounds[i] <= best:
                break
            value, whole = self._turn(turns[i], hand, pal, opal, rule, worlds, depth, budgeted)
            exact = exact and whole
            if value > best:
                best = value
                if best == ceiling:
                    break
        if exact:
            self.exact[key] = best
        else:
            self.limited[(hand, pal, opal, rule, worlds, depth)] = (best, False)
        return best, exact
