"""Bots: players that decide from their :class:`~red7es.observation.Observation` alone.

``make_bot("greedy", seed=1)`` builds a bot by name; every bot has ``choose(obs)``
returning a :class:`~red7es.steps.Turn` that is legal for that observation.
"""

from __future__ import annotations

from .base import BOT_NAMES, Bot, BotError, make_bot
from .greedy import GreedyBot
from .random_bot import RandomBot

__all__ = ["BOT_NAMES", "Bot", "BotError", "GreedyBot", "RandomBot", "make_bot"]
