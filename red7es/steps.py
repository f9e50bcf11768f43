"""Steps and turns in the notation of RULES.md, parsed and formatted both ways.

A :class:`Step` is an ``int`` (``kind * 64 + card``, card 63 for none) so the
engine can move steps around as plain integers; the 8 * 50 possible steps are cached
instances that print in notation (``p:R7``, ``7c:G2``, ``draw``, ``end``).

A :class:`Turn` is a batch of steps submitted together.  ``end`` is implied after the
last step, so the canonical text of a turn leaves it out (``p:R7 c:B3``); a turn that
ends with ``fold`` has no implied end.  A turn whose text ends with ``...`` is *open*:
its steps are applied and the turn stays with the same player, which is how a player
sees the card a 3 made them draw before deciding the rest of the turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum

from .cards import ALL_CARDS, Card, CardError

__all__ = [
    "ABORT",
    "NO_CARD",
    "RESIGN",
    "Step",
    "StepError",
    "StepKind",
    "Turn",
    "command_text",
    "is_abort",
    "is_resign",
]

NO_CARD = 63


class StepError(ValueError):
    """Raised for text that is not a step or a turn."""


class StepKind(IntEnum):
    """What a step does; the value is the step code divided by 64."""

    PLAY = 0  # p:X   hand -> own palette
    CANVAS = 1  # c:X   hand -> Canvas
    DRAW = 2  # draw  optional Advanced draw
    SEVEN_CANVAS = 3  # 7c:X  own palette -> Canvas (action of a 7)
    SEVEN_DECK = 4  # 7d:X  own palette -> top of deck (action of a 7)
    ONE = 5  # 1:X   another palette -> top of deck (action of a 1)
    END = 6  # end
    FOLD = 7  # fold

    @property
    def prefix(self) -> str:
        return _PREFIX[self.value]

    @property
    def takes_card(self) -> bool:
        return self.value not in (2, 6, 7)


_PREFIX = ("p", "c", "draw", "7c", "7d", "1", "end", "fold")
_BY_PREFIX = {p: StepKind(i) for i, p in enumerate(_PREFIX)}


class Step(int):
    """One step of a turn, e.g. ``p:R7``; an ``int`` code ``kind * 64 + card``."""

    __slots__ = ()

    def __new__(cls, kind: StepKind | int, card: Card | int | str | None = None) -> Step:
        kind = StepKind(kind)
        if kind.takes_card:
            if card is None:
                raise StepError(f"step {kind.prefix!r} needs a card, e.g. {kind.prefix}:R7")
            code = kind * 64 + (Card.parse(card) if isinstance(card, str) else Card(card))
        else:
            if card is not None:
                raise StepError(f"step {kind.prefix!r} takes no card")
            code = kind * 64 + NO_CARD
        return STEPS[code]

    @classmethod
    def _make(cls, code: int) -> Step:
        return int.__new__(cls, code)

    @classmethod
    def from_code(cls, code: int) -> Step:
        """The cached step for an integer code (what the engine stores)."""
        step = STEPS.get(code)
        if step is None:
            raise StepError(f"not a step code: {code!r}")
        return step

    @classmethod
    def parse(cls, text: str | Step) -> Step:
        """Parse step notation, any case: ``p:R7``, ``c:b3``, ``7d:G2``, ``1:O4``, ``draw``."""
        if isinstance(text, Step):
            return text
        if not isinstance(text, str):
            raise StepError(f"not a step: {text!r}")
        prefix, sep, card_text = text.strip().partition(":")
        kind = _BY_PREFIX.get(prefix.lower())
        if kind is None:
            raise StepError(f"not a step: {text!r} (steps are p:R7 c:B3 draw 7c:G2 7d:G2 1:O4 end fold)")
        if kind.takes_card != bool(sep):
            if kind.takes_card:
                raise StepError(f"step {text!r} needs a card, e.g. {kind.prefix}:R7")
            raise StepError(f"step {text!r} takes no card")
        if not kind.takes_card:
            return STEPS[kind * 64 + NO_CARD]
        if not card_text.strip():
            raise StepError(f"step {text!r} needs a card, e.g. {kind.prefix}:R7")
        try:
            card = Card.parse(card_text)
        except CardError as exc:
            raise StepError(f"in step {text!r}: {exc}") from None
        return STEPS[kind * 64 + card]

    @property
    def kind(self) -> StepKind:
        return StepKind(int(self) >> 6)

    @property
    def card(self) -> Card | None:
        c = int(self) & 63
        return None if c == NO_CARD else ALL_CARDS[c]

    def __str__(self) -> str:
        return _STEP_TEXT[int(self)]

    def __repr__(self) -> str:
        return f"Step.parse({str(self)!r})"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __reduce__(self) -> tuple[type[Step], tuple[str]]:
        return (_parse_step, (str(self),))  # type: ignore[return-value]


def _parse_step(text: str) -> Step:
    return Step.parse(text)


STEPS: dict[int, Step] = {}
_STEP_TEXT: dict[int, str] = {}
for _kind in StepKind:
    if _kind.takes_card:
        for _card in ALL_CARDS:
            _code = _kind * 64 + _card
            _STEP_TEXT[_code] = f"{_kind.prefix}:{_card}"
            STEPS[_code] = Step._make(_code)
    else:
        _code = _kind * 64 + NO_CARD
        _STEP_TEXT[_code] = _kind.prefix
        STEPS[_code] = Step._make(_code)

END = STEPS[StepKind.END * 64 + NO_CARD]
FOLD = STEPS[StepKind.FOLD * 64 + NO_CARD]
DRAW = STEPS[StepKind.DRAW * 64 + NO_CARD]


@dataclass(frozen=True)
class Turn:
    """A batch of steps applied all-or-nothing, with ``end`` implied unless ``open``.

    ``Turn.parse("p:R7 c:B3")`` plays R7, discards B3 and ends the turn;
    ``Turn.parse("p:G3 ...")`` plays G3 and leaves the turn open.
    """

    steps: tuple[Step, ...]
    open: bool = False

    def __post_init__(self) -> None:
        steps = tuple(Step.parse(s) if isinstance(s, str) else Step.from_code(s) for s in self.steps)
        # Fix: check that end/fold is last *before* dropping a written trailing 'end';
        # checking after it let "fold end" pass as "fold" and "p:R7 end end" keep an
        # 'end' inside the steps (RULES.md: end/fold finish the turn, nothing follows).
        for i, step in enumerate(steps):
            if step in (END, FOLD) and i != len(steps) - 1:
                raise StepError(f"{step} must be the last step of a turn")
        if steps and steps[-1] == END:
            if self.open:
                raise StepError("an open turn cannot end with 'end'")
            steps = steps[:-1]
        if self.open and steps and steps[-1] == FOLD:
            raise StepError("an open turn cannot end with 'fold'")
        object.__setattr__(self, "steps", steps)

    @classmethod
    def parse(cls, text: str | Turn | Step | Iterable[str | Step]) -> Turn:
        """Parse a turn from text (``"p:R7 c:B3"``), a step, or an iterable of steps."""
        if isinstance(text, Turn):
            return text
        if isinstance(text, Step):
            return cls((text,))
        tokens: Sequence[str | Step]
        if isinstance(text, str):
            tokens = text.replace(",", " ").split()
        else:
            tokens = [t if isinstance(t, Step) else str(t) for t in text]
        is_open = bool(tokens) and tokens[-1] == "..."
        if is_open:
            tokens = tokens[:-1]
            if not tokens:
                raise StepError("an open turn needs at least one step before '...'")
        if not tokens:
            raise StepError("empty turn: give at least one step, e.g. 'p:R7' or 'fold'")
        return cls(tuple(t if isinstance(t, Step) else Step.parse(t) for t in tokens), is_open)

    @property
    def ends(self) -> bool:
        """True when applying this turn finishes the player's turn (end or fold)."""
        return not self.open

    @property
    def is_fold(self) -> bool:
        return bool(self.steps) and self.steps[-1] == FOLD

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def __len__(self) -> int:
        return len(self.steps)

    def __str__(self) -> str:
        text = " ".join(_STEP_TEXT[s] for s in self.steps)
        if self.open:
            return text + " ..."
        return text or "end"

    def __repr__(self) -> str:
        return f"Turn.parse({str(self)!r})"


RESIGN = "resign"
ABORT = "abort"


def is_resign(text: str | Turn | Step) -> bool:
    """Whether a seat's command text is ``resign`` (any case, spaces around).

    Resigning gives up the whole game, not a turn (RULES.md, Resigning), so it is no
    :class:`Turn`: a seat's command is either this word or a turn.  It goes through the
    same signed path as a turn, and the referee tells the two apart with this.
    """
    return isinstance(text, str) and text.strip().lower() == RESIGN


def is_abort(text: str | Turn | Step) -> bool:
    """Whether a seat's command text is ``abort`` (any case, spaces around).

    Aborting ends a game nobody has moved in yet, with no winner (RULES.md, Aborting).
    Like :data:`RESIGN` it is no :class:`Turn` but a word sent, signed, in a turn's place.
    """
    return isinstance(text, str) and text.strip().lower() == ABORT


def command_text(text: str | Turn | Step) -> str:
    """A seat's command text, canonical: :data:`RESIGN`, :data:`ABORT` or the turn's text
    (what is signed).

    Raises :class:`StepError` for text that is none of them.
    """
    if is_resign(text):
        return RESIGN
    if is_abort(text):
        return ABORT
    return str(Turn.parse(text))
