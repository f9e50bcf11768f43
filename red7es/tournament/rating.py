"""OpenSkill ratings of the entrants, round by round (Plackett-Luce, free-for-all).

Each game is one free-for-all match of 2 to 4 one-player teams, ranked by finishing
place (ties share a rank).  Games are rated in a fixed order — by round, then by table —
never in the order they happened to finish, so the ratings are a function of the
results alone and the audit can recompute them exactly.  A game aborted before anyone
moved, or adjudicated with no winner, is not rated: it has no result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openskill.models import PlackettLuce

from .events import GameFinished, RoundPaired, TournamentCreated
from .points import places

__all__ = ["Rating", "rating_history"]


@dataclass(frozen=True)
class Rating:
    """An OpenSkill rating: skill estimate ``mu`` and its uncertainty ``sigma``."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """A conservative skill (mu − 3σ): what the standings use as their last tie-break."""
        return self.mu - 3 * self.sigma


def rating_history(
    spec: TournamentCreated, rounds: Sequence[RoundPaired], results: Mapping[str, GameFinished]
) -> list[list[Rating]]:
    """Ratings of every entrant before round 1 and after each round: ``history[r][entrant]``."""
    model = PlackettLuce()
    current: list[Any] = [model.rating(name=s.name) for s in spec.entrants]
    history = [_snapshot(current)]
    for paired in sorted(rounds, key=lambda r: r.round):
        for t in sorted(paired.tables, key=lambda t: t.table):
            result = results.get(t.game)
            if result is None or result.void:  # no result: it says nothing of skill
                continue
            teams = [[current[e]] for e in t.seats]
            rated = model.rate(teams, ranks=[float(p) for p in places(result)])
            for seat, e in enumerate(t.seats):
                current[e] = rated[seat][0]
        history.append(_snapshot(current))
    return history


def _snapshot(ratings: list[Any]) -> list[Rating]:
    return [Rating(float(r.mu), float(r.sigma)) for r in ratings]
