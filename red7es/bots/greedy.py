"""The ``greedy`` bot: the cheapest turn that leaves it leading under the most rules.

For each legal turn it looks one turn ahead at the public position it leaves behind:

* cards spent from hand (fewer is better: the hand is the player's future);
* *dominance*: under how many of the seven rules its palette would then lead, since
  the next player must find a rule they lead under, and every rule held is one
  fewer escape;
* the lead margin under the rule in force;
* a slight preference to build the palette with high cards and to discard low ones.

It folds only when no other legal turn exists.  Deterministic: ties go to the first
turn in the engine's order.  Turns made only of plays of even cards, discards and the
Advanced draw are scored from bitmasks without touching the game; turns with actions
are simulated on a copy.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cards import color_bit
from ..game import Game
from ..observation import Observation, determinize
from ..rules import all_keys, rival_keys
from ..steps import FOLD, STEPS, Turn

__all__ = ["GreedyBot", "choose_greedy", "score_turn"]


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


def choose_greedy(game: Game) -> Turn:
    """The greedy turn for the player to move in ``game`` (hidden cards are not used)."""
    best_codes: tuple[int, ...] = (FOLD,)
    best_open = False
    best_value = float("-inf")
    opponents = rival_keys(game.pal, game.alive, game.turn)
    for codes, is_open in game.legal_turn_codes():
        if codes == (FOLD,):
            continue
        value = score_turn(game, codes, opponents)
        if value > best_value:
            best_value, best_codes, best_open = value, codes, is_open
    return Turn(tuple(STEPS[c] for c in best_codes), best_open)


def score_turn(game: Game, codes: Sequence[int], opponents: Sequence[int] | None = None) -> float:
    """Evaluation of the position after ``codes`` for the player to move.

    ``opponents`` are the opponents' best keys per rule before the turn; they stay
    valid for turns that only play, discard and draw.
    """
    seat = game.turn
    actions = game.variant.actions
    simple = opponents is not None and all(
        c >> 6 == 1 or c >> 6 == 2 or (c >> 6 == 0 and not (actions and (c & 63) // 7 % 2 == 0)) for c in codes
    )
    spent_value = 0.0
    if simple:
        assert opponents is not None
        nm, cm, rule = game.pal[seat], game.palc[seat], game.rule
        spent = 0
        for c in codes:
            kind, card = c >> 6, c & 63
            if kind == 0:
                nm |= 1 << card
                cm |= color_bit(card)
                spent += 1
                spent_value -= card / 49
            elif kind == 1:
                rule = 6 - card % 7
                spent += 1
                spent_value += card / 49
            else:  # the Advanced draw: a card gained
                spent -= 1
        best = opponents
    else:
        after = game.copy(record=False)
        hand_before = after.hands[seat].bit_count()
        for c in codes:
            kind, card = c >> 6, c & 63
            if kind == 0:
                spent_value -= card / 49
            elif kind == 1:
                spent_value += card / 49
            after._step(c, False)
        spent = hand_before - after.hands[seat].bit_count()
        nm, cm, rule = after.pal[seat], after.palc[seat], after.rule
        best = rival_keys(after.pal, after.alive, seat)
    mine = all_keys(nm, cm)
    dominance = 0
    for r in range(7):
        if mine[r] > best[r]:
            dominance += 1
    margin = min((mine[rule] >> 6) - (best[rule] >> 6), 3)
    return -10.0 * spent + 3.0 * dominance + 0.5 * margin - spent_value
