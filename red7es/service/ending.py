"""Whether a game's log shows it ended: the one thing that may destroy its secret seed.

``meta.status`` says ``over`` once the append that wrote the game's GameOver did, and
the workers' sweep then forgets the seed of any game still on its list (its worker died
between that append and tidying up).  But meta is one ``HSET`` away from saying anything:
a status written by hand must not cost a running game its seed, which nothing can bring
back.  So the seed goes only when the log, read from its end, shows the GameOver.
"""

from __future__ import annotations

import redis

from ..facts import GameOver
from .codec import CorruptEvent, decode_event, type_name
from .events import CommandRejected, SeedRevealed
from .store import GameStore

__all__ = ["end_problem"]

# What a log holds after its GameOver: the seed it reveals, and refusals of commands that
# were already on the stream when the game ended (each answered, none taking effect).
_AFTER_THE_END = (SeedRevealed, CommandRejected)
_PAGE = 8  # a game that ended has its GameOver within two events of its end, as a rule


def end_problem(store: GameStore, game_id: str) -> str | None:
    """Why the game's log does not show it ended (one line); None when it does.

    Reads back from the end, a few events at a time, past what follows a GameOver, so
    it costs one round trip for a game that ended and is never called for one in play.
    """
    before: str | None = None
    while True:
        try:
            entries = store.log_before(game_id, before, _PAGE)
        except redis.ResponseError as exc:  # a key of the wrong type, written by hand
            return f"its log cannot be read: {str(exc).splitlines()[0]}"
        if not entries:
            return "its log holds no GameOver" if before is not None else "its log holds no events"
        for stream_id, raw in entries:
            try:
                recorded = decode_event(raw, f"log entry {stream_id}")
            except CorruptEvent as exc:
                return f"its log cannot be read: {exc}"
            if isinstance(recorded.event, GameOver):
                return None
            if not isinstance(recorded.event, _AFTER_THE_END):
                name = type_name(recorded.event)
                return f"its log shows the game going on: event {recorded.seq} is a {name}, and no GameOver follows it"
        before = entries[-1][0]
