"""Points from a game's finishing order, and from byes.

A game's finishing order comes from its outcome: the winners first, then by final
score, then by rounds won; seats equal on all three share a place.  Each seat scores
the share of its head-to-head comparisons it won at the table::

    points = (opponents finishing below + ½ · opponents tied with) / (table size − 1)

so a game is worth 0 to 1 point whatever the table size, a two-player game scores 1 / ½
/ 0 like chess, and a four-player basic game (one winner, three tied) scores 1, ⅓, ⅓, ⅓.
Points are exact fractions, so ties are exact.  A Swiss bye scores 1 (as a win, the
FIDE convention); a round-robin bye is a rest and scores nothing.  A game aborted before
anyone moved (RULES.md, Aborting), or adjudicated with no winner, is a loss for every
seat: 0 points each, so a seat gains nothing by aborting a game it expects to lose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from .events import SWISS, GameFinished, RoundPaired, TournamentCreated

__all__ = ["BYE_POINTS", "bye_points", "entrant_points", "game_points", "places"]

BYE_POINTS = {SWISS: Fraction(1)}  # a Swiss bye is a win; a round-robin bye is a rest (0)


def places(result: GameFinished) -> list[int]:
    """Finishing place of each seat (1 = first); equal seats share the better place.

    A forfeited seat finishes below every seat still in the game, the first out lowest
    (RULES.md, Time); only results under tournament rules 2 on record them."""
    out = {seat: i for i, seat in enumerate(result.forfeited)}
    still_in = len(result.forfeited)
    key = [
        (seat in result.winners, out.get(seat, still_in), result.scores[seat], result.round_wins[seat])
        for seat in range(len(result.scores))
    ]
    return [1 + sum(other > mine for other in key) for mine in key]


def game_points(result: GameFinished) -> list[Fraction]:
    """Points of each seat: the share of the other seats it finished ahead of (ties ½);
    0 for every seat of a game with no result (aborted, or adjudicated with no winner)."""
    p = places(result)
    k = len(p)
    if result.void:
        return [Fraction(0)] * k
    return [
        Fraction(sum(2 if p[o] > p[s] else 1 if p[o] == p[s] else 0 for o in range(k) if o != s), 2 * (k - 1))
        for s in range(k)
    ]


def bye_points(spec: TournamentCreated) -> Fraction:
    return BYE_POINTS.get(spec.format, Fraction(0))


def entrant_points(
    spec: TournamentCreated, rounds: Sequence[RoundPaired], results: Mapping[str, GameFinished]
) -> list[Fraction]:
    """Each entrant's points over the recorded games and the byes of ``rounds``."""
    points = [Fraction(0)] * len(spec.entrants)
    for paired in rounds:
        for e in paired.byes:
            points[e] += bye_points(spec)
        for t in paired.tables:
            result = results.get(t.game)
            if result is not None:
                for seat, p in enumerate(game_points(result)):
                    points[t.seats[seat]] += p
    return points
