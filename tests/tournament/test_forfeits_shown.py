"""Forfeits in the standings (terminal, --json, CSV, report) and in the report's games:
who went out of a game, and whether the forfeit that ended it was a time-out
(docs/tournaments.md, Forfeits in the standings and the report)."""

from __future__ import annotations

import dataclasses

from red7es.tournament.events import GameFinished, RoundPaired, Seating
from red7es.tournament.rating import rating_history
from red7es.tournament.report import render_report
from red7es.tournament.standings import standing_figures, standings

from .conftest import result, spec


def _played(*results: GameFinished) -> tuple[list[RoundPaired], dict[str, GameFinished]]:
    """Round 1 of a 4-entrant round robin of two-player tables: ann-bob and cy-dee."""
    paired = RoundPaired(1, (Seating(1, "g1", (0, 1)), Seating(2, "g2", (2, 3))), ())
    return [paired], {r.game: r for r in results}


def _out(game: str, forfeited: tuple[int, ...], reason: str, k: int = 2) -> GameFinished:
    winners = tuple(s for s in range(k) if s not in forfeited)[:1]
    return dataclasses.replace(result(1, game, winners, k=k), forfeited=forfeited, reason=reason)


def test_the_standings_count_each_entrants_forfeits() -> None:
    rounds, results = _played(_out("g1", (0,), "time"), result(1, "g2", (0,)))
    lines = {s.entrant: s for s in standings(spec(4), rounds, results)}
    assert [lines[e].forfeits for e in range(4)] == [1, 0, 0, 0]
    assert lines[0].as_dict()["forfeits"] == 1 and lines[2].as_dict()["forfeits"] == 0


def test_the_terminal_table_prints_forfeits_from_the_json_as_the_report_does() -> None:
    rounds, results = _played(_out("g1", (1,), "resigned"), result(1, "g2", (1,)))
    for line in standings(spec(4), rounds, results):
        assert standing_figures(line.as_dict(), swiss=False) == line.figures(swiss=False)
    bob = next(s for s in standings(spec(4), rounds, results) if s.entrant == 1)
    assert bob.figures(swiss=False)[5] == "1"


def test_json_from_a_gateway_older_than_forfeits_prints_none() -> None:
    rounds, results = _played(result(1, "g1", (0,)), result(1, "g2", (0,)))
    row = standings(spec(4), rounds, results)[0].as_dict()
    del row["forfeits"]
    assert standing_figures(row, swiss=False)[5] == "0"


def _report(*results: GameFinished, k: int = 2) -> str:
    if k == 2:
        t, rounds, by_game = spec(4), *_played(*results)
    else:
        t = spec(4, k=4)
        rounds = [RoundPaired(1, (Seating(1, "g1", (0, 1, 2, 3)),), ())]
        by_game = {r.game: r for r in results}
    history = rating_history(t, rounds, by_game)
    return render_report(t, standings(t, rounds, by_game, history), history, rounds, by_game, finished=True)


def test_the_report_names_a_time_out_and_a_resignation_and_counts_forfeits() -> None:
    page = _report(_out("g1", (0,), "time"), _out("g2", (1,), "resigned"))
    names = [e.name for e in spec(4).entrants]
    assert f"forfeited: {names[0]} (out of time)" in page
    assert f"forfeited: {names[3]} (resigned)" in page
    assert "<th>Forfeits</th>" in page


def test_the_report_names_every_seat_out_but_a_reason_only_for_the_one_that_ended_the_game() -> None:
    names = [e.name for e in spec(4).entrants]
    ended = _report(_out("g1", (2, 0, 3), "time", k=4), k=4)
    assert f"forfeited: {names[2]}, {names[0]}, {names[3]} (out of time)" in ended
    # two seats out and the game played on to its end: both named, neither given a reason
    played_on = _report(dataclasses.replace(_out("g1", (2, 0), "rounds", k=4), winners=(1,)), k=4)
    assert f"forfeited: {names[2]}, {names[0]} ·" in played_on
    assert "out of time" not in played_on


def test_a_game_nobody_forfeited_names_no_forfeit() -> None:
    assert "forfeited:" not in _report(result(1, "g1", (0,)), result(1, "g2", (1,)))
