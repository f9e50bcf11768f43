"""Move generation agrees with the rules: legal_turns, the fast path, legal_steps."""

from __future__ import annotations

import itertools

from red7es import IllegalStep, Turn
from red7es.steps import STEPS, StepKind

from .sampling import positions


def test_every_legal_turn_applies_and_ends_leading():
    for game in positions(60, seed=10):
        seat = game.turn
        for turn in game.legal_turns():
            trial = game.copy()
            trial.apply(turn)  # raises if illegal
            if turn.open or turn.is_fold:
                continue
            steps = game.copy()
            for step in turn.steps:
                steps.push(step)
            assert steps.leader() == seat, f"{turn} does not leave seat {seat} leading"


def test_open_turns_stop_right_after_a_three_draws_an_unknown_card():
    seen = 0
    for game in positions(60, seed=11):
        for turn in game.legal_turns():
            if not turn.open:
                continue
            seen += 1
            last = turn.steps[-1]
            assert last.kind is StepKind.PLAY and last.card.number == 3
            assert game.variant.actions
            trial = game.copy()
            for step in turn.steps[:-1]:
                trial.push(step)
            assert trial.deck and not trial.known >> trial.deck[-1] & 1
    assert seen > 0


def test_legal_turns_have_no_duplicates_and_always_include_fold():
    for game in positions(60, seed=12):
        turns = game.legal_turns()
        assert len(set(turns)) == len(turns)
        assert turns[-1] == Turn.parse("fold")


def test_fast_path_and_depth_first_search_give_the_same_turns():
    checked = 0
    for game in positions(150, seed=13, mid_turn=False):
        if game.variant.actions:
            continue
        fast: list = []
        game._fast_turns(fast)
        search: list = []
        game._search_turns((), search)
        assert fast == search  # same order: bots break ties by it
        checked += 1
    assert checked > 500


def candidate_turns(game) -> set[str]:
    """Every turn of the basic shapes (play, discard, both, each maybe with draw)."""
    hand = [str(c) for c in game.hand(game.turn)]
    out = set()
    for x in hand:
        out.add(f"p:{x}")
    for y in hand:
        out |= {f"c:{y}", f"c:{y} draw"}
    for x, y in itertools.permutations(hand, 2):
        out |= {f"p:{x} c:{y}", f"p:{x} c:{y} draw"}
    return out


def test_legal_turns_are_exactly_the_basic_turns_that_apply_without_actions():
    # brute force: try every turn of the basic shapes and keep those apply() accepts
    for game in positions(40, seed=14, mid_turn=False):
        if game.variant.actions:
            continue
        accepted = set()
        for text in candidate_turns(game):
            try:
                game.copy(record=False).apply(text)
            except IllegalStep:
                continue
            accepted.add(text)
        legal = {str(t) for t in game.legal_turns()} - {"fold"}
        assert legal == accepted


def test_legal_steps_are_exactly_the_steps_push_accepts():
    for game in positions(25, seed=15, every=2):
        legal = {int(s) for s in game.legal_steps()}
        before = game._save()
        accepted = set()
        for code, step in STEPS.items():
            try:
                game.push(step)
            except IllegalStep:
                assert game._save() == before
                continue
            accepted.add(code)
            game.pop()
            assert game._save() == before
        assert accepted == legal, (game, sorted(STEPS[c] for c in accepted ^ legal))


def test_play_turn_fast_path_matches_apply():
    for game in positions(30, seed=16, mid_turn=False):
        for codes, is_open in game.legal_turn_codes():
            a, b = game.copy(), game.copy()
            a.apply(Turn(tuple(STEPS[c] for c in codes), is_open))
            b.play_turn(codes, is_open)
            assert a._save() == b._save() and a.log == b.log


def test_a_one_is_playable_exactly_when_some_continuation_ends_leading():
    # Independent of the engine's shortcut: play the 1 without checks, then search
    # every continuation of the turn for one that ends leading.
    checked = 0
    for game in positions(80, seed=17):
        if not game.variant.actions:
            continue
        legal = {str(s) for s in game.legal_steps()}
        for one in [c for c in game.hand(game.turn) if c.number == 1]:
            step = f"p:{one}"
            forced = game.copy(record=False)
            try:
                forced._check(0, int(one), forced.turn, forced.pending)
            except IllegalStep as exc:
                if "you may not play" not in str(exc):
                    continue  # not a palette-play moment at all
            forced._step(int(STEPS[int(one)]), False)
            continuations: list = []
            forced._search_turns((), continuations)
            assert (step in legal) == bool(continuations), (game, step)
            checked += 1
    assert checked > 100
