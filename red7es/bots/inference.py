"""What the other hands probably do not hold, judged from the turns their owners chose.

Every turn of the round was played in front of everyone (:mod:`red7es.history`).  A
sensible player spends the card that leaves them best placed; greedy's evaluation
(:func:`~red7es.bots.greedy.turn_value`) is a fair model of that, and it needs only
public information.  So when a player chose a turn while some card would have made a
one-card turn worth strictly more, that card was probably not in their hand: they
would have played it.

:func:`card_weights` turns this into a weight per card for each other player's hand,
used to deal the hidden cards (:func:`~red7es.observation.determinize`): each past
turn a card contradicts multiplies its weight by ``1 - belief``.  ``belief=1`` rules
those cards out (exact against a greedy player, wrong against a player who is not);
lower values only make them less likely, so a player who plays differently is not
assumed impossible.  Only one-card turns are tested (two-card turns cost more than
any one-card turn that leads, so they seldom decide), and with actions only even
cards, whose play triggers nothing.

A turn says nothing about a card drawn after it, so for each player only the turns
after their last draw count: until then their hand is what it was when they chose,
less the cards they played.
"""

from __future__ import annotations

from ..cards import mask_of
from ..game import Game
from ..history import PastTurn
from ..observation import Observation, unseen_cards
from ..rules import palette_keys, rival_keys
from ..steps import StepKind
from .greedy import turn_value, with_draw

__all__ = ["WEIGHT_FLOOR", "card_weights"]

WEIGHT_FLOOR = 1e-9  # a card is never quite impossible: contradictory turns still leave a deal
_DISCARD = 1 << 6  # step code of ``c:`` for card 0


def card_weights(obs: Observation, belief: float) -> dict[int, list[float]]:
    """For each other seat in the round, a weight per card (0–48) for dealing its hand.

    Seats about whom the history says nothing are left out (every card weighs 1).
    """
    if not 0.0 < belief <= 1.0 or not obs.history:
        return {}
    unseen = unseen_cards(obs)
    factor = max(1.0 - belief, WEIGHT_FLOOR)
    out: dict[int, list[float]] = {}
    for view in obs.seats:
        seat = view.seat
        if seat == obs.seat or not view.in_round:
            continue
        since_draw: list[PastTurn] = []
        for past in reversed(obs.history):
            if past.seat == seat:
                if past.drew:
                    break
                since_draw.append(past)
        counts = [0] * 49
        for past in since_draw:
            for card in _better_cards(obs, past, unseen):
                counts[card] += 1
        if any(counts):
            out[seat] = [max(factor**k, WEIGHT_FLOOR) for k in counts]
    return out


def _better_cards(obs: Observation, past: PastTurn, candidates: list[int]) -> list[int]:
    """The ``candidates`` with a one-card turn worth more than the turn ``past`` chose."""
    if past.steps and past.steps[-1].kind == StepKind.FOLD:
        return []  # a fold ends the player's round: nothing more to learn about them
    position = _position(obs, past)
    seat = past.seat
    codes = tuple(int(step) for step in past.steps)
    opp = rival_keys(position.pal, position.alive, seat)
    chosen = turn_value(position, codes, opp)
    palette = position.pal[seat]
    mine = palette_keys(palette)
    rule = position.rule
    actions = obs.variant.actions
    better = []
    for card in candidates:
        if not actions or card // 7 % 2:  # with actions, only even numbers trigger nothing
            keys = palette_keys(palette | 1 << card)
            if keys[rule] > opp[rule] and turn_value(position, (card,), opp) > chosen:
                better.append(card)
                continue
        new_rule = 6 - card % 7
        if mine[new_rule] > opp[new_rule]:
            if turn_value(position, with_draw(position, (_DISCARD + card,), palette), opp) > chosen:
                better.append(card)
    return better


def _position(obs: Observation, past: PastTurn) -> Game:
    """The public position ``past`` was chosen in, as a game ``turn_value`` can score.

    Hands and deck order are not filled in: the evaluation reads palettes, the rule,
    the mover and the deck's size only.
    """
    game = Game._blank(obs.variant, None, record=False, batch_rules=obs.batch_rules)
    game.pal = [0 if p is None else mask_of(p) for p in past.palettes]
    game.alive = [p is not None for p in past.palettes]
    game.rule = int(past.rule)
    game.turn = past.seat
    game.deck = [0] * past.deck_size
    return game
