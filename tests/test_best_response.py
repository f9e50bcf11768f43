"""bench/best_response.py's solver on hand-solved 2-player basic endgames.

The positions are small enough to solve by hand (RULES.md): the solver must find the
best response against greedy, and tell it from perfect play by both seats.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from best_response import Solver, greedy_codes, new_game, replay

from red7es.game import Game
from red7es.steps import STEPS

# Seat 1 (greedy) to move under Red, seat 0 leading with I5.  Greedy takes the cheaper
# p:Y6 (one card spent) and loses: seat 0 plays I7 (Red), greedy's only lead is c:B3
# (Blue: two colours to one), and seat 0's V3 ties it on colours and wins on I7.  The
# dearer p:Y6 c:B3 would have won for seat 1: under Blue, with seat 1's hand empty,
# seat 0 has no leading turn (V3 ties on colours but Y6 beats I5; every discard loses).
BLUNDER = "red7/1 2p rules:4 round:1 rule:R canvas:- deck:- 0:I7,V3/I5/-/0 1:Y6,B3/I2/-/0 to:1"
# That winning line's end: seat 0 to move, no leading turn, so it folds and loses.
LOST = "red7/1 2p rules:4 round:1 rule:B canvas:B3 deck:- 0:I7,V3/I5/-/0 1:-/I2,Y6/-/0 to:0"


def _names(codes: tuple[int, ...]) -> str:
    return " ".join(str(STEPS[c]) for c in codes)


def test_best_response_exploits_greedy_where_perfect_play_loses() -> None:
    game = Game.from_position(BLUNDER)
    solver = Solver(0)
    assert solver.best_response(game)
    assert solver.minimax(game) == 1
    line = []
    while game.outcome is None:
        codes = greedy_codes(game) if game.turn == 1 else solver.winning_turn(game)
        assert codes is not None
        line.append(_names(codes[0]))
        game.play_turn(*codes)
    assert line == ["p:Y6", "p:I7", "c:B3", "p:V3"]
    assert game.outcome.winners == (0,)


def test_a_position_without_a_leading_turn_is_lost_whatever_one_does() -> None:
    game = Game.from_position(LOST)
    solver = Solver(0)
    assert not solver.best_response(game)
    assert solver.winning_turn(game) is None
    assert solver.minimax(game) == 1
    assert Solver(1).best_response(game)  # seat 0 (greedy here) must fold: seat 1 wins


def test_the_solver_wins_the_bench_game_it_says_it_wins() -> None:
    """Through the bench's own path (recorded game, make_bot('greedy') from its observation)."""
    for seat in (0, 1):
        solver = Solver(seat)
        assert replay(0, seat, solver) == solver.best_response(new_game(0))
