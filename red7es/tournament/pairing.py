"""Who plays whom, and in which seats: round robin and Swiss pairing, seat rotation.

Every decision here is a pure function of the tournament's first event (entrants,
format, table size, the seed's public commitment) and the results recorded so far, so
the audit re-derives each round and compares it with what was written.  The rules are
stated precisely in docs/tournaments.md; in short:

* **Pairing numbers**: entrants are ordered by a draw of lots, SHA-256 of the seed's
  commitment and the entrant's index (:func:`pairing_order`).
* **Round robin**: every group of ``k`` entrants (``k`` = table size) plays exactly one
  game.  For ``k = 2`` the circle method (Berger tables) gives ``n − 1`` rounds (``n``
  with a bye each round when ``n`` is odd).  For ``k > 2`` each round greedily packs
  disjoint groups still to play, preferring entrants with the most games left.  Rounds
  beyond one cycle repeat the cycle with every table's seats rotated.
* **Swiss**: entrants are ranked by points, then pairing number.  ``n mod k`` byes go to
  the entrants with the fewest byes so far, lowest ranked first.  Tables are filled top
  down: the highest-ranked entrant without a table sits with the next-ranked entrants
  it has not met, searching (with backtracking) for the pairing with the fewest repeat
  meetings, and among those the one that keeps tables closest in rank.
* **Seats**: at each table the seat order is the permutation of its members that least
  repeats the seats they held before (ties: pairing-number order), so nobody keeps the
  same seat — and the same place in the turn order — game after game.
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from itertools import combinations, permutations
from math import comb

from .events import ROUND_ROBIN, SWISS, GameFinished, RoundPaired, Seating, TournamentCreated
from .ids import TournamentError, game_id, lot
from .points import entrant_points

__all__ = [
    "pair_round",
    "pairing_order",
    "round_robin_cycle",
    "swiss_tables",
    "assign_seats",
    "cycle_length",
    "total_games",
    "default_rounds",
]

_SEARCH_BUDGET = 20_000  # nodes per backtracking search; enough for any field of a few dozen


class _OutOfBudget(Exception):
    pass


# ---------------------------------------------------------------------------- lots


def pairing_order(spec: TournamentCreated) -> list[int]:
    """Entrant indices in pairing-number order (number 1 first): a public draw of lots."""
    return sorted(range(len(spec.entrants)), key=lambda e: lot(spec.commitment, "entrant", e))


# ---------------------------------------------------------------------------- round robin


def round_robin_cycle(n: int, k: int, order: Sequence[int]) -> list[list[tuple[int, ...]]]:
    """One full cycle: rounds, each a list of tables (members in pairing-number order)."""
    return [list(r) for r in _cycle(n, k, tuple(order))]


@functools.lru_cache(maxsize=32)
def _cycle(n: int, k: int, order: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    rounds = _circle(list(order)) if k == 2 else _packed(n, k, list(order))
    return tuple(tuple(r) for r in rounds)


@functools.lru_cache(maxsize=32)
def _cycle_seats(n: int, k: int, order: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """The seat order of every table of one cycle, seats balanced greedily from scratch."""
    number = {e: i for i, e in enumerate(order)}
    counts = [[0] * k for _ in range(n)]
    last: dict[int, int] = {}
    return tuple(tuple(assign_seats(r, counts, number, last)) for r in _cycle(n, k, order))


def _circle(order: list[int]) -> list[list[tuple[int, ...]]]:
    """The circle method: number 1 stays, the others rotate one place per round."""
    players: list[int | None] = list(order) + ([None] if len(order) % 2 else [])
    m = len(players)
    rounds: list[list[tuple[int, ...]]] = []
    for _ in range(m - 1):
        tables: list[tuple[int, ...]] = []
        for i in range(m // 2):
            a, b = players[i], players[m - 1 - i]
            if a is not None and b is not None:
                tables.append((a, b))
        rounds.append(tables)
        players = [players[0], players[-1], *players[1:-1]]
    return rounds


def _packed(n: int, k: int, order: list[int]) -> list[list[tuple[int, ...]]]:
    """Every k-group once, packed greedily into rounds of disjoint tables."""
    remaining = [tuple(order[i] for i in c) for c in combinations(range(n), k)]
    index = {c: i for i, c in enumerate(remaining)}
    left = Counter({e: comb(n - 1, k - 1) for e in range(n)})
    rounds = []
    while remaining:
        candidates = sorted(remaining, key=lambda c: (-sum(left[e] for e in c), index[c]))
        chosen = _disjoint(candidates, n // k)
        for c in chosen:
            remaining.remove(c)
            for e in c:
                left[e] -= 1
        rounds.append(sorted(chosen, key=index.__getitem__))
    return rounds


def _disjoint(candidates: list[tuple[int, ...]], target: int) -> list[tuple[int, ...]]:
    """The first ``target`` pairwise disjoint candidates in order (backtracking), else the most found."""
    best: list[tuple[int, ...]] = []
    chosen: list[tuple[int, ...]] = []
    used: set[int] = set()
    nodes = 0

    def dfs(start: int) -> bool:
        nonlocal nodes, best
        if len(chosen) > len(best):
            best = list(chosen)
        if len(chosen) == target:
            return True
        for i in range(start, len(candidates)):
            nodes += 1
            if nodes > _SEARCH_BUDGET:
                raise _OutOfBudget
            c = candidates[i]
            if used.isdisjoint(c):
                chosen.append(c)
                used.update(c)
                if dfs(i + 1):
                    return True
                chosen.pop()
                used.difference_update(c)
        return False

    with contextlib.suppress(_OutOfBudget):
        dfs(0)
    return best


def cycle_length(n: int, k: int) -> int:
    """Rounds in one round-robin cycle."""
    return len(_cycle(n, k, tuple(range(n))))


def default_rounds(format: str, n: int, k: int) -> int:
    """One round-robin cycle; for Swiss, enough rounds to separate a winner (⌈log₂ n⌉, at least 3)."""
    if format == ROUND_ROBIN:
        return cycle_length(n, k)
    return max(3, (n - 1).bit_length())


def total_games(spec: TournamentCreated) -> int:
    """How many games the whole tournament plays."""
    n, k = len(spec.entrants), spec.table_size
    if spec.format == SWISS:
        return spec.rounds * (n // k)
    cycle = _cycle(n, k, tuple(pairing_order(spec)))
    return sum(len(cycle[r % len(cycle)]) for r in range(spec.rounds))


# ---------------------------------------------------------------------------- swiss


def swiss_tables(
    ranking: Sequence[int], k: int, met: Mapping[frozenset[int], int], byes: Mapping[int, int]
) -> tuple[list[tuple[int, ...]], list[int]]:
    """Tables (members by rank) and byes for one Swiss round.

    ``ranking`` is every entrant, best first; ``met`` counts the games each pair has
    shared; ``byes`` counts each entrant's byes.  Bye sets are tried in order of
    preference (fewest byes, then lowest ranked) until one leaves a pairing without
    repeat meetings; otherwise the preferred set with its fewest-repeats pairing wins.
    """
    n = len(ranking)
    b = n % k
    position = {e: i for i, e in enumerate(ranking)}
    preference = sorted(ranking, key=lambda e: (byes.get(e, 0), -position[e]))
    bye_sets = list(combinations(preference[: min(n, b + 3)], b))[:12] if b else [()]
    partners: dict[int, dict[int, int]] = {e: {} for e in ranking}
    for pair, count in met.items():
        a, c = tuple(pair)
        if a in partners and c in partners:
            partners[a][c] = partners[c][a] = count

    def rest(bye_set: tuple[int, ...]) -> list[int]:
        return [e for e in ranking if e not in bye_set]

    for bye_set in bye_sets:  # the first set that pairs without a repeat meeting
        tables, _exhausted = _search(rest(bye_set), k, partners, 0)
        if tables is not None:
            return tables, sorted(bye_set, key=position.__getitem__)
    tables = _fewest_repeats(rest(bye_sets[0]), k, partners)
    return tables, sorted(bye_sets[0], key=position.__getitem__)


def _fewest_repeats(players: list[int], k: int, partners: Mapping[int, Mapping[int, int]]) -> list[tuple[int, ...]]:
    """Top-down tables with the fewest repeat meetings the search can find.

    Allowed repeats go 1, 2, 3, ...; a search that runs out of budget doubles the step,
    so a field where repeats are unavoidable still pairs in a fraction of a second.
    """
    worst = sum(partners[a].get(c, 0) for a, c in combinations(players, 2))
    allowed, step = 1, 1
    while allowed < worst:
        tables, exhausted = _search(players, k, partners, allowed)
        if tables is not None:
            return tables
        if exhausted:
            step *= 2
        allowed += step
    return [tuple(players[i : i + k]) for i in range(0, len(players), k)]  # every repeat allowed: plain order


def _search(
    players: list[int], k: int, partners: Mapping[int, Mapping[int, int]], allowed: int
) -> tuple[list[tuple[int, ...]] | None, bool]:
    """(the first top-down filling with at most ``allowed`` repeat meetings or None, budget ran out).

    Tables are built member by member, in rank order, so the first filling found is the
    one whose tables are the lexicographically first combinations by rank.
    """
    tables: list[tuple[int, ...]] = []
    nodes = 0

    def fill(remaining: list[int], used: int) -> bool:
        if not remaining:
            return True
        members = [remaining[0]]
        rest = remaining[1:]

        def extend(start: int, cost: int) -> bool:
            nonlocal nodes
            if len(members) == k:
                chosen = set(members)
                left = [e for e in rest if e not in chosen]
                if cost == allowed and not _fresh_partners(left, k, partners):
                    return False  # someone left could only sit with entrants already met
                tables.append(tuple(members))
                if fill(left, cost):
                    return True
                tables.pop()
                return False
            for i in range(start, len(rest) - (k - len(members)) + 1):
                nodes += 1
                if nodes > _SEARCH_BUDGET:
                    raise _OutOfBudget
                e = rest[i]
                c = cost + sum(partners[e].get(m, 0) for m in members)
                if c > allowed:
                    continue
                members.append(e)
                if extend(i + 1, c):
                    return True
                members.pop()
            return False

        return extend(0, used)

    try:
        return (tables if fill(players, 0) else None), False
    except _OutOfBudget:
        return None, True


def _fresh_partners(players: list[int], k: int, partners: Mapping[int, Mapping[int, int]]) -> bool:
    """Whether everyone in ``players`` has at least k − 1 others there it has not met (a quick prune)."""
    return all(sum(1 for o in players if o != e and not partners[e].get(o)) >= k - 1 for e in players)


# ---------------------------------------------------------------------------- seats


def assign_seats(
    tables: Sequence[tuple[int, ...]],
    counts: list[list[int]],
    number: Mapping[int, int],
    last: dict[int, int] | None = None,
) -> list[tuple[int, ...]]:
    """Seat order for each table, least repeating the seats its members held before.

    ``counts[e][s]`` is how often entrant ``e`` sat in seat ``s`` and ``last[e]`` the
    seat of its latest game; both are updated.  An order costs the sum of those counts,
    then their maximum, then how many members would keep the seat of their latest game
    (so seats alternate); ties go to the first permutation in pairing-number order.
    """
    last = {} if last is None else last
    seated = []
    for members in tables:
        base = sorted(members, key=number.__getitem__)

        def cost(p: tuple[int, ...]) -> tuple[int, int, int]:
            held = [counts[e][s] for s, e in enumerate(p)]
            return sum(held), max(held), sum(last.get(e) == s for s, e in enumerate(p))

        best = min(permutations(base), key=cost)
        for s, e in enumerate(best):
            counts[e][s] += 1
            last[e] = s
        seated.append(tuple(best))
    return seated


# ---------------------------------------------------------------------------- a round


def pair_round(
    spec: TournamentCreated,
    previous: Sequence[RoundPaired],
    results: Mapping[str, GameFinished],
    withdrawn: Collection[int] = (),
) -> RoundPaired:
    """The pairing of the round after ``previous`` (rounds 1..r−1, in order).

    Swiss needs every game of the previous rounds in ``results``, and pairs only the
    entrants not ``withdrawn`` (neither a table nor a bye); round robin looks at neither:
    its schedule is fixed, and a withdrawn entrant's games are forfeited in play.
    """
    r = len(previous) + 1
    if r > spec.rounds:
        raise TournamentError(f"tournament {spec.tournament} has only {spec.rounds} rounds")
    n, k = len(spec.entrants), spec.table_size
    order = pairing_order(spec)
    number = {e: i for i, e in enumerate(order)}
    if spec.format == ROUND_ROBIN:
        # Cycle c repeats cycle 0 with every table's seats rotated c places, so over
        # k cycles each member of a group sits in every seat once.
        cycle = _cycle_seats(n, k, tuple(order))
        c, index = divmod(r - 1, len(cycle))
        seated = [t[c % k :] + t[: c % k] for t in cycle[index]]
    elif spec.format == SWISS:
        missing = [t.game for p in previous for t in p.tables if t.game not in results]
        if missing:
            raise TournamentError(f"round {r} cannot be paired before {missing[0]} is finished")
        counts = [[0] * k for _ in range(n)]
        last: dict[int, int] = {}
        met: Counter[frozenset[int]] = Counter()
        byes: Counter[int] = Counter()
        for paired in previous:
            byes.update(paired.byes)
            for t in paired.tables:
                for s, e in enumerate(t.seats):
                    counts[e][s] += 1
                    last[e] = s
                met.update(frozenset(p) for p in combinations(t.seats, 2))
        points = entrant_points(spec, previous, results)
        ranking = sorted((e for e in range(n) if e not in withdrawn), key=lambda e: (-points[e], number[e]))
        groups, _ = swiss_tables(ranking, k, met, byes)
        seated = assign_seats(groups, counts, number, last)
    else:
        raise TournamentError(f"unknown format {spec.format!r}")
    playing = {e for t in seated for e in t}
    tables = tuple(Seating(i + 1, game_id(spec.tournament, r, i + 1), s) for i, s in enumerate(seated))
    resting = (e for e in order if e not in playing and (spec.format != SWISS or e not in withdrawn))
    return RoundPaired(r, tables, tuple(resting))
