"""The work index: which games have work that a worker may have dropped, and when to look.

``red7:work`` is a sorted set, member a game id, score the time (Redis milliseconds)
at which the sweep should look at the game if it still has work then.  It lets the
sweep find the few games that may need rescuing (a worker killed mid-game, a wake-up
lost) without reading every live game: a game waiting for a person has no entry, so
10,000 idle games cost the sweep nothing (issue #23; docs/architecture.md, *Sweep*).

* Whoever wakes a worker for a game (:meth:`GameStore.set_nudge`, a client's submit or
  a worker handing a game on) adds it, ``NX``, due at once, in the same round trip as
  the nudge.  Added whether or not the nudge was already set: a nudge
  left by a worker that died must not hide the new work.
* A worker done with a game removes it *before* looking for work that arrived
  meanwhile (:meth:`GameStore.clear_nudge_and_look`, one pipeline).  A command
  submitted after that look adds the entry again itself; one submitted before it is
  seen by the look, and the worker wakes someone for it (which adds it).  So a game
  with work always has an entry, with no transaction spanning the game's keys and
  this global key (a Redis Cluster could not run one).
* Finishing a game, or marking it broken, removes it.
* The sweep looks at the games due (:meth:`WorkIndex.due`: one script, ``TIME`` and
  ``ZRANGEBYSCORE``), puts those still busy off by :data:`CHECK_MS`
  (:meth:`WorkIndex.later`, by Redis's clock), and removes those left with no work,
  with the same remove-then-look as a worker.

A worker's first sweep still reads every active game once (games from before the
index, and keys written by hand), then only the index.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import redis

log = logging.getLogger(__name__)

__all__ = ["CHECK_MS", "WORK", "WorkIndex"]

WORK = "red7:work"
CHECK_MS = 3_000  # a game the sweep found busy is looked at again this long after

# KEYS: the index; ARGV: ms from now, then game ids. Puts each off (kept or added).
_LATER = """
local t = redis.call('TIME')
local at = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], at, ARGV[i])
end
return 1
"""

# KEYS: the index; ARGV: at most this many. The games due by Redis's clock.
_DUE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
"""


class WorkIndex:
    """The index's scripts, registered on one connection."""

    def __init__(self, connection: redis.Redis) -> None:
        self.redis = connection
        self._told_refused = False
        self._later = connection.register_script(_LATER)
        self._due = connection.register_script(_DUE)

    def add(self, game_id: str, client: Any = None) -> Any:
        """Add a game, due at once, unless it has an entry (``client``: a pipeline).

        Due at once, not later: a plain ``ZADD NX`` (no script, no clock) that a pipeline
        of any Redis, a cluster's too, takes.  A worker done with the game before the next
        sweep takes it off again, so the sweep reads only games that have work as it runs.
        """
        return (client or self.redis).zadd(WORK, {game_id: 0}, nx=True)

    def refused(self, error: Exception) -> None:
        """An add Redis refused (a user whose ACL predates the index): said once, not raised,
        so that the worker is still woken; the sweep's slice finds the game should that fail."""
        if not self._told_refused:
            log.warning("cannot write the work index %s: %s", WORK, str(error).splitlines()[0])
            self._told_refused = True

    def later(self, game_ids: Sequence[str]) -> None:
        """Look at these games again :data:`CHECK_MS` from now (added if they had no entry)."""
        if game_ids:
            self._later(keys=[WORK], args=[CHECK_MS, *game_ids])

    def members(self) -> list[str]:
        """Every game on the index (few: only games with work, or being folded)."""
        return [g.decode() if isinstance(g, bytes) else str(g) for g in self.redis.zrange(WORK, 0, -1)]

    def due(self, limit: int = 1000) -> list[str]:
        """The games due now by Redis's clock, at most ``limit``."""
        games: Any = self._due(keys=[WORK], args=[limit])
        ids = [g.decode("utf-8", "replace") if isinstance(g, bytes) else str(g) for g in games]
        return self._valid(ids, self.redis.zrem)

    def _valid(self, ids: list[str], remove: Any) -> list[str]:
        """The game ids among ``ids``; any other member (written by hand) is removed and
        said, so that it cannot stop the sweep of every game."""
        from .store import valid_game_id  # (store builds on this module)

        bad = [g for g in ids if not valid_game_id(g)]
        for member in bad:
            log.error("%s held %r, which is no game id: removed", WORK, member)
            remove(WORK, member)
        return [g for g in ids if valid_game_id(g)]
