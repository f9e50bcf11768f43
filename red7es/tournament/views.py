"""A tournament as `red7 tournament list/show/standings/report` show it: one place, so
the CLI's ``--json`` and the HTTP gateway's ``/api/tournaments`` say exactly the same.

Each function takes a folded :class:`TournamentState` (and, for ``show``, the games'
statuses as their metas say them) and returns plain JSON-able data, or the HTML page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import redis

from ..service.codec import CorruptEvent, seat_data
from ..service.store import GameStore
from .ids import NoSuchTournament
from .lifecycle import load
from .rating import rating_history
from .report import render_report
from .standings import standings
from .state import TournamentCorrupt, TournamentState
from .store import TournamentStore

__all__ = [
    "RedisTournaments",
    "list_data",
    "progress",
    "report_page",
    "show_data",
    "show_state",
    "standings_data",
    "summary_data",
]


def progress(state: TournamentState) -> str:
    """Where a tournament stands: ``not started`` until a run pairs its first round (created
    and never run, nothing is under way), then ``in progress``, then ``finished``."""
    if state.finished is not None:
        return "finished"
    return "in progress" if state.current_round else "not started"


def summary_data(state: TournamentState) -> dict[str, Any]:
    """One tournament of `red7 tournament list --json`."""
    spec = state.spec
    return {
        "tournament": spec.tournament,
        "name": spec.name,
        "format": spec.format,
        "entrants": len(spec.entrants),
        "table_size": spec.table_size,
        "rounds": spec.rounds,
        "games_played": len(state.results),
        "games_total": state.total_games,
        "finished": state.finished is not None,
        "status": progress(state),
        "created": spec.created,
    }


def list_data(
    connection: redis.Redis, limit: int, loader: Callable[[str], TournamentState] | None = None
) -> list[dict[str, Any]]:
    """`red7 tournament list --json`: the newest ``limit`` tournaments; one that cannot be
    read is ``{"tournament", "error"}`` rather than the end of the list."""
    read = loader or (lambda tid: load(connection, tid))
    items: list[dict[str, Any]] = []
    for tid in TournamentStore(connection).tournaments(limit):
        try:
            items.append(summary_data(read(tid)))
        except (NoSuchTournament, TournamentCorrupt, CorruptEvent) as exc:
            items.append({"tournament": tid, "error": str(exc)})
    return items


def show_data(state: TournamentState, statuses: Mapping[str, str | None]) -> dict[str, Any]:
    """`red7 tournament show --json`: entrants, every round's tables with their games'
    status (``recorded`` once the tournament has the result, else the game's own status,
    or ``not created``) and winners."""
    spec = state.spec
    names = [e.name for e in spec.entrants]

    def status_of(game: str) -> str:
        if game in state.results:
            return "recorded"
        return statuses.get(game) or "not created"

    rounds: list[dict[str, Any]] = [
        {
            "round": p.round,
            "byes": [names[e] for e in p.byes],
            "tables": [
                {
                    "table": t.table,
                    "game": t.game,
                    "seats": [names[e] for e in t.seats],
                    "status": status_of(t.game),
                    "winners": (
                        [names[t.seats[w]] for w in state.results[t.game].winners] if t.game in state.results else None
                    ),
                    "reason": state.results[t.game].reason if t.game in state.results else None,
                }
                for t in p.tables
            ],
        }
        for p in state.paired_rounds
    ]
    return {
        "tournament": spec.tournament,
        "name": spec.name,
        "format": spec.format,
        "variant": spec.variant.to_dict(),
        "table_size": spec.table_size,
        "rounds": spec.rounds,
        "entrants": [seat_data(e) for e in spec.entrants],
        "withdrawn": {spec.entrants[e].name: w.reason for e, w in state.withdrawn.items()},
        "commitment": spec.commitment,
        "seed": state.finished.seed if state.finished else None,
        "finished": state.finished is not None,
        "games_played": len(state.results),
        "games_total": state.total_games,
        "paired": rounds,
    }


def show_state(connection: redis.Redis, state: TournamentState) -> dict[str, Any]:
    """:func:`show_data`, with the statuses of its games read from their metas."""
    games = [t.game for _r, t in state.paired_games]
    metas = GameStore(connection).metas(games)
    return show_data(state, {g: meta.get("status") for g, meta in zip(games, metas, strict=True)})


def standings_data(state: TournamentState) -> dict[str, Any]:
    """`red7 tournament standings --json`."""
    spec = state.spec
    return {
        "tournament": spec.tournament,
        "name": spec.name,
        "format": spec.format,
        "finished": state.finished is not None,
        "rounds_paired": state.current_round,
        "rounds": spec.rounds,
        "games_played": len(state.results),
        "games_total": state.total_games,
        "standings": [
            r.as_dict() for r in standings(spec, state.paired_rounds, state.results, withdrawn=state.withdrawn)
        ],
    }


def report_page(state: TournamentState) -> str:
    """The self-contained HTML report `red7 tournament report` writes."""
    spec = state.spec
    rounds = state.paired_rounds
    history = rating_history(spec, rounds, state.results)
    return render_report(
        spec,
        standings(spec, rounds, state.results, history, withdrawn=state.withdrawn),
        history,
        rounds,
        state.results,
        finished=state.finished is not None,
    )


class RedisTournaments:
    """The tournament reads of the players' commands (list, show, standings, report), on
    Redis: :class:`red7es.service.transport.TournamentReader`, whose other implementation
    asks a gateway, which answers with these same functions."""

    def __init__(self, connection: redis.Redis) -> None:
        self.connection = connection

    def tournaments(self, limit: int) -> list[dict[str, Any]]:
        return list_data(self.connection, limit)

    def tournament(self, tournament: str) -> dict[str, Any]:
        return show_state(self.connection, load(self.connection, tournament))

    def tournament_standings(self, tournament: str) -> dict[str, Any]:
        return standings_data(load(self.connection, tournament))

    def tournament_report(self, tournament: str) -> str:
        return report_page(load(self.connection, tournament))
