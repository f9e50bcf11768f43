"""Who is the opponent?  A posterior over three models, from the turns it chose this round.

The search against greedy (:mod:`red7es.bots.exploit`) is only right against a player
who *is* greedy; against anyone else the ordinary tree search is the safer bet.  So
the bot keeps a posterior over three models of the opponent, each a probability of
every turn it might choose:

``greedy``
    the turn greedy takes (:func:`~red7es.bots.exploit.greedy_turn`, greedy's choice on
    masks, held to greedy's own loop by tests; probability 1, else 0);
``random``
    any legal turn, ``fold`` included, with probability ``1 / (legal turns + 1)``
    (the ``random`` bot);
``mixed``
    half the time greedy's turn, half the time a random one: a sensible player who
    is not greedy, so that a few turns that happen to agree with greedy are not
    taken as proof.

Each turn's likelihood under a model depends on the hand the opponent held, which
the bot cannot see, so it is averaged over :data:`SAMPLES` hands dealt at random from
what that hand may have been: the cards it played then and since, plus unseen cards.
Turns are scored one by one (their hands are sampled independently: an approximation
that ignores that they share cards, which makes the evidence of many turns somewhat
too strong, not wrong in direction).  A turn the greedy model gives no sampled hand
is scored ``1 / (4 * SAMPLES)`` rather than 0, so one unlucky sample does not rule
greedy out for good.  The prior is even.

Only for 2-player basic (:func:`~red7es.bots.exploit.applies`): elsewhere the bot
does not use the posterior.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from ..cards import mask_of
from ..history import PastTurn
from ..observation import Observation, unseen_cards
from ..steps import StepKind
from .exploit import FOLD_TURN, applies, greedy_turn, legal_turns, mask_turn

__all__ = ["MODELS", "SAMPLES", "Posterior", "opponent_posterior", "turn_likelihoods"]

MODELS = ("greedy", "random", "mixed")
SAMPLES = 24  # hands per turn for its likelihoods
_FLOOR = 1.0 / (4 * SAMPLES)


@dataclass(frozen=True)
class Posterior:
    """The probability of each model (:data:`MODELS`) given the opponent's turns, and how
    many turns it rests on."""

    greedy: float
    random: float
    mixed: float
    turns: int


_cache: dict[tuple[object, ...], tuple[float, float, float]] = {}
_CACHE_SIZE = 4096


def turn_likelihoods(past: PastTurn, played_since: int, unseen: list[int]) -> tuple[float, float, float]:
    """The probability of ``past``'s turn under each model, averaged over sampled hands.

    ``played_since``: the cards the mover played in this turn and its later ones (they
    were all in its hand then); ``unseen``: the cards that may fill the rest of it.
    The sampling is seeded by the question itself, so the answer is the same wherever
    and whenever it is asked (a bot restarted mid-game replays identically).
    """
    key = (past, played_since, tuple(unseen))
    known = _cache.get(key)
    if known is not None:
        return known
    seat = past.seat
    pals = [0 if p is None else mask_of(p) for p in past.palettes]
    mine, theirs, rule = pals[seat], pals[1 - seat], int(past.rule)
    turn = mask_turn([int(s) for s in past.steps])
    rng = random.Random(hashlib.sha256(repr(key).encode()).digest())
    free = past.hand_size - played_since.bit_count()
    greedy = rand = 0.0
    for _ in range(SAMPLES):
        hand = played_since
        if free > 0:
            hand |= mask_of(rng.sample(unseen, min(free, len(unseen))))
        legal = legal_turns(hand, mine, theirs, rule)
        rand += 1.0 / (len(legal) + 1)
        if turn is not None and turn != FOLD_TURN and greedy_turn(hand, mine, theirs, rule) == turn:
            greedy += 1.0
        elif turn == FOLD_TURN and not legal:
            greedy += 1.0  # greedy folds only when it must
    g, r = max(greedy / SAMPLES, _FLOOR), rand / SAMPLES
    out = (g, r, 0.5 * g + 0.5 * r)
    if len(_cache) >= _CACHE_SIZE:
        _cache.clear()
    _cache[key] = out
    return out


def opponent_posterior(obs: Observation) -> Posterior:
    """The posterior over :data:`MODELS` from the opponent's turns this round (2-player basic)."""
    if not applies(obs):
        raise ValueError("the opponent models are for 2-player basic only")
    other = 1 - obs.seat
    unseen = unseen_cards(obs)
    weights = [1 / 3, 1 / 3, 1 / 3]  # the even prior
    turns = 0
    history = obs.history
    for i, past in enumerate(history):
        if past.seat != other:
            continue
        played = 0
        for later in history[i:]:
            if later.seat == other:
                for step in later.steps:
                    if step.kind in (StepKind.PLAY, StepKind.CANVAS):
                        played |= 1 << (int(step) & 63)
        for m, p in enumerate(turn_likelihoods(past, played, unseen)):
            weights[m] *= p
        total = sum(weights)
        weights = [w / total for w in weights]
        turns += 1
    return Posterior(weights[0], weights[1], weights[2], turns)
