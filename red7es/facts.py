"""What the engine says happened: the facts of a game, as frozen value objects.

Applying a turn returns the facts it caused, in order.  They are pure domain events
(no serialisation here); the service's codec turns them into msgpack log events.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import Card, Color
from .steps import Step

__all__ = [
    "CardDrawn",
    "Fact",
    "Forfeited",
    "GameOver",
    "Outcome",
    "PlayerOut",
    "RoundDealt",
    "RoundWon",
    "StepApplied",
    "TurnTakenBack",
]


@dataclass(frozen=True)
class RoundDealt:
    """A round was dealt: every hand, the palette cards, the deck (top first), who starts."""

    round: int
    hands: tuple[tuple[Card, ...], ...]
    palettes: tuple[Card, ...]
    deck: tuple[Card, ...]
    first: int


@dataclass(frozen=True)
class StepApplied:
    """A seat's step took effect (``end`` included, whether written or implied)."""

    seat: int
    step: Step


@dataclass(frozen=True)
class CardDrawn:
    """A seat drew the top card of the deck; ``cause`` is ``"3"`` (action) or ``"draw"``.

    ``public`` is true when everyone knew the card: an action had put it on the deck.
    """

    seat: int
    card: Card
    cause: str
    public: bool = False


@dataclass(frozen=True)
class TurnTakenBack:
    """A ``fold`` took back the steps of the turn it ended (batch rules 4, RULES.md).

    ``steps`` are the turn's steps before the fold, as played.  Every card they moved
    is back where it was when the turn began: cards drawn are on top of the deck again
    in the order drawn, cards put on the deck are back in their palettes, and the
    Canvas (so the rule) is as it was.  A fold as a turn's first step takes nothing
    back and has no such fact.
    """

    seat: int
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class PlayerOut:
    """A seat left the round: ``"fold"`` or ``"empty-hand"`` (no cards at turn start)."""

    seat: int
    reason: str


@dataclass(frozen=True)
class Forfeited:
    """A seat is out of the game for good (RULES.md, Time and Resigning): ``"time"``, its
    game clock ran out; ``"resigned"``, it resigned.

    It is out of the round too (no PlayerOut), is dealt no more turns, can no longer
    win, and ranks last (:attr:`Outcome.forfeited`).  A turn it had begun is taken
    back first, as a fold's (a TurnTakenBack fact before this one).
    """

    seat: int
    reason: str


@dataclass(frozen=True)
class RoundWon:
    """A round was won; ``cards`` are the cards scored (empty without Advanced scoring)."""

    round: int
    seat: int
    rule: Color
    cards: tuple[Card, ...]


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended.  ``winners`` has more than one seat for a shared win,
    and none in a game aborted before anyone moved (reason ``"aborted"``)."""

    winners: tuple[int, ...]
    scores: tuple[int, ...]
    round_wins: tuple[int, ...]
    # "rounds", "target", "deck"; or, when all but one seat forfeited, the last forfeit's
    # reason: "time" or "resigned"; "aborted" (RULES.md, Aborting: no winners);
    # "adjudicated" (RULES.md, Adjudication: the winners an operator decided, maybe none)
    reason: str
    # Seats out of the game (Forfeited), in the order they went out: they rank last, the
    # first out lowest.  Empty in every game where nobody forfeited.
    forfeited: tuple[int, ...] = ()


@dataclass(frozen=True)
class GameOver:
    """The game ended with this outcome."""

    outcome: Outcome


Fact = RoundDealt | StepApplied | CardDrawn | TurnTakenBack | PlayerOut | Forfeited | RoundWon | GameOver
FACT_TYPES = (RoundDealt, StepApplied, CardDrawn, TurnTakenBack, PlayerOut, Forfeited, RoundWon, GameOver)
