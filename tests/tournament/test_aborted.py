"""An aborted tournament game (RULES.md, Aborting; docs/tournaments.md, Aborted games): it is
recorded with no winners and is a loss for every seat (0 points, 0 head-to-head), unrated,
and the tournament's audit passes it."""

from __future__ import annotations

from fractions import Fraction

import pytest

from red7es.tournament import TournamentRunner, create_tournament, load, standings
from red7es.tournament.audit import audit_tournament
from red7es.tournament.events import GameFinished, RoundPaired, Seating
from red7es.tournament.points import entrant_points, game_points
from red7es.tournament.rating import rating_history
from red7es.tournament.state import TournamentCorrupt, TournamentState
from red7es.tournament.views import report_page, show_data
from red7es.variant import Variant

from .conftest import Inline, people, result, spec
from .test_runner import join_as


def aborted(round_number: int, game: str, k: int = 2) -> GameFinished:
    return GameFinished(round_number, game, (), (0,) * k, (0,) * k, "aborted", 3, "00" * 32)


def test_an_aborted_game_scores_nothing_for_any_seat() -> None:
    assert game_points(aborted(1, "g")) == [Fraction(0), Fraction(0)]
    assert game_points(aborted(1, "g", k=4)) == [Fraction(0)] * 4


def test_in_the_standings_an_aborted_game_is_a_loss_for_both_and_is_not_rated() -> None:
    s = spec(4)
    paired = RoundPaired(1, (Seating(1, "g1", (0, 1)), Seating(2, "g2", (2, 3))), ())
    results = {"g1": aborted(1, "g1"), "g2": result(1, "g2", (0,))}
    assert entrant_points(s, [paired], results) == [0, 0, 1, 0]
    lines = {line.name: line for line in standings(s, [paired], results)}
    assert lines["e0"].games == lines["e1"].games == 1
    assert lines["e0"].wins == lines["e1"].wins == 0
    history = rating_history(s, [paired], results)
    assert history[-1][0] == history[0][0] and history[-1][1] == history[0][1]  # unrated
    assert history[-1][2] != history[0][2]  # the game played is rated


def test_the_tournament_state_takes_no_winners_only_from_an_aborted_game() -> None:
    s = spec(2)
    paired = RoundPaired(1, (Seating(1, "g1", (0, 1)),), ())
    state = TournamentState(created=s)
    state._fold_round(paired, "event 1")  # the checks of fold, without a hash chain to build
    with pytest.raises(TournamentCorrupt, match="malformed outcome"):
        state._fold_result(GameFinished(1, "g1", (), (0, 0), (0, 0), "rounds", 3, "00"), "event 2")
    state._fold_result(aborted(1, "g1"), "event 2")
    assert state.results["g1"].aborted


def test_a_people_tournament_game_aborted_is_recorded_shown_and_audited(inline: Inline) -> None:
    create_tournament(inline.connection, "ab", people("alice", "bob"), Variant(2), "round-robin", seed="ab")
    report = TournamentRunner(inline.service, "ab", driver=inline.drive).run()
    (game,) = report.waiting_for_people
    _seat, token = join_as(inline, game, "alice")
    inline.service.submit(game, "alice", token, "abort")
    inline.drive(game)
    report = TournamentRunner(inline.service, "ab", driver=inline.drive).run()
    assert report.finished and report.done == 1
    state = load(inline.connection, "ab")
    assert state.results[game].aborted and state.results[game].winners == ()
    lines = {line.name: line for line in standings(state.spec, list(state.rounds.values()), state.results)}
    assert lines["alice"].points == lines["bob"].points == 0
    shown = show_data(state, {})
    table = shown["paired"][0]["tables"][0]
    assert table["winners"] == [] and table["reason"] == "aborted"
    assert "aborted before anyone moved (a loss for every seat)" in report_page(state)
    assert audit_tournament(inline.service, "ab").ok


def test_an_adjudicated_game_with_no_winner_is_void_and_one_with_a_winner_counts() -> None:
    void = GameFinished(1, "g", (), (0, 0), (0, 0), "adjudicated", 3, "00")
    assert void.void and game_points(void) == [Fraction(0), Fraction(0)]
    won = GameFinished(1, "g", (1,), (0, 0), (0, 0), "adjudicated", 3, "00")
    assert not won.void and game_points(won) == [Fraction(0), Fraction(1)]
    state = TournamentState(created=spec(2))
    state._fold_round(RoundPaired(1, (Seating(1, "g", (0, 1)),), ()), "event 1")
    state._fold_result(void, "event 2")
    assert state.results["g"].void


def test_a_game_nobody_came_to_is_void_and_one_with_a_winner_by_no_show_counts() -> None:
    """RULES.md, Time, Join deadline: no seat taken and no bot ends with no winner."""
    void = GameFinished(1, "g", (), (0, 0), (0, 0), "no-show", 3, "00")
    assert void.void and game_points(void) == [Fraction(0), Fraction(0)]
    won = GameFinished(1, "g", (0,), (0, 0), (0, 0), "no-show", 3, "00", forfeited=(1,))
    assert not won.void and game_points(won) == [Fraction(1), Fraction(0)]
    state = TournamentState(created=spec(2))
    state._fold_round(RoundPaired(1, (Seating(1, "g", (0, 1)),), ()), "event 1")
    state._fold_result(void, "event 2")
    page = report_page(state)
    assert "nobody came by the join deadline (a loss for every seat)" in page
