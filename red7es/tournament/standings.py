"""The standings: points, rounds won, tie-breaks and rating of every entrant.

Entrants are ordered by points, then (Swiss only) Buchholz, then head-to-head among
the entrants still tied, then rounds won, then rating (OpenSkill ordinal), then name;
entrants equal on everything but the name share a rank (docs/tournaments.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .events import SWISS, GameFinished, RoundPaired, TournamentCreated
from .points import entrant_points, places
from .rating import Rating, rating_history

__all__ = ["standing_figures", "Standing", "two_decimals", "standings"]


@dataclass(frozen=True)
class Standing:
    """One entrant's line in the standings."""

    rank: int
    entrant: int
    name: str
    kind: str
    bot: str | None
    games: int
    wins: int  # games won (a shared win counts)
    points: Fraction
    round_wins: int
    byes: int
    buchholz: Fraction | None  # Swiss only: sum of the points of every opponent met, per game
    head_to_head: Fraction  # points against the entrants tied with it on the earlier criteria
    rating: Rating
    head_to_head_games: int = 0  # games against the entrants tied with it: none, and head_to_head means nothing
    # games it went out of for good (GameFinished.forfeited: out of time on its clock, or
    # resigned; RULES.md, Time and Resigning): a no-show seated with a clock shows here
    forfeits: int = 0
    withdrawn: bool = False  # withdrawn from the tournament (docs/tournaments.md, Withdrawing)

    def as_dict(self) -> dict[str, object]:
        """Plain values for JSON and CSV (points as decimals, rounded to 4 places)."""
        return {
            "rank": self.rank,
            "name": self.name,
            "kind": self.kind,
            "bot": self.bot,
            "games": self.games,
            "wins": self.wins,
            "points": _num(self.points),
            "round_wins": self.round_wins,
            "byes": self.byes,
            "forfeits": self.forfeits,
            "withdrawn": self.withdrawn,
            "buchholz": None if self.buchholz is None else _num(self.buchholz),
            "head_to_head": _num(self.head_to_head),
            "head_to_head_games": self.head_to_head_games,
            "mu": round(self.rating.mu, 4),
            "sigma": round(self.rating.sigma, 4),
            "ordinal": round(self.rating.ordinal, 4),
        }

    def figures(self, swiss: bool) -> list[str]:
        """The line's figures as the standings tables print them (the terminal's and the
        report's): games, wins, points, rounds won, byes, Buchholz (Swiss only),
        head-to-head, mu, sigma, ordinal — every fraction and rating by :func:`two_decimals`.

        Head-to-head is ``—`` when the entrant played no game against those tied with
        it (nobody is tied, or they never met): ``0.00`` would read as games lost."""
        counts = [
            str(self.games),
            str(self.wins),
            two_decimals(self.points),
            str(self.round_wins),
            str(self.byes),
            str(self.forfeits),
        ]
        buchholz = [two_decimals(self.buchholz or 0)] if swiss else []
        rating = [two_decimals(self.rating.mu), two_decimals(self.rating.sigma), two_decimals(self.rating.ordinal)]
        h2h = two_decimals(self.head_to_head) if self.head_to_head_games else NO_FIGURE
        return [*counts, *buchholz, h2h, *rating]


NO_FIGURE = "—"  # a figure that has nothing to count


def standing_figures(row: Mapping[str, Any], swiss: bool) -> list[str]:
    """:meth:`Standing.figures` from a line of the standings' JSON (:meth:`Standing.as_dict`,
    what ``red7 tournament standings`` reads from a gateway too): the same strings, since
    the JSON keeps four decimals and the table shows two."""
    counts = [
        str(row["games"]),
        str(row["wins"]),
        two_decimals(row["points"]),
        str(row["round_wins"]),
        str(row["byes"]),
        str(row.get("forfeits", 0)),  # (a gateway older than forfeits: none counted)
    ]
    buchholz = [two_decimals(row["buchholz"] or 0)] if swiss else []
    rating = [two_decimals(row["mu"]), two_decimals(row["sigma"]), two_decimals(row["ordinal"])]
    # (a gateway older than head_to_head_games: its figure, as a table of that time printed it)
    h2h = two_decimals(row["head_to_head"]) if row.get("head_to_head_games", 1) else NO_FIGURE
    return [*counts, *buchholz, h2h, *rating]


