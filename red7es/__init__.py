"""red7es: a rules engine for Red7 (Asmadi Games), exact to RULES.md.

The core is pure Python and imports nothing of Redis, RQ, msgpack or click::

    >>> import red7es
    >>> game = red7es.Game.new(players=3, scoring=True, draw=True, actions=True, seed="demo")
    >>> turns = game.legal_turns()
    >>> outcome = red7es.play_game(game, [red7es.make_bot("greedy", seed=s) for s in range(3)])
"""

from __future__ import annotations

from .bots import BOT_NAMES, Bot, BotError, make_bot
from .cards import ALL_CARDS, Card, CardError, Color, parse_cards
from .deal import commitment, deck_order, make_seed
from .facts import CardDrawn, Fact, GameOver, Outcome, PlayerOut, RoundDealt, RoundWon, StepApplied, TurnTakenBack
from .game import Game, GameOverError, IllegalStep, replay
from .observation import Observation, SeatView, determinize
from .play import play_game
from .position import PositionError
from .rules import leader, scoring_cards
from .steps import Step, StepError, StepKind, Turn
from .variant import Variant, VariantError

__version__ = "0.1.0"

__all__ = [
    "ALL_CARDS",
    "BOT_NAMES",
    "Bot",
    "BotError",
    "Card",
    "CardDrawn",
    "CardError",
    "Color",
    "Fact",
    "Game",
    "GameOver",
    "GameOverError",
    "IllegalStep",
    "Observation",
    "Outcome",
    "PositionError",
    "PlayerOut",
    "RoundDealt",
    "RoundWon",
    "SeatView",
    "Step",
    "StepApplied",
    "TurnTakenBack",
    "StepError",
    "StepKind",
    "Turn",
    "Variant",
    "VariantError",
    "commitment",
    "deck_order",
    "determinize",
    "leader",
    "make_bot",
    "make_seed",
    "parse_cards",
    "play_game",
    "replay",
    "scoring_cards",
]
