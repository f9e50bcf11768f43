"""The work index: which games have work that a worker may have dropped, and when to look.

``red7:work`` is a sorted set, member a game id, score the time (Redis milliseconds)
at which the sweep should look at the game if it still has work then.  It lets the
sweep find the few games that may need rescuing (a worker killed mid-game, a wake-up
lost) without reading every live game: a game waiting for a person has no entry, so
10,000 idle games cost the sweep nothing (issue #23; docs/architecture.md, *Sweep*).

* A client adds a game (``ZADD NX``, score 0: due at once) before it stores a command
  for it or creates it (on one Redis, in ``submit.lua``'s atomic step); whoever wakes a
  worker adds it again in the same round trip as the nudge
  (:meth:`GameStore.set_nudge`), even when the nudge was already set (a nudge left by a
  dead worker must not hide the new work); a worker adds it as it takes the game's
  lease, however it was woken, but for a post ``submit.lua`` marks as made with the add
  (``i``): that worker adds it before an append that may leave the game work instead
  (:meth:`Folder.take`: the post may be stale).
* A worker done with a game leaves it there while work is left (killed before it wakes
  someone for that work, the sweep finds it); with nothing left it removes it *before*
  looking for work that arrived meanwhile (:meth:`GameStore.off_index`): a command
  stored after that look was indexed by its client; one stored before is seen, and the
  worker wakes someone for it.  So a game with work always has an entry, with no
  transaction spanning the game's keys and this global key (a Redis Cluster could not
  run one).
* Finishing a game, or marking it broken, removes it.
* The sweep looks at the games due (:func:`~red7es.service.deadlines.due`: one script,
  ``TIME`` and ``ZRANGEBYSCORE``), puts those still busy off by :data:`CHECK_MS`
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

from . import deadlines

log = logging.getLogger(__name__)

__all__ = ["CHECK_MS", "WORK", "WorkIndex"]

WORK = "red7:work"
CHECK_MS = 3_000  # a game the sweep found busy is looked at again this long after


class WorkIndex:
    """The index on one connection."""

    def __init__(self, connection: redis.Redis) -> None:
        self.redis = connection
        self._told_refused = False

    def add(self, game_id: str, client: Any = None) -> Any:
        """Add a game, due at once, unless it has an entry (``client``: a pipeline).

        Due at once, not later: a plain ``ZADD NX`` (no script, no clock) that a pipeline
        of any Redis, a cluster's too, takes.  A worker done with the game before the next
        sweep takes it off again, so the sweep reads only games that have work as it runs.
        """
        return (client or self.redis).zadd(WORK, {game_id: 0}, nx=True)

    def add_or_say(self, game_id: str) -> None:
        """:meth:`add` on its own, best effort: a refusal is said (:meth:`refused`), not raised."""
        try:
            self.add(game_id)
        except redis.exceptions.ResponseError as error:
            self.refused(error)

    def refused(self, error: Exception) -> None:
        """An add Redis refused (a user whose ACL predates the index): said once, not raised,
        so that the worker is still woken; the sweep's slice finds the game should that fail."""
        if not self._told_refused:
            log.warning("cannot write the work index %s: %s", WORK, str(error).splitlines()[0])
            self._told_refused = True

    def later(self, game_ids: Sequence[str]) -> None:
        """Look at these games again :data:`CHECK_MS` from now (added if they had no entry)."""
        deadlines.schedule(self.redis, WORK, CHECK_MS, game_ids, keep_earlier=False)

    def members(self) -> list[str]:
        """Every member of the index (few: only games with work, or being folded)."""
        return [
            g.decode("utf-8", "replace") if isinstance(g, bytes) else str(g) for g in self.redis.zrange(WORK, 0, -1)
        ]

    def due(self, limit: int = 1000) -> list[str]:
        """The members due now by Redis's clock, at most ``limit`` (they may hold anything a
        hand wrote: :meth:`GameStore.due_work` keeps the game ids)."""
        return deadlines.due(self.redis, limit, WORK)[1]
