"""Positions sampled from random seeded games, for the consistency tests."""

from __future__ import annotations

import random
from collections.abc import Iterator

from red7es import Game, Variant


def random_variant(rng: random.Random) -> Variant:
    return Variant(
        rng.choice([2, 3, 4]),
        scoring=rng.random() < 0.5,
        draw=rng.random() < 0.5,
        actions=rng.random() < 0.6,
    )


def random_game(seed: int, variant: Variant | None = None, *, record: bool = True) -> Game:
    rng = random.Random(seed)
    return Game.new(variant or random_variant(rng), seed=f"sample-{seed}", record=record)


def positions(games: int, *, seed: int = 0, mid_turn: bool = True, every: int = 1) -> Iterator[Game]:
    """Positions of ``games`` random games (random variants, random legal turns).

    Besides the start of every ``every``-th turn, when ``mid_turn`` is set it also
    yields positions in the middle of a turn: after the first steps of a legal turn.
    Each yielded game is a copy the caller may change.
    """
    for g in range(games):
        rng = random.Random(seed * 100_003 + g)
        game = random_game(seed * 100_003 + g, record=False)
        n = 0
        while game.outcome is None:
            if n % every == 0:
                yield game.copy()
            turns = game.legal_turns()
            non_fold = [t for t in turns if not t.is_fold]
            # fold rarely, so games get long and varied
            turn = rng.choice(non_fold) if non_fold and rng.random() < 0.9 else rng.choice(turns)
            if mid_turn and len(turn.steps) >= 2 and n % every == 0:
                partial = game.copy()
                for step in turn.steps[: rng.randrange(1, len(turn.steps))]:
                    partial.push(step)
                partial._stack = []
                yield partial
            game.apply(turn)
            n += 1