def _num(value: Fraction) -> float:
    return round(float(value), 4)


def two_decimals(value: Fraction | float) -> str:
    """A point total or rating as the standings tables print it (terminal and report alike):
    two decimals in every column — ``1.00``, ``0.50``, ``1.33``, ``25.00`` — so a column
    lines up and no figure looks more or less exact than its neighbours. JSON and CSV
    keep numbers (:meth:`Standing.as_dict`)."""
    return f"{float(value):.2f}"


def standings(
    spec: TournamentCreated,
    rounds: Sequence[RoundPaired],
    results: Mapping[str, GameFinished],
    history: Sequence[list[Rating]] | None = None,
    *,
    withdrawn: Collection[int] = (),
) -> list[Standing]:
    """The standings over the recorded games of ``rounds``, best first.

    ``history``: :func:`rating_history` of the same games, if the caller has it already.
    ``withdrawn``: the entrants withdrawn from the tournament, marked so (their results
    stand and rank them like anyone's).
    """
    n = len(spec.entrants)
    rounds = sorted(rounds, key=lambda r: r.round)
    points = entrant_points(spec, rounds, results)
    games, wins, round_wins, byes, forfeits = [0] * n, [0] * n, [0] * n, [0] * n, [0] * n
    opponents: list[list[int]] = [[] for _ in range(n)]
    duel: Counter[tuple[int, int]] = Counter()  # (a, b) -> a's head-to-head points against b, in halves
    met: Counter[tuple[int, int]] = Counter()  # (a, b) -> games a and b played at one table
    for paired in rounds:
        for e in paired.byes:
            byes[e] += 1
        for t in paired.tables:
            result = results.get(t.game)
            if result is None:
                continue
            p = places(result)
            for seat, e in enumerate(t.seats):
                games[e] += 1
                wins[e] += seat in result.winners
                round_wins[e] += result.round_wins[seat]
                forfeits[e] += seat in result.forfeited
                for other_seat, other in enumerate(t.seats):
                    if other != e:
                        opponents[e].append(other)
                        met[(e, other)] += 1
                        if not result.void:  # a game with no result is lost by both: 0 head-to-head
                            duel[(e, other)] += 2 if p[seat] < p[other_seat] else 1 if p[seat] == p[other_seat] else 0
    swiss = spec.format == SWISS
    buchholz = [sum((points[o] for o in opponents[e]), Fraction(0)) for e in range(n)]
    final = (history if history is not None else rating_history(spec, rounds, results))[-1]

    def primary(e: int) -> tuple[Fraction, Fraction]:
        return points[e], buchholz[e] if swiss else Fraction(0)

    groups: dict[tuple[Fraction, Fraction], list[int]] = {}
    for e in range(n):
        groups.setdefault(primary(e), []).append(e)
    h2h = [Fraction(0)] * n
    h2h_games = [0] * n
    for members in groups.values():
        for a in members:
            h2h[a] = Fraction(sum(duel[(a, b)] for b in members if b != a), 2)
            h2h_games[a] = sum(met[(a, b)] for b in members if b != a)

    def key(e: int) -> tuple[object, ...]:
        return (-points[e], -(buchholz[e] if swiss else 0), -h2h[e], -round_wins[e], -final[e].ordinal)

    order = sorted(range(n), key=lambda e: (key(e), spec.entrants[e].name))
    out: list[Standing] = []
    for i, e in enumerate(order):
        rank = out[-1].rank if out and key(out[-1].entrant) == key(e) else i + 1
        s = spec.entrants[e]
        out.append(
            Standing(
                rank,
                e,
                s.name,
                s.kind,
                s.bot,
                games[e],
                wins[e],
                points[e],
                round_wins[e],
                byes[e],
                buchholz[e] if swiss else None,
                h2h[e],
                final[e],
                h2h_games[e],
                forfeits[e],
                e in withdrawn,
            )
        )
    return out
