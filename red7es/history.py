"""The turns of the current round, as everyone at the table saw them played.

RULES.md, *Hidden information*, lists what a player sees at one moment.  Every turn
was public when it was played: the cards went to a palette or to the Canvas in front of
everyone.  Remembering them is not seeing more, so an observation carries the round's
turns so far (:class:`PastTurn`), each with the public position it was played from.
What nobody else saw stays hidden: the card a player drew is not listed, only that they
drew one.

Bots use this to reason about the other hands (a player who could have led with a
cheap card and paid a dear one probably had no cheap one); views do not need it.

The history is rebuilt from the game's fact log by replaying the round's steps through
the engine itself, so no second copy of the rules decides what each step did.  A game
kept without a log (``record=False``, simulations) has no history.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .cards import Card, Color, cards_of_mask
from .facts import CardDrawn, RoundDealt, StepApplied
from .game import Game
from .steps import Step, StepKind

__all__ = ["PastTurn", "round_history"]


@dataclass(frozen=True)
class PastTurn:
    """One finished turn of the round and the public position before it.

    ``palettes`` holds every seat's palette when the turn began (None for a seat
    already out), ``rule`` the Canvas rule, ``deck_size`` the cards in the draw deck
    and ``hand_size`` the mover's hand.  ``steps`` are the turn's steps without the
    implied ``end`` (a 3's draw is the engine's doing, not a step).  ``drew`` says the
    mover took a card from the deck during the turn, so their hand now holds a card it
    did not hold when they chose.
    """

    seat: int
    steps: tuple[Step, ...]
    palettes: tuple[tuple[Card, ...] | None, ...]
    rule: Color
    deck_size: int
    hand_size: int
    drew: bool = False


def round_history(game: Game) -> tuple[PastTurn, ...]:
    """The finished turns of ``game``'s current round, oldest first (empty without a log)."""
    log = game.log
    if not log:
        return ()
    start = next((i for i in range(len(log) - 1, -1, -1) if isinstance(log[i], RoundDealt)), None)
    if start is None:
        return ()
    deal = log[start]
    assert isinstance(deal, RoundDealt)
    replay = Game._blank(game.variant, None, record=False, batch_rules=game.batch_rules)
    replay.load_deal(deal)
    turns: list[PastTurn] = []
    opening: PastTurn | None = None  # the turn in progress, as it began
    steps: list[Step] = []
    drew = False
    for fact in log[start + 1 :]:
        if isinstance(fact, CardDrawn):
            drew = drew or (opening is not None and fact.seat == opening.seat)
        elif isinstance(fact, StepApplied):
            if opening is None:
                seat = replay.turn
                palettes = tuple(
                    cards_of_mask(m) if alive else None for m, alive in zip(replay.pal, replay.alive, strict=True)
                )
                opening = PastTurn(
                    seat, (), palettes, Color(replay.rule), len(replay.deck), replay.hands[seat].bit_count()
                )
                steps, drew = [], False
            replay.apply_fact(fact)
            kind = fact.step.kind
            if kind != StepKind.END:
                steps.append(fact.step)
            if kind in (StepKind.END, StepKind.FOLD):
                turns.append(replace(opening, steps=tuple(steps), drew=drew))
                opening = None
    return tuple(turns)
