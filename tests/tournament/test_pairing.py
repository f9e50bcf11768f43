"""Pairing: round robin covers every group once with rotating seats; Swiss pairs within
score groups, avoids repeat opponents when it can, and spreads the byes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from itertools import combinations

import pytest

from red7es.tournament.events import ROUND_ROBIN, SWISS, GameFinished, RoundPaired, TournamentCreated
from red7es.tournament.ids import TournamentError
from red7es.tournament.pairing import (
    cycle_length,
    default_rounds,
    pair_round,
    pairing_order,
    round_robin_cycle,
    swiss_tables,
    total_games,
)

from .conftest import result, spec


def play_out(
    s: TournamentCreated, winner: object = None, rounds: int | None = None
) -> tuple[list[RoundPaired], dict[str, GameFinished]]:
    """Pair and "play" every round; ``winner(seating) -> seat`` decides each game.

    By default the entrant with the lowest index at each table wins.
    """
    previous: list[RoundPaired] = []
    results: dict[str, GameFinished] = {}
    for _ in range(rounds or s.rounds):
        paired = pair_round(s, previous, results)
        previous.append(paired)
        for t in paired.tables:
            seat = winner(t) if callable(winner) else t.seats.index(min(t.seats))
            results[t.game] = result(paired.round, t.game, (seat,), k=len(t.seats))
    return previous, results


def meetings(rounds: list[RoundPaired]) -> Counter[frozenset[int]]:
    return Counter(frozenset(p) for r in rounds for t in r.tables for p in combinations(t.seats, 2))


def seat_counts(rounds: list[RoundPaired], n: int, k: int) -> list[list[int]]:
    counts = [[0] * k for _ in range(n)]
    for r in rounds:
        for t in r.tables:
            for s, e in enumerate(t.seats):
                counts[e][s] += 1
    return counts


# ---------------------------------------------------------------------------- round robin


@pytest.mark.parametrize(("n", "k"), [(2, 2), (4, 2), (5, 2), (6, 2), (9, 2), (4, 3), (6, 3), (7, 3), (5, 4), (8, 4)])
def test_round_robin_plays_every_group_exactly_once(n: int, k: int) -> None:
    s = spec(n, k)
    rounds, _ = play_out(s)
    groups = Counter(frozenset(t.seats) for r in rounds for t in r.tables)
    assert set(groups) == {frozenset(c) for c in combinations(range(n), k)}
    assert set(groups.values()) == {1}
    assert sum(groups.values()) == total_games(s)
    for r in rounds:  # nobody plays twice in a round; everyone else has a bye
        seated = [e for t in r.tables for e in t.seats]
        assert len(seated) == len(set(seated))
        assert sorted(seated + list(r.byes)) == list(range(n))


def test_round_robin_of_two_player_tables_is_the_circle_method() -> None:
    assert cycle_length(6, 2) == 5
    assert cycle_length(5, 2) == 5  # a bye each round
    assert [len(r) for r in round_robin_cycle(5, 2, list(range(5)))] == [2] * 5
    rounds, _ = play_out(spec(5, 2))
    assert sorted(e for r in rounds for e in r.byes) == [0, 1, 2, 3, 4]  # everyone rests once


@pytest.mark.parametrize(("n", "k", "spread"), [(4, 2, 1), (6, 2, 1), (8, 2, 1), (5, 2, 2), (6, 3, 1), (5, 4, 0)])
def test_round_robin_rotates_seats(n: int, k: int, spread: int) -> None:
    """Nobody always sits first: each entrant's seats are balanced within ``spread``."""
    s = spec(n, k)
    rounds, _ = play_out(s)
    for e, counts in enumerate(seat_counts(rounds, n, k)):
        assert max(counts) - min(counts) <= spread, (e, counts)
        assert min(counts) >= 1 or sum(counts) < k


def test_round_robin_repeats_the_cycle_with_swapped_seats() -> None:
    s = spec(4, 2, rounds=2 * cycle_length(4, 2))
    rounds, _ = play_out(s)
    assert set(meetings(rounds).values()) == {2}
    for counts in seat_counts(rounds, 4, 2):
        assert counts == [3, 3]


def test_round_robin_ignores_results() -> None:
    s = spec(6, 2)
    a, _ = play_out(s, winner=lambda t: 0)
    b, _ = play_out(s, winner=lambda t: 1)
    assert a == b


# ---------------------------------------------------------------------------- swiss


