"""Replay: a game's state after any event, rebuilt from its log alone.

The log is enough: RoundDealt events carry the deals, so no seed is needed, and
:class:`~red7es.service.table.Table` folds the facts through the engine's
``apply_fact`` (every step checked against the rules again).  Views come from the
table's own ``public_view``/``seat_view``, the very functions the worker publishes
views with, so a replayed view is what the service showed at that version, and a
seat's view holds only what that seat could see then (its own hand, never another
hand or the deck order, even once the game is over).

Folding is cheap (a 500-event game folds in a few milliseconds), so a view at any
point is built from scratch; ``--step`` folds incrementally instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..facts import CardDrawn, GameOver, RoundDealt
from .codec import Recorded
from .events import CommandApplied, CommandRejected, GameCreated, LogEvent, SeatJoined
from .table import Table, public_event

__all__ = ["Replay", "ReplayError", "TurnSpan"]


class ReplayError(ValueError):
    """A log that cannot be replayed, or a point or seat that does not exist."""


@dataclass(frozen=True)
class TurnSpan:
    """The events that answered one command: ``first`` .. ``last`` inclusive."""

    first: int
    last: int


class Replay:
    """A game's log, ready to be viewed at any event.

    >>> replay = Replay(events)          # doctest: +SKIP
    >>> replay.view(at=40, seat=1)       # what seat 1 saw after event 40
    """

    def __init__(self, events: Sequence[LogEvent | Recorded]) -> None:
        self.events: list[LogEvent] = [e.event if isinstance(e, Recorded) else e for e in events]
        if not self.events or not isinstance(self.events[0], GameCreated):
            raise ReplayError("a game log starts with GameCreated")
        self.created: GameCreated = self.events[0]
        self.over = any(isinstance(e, GameOver) for e in self.events)

    def __len__(self) -> int:
        return len(self.events)

    @property
    def game_id(self) -> str:
        return self.created.game

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.created.seats]

    def seat_of(self, name: str) -> int:
        """A seat by name (or number); ReplayError listing the seats otherwise."""
        names = self.names
        if name in names:
            return names.index(name)
        if name.isdigit() and int(name) < len(names):
            return int(name)
        raise ReplayError(f"no seat {name!r} in game {self.game_id} (seats: {', '.join(names)})")

    def point(self, at: int | None) -> int:
        """The event number ``at`` (default: the last), checked; negative counts from the end."""
        n = len(self.events)
        if at is None:
            return n - 1
        index = at + n if at < 0 else at
        if not 0 <= index < n:
            raise ReplayError(f"there is no event {at}: game {self.game_id} has events 0 to {n - 1}")
        return index

    def table(self, at: int | None = None) -> Table:
        """The table right after event ``at`` (default: the last event)."""
        index = self.point(at)
        try:
            return Table.rebuild(self.events[: index + 1], None)
        except (ValueError, IndexError) as exc:  # IllegalStep is a ValueError: the log breaks the rules
            raise ReplayError(f"game {self.game_id} cannot be replayed past event {index}: {exc}") from None

    def view(self, at: int | None = None, seat: int | None = None) -> dict[str, Any]:
        """The public view, or ``seat``'s view, right after event ``at``."""
        index = self.point(at)
        return view_of(self.table(index), index + 1, seat)

    def turns(self) -> list[TurnSpan]:
        """The log cut where the service answered a command: creation, then each command."""
        out: list[TurnSpan] = []
        start = 0
        dealt = False
        for i, event in enumerate(self.events):
            if not dealt:
                dealt = isinstance(event, RoundDealt)
                continue
            if isinstance(event, CommandApplied | CommandRejected | SeatJoined) and i > start:
                out.append(TurnSpan(start, i - 1))
                start = i
        out.append(TurnSpan(start, len(self.events) - 1))
        return out

    def walk(self, at: int | None = None) -> Iterator[tuple[TurnSpan, Table]]:
        """Turn by turn from the turn holding event ``at`` (default: creation), folding as it goes."""
        turns = self.turns()
        begin = 0 if at is None else self.point(at)
        table = Table.rebuild(self.events[:1], None)
        folded = 0
        for turn in turns:
            if turn.last < begin:
                continue
            for event in self.events[folded + 1 : turn.last + 1]:
                table.fold(event)
            folded = turn.last
            yield turn, table

    def visible_events(self, turn: TurnSpan, seat: int | None) -> list[dict[str, Any]]:
        """The events of a turn as ``seat`` (or anyone) saw them: public parts, plus own draws."""
        out = []
        for event in self.events[turn.first : turn.last + 1]:
            shown = public_event(event, len(self.names))
            if shown is None:
                continue
            if seat is not None and isinstance(event, CardDrawn) and event.seat == seat:
                shown["card"] = str(event.card)
            out.append(shown)
        return out


def view_of(table: Table, version: int, seat: int | None) -> dict[str, Any]:
    """A table's view at ``version``, with the gap between two rounds shown as nobody to move."""
    view = table.public_view(version) if seat is None else table.seat_view(seat, version)
    if view.get("to_move") == -1:
        # Right after a RoundWon (before the next RoundDealt) or before the first
        # deal, the engine has nobody to move; the service never publishes this.
        view["to_move"] = None
        view.pop("legal", None)
    return view
