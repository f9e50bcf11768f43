"""The bot protocol and the registry of bots by name."""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from typing import Any, Protocol

from ..game import Game
from ..observation import Observation, seat_world
from ..steps import Turn

__all__ = [
    "BOT_NAMES",
    "QUICK_TIME",
    "Bot",
    "BotError",
    "DecisionInterrupted",
    "decide",
    "make_bot",
    "observation_for",
    "spec_options",
    "thinks_long",
]

# Seconds a bot's decision may take without holding a worker noticeably: a bot whose
# budget may be longer ``thinks_long``, and its turns go to the workers that take slow
# bots (docs/architecture.md, *Slow bots*).
QUICK_TIME = 0.5


class BotError(ValueError):
    """Raised for an unknown bot name or bad bot options."""


class DecisionInterrupted(Exception):
    """A bot gave up a decision because it was asked to (its worker is stopping): no turn.

    Nothing was decided, so nothing is written: the decision is made again, from the same
    observation and seed, by whoever plays the bot next.
    """


class Bot(Protocol):
    """A player program: it sees one observation and returns a legal turn."""

    name: str

    def choose(self, obs: Observation) -> Turn: ...


def observation_for(bot: Bot, game: Game, seat: int) -> Observation:
    """What ``bot`` sees in ``seat``: with the round's turns only if it reads them.

    Building the history replays the round, so bots that ignore it (``random``,
    ``greedy``) are spared the cost; a bot that reads it says so with a true
    ``reads_history`` attribute.
    """
    return game.observation(seat, history=bool(getattr(bot, "reads_history", False)))


def decide(bot: Bot, game: Game, seat: int) -> Turn:
    """The turn ``bot`` takes in ``seat`` of ``game``, from what that seat may see only.

    A bot that never reads hidden cards (``random``, ``greedy``: a ``choose_world``
    method) is handed :func:`~red7es.observation.seat_world`, the game with every card
    hidden from the seat filled in a fixed order, built straight from the game's masks:
    the very game its ``choose`` would deal from the observation with
    ``determinize(obs, None)``, so it decides exactly as before, without building the
    observation and dealing a world for every decision.  Any other bot gets its
    observation (:func:`observation_for`).
    """
    on_world = getattr(bot, "choose_world", None)
    if on_world is not None:
        turn: Turn = on_world(seat_world(game, seat))
        return turn
    return bot.choose(observation_for(bot, game, seat))


# name -> "module:class", imported on first use so a bot costs nothing until asked for.
_BOTS = {
    "random": "red7es.bots.random_bot:RandomBot",
    "greedy": "red7es.bots.greedy:GreedyBot",
    "ismcts": "red7es.bots.ismcts:IsmctsBot",
}
BOT_NAMES: tuple[str, ...] = tuple(_BOTS)


# Arguments of a bot's from_options that are not options of its spec.
_NOT_OPTIONS = ("seed", "interrupted", "max_time")


@functools.cache
def _arguments(from_options: Callable[..., object]) -> tuple[str, ...]:
    """The arguments of a bot class's ``from_options`` (read once: a bot is made per decision)."""
    return tuple(inspect.signature(from_options).parameters)


def spec_options(from_options: Callable[..., object]) -> list[str]:
    """The options a bot takes in a spec (``ismcts:iterations=500``): the arguments of its
    class's ``from_options`` but the seed and make_bot's ``interrupted``."""
    return [p for p in _arguments(from_options) if p not in _NOT_OPTIONS]


def make_bot(
    spec: str,
    seed: int = 0,
    *,
    new_game: bool = False,
    interrupted: Callable[[], bool] | None = None,
    max_time: float | None = None,
) -> Bot:
    """Build a bot from ``name`` or ``name:option=value,...`` (``ismcts:iterations=500``).

    The same spec and seed always make a bot that plays the same way.  ``new_game``
    also holds it to the limits a bot of a game being created must keep (a bot's
    ``check_limits``): limits that come later must not stop older games or audits.
    ``interrupted`` is handed to a bot that may think for long (its ``from_options``
    takes it), which asks it as it searches and gives up with
    :class:`DecisionInterrupted` once it says True; quick bots need not ask.
    ``max_time`` (seconds) is the operator's cap on one decision, handed likewise to a bot
    that may think long: it ends every search by then, and a new game's bot may ask no more.
    """
    name, cls, parsed = _parsed(spec, new_game)
    options = dict(parsed)
    try:
        handed = {"interrupted": interrupted, "max_time": max_time}
        extra = {k: v for k, v in handed.items() if v is not None and k in _arguments(cls.from_options)}
        bot: Bot = cls.from_options(seed=seed, **options, **extra)
        if new_game and hasattr(bot, "check_limits"):
            bot.check_limits()
    except (TypeError, ValueError) as exc:
        raise BotError(f"bad options for bot {name!r}: {exc}") from None
    return bot


@functools.lru_cache(maxsize=1024)
def _parsed(spec: str, new_game: bool) -> tuple[str, Any, tuple[tuple[str, str], ...]]:
    """A spec's bot name, class and options, read once per spec: workers make a bot for
    every decision (seeded by its position), always from the same few specs."""
    if new_game and not spec.isprintable():
        # (stored as typed, in views and records: a control character, a line or paragraph
        # separator, would wait there for the first output that prints it raw; older games
        # keep theirs)
        raise BotError(f"a bot spec is printable text, not {spec!r}")
    name, _, opts = spec.partition(":")
    name = name.strip().lower()
    target = _BOTS.get(name)
    if target is None:
        raise BotError(f"unknown bot {spec!r}: choose one of {', '.join(BOT_NAMES)}")
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    known = spec_options(cls.from_options)
    options: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in opts.split(","))):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq:
            raise BotError(f"bot option {part!r} must look like name=value")
        if key not in known:
            takes = f"it takes {', '.join(known)}" if known else "it takes none"
            raise BotError(f"bot {name!r} has no option {key!r}: {takes}")
        if new_game and key in options:
            # which one counts would be a guess; an older game's spec keeps the last
            raise BotError(f"bot option {key!r} is given twice in {spec!r}")
        options[key] = value.strip()
    return name, cls, tuple(options.items())


def thinks_long(bot: Bot) -> bool:
    """Whether a decision of ``bot`` may hold a worker for more than about :data:`QUICK_TIME`
    (its ``thinks_long``; bots without one are quick)."""
    return bool(getattr(bot, "thinks_long", False))
