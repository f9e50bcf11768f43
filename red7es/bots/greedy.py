"""The ``greedy`` bot: the cheapest turn that leaves it leading under the most rules.

For each legal turn it looks one turn ahead at the public position it leaves behind:

* cards spent from hand (fewer is better: the hand is the player's future);
* *dominance*: under how many of the seven rules its palette would then lead, since
  the next player must find a rule they lead under, and every rule held is one
  fewer escape;
* the lead margin under the rule in force;
* a slight preference to build the palette with high cards and to discard low ones.

It folds only when no other legal turn exists.  Deterministic: ties go to the first
turn in the engine's order.  Every turn, actions included, is scored from bitmasks
without touching the game (:func:`turn_value`, which ISMCTS uses as its prior too).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cards import bits
from ..game import Game
from ..observation import Observation, determinize
from ..rules import palette_keys, rival_keys
from ..steps import DRAW, FOLD, STEPS, Turn

__all__ = ["FOLD_VALUE", "GreedyBot", "choose_greedy", "rules_held", "turn_value", "with_draw"]

FOLD_VALUE = -1000.0  # heuristic value of folding: below every real turn

_P, _C, _DRAW, _7C, _7D, _ONE = range(6)  # step kinds (code >> 6)


class GreedyBot:
    """One-turn lookahead with a hand-tuned evaluation (see module docstring)."""

    name = "greedy"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed  # greedy is deterministic; the seed is accepted for a uniform API

    @classmethod
    def from_options(cls, seed: int = 0) -> GreedyBot:
        return cls(seed)

    def choose(self, obs: Observation) -> Turn:
        # Hidden cards do not affect the turns it may take or how it scores them.
        return choose_greedy(determinize(obs, None))

    def choose_world(self, world: Game) -> Turn:
        """The same choice from :func:`~red7es.observation.seat_world`, the game
        ``determinize(obs, None)`` deals: what a worker asks (:func:`~red7es.bots.base.decide`)."""
        return choose_greedy(world)


def choose_greedy(game: Game) -> Turn:
    """The greedy turn for the player to move in ``game`` (hidden cards are not used)."""
    if not game.turn_steps and not game.variant.actions:
        return _choose_whole_turn(game)
    best_codes: tuple[int, ...] = (FOLD,)
    best_open = False
    best_value = float("-inf")
    opponents = rival_keys(game.pal, game.alive, game.turn)
    memo: dict[int, tuple[Sequence[int], int]] = {}  # the turns of one play share its palette
    for codes, is_open in game.legal_turn_codes():
        if codes == (FOLD,):
            continue
        value = turn_value(game, codes, opponents, memo)
        if value > best_value:
            best_value, best_codes, best_open = value, codes, is_open
    return Turn(tuple(STEPS[c] for c in best_codes), best_open)


def _choose_whole_turn(game: Game) -> Turn:
    """:func:`choose_greedy` at the start of a turn without actions, in one pass.

    The turns are those of ``Game._fast_turns`` (a play, a discard, or both, the draw
    where earned), in the same order, each valued as :func:`turn_value` values it, by
    the same expression on the same numbers, so the choice (ties to the first) is the
    same: each play's palette keys serve both to list its discards and to value them,
    and no list of turns is built.  tests/engine/test_seat_world.py compares the two.
    """
    seat = game.turn
    opponents = rival_keys(game.pal, game.alive, seat)
    draw = game.variant.draw and bool(game.deck)
    codes = whole_turn_codes(game.hands[seat], game.pal[seat], opponents, game.rule, draw)
    return Turn(tuple(STEPS[c] for c in codes), False)


def whole_turn_codes(hand: int, my_nm: int, opponents: Sequence[int], rule: int, draw: bool) -> tuple[int, ...]:
    """:func:`_choose_whole_turn` on masks: the mover's hand and palette, the rivals' keys
    (:func:`~red7es.rules.rival_keys`), the rule, and whether the Advanced draw is open.

    Searches that solve positions against greedy (:mod:`red7es.bots.exploit`) ask this
    without building a game.  The palette's keys come from :func:`palette_keys`, the same
    values ``all_keys`` gives from the masks the game keeps.
    """
    cards = bits(hand)
    best_codes: tuple[int, ...] = (FOLD,)
    best_value = float("-inf")
    prefix: tuple[int, ...]
    for x in [*cards, -1]:
        if x < 0:
            nm, played, prefix = my_nm, 0.0, ()
        else:
            nm, prefix = my_nm | 1 << x, (_P * 64 + x,)
            played = 0.0
            played += x / 49
        keys = palette_keys(nm)
        size = nm.bit_count()
        dominance = rules_held(keys, opponents)
        spent = 1 if x >= 0 else 0
        for y in cards:
            if y == x:
                continue
            r = 6 - y % 7
            if keys[r] > opponents[r]:
                extra = played
                extra -= y / 49
                margin = min((keys[r] >> 6) - (opponents[r] >> 6), 3)
                if draw and y // 7 + 1 > size:
                    value = -10.0 * spent + 3.0 * dominance + 0.5 * margin + extra
                    if value > best_value:
                        best_value, best_codes = value, (*prefix, _C * 64 + y, DRAW)
                value = -10.0 * (spent + 1) + 3.0 * dominance + 0.5 * margin + extra
                if value > best_value:
                    best_value, best_codes = value, (*prefix, _C * 64 + y)
        if x >= 0 and keys[rule] > opponents[rule]:
            margin = min((keys[rule] >> 6) - (opponents[rule] >> 6), 3)
            value = -10.0 * spent + 3.0 * dominance + 0.5 * margin + played
            if value > best_value:
                best_value, best_codes = value, prefix
    return best_codes


def turn_value(
    game: Game, codes: Sequence[int], opponents: Sequence[int], memo: dict[int, tuple[Sequence[int], int]] | None = None
) -> float:
    """How good the public position after ``codes`` looks for the player to move.

    The greedy bot's evaluation (ISMCTS biases its search with it), on masks only: cards spent
    from hand cost 10 each (the hand is the player's future; a card drawn counts as
    one spent less), each rule the palette would lead under earns 3 (the next
    player must find a rule to lead under: every rule held is one fewer escape), the
    lead's margin under the rule in force up to 1.5, and a little for playing high
    cards and discarding low ones.  ``opponents`` is :func:`~red7es.rules.rival_keys`
    before the turn.  ``fold`` is worth less than any turn.  ``memo`` (one per position and
    ``opponents``) keeps the palette keys and rules held of each palette reached, which
    every discard after the same play shares: the same values, computed once.
    """
    if codes and codes[-1] == FOLD:
        return FOLD_VALUE
    seat = game.turn
    nm, rule = game.pal[seat], game.rule
    actions, deck = game.variant.actions, len(game.deck)
    spent, extra = 0, 0.0
    pal: list[int] | None = None
    for code in codes:
        kind, card = code >> 6, code & 63
        if kind == _P:
            nm |= 1 << card
            spent += 1
            extra += card / 49
            if actions and card // 7 == 2 and deck:  # a 3 draws a card
                spent -= 1
                deck -= 1
        elif kind in (_C, _7C):
            rule = 6 - card % 7
            if kind == _C:
                spent += 1
                extra -= card / 49
            else:
                nm ^= 1 << card
        elif kind == _DRAW:
            spent -= 1
            deck -= 1
        elif kind == _7D:
            nm ^= 1 << card
            deck += 1
        elif kind == _ONE:
            pal = [m & ~(1 << card) for m in (pal or game.pal)]
            deck += 1
    if pal is not None:
        opponents = rival_keys(pal, game.alive, seat)
        mine: Sequence[int] = palette_keys(nm)
        dominance = rules_held(mine, opponents)
    elif memo is not None:
        known = memo.get(nm)
        if known is None:
            mine = palette_keys(nm)
            known = memo[nm] = (mine, rules_held(mine, opponents))
        mine, dominance = known
    else:
        mine = palette_keys(nm)
        dominance = rules_held(mine, opponents)
    margin = min((mine[rule] >> 6) - (opponents[rule] >> 6), 3)
    return -10.0 * spent + 3.0 * dominance + 0.5 * margin + extra


def rules_held(mine: Sequence[int], opp: Sequence[int]) -> int:
    """Under how many rules ``mine`` beats the best opponent (unrolled: a hot spot)."""
    return (
        (mine[0] > opp[0])
        + (mine[1] > opp[1])
        + (mine[2] > opp[2])
        + (mine[3] > opp[3])
        + (mine[4] > opp[4])
        + (mine[5] > opp[5])
        + (mine[6] > opp[6])
    )


def with_draw(game: Game, codes: tuple[int, ...], palette: int) -> tuple[int, ...]:
    """``codes`` plus the Advanced draw when the turn's discard earns it: a card more never hurts.

    ``codes`` is a discard, or a play then a discard, by the player to move, whose
    palette before the turn is ``palette``: the draw is earned when the discarded
    number beats the palette's size after the play (RULES.md, Advanced draw).
    """
    last = codes[-1]
    if not (game.variant.draw and game.deck and last >> 6 == _C):
        return codes
    size = palette.bit_count() + (1 if len(codes) == 2 else 0)
    return (*codes, DRAW) if (last & 63) // 7 + 1 > size else codes
