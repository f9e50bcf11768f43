"""Points by finishing order, byes, the tie-break chain, and OpenSkill ratings."""

from __future__ import annotations

from fractions import Fraction as F

from red7es.tournament.events import SWISS, GameFinished, RoundPaired, Seating
from red7es.tournament.points import entrant_points, game_points, places
from red7es.tournament.rating import rating_history
from red7es.tournament.standings import standings

from .conftest import result, spec


def scored(winners: tuple[int, ...], scores: tuple[int, ...], round_wins: tuple[int, ...]) -> GameFinished:
    return GameFinished(1, "g", winners, scores, round_wins, "target", 1, "00")


# ---------------------------------------------------------------------------- points


def test_two_player_game_scores_like_chess() -> None:
    assert game_points(result(1, "g", (0,))) == [1, 0]
    assert game_points(result(1, "g", (1,))) == [0, 1]
    shared = scored((0, 1), (20, 20), (2, 2))
    assert places(shared) == [1, 1]
    assert game_points(shared) == [F(1, 2), F(1, 2)]


def test_basic_four_player_game_winner_takes_one_the_rest_share() -> None:
    r = result(1, "g", (2,), k=4)
    assert places(r) == [2, 2, 1, 2]
    assert game_points(r) == [F(1, 3), F(1, 3), 1, F(1, 3)]
    assert sum(game_points(r)) == 2  # a table of k shares k/2 points


def test_scoring_game_orders_by_winner_then_score_then_round_wins() -> None:
    r = scored((1,), (12, 40, 12, 30), (1, 3, 2, 2))
    assert places(r) == [4, 1, 3, 2]
    assert game_points(r) == [0, 1, F(1, 3), F(2, 3)]
    tied = scored((0,), (35, 20, 20), (3, 1, 1))
    assert places(tied) == [1, 2, 2]
    assert game_points(tied) == [1, F(1, 4), F(1, 4)]


def test_swiss_bye_is_a_point_round_robin_bye_is_a_rest() -> None:
    paired = RoundPaired(1, (Seating(1, "t-t-r1-1", (0, 1)),), (2,))
    results = {"t-t-r1-1": result(1, "t-t-r1-1", (0,))}
    assert entrant_points(spec(3, 2, SWISS, rounds=1), [paired], results) == [1, 0, 1]
    assert entrant_points(spec(3, 2, rounds=1), [paired], results) == [1, 0, 0]


# ---------------------------------------------------------------------------- tie-breaks


def table(r: int, i: int, *seats: int) -> Seating:
    return Seating(i, f"t-t-r{r}-{i}", seats)


def test_points_first_then_buchholz_in_swiss() -> None:
    # Round 1: 0 beats 1, 2 beats 3.  Round 2: 0 beats 2, 3 beats 1.
    rounds = [
        RoundPaired(1, (table(1, 1, 0, 1), table(1, 2, 2, 3)), ()),
        RoundPaired(2, (table(2, 1, 0, 2), table(2, 2, 3, 1)), ()),
    ]
    results = {
        "t-t-r1-1": result(1, "t-t-r1-1", (0,)),
        "t-t-r1-2": result(1, "t-t-r1-2", (0,)),
        "t-t-r2-1": result(2, "t-t-r2-1", (0,)),
        "t-t-r2-2": result(2, "t-t-r2-2", (0,)),
    }
    rows = standings(spec(4, 2, SWISS, rounds=2), rounds, results)
    assert (rows[0].name, rows[0].points) == ("e0", 2)
    # e2 and e3 both have 1 point; e2 met e0 (2) and e3 (1) = 3, e3 met e2 (1) and e1 (0) = 1.
    by_name = {r.name: r for r in rows}
    assert by_name["e2"].buchholz == 3 and by_name["e3"].buchholz == 1
    assert [r.name for r in rows] == ["e0", "e2", "e3", "e1"]
    assert [r.rank for r in rows] == [1, 2, 3, 4]


