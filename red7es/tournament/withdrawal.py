"""Withdrawing an entrant from a tournament (docs/tournaments.md, Withdrawing).

An organiser withdraws an entrant who is gone for good (``red7 tournament withdraw``):
one ``EntrantWithdrew`` event in the tournament's stream, then the entrant's seat is
withdrawn by the operator (RULES.md, Withdrawal) from every game of theirs not recorded
yet, so each forfeits and the others play on.  Swiss pairs the entrant no more; a round
robin's fixed schedule still seats them, and those games are forfeited the same way as
the runner creates them.  Both this module and the runner withdraw seats, so a withdrawal
made while no run is going takes effect at once, and one made during a run as well.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..service.client import GameService, Rejected, ServiceError
from ..service.table import reason_problem
from .events import EntrantWithdrew, Seating
from .ids import TournamentError
from .lifecycle import load
from .state import TournamentState
from .store import TournamentStore

__all__ = ["Withdrawal", "withdraw_entrant", "withdraw_seats"]


@dataclass(frozen=True)
class Withdrawal:
    """An entrant withdrawn: the event written, and the games its seat was withdrawn from now."""

    event: EntrantWithdrew
    games: list[str]


def withdraw_entrant(service: GameService, tournament: str, name: str, reason: str) -> Withdrawal:
    """Withdraw entrant ``name`` from ``tournament`` for ``reason``, and withdraw its seat
    from every game of theirs under way.

    Raises :class:`TournamentError` for a tournament finished, no such entrant, one withdrawn
    already, or a reason empty or too long (:func:`~red7es.service.table.reason_problem`)
    (and NoSuchTournament, CorruptEvent, TournamentCorrupt as :func:`load` does).
    """
    problem = reason_problem(reason, "a withdrawal")
    if problem is not None:
        raise TournamentError(problem)
    store = TournamentStore(service.redis)
    for _attempt in range(20):
        state = load(service.redis, tournament)
        entrant = _entrant(state, tournament, name)
        event = EntrantWithdrew(entrant, reason)
        if store.append_after(tournament, state, [event]):
            store.catch_up(tournament, state)
            paired = [t for _r, t in state.paired_games if t.game not in state.results]
            return Withdrawal(event, withdraw_seats(service, state, paired, set()))
    raise TournamentError(f"tournament {tournament} kept changing: try again")


def _entrant(state: TournamentState, tournament: str, name: str) -> int:
    """The index of entrant ``name``, who may still withdraw."""
    if state.finished is not None:
        raise TournamentError(f"tournament {tournament} is finished: nobody can withdraw from it")
    names = [e.name for e in state.spec.entrants]
    if name not in names:
        raise TournamentError(f"tournament {tournament} has no entrant {name!r}")
    entrant = names.index(name)
    if entrant in state.withdrawn:
        raise TournamentError(f"{name} has withdrawn from tournament {tournament} already")
    return entrant


def withdraw_seats(
    service: GameService, state: TournamentState, games: Iterable[Seating], made: set[tuple[str, int]]
) -> list[str]:
    """Withdraw the seats of every withdrawn entrant from ``games`` (tournament games not
    recorded), in the order the entrants were withdrawn; returns the games changed.

    ``made`` holds the (game, entrant) pairs done already, and gets the new ones.  A game
    over, or a seat out already (by an earlier withdrawal, a resign, its clock), is left as
    it is; a game that does not exist yet, or no worker has created yet, is left for a
    later call (the runner's next pass).
    """
    changed: list[str] = []
    for t in games:
        for entrant, withdrawal in state.withdrawn.items():
            if entrant not in t.seats or (t.game, entrant) in made:
                continue
            try:
                service.withdraw(t.game, state.spec.entrants[entrant].name, withdrawal.reason)
                changed.append(t.game)
            except Rejected:
                pass  # over, or the seat out already: nothing to do
            except (ServiceError, LookupError):  # NoSuchGame: not created yet
                continue  # not created yet: later
            made.add((t.game, entrant))
    return changed