def test_swiss_round_one_follows_the_draw_and_round_two_the_score_groups() -> None:
    s = spec(8, 2, SWISS, rounds=3)
    order = pairing_order(s)
    first = pair_round(s, [], {})
    assert [set(t.seats) for t in first.tables] == [set(order[i : i + 2]) for i in range(0, 8, 2)]
    rounds, results = play_out(s, rounds=1)
    winners = {t.seats[results[t.game].winners[0]] for t in rounds[0].tables}
    second = pair_round(s, rounds, results)
    for t in second.tables:  # winners meet winners, losers meet losers
        assert len(winners & set(t.seats)) in (0, 2), t
    assert set(second.tables[0].seats) <= winners  # table 1 is the top score group


@pytest.mark.parametrize(("n", "k", "r"), [(8, 2, 5), (7, 2, 6), (9, 3, 4), (15, 3, 5), (16, 4, 3), (16, 2, 6)])
def test_swiss_avoids_repeat_opponents_when_possible(n: int, k: int, r: int) -> None:
    rounds, _ = play_out(spec(n, k, SWISS, rounds=r))
    assert max(meetings(rounds).values()) == 1


def test_swiss_repeats_only_when_unavoidable() -> None:
    rounds, _ = play_out(spec(4, 2, SWISS, rounds=5))  # only 3 distinct rounds exist
    assert sorted(meetings(rounds).values()) == [1, 1, 1, 1, 2, 2] or max(meetings(rounds).values()) <= 2
    assert len(rounds) == 5


@pytest.mark.parametrize(("n", "k"), [(5, 2), (7, 2), (7, 3), (6, 4)])
def test_swiss_byes_go_to_different_entrants(n: int, k: int) -> None:
    per_round = n % k
    r = n // per_round  # enough rounds for everyone to get one bye
    rounds, _ = play_out(spec(n, k, SWISS, rounds=r))
    byes = Counter(e for p in rounds for e in p.byes)
    assert all(len(p.byes) == per_round for p in rounds)
    assert set(byes.values()) == {1}
    assert len(byes) == per_round * r


def test_swiss_bye_goes_to_the_lowest_ranked_without_one() -> None:
    s = spec(5, 2, SWISS, rounds=3)
    rounds, results = play_out(s, rounds=1)
    points: Mapping[int, int] = Counter(t.seats[results[t.game].winners[0]] for t in rounds[0].tables) + Counter(
        rounds[0].byes
    )  # a Swiss bye scores a point
    second = pair_round(s, rounds, results)
    (bye,) = second.byes
    assert bye not in rounds[0].byes
    assert points.get(bye, 0) == 0


def test_swiss_tables_direct() -> None:
    ranking = [0, 1, 2, 3, 4, 5]
    met = Counter({frozenset((0, 1)): 1, frozenset((2, 3)): 1})
    tables, byes = swiss_tables(ranking, 2, met, {})
    assert byes == []
    assert tables == [(0, 2), (1, 3), (4, 5)]
    tables, byes = swiss_tables([0, 1, 2, 3, 4], 2, {}, {4: 1})
    assert byes == [3]  # 4 had a bye already


def test_swiss_needs_the_previous_round_complete() -> None:
    s = spec(4, 2, SWISS, rounds=3)
    first = pair_round(s, [], {})
    with pytest.raises(TournamentError, match="cannot be paired before"):
        pair_round(s, [first], {})


# ---------------------------------------------------------------------------- determinism


def test_pairing_is_a_function_of_the_seed_commitment_and_results() -> None:
    a, b = spec(8, 2, SWISS, rounds=3), spec(8, 2, SWISS, rounds=3)
    assert play_out(a) == play_out(b)
    other = spec(8, 2, SWISS, rounds=3, commitment="another")
    assert pairing_order(other) != pairing_order(a)
    assert sorted(pairing_order(a)) == list(range(8))


def test_game_ids_and_limits() -> None:
    s = spec(4, 2, ROUND_ROBIN)
    rounds, _ = play_out(s)
    assert [t.game for t in rounds[0].tables] == ["t-t-r1-1", "t-t-r1-2"]
    with pytest.raises(TournamentError, match="only 3 rounds"):
        pair_round(s, rounds, {})
    assert default_rounds(SWISS, 8, 2) == 3
    assert default_rounds(SWISS, 20, 2) == 5
    assert default_rounds(ROUND_ROBIN, 6, 3) == cycle_length(6, 3)
