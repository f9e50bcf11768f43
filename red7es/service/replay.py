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

Events are numbered by their ``seq`` (docs/events.md), not by their place in the log:
in a log an event was deleted from, event 21 is still event 21.  :meth:`Replay.problem`
says why a log does not verify (a gap in the sequence numbers, a broken hash chain,
the store's version or head, a fact the rules do not give): a replay shows what the
log says, and ``red7 replay`` warns when that may not be what happened.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..facts import FACT_TYPES, CardDrawn, GameOver, RoundDealt
from .codec import Recorded
from .envelope import chain_problem
from .event_text import event_difference, show_event
from .events import CommandApplied, CommandRejected, GameCreated, LogEvent, SeatJoined
from .store import whole_number
from .table import Table, public_event

__all__ = ["Replay", "ReplayError", "TurnSpan"]


# What folding an event the rules refuse raises (IllegalStep is a ValueError), or one
# whose fields are not what they should be: a damaged log, never a traceback
UNFOLDABLE = (ValueError, IndexError, KeyError, TypeError)


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

    def __init__(
        self, events: Sequence[LogEvent | Recorded], *, version: int | None = None, head: str | None = None
    ) -> None:
        """``events`` decoded from the log (Recorded: with their seq numbers and hash chain,
        which :meth:`problem` checks), and the store's ``version`` and ``head`` (hex) if known."""
        recorded = [e for e in events if isinstance(e, Recorded)]
        self.recorded: list[Recorded] = recorded if len(recorded) == len(events) else []
        self.events: list[LogEvent] = [e.event if isinstance(e, Recorded) else e for e in events]
        if not self.events or not isinstance(self.events[0], GameCreated):
            raise ReplayError("a game log starts with GameCreated")
        self.created: GameCreated = self.events[0]
        self.over = any(isinstance(e, GameOver) for e in self.events)
        # Each event's number: its seq when the log carries them, else its place
        self.seqs = [r.seq for r in self.recorded] or list(range(len(self.events)))
        self._places: dict[int, int] = {}
        for place, seq in enumerate(self.seqs):
            self._places.setdefault(seq, place)
        self.store = (version, head)

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
        number = whole_number(name)
        if number is not None and number < len(names):
            return number
        raise ReplayError(f"no seat {name!r} in game {self.game_id} (seats: {', '.join(names)})")

    def point(self, at: int | None) -> int:
        """Where event number ``at`` is in the log (default: the last event), checked;
        a negative ``at`` counts from the end (-1 is the last)."""
        n = len(self.events)
        if at is None:
            return n - 1
        place = at + n if at < 0 else self._places.get(at, -1)
        if not 0 <= place < n:
            raise ReplayError(f"there is no event {at}: game {self.game_id} has events {self.numbers()}")
        return place

    def numbers(self) -> str:
        """The event numbers the log holds, as ranges: ``0-48``, or ``0-19, 21-48`` in a log with a gap."""
        runs: list[list[int]] = []
        for seq in self.seqs:
            if runs and seq == runs[-1][1] + 1:
                runs[-1][1] = seq
            else:
                runs.append([seq, seq])
        return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in runs)

    def table(self, at: int | None = None) -> Table:
        """The table right after event ``at`` (default: the last event)."""
        return self._table(self.point(at))

    def _table(self, place: int) -> Table:
        _, table, stopped = self._fold(place)
        if stopped is not None:
            raise ReplayError(stopped)
        return table

    def fold(self, at: int | None = None) -> tuple[int, Table, str | None]:
        """The table right after event ``at`` (default: the last event) or, in a damaged log
        that cannot be folded that far, right after the last event that can be: that
        event's place, the table, and why folding stopped there (None when it did not)."""
        return self._fold(self.point(at))

    def _fold(self, place: int) -> tuple[int, Table, str | None]:
        table = self._created()
        for next_place in range(1, place + 1):
            try:
                table.fold(self.events[next_place])
            except UNFOLDABLE as exc:
                # The failed fold may have changed the table half-way: fold the events before it again
                last = next_place - 1
                return last, self._created(self.events[1 : last + 1]), self._stuck(last, exc)
        return place, table, None

    def _created(self, more: Sequence[LogEvent] = ()) -> Table:
        """The table of event 0 (then ``more``, which are known to fold)."""
        try:
            return Table.rebuild([self.created, *more], None)
        except UNFOLDABLE as exc:
            raise ReplayError(f"game {self.game_id} cannot be replayed: event 0: {exc}") from None

    def _stuck(self, last: int, exc: Exception) -> str:
        """Why the log cannot be folded past the event at place ``last``."""
        return f"game {self.game_id} cannot be replayed past event {self.seqs[last]}: {exc}"

    def view(self, at: int | None = None, seat: int | None = None) -> dict[str, Any]:
        """The public view, or ``seat``'s view, right after event ``at``."""
        place = self.point(at)
        return view_of(self._table(place), self.seqs[place] + 1, seat)

    def problem(self) -> str | None:
        """Why this log does not verify, in a few words (the first thing found), or None.

        What can be checked without the seed: sequence numbers 0, 1, 2, ... and the hash
        chain (for a log of Recorded events), the store's version and head (if given),
        and every fact the rules derive from the deals and steps the log records
        (a PlayerOut, a RoundWon, GameOver: what ``red7 replay`` shows is the rules'
        version of them, so a log that claims otherwise must be said to). ``red7 audit``
        checks all of it and more (signatures, the deals from the seed).
        """
        return self._chain_problem() or self._fact_problem()

    def _chain_problem(self) -> str | None:
        problem = chain_problem(self.recorded)
        if problem is not None:
            return problem
        version, stored_head = self.store
        if version is not None and version != len(self.events):
            return f"the log holds {len(self.events)} events, the store's version says {version}"
        if stored_head and self.recorded and stored_head != self.recorded[-1].hash.hex():
            return "the last event's hash is not the store's head"
        return None

    def _fact_problem(self) -> str | None:
        table = self._created()
        logged: list[int] = []  # where each fact of the log is
        for place in range(1, len(self.events)):
            event = self.events[place]
            try:
                table.fold(event)
            except UNFOLDABLE as exc:
                return f"event {self.seqs[place]} cannot be replayed: {exc}"
            if isinstance(event, FACT_TYPES):
                logged.append(place)
        derived = table.game.log or []
        for fact, place in zip(derived, logged, strict=False):
            if fact != self.events[place]:
                given, found = event_difference(fact, self.events[place])
                return f"event {self.seqs[place]} says {found}, the rules give {given}"
        if len(derived) > len(logged):
            return f"the log ends at event {self.seqs[-1]}, the rules give {show_event(derived[len(logged)])} next"
        if len(logged) > len(derived):
            place = logged[len(derived)]
            return f"event {self.seqs[place]} is a fact the rules do not give there"
        return None

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
        table = self._created()
        folded = 0
        for turn in turns:
            if turn.last < begin:
                continue
            for place in range(folded + 1, turn.last + 1):
                try:
                    table.fold(self.events[place])
                except UNFOLDABLE as exc:
                    raise ReplayError(self._stuck(place - 1, exc)) from None
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