def test_head_to_head_breaks_a_points_tie() -> None:
    # Round robin of 3: a cycle (0 > 1, 1 > 2, 2 > 0) is a three-way tie, h2h equal too;
    # then round wins decide (the game 2 > 0 was a best-of-3, 2 won 2 rounds).
    rounds = [
        RoundPaired(1, (table(1, 1, 0, 1),), (2,)),
        RoundPaired(2, (table(2, 1, 1, 2),), (0,)),
        RoundPaired(3, (table(3, 1, 2, 0),), (1,)),
    ]
    results = {
        "t-t-r1-1": result(1, "t-t-r1-1", (0,)),
        "t-t-r2-1": result(2, "t-t-r2-1", (0,)),
        "t-t-r3-1": result(3, "t-t-r3-1", (0,), round_wins=(2, 1)),
    }
    rows = standings(spec(3, 2, rounds=3), rounds, results)
    assert all(r.points == 1 and r.head_to_head == 1 for r in rows)
    assert rows[0].name == "e2"  # 2 round wins
    # Now 0 beats 2 in round 1 and 1 beats 0 in round 3: 0 and 1 tie on a point and
    # the same round wins, and 1 won their game, so 1 is ahead (name order would not be).
    rounds = [RoundPaired(1, (table(1, 1, 0, 2),), (1,)), RoundPaired(2, (table(2, 1, 1, 0),), (2,))]
    results = {"t-t-r1-1": result(1, "t-t-r1-1", (0,)), "t-t-r2-1": result(2, "t-t-r2-1", (0,))}
    rows = standings(spec(3, 2, rounds=3), rounds, results)
    assert [r.name for r in rows] == ["e1", "e0", "e2"]
    assert [r.head_to_head for r in rows[:2]] == [1, 0]
    assert [r.rank for r in rows] == [1, 2, 3]


def test_rating_breaks_what_is_left_and_equal_lines_share_a_rank() -> None:
    # 4 entrants, two separate games: both winners have identical lines, as do both losers.
    rounds = [RoundPaired(1, (table(1, 1, 0, 1), table(1, 2, 2, 3)), ())]
    results = {"t-t-r1-1": result(1, "t-t-r1-1", (0,)), "t-t-r1-2": result(1, "t-t-r1-2", (0,))}
    rows = standings(spec(4, 2, rounds=1), rounds, results)
    assert [r.rank for r in rows] == [1, 1, 3, 3]
    assert [r.name for r in rows] == ["e0", "e2", "e1", "e3"]  # then by name


def test_unrecorded_games_count_for_nothing() -> None:
    rounds = [RoundPaired(1, (table(1, 1, 0, 1),), ())]
    rows = standings(spec(2, 2, rounds=1), rounds, {})
    assert all(r.games == 0 and r.points == 0 for r in rows)
    assert [r.rank for r in rows] == [1, 1]


# ---------------------------------------------------------------------------- ratings


def test_ratings_move_the_right_way() -> None:
    s = spec(4, 4, rounds=1)
    rounds = [RoundPaired(1, (table(1, 1, 3, 2, 1, 0),), ())]
    r = scored((0,), (40, 30, 20, 10), (3, 2, 1, 0))  # seat 0 (entrant 3) first ... seat 3 (entrant 0) last
    history = rating_history(s, rounds, {"t-t-r1-1": GameFinished(1, "t-t-r1-1", *_fields(r))})
    before, after = history
    assert len({x.mu for x in before}) == 1
    mus = [after[e].mu for e in (3, 2, 1, 0)]  # by finishing order
    assert mus == sorted(mus, reverse=True) and mus[0] > before[0].mu > mus[-1]
    assert all(after[e].sigma < before[e].sigma for e in range(4))  # everyone is better known


def test_tied_players_stay_equal_and_upsets_move_more() -> None:
    s = spec(3, 3, rounds=2)
    rounds = [RoundPaired(1, (table(1, 1, 0, 1, 2),), ()), RoundPaired(2, (table(2, 1, 0, 1, 2),), ())]
    first = result(1, "t-t-r1-1", (0,), k=3)  # 0 wins, 1 and 2 tie
    history = rating_history(s, rounds, {"t-t-r1-1": first})
    assert history[1][1] == history[1][2]
    assert history[2] == history[1]  # round 2 not recorded: nothing moves
    upset = result(2, "t-t-r2-1", (2,), k=3)
    again = result(2, "t-t-r2-1", (0,), k=3)
    gain_upset = rating_history(s, rounds, {"t-t-r1-1": first, "t-t-r2-1": upset})[2][2].mu - history[1][2].mu
    gain_fav = rating_history(s, rounds, {"t-t-r1-1": first, "t-t-r2-1": again})[2][0].mu - history[1][0].mu
    assert gain_upset > gain_fav > 0


def test_ratings_do_not_depend_on_the_order_results_arrived_in() -> None:
    s = spec(4, 2, rounds=1)
    rounds = [RoundPaired(1, (table(1, 1, 0, 1), table(1, 2, 2, 3)), ())]
    a = {"t-t-r1-1": result(1, "t-t-r1-1", (0,)), "t-t-r1-2": result(1, "t-t-r1-2", (1,))}
    b = dict(reversed(list(a.items())))
    assert rating_history(s, rounds, a) == rating_history(s, rounds, b)
    assert standings(s, rounds, a) == standings(s, rounds, b)


def _fields(r: GameFinished) -> tuple[object, ...]:
    return r.winners, r.scores, r.round_wins, r.reason, r.version, r.head
