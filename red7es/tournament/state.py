"""A tournament folded from its events: rounds paired, games recorded, where the stream is.

The fold is strict: an event that contradicts the ones before it (a second
TournamentCreated, a round paired out of order, a game recorded twice or never paired)
raises :class:`TournamentCorrupt`.  The runner never writes such events (every append
is a compare-and-append from a folded state), so meeting one means the stream was
tampered with, and the audit reports it as the first divergence.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..service.codec import GENESIS
from .codec import TRecorded
from .events import (
    SWISS,
    EntrantWithdrew,
    GameFinished,
    RoundPaired,
    Seating,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
)
from .pairing import total_games

__all__ = ["TournamentState", "TournamentCorrupt"]


class TournamentCorrupt(ValueError):
    """The tournament's stream contradicts itself."""


@dataclass
class TournamentState:
    """Everything the events say, plus the stream position to append after."""

    created: TournamentCreated | None = None
    rounds: dict[int, RoundPaired] = field(default_factory=dict)
    results: dict[str, GameFinished] = field(default_factory=dict)
    finished: TournamentFinished | None = None
    # entrant -> its withdrawal (docs/tournaments.md, Withdrawing), in the order they came
    withdrawn: dict[int, EntrantWithdrew] = field(default_factory=dict)
    withdrawn_after: dict[int, int] = field(default_factory=dict)  # entrant -> rounds paired before it
    withdrawn_ids: dict[int, str] = field(default_factory=dict)  # entrant -> stream id of its withdrawal
    length: int = 0  # events folded: the expected length of the next append
    head: bytes = GENESIS  # hash of the last event folded
    last_id: str = "0-0"  # stream id of the last event folded
    _seating: dict[str, tuple[int, Seating]] = field(default_factory=dict)

    @classmethod
    def of(cls, recorded: Iterable[TRecorded]) -> TournamentState:
        state = cls()
        for r in recorded:
            state.fold(r)
        return state

    # ------------------------------------------------------------------ folding

    def fold(self, r: TRecorded, stream_id: str | None = None) -> None:
        """Apply one event; raises :class:`TournamentCorrupt` if it does not follow."""
        where = f"tournament event {r.seq}"
        if r.seq != self.length:
            raise TournamentCorrupt(f"{where} is numbered {r.seq}, expected {self.length}")
        if r.prev != self.head:
            raise TournamentCorrupt(f"{where} does not chain to event {self.length - 1}")
        e: TournamentEvent = r.event
        if self.created is None and not isinstance(e, TournamentCreated):
            raise TournamentCorrupt(f"{where}: a tournament starts with TournamentCreated, not {r.type}")
        if self.finished is not None:
            raise TournamentCorrupt(f"{where}: {r.type} after TournamentFinished")
        if isinstance(e, TournamentCreated):
            if self.created is not None:
                raise TournamentCorrupt(f"{where}: a second TournamentCreated")
            self.created = e
        elif isinstance(e, RoundPaired):
            self._fold_round(e, where)
        elif isinstance(e, GameFinished):
            self._fold_result(e, where)
        elif isinstance(e, EntrantWithdrew):
            if not 0 <= e.entrant < len(self.spec.entrants) or e.entrant in self.withdrawn:
                raise TournamentCorrupt(f"{where}: entrant {e.entrant} cannot withdraw (no such entrant, or again)")
            self.withdrawn[e.entrant] = e
            self.withdrawn_after[e.entrant] = len(self.rounds)
            self.withdrawn_ids[e.entrant] = stream_id or "0-0"
        else:
            if not self.complete:
                raise TournamentCorrupt(f"{where}: TournamentFinished before every game was recorded")
            self.finished = e
        self.length += 1
        self.head = r.hash
        if stream_id is not None:
            self.last_id = stream_id

    def _fold_round(self, e: RoundPaired, where: str) -> None:
        spec = self.spec
        if e.round != len(self.rounds) + 1 or e.round > spec.rounds:
            raise TournamentCorrupt(f"{where}: round {e.round} paired after {len(self.rounds)} of {spec.rounds}")
        k = spec.table_size
        seen: list[int] = [s for t in e.tables for s in t.seats] + list(e.byes)
        if sorted(seen) != self.pairable or any(len(t.seats) != k for t in e.tables):
            raise TournamentCorrupt(f"{where}: round {e.round} does not seat every entrant once at tables of {k}")
        for t in e.tables:
            if t.game in self._seating:
                raise TournamentCorrupt(f"{where}: game {t.game} paired twice")
            self._seating[t.game] = (e.round, t)
        self.rounds[e.round] = e

    def _fold_result(self, e: GameFinished, where: str) -> None:
        paired = self._seating.get(e.game)
        if paired is None or paired[0] != e.round:
            raise TournamentCorrupt(f"{where}: game {e.game} finished but was not paired in round {e.round}")
        if e.game in self.results:
            raise TournamentCorrupt(f"{where}: game {e.game} recorded twice")
        k = self.spec.table_size
        no_winner = not e.winners and not e.void  # only a void game has none (aborted, or adjudicated so)
        if len(e.scores) != k or len(e.round_wins) != k or no_winner or any(not 0 <= w < k for w in e.winners):
            raise TournamentCorrupt(f"{where}: game {e.game} has a malformed outcome")
        out = e.forfeited
        if out and (
            not self.spec.places_forfeits
            or len(set(out)) != len(out)
            or any(not 0 <= s < k or s in e.winners for s in out)
        ):
            raise TournamentCorrupt(f"{where}: game {e.game} records forfeited seats {list(out)} it cannot have")
        if e.forfeit_reasons and (not self.spec.names_forfeit_reasons or len(e.forfeit_reasons) != len(out)):
            raise TournamentCorrupt(f"{where}: game {e.game} records reasons {list(e.forfeit_reasons)} for no forfeit")
        self.results[e.game] = e

    # ------------------------------------------------------------------ queries

    @property
    def spec(self) -> TournamentCreated:
        if self.created is None:
            raise TournamentCorrupt("the tournament has no TournamentCreated event")
        return self.created

    @property
    def pairable(self) -> list[int]:
        """The entrants the next round pairs (a table or a bye each): every entrant in a round
        robin (its schedule is fixed: a withdrawn entrant's games forfeit), and those not
        withdrawn in a Swiss."""
        everyone = range(len(self.spec.entrants))
        if self.spec.format != SWISS:
            return list(everyone)
        return [e for e in everyone if e not in self.withdrawn]

    def withdrawn_before(self, round_number: int) -> set[int]:
        """The entrants withdrawn before round ``round_number`` was paired (Swiss pairs them no more)."""
        return {e for e, paired in self.withdrawn_after.items() if paired < round_number}

    @property
    def total_games(self) -> int:
        """How many games the whole tournament plays, as far as is known now: a Swiss round
        not paired yet seats as many tables as the entrants not withdrawn fill."""
        if self.spec.format != SWISS:
            return total_games(self.spec)
        paired = sum(len(p.tables) for p in self.rounds.values())
        return paired + (self.spec.rounds - len(self.rounds)) * (len(self.pairable) // self.spec.table_size)

    @property
    def paired_rounds(self) -> list[RoundPaired]:
        """Every round paired so far, in order."""
        return [self.rounds[r] for r in sorted(self.rounds)]

    @property
    def paired_games(self) -> list[tuple[int, Seating]]:
        """(round, seating) of every paired game, by round then table."""
        return [(p.round, t) for p in self.paired_rounds for t in p.tables]

    def seating(self, game: str) -> tuple[int, Seating]:
        return self._seating[game]

    def round_complete(self, round_number: int) -> bool:
        paired = self.rounds.get(round_number)
        return paired is not None and all(t.game in self.results for t in paired.tables)

    @property
    def complete(self) -> bool:
        """Every round paired and every game recorded."""
        return len(self.rounds) == self.spec.rounds and all(self.round_complete(r) for r in self.rounds)

    @property
    def current_round(self) -> int:
        """The last round paired (0 before any)."""
        return len(self.rounds)
