"""The search over greedy's possible hands together (red7es.bots.infoset): no strategy fusion,
the same values as a plain recursion, the vote when out of budget."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from test_inference import _greedy_positions

from red7es.bots.exploit import FOLD_TURN, MaskTurn, Solver, greedy_turn, legal_turns, turn_after
from red7es.bots.infoset import PartitionSearch, Worlds
from red7es.cards import bits, mask_of, parse_cards


def _mask(text: str) -> int:
    return mask_of(parse_cards(text))


def _card(text: str) -> int:
    return int(parse_cards(text)[0])


def _plain_value(hand: int, pal: int, opal: int, rule: int, worlds: Worlds) -> int:
    """The information-set best response, recursed in full: no memo, no bound, no depth."""
    best = 0
    for turn in legal_turns(hand, pal, opal, rule):
        best = max(best, _plain_turn(turn, hand, pal, opal, rule, worlds))
    return best


def _plain_turn(turn: MaskTurn, hand: int, pal: int, opal: int, rule: int, worlds: Worlds) -> int:
    hand, pal, rule = turn_after(turn, hand, pal, rule)
    won = 0
    parts: dict[MaskTurn, list[tuple[int, int]]] = {}
    for other, w in worlds:
        reply = greedy_turn(other, opal, pal, rule) if other else FOLD_TURN
        if reply == FOLD_TURN:
            won += w
        else:
            parts.setdefault(reply, []).append((other, w))
    if not hand:
        return won
    for reply, part in parts.items():
        after = [turn_after(reply, other, opal, rule) for other, _ in part]
        rest = tuple(sorted((a[0], w) for a, (_, w) in zip(after, part, strict=True)))
        won += _plain_value(hand, pal, after[0][1], after[0][2], rest)
    return won


# (bot's hand, its palette, greedy's palette, rule, hands greedy may hold, the vote's turn, the best turn)
FUSED = [
    # Solved one by one, playing Y3 wins all four hands (the vote takes it), but in two of them
    # greedy answers Y3 alike and the bot would need a different next turn in each: it can
    # win only one of the two.  Y4 with I5 to the Canvas wins all four.
    (
        "V1 B3 Y3 Y4 I5",
        "I1 R6 R7",
        "Y2 B7",
        6,
        ["B1 G1 I2 O2 R3", "V2 O2 R3 V4 V5", "B5 G5 Y5 I6 B6", "O1 O2 G4 O6 G7"],
        ("Y3", None),
        ("Y4", "I5"),
    ),
    # The same with R4 and B1 (three of four) against B1 to the Canvas alone (four).
    (
        "B1 G1 R4 R6 I7",
        "B3 Y6 O7",
        "Y1 Y3 V7",
        6,
        ["Y2 I3 I4 Y5", "V3 Y4 B5 O5", "G2 R3 B6 G6", "Y2 O2 O5 R7"],
        ("R4", "B1"),
        (None, "B1"),
    ),
]


def _turn(cards: tuple[str | None, str | None]) -> MaskTurn:
    x, y = cards
    return (-1 if x is None else _card(x), -1 if y is None else _card(y))


@pytest.mark.parametrize("case", range(len(FUSED)))
def test_the_vote_fuses_strategies_and_the_search_over_parts_does_not(case: int) -> None:
    mine, pal_text, opal_text, rule, hands, fused, best = FUSED[case]
    hand, pal, opal = _mask(mine), _mask(pal_text), _mask(opal_text)
    worlds: Worlds = tuple(sorted((_mask(h), 1) for h in hands))
    turns = legal_turns(hand, pal, opal, rule)
    search = PartitionSearch(Solver())
    vote = search.best(turns, hand, pal, opal, rule, worlds, max_depth=1)
    assert vote.turn == _turn(fused) and vote.value == 4 and not vote.exact
    assert search._turn(vote.turn, hand, pal, opal, rule, worlds, 64, False) == (3, True)
    assert _plain_turn(vote.turn, hand, pal, opal, rule, worlds) == 3
    answer = search.best(turns, hand, pal, opal, rule, worlds)
    assert answer.turn == _turn(best) and answer.value == 4 and answer.exact
    assert _plain_value(hand, pal, opal, rule, worlds) == 4


def _small_cases(count: int) -> list[tuple[int, int, int, int, Worlds]]:
    """Positions of greedy-vs-greedy games with at most 4 cards in the mover's hand, and a few
    weighted hands for the other seat dealt from the cards the mover cannot see."""
    rng = random.Random(5)
    out = []
    for game in _greedy_positions({}, 2, 40):
        me = game.turn
        hand, other = game.hands[me], game.hands[1 - me]
        if (
            not 1 < hand.bit_count() <= 4
            or not other
            or not legal_turns(hand, game.pal[me], game.pal[1 - me], game.rule)
        ):
            continue
        unseen = bits(((1 << 49) - 1) & ~(hand | game.pal[0] | game.pal[1] | game.removed))
        dealt = {other} | {mask_of(rng.sample(unseen, other.bit_count())) for _ in range(rng.randrange(1, 6))}
        worlds = tuple(sorted((h, rng.randrange(1, 4)) for h in dealt))
        out.append((hand, game.pal[me], game.pal[1 - me], game.rule, worlds))
        if len(out) == count:
            break
    return out


def test_the_search_finds_the_plain_recursions_value() -> None:
    cases = _small_cases(60)
    assert len(cases) == 60
    for hand, pal, opal, rule, worlds in cases:
        answer = PartitionSearch(Solver()).best(legal_turns(hand, pal, opal, rule), hand, pal, opal, rule, worlds)
        assert answer.exact
        assert answer.value == _plain_value(hand, pal, opal, rule, worlds)
        # the turn it plays is worth that value, and no turn is worth more
        assert _plain_turn(answer.turn, hand, pal, opal, rule, worlds) == answer.value


def test_one_world_is_the_solver_and_depth_one_is_the_vote() -> None:
    for hand, pal, opal, rule, worlds in _small_cases(30):
        solver = Solver()
        turns = legal_turns(hand, pal, opal, rule)
        search = PartitionSearch(solver)
        for other, w in worlds:
            assert search._value(hand, pal, opal, rule, ((other, w),), 5, True) == (
                w if solver.wins(hand, other, pal, opal, rule) else 0,
                True,
            )
        votes = [sum(w for other, w in worlds if solver.wins_after(t, hand, other, pal, opal, rule)) for t in turns]
        vote = search.best(turns, hand, pal, opal, rule, worlds, max_depth=1)
        assert vote.value == max(votes) and vote.turn == turns[votes.index(max(votes))]


def test_out_of_budget_the_vote_stands() -> None:
    """A budget spent at once still gives depth 1 (the vote); the deeper search is dropped."""
    mine, pal_text, opal_text, rule, hands, fused, _ = FUSED[0]
    hand, pal, opal = _mask(mine), _mask(pal_text), _mask(opal_text)
    worlds: Worlds = tuple(sorted((_mask(h), 1) for h in hands))
    asked: list[int] = []

    def spent(nodes: int) -> bool:
        asked.append(nodes)
        return True

    search = PartitionSearch(Solver(), spent)
    answer = search.best(legal_turns(hand, pal, opal, rule), hand, pal, opal, rule, worlds)
    assert asked == [1]
    assert answer.depth == 1 and answer.turn == _turn(fused) and not answer.exact


def test_the_fusion_bench_counts_the_whole_posterior() -> None:
    """bench/fusion.py: over listed posteriors, the vote's turn wins no more hands than the
    information-set best response, which wins no more than knowing the hand would."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import fusion

    totals = fusion.count(games=12, cap=1500, iterations=40)  # (7 positions, deterministic)
    assert totals["positions"] >= 5 and totals["hands"] >= totals["positions"]
    assert totals["vote"] <= totals["best_response"] <= totals["bound"] <= totals["hands"]
    assert totals["fused_positions"] <= totals["positions"]
    assert (totals["fused_positions"] > 0) == (totals["best_response"] > totals["vote"])


def test_the_partition_probe_reads_each_search_it_ran() -> None:
    """bench/partition_probe.py: every decision's answer wins no more of its worlds than the
    vote's best turn (fusion only takes wins away), ties at that best are counted among the
    turns, every answer has a depth, and the probe puts the search back as it was."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import partition_probe

    wins, decisions = partition_probe.probe(games=4, spec="ismcts:iterations=40")
    assert 0 <= wins <= 4 and decisions
    assert all(d.value <= d.vote <= d.weight and 1 <= d.tied <= d.turns for d in decisions)
    assert all(d.depth >= 1 for d in decisions)
    assert partition_probe.infoset.PartitionSearch.best is partition_probe._ORIGINAL
