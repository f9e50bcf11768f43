"""Play a game to its end with bots, each deciding from its own observation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .bots.base import Bot, decide
from .facts import Outcome
from .game import Game

__all__ = ["play_game"]


def play_game(game: Game, bots: Sequence[Bot] | Mapping[int, Bot], *, max_turns: int = 100_000) -> Outcome:
    """Let ``bots`` (one per seat) play ``game`` until it ends; returns the outcome.

    Every decision is made from what the seat may see only (:func:`~red7es.bots.base.decide`).
    """
    seats = dict(enumerate(bots)) if not isinstance(bots, Mapping) else dict(bots)
    missing = [s for s in range(game.players) if s not in seats]
    if missing:
        raise ValueError(f"no bot for seat(s) {missing}")
    for _ in range(max_turns):
        if game.outcome is not None:
            return game.outcome
        seat = game.turn
        game.apply(decide(seats[seat], game, seat))
    raise RuntimeError(f"game did not end within {max_turns} turns")
