"""The ``random`` bot: a uniformly random legal turn."""

from __future__ import annotations

import random

from ..game import Game
from ..observation import Observation
from ..steps import Turn

__all__ = ["RandomBot"]


class RandomBot:
    """Picks uniformly among the legal turns of its observation (``fold`` included)."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    @classmethod
    def from_options(cls, seed: int = 0) -> RandomBot:
        return cls(seed)

    def choose(self, obs: Observation) -> Turn:
        return self.rng.choice(obs.legal_turns())

    def choose_world(self, world: Game) -> Turn:
        """The same choice from :func:`~red7es.observation.seat_world` (the legal turns
        never depend on the hidden cards): what a worker asks (:func:`~red7es.bots.base.decide`)."""
        return self.rng.choice(world.legal_turns())
