"""What a worker process keeps between jobs: its store, its warm games, its name."""

from __future__ import annotations

import contextvars
import logging
import os
import socket
import time
from typing import Any

import redis

from red7es.service.client import GameService
from red7es.service.folding import Folder, GameBroken
from red7es.service.store import NoSuchGame

__all__ = ["WorkerContext", "current_context", "use_context"]

log = logging.getLogger(__name__)

LEASE_MS = 30_000
SLICE_SECONDS = 0.5
STALL_SECONDS = 3.0

_CURRENT: contextvars.ContextVar[WorkerContext | None] = contextvars.ContextVar("red7es_worker", default=None)


class WorkerContext:
    """One per worker process: folds games, holds their leases, sweeps for lost work."""

    def __init__(self, connection: redis.Redis, owner: str | None = None) -> None:
        self.service = GameService(connection)
        self.store = self.service.store
        self.folder = Folder(self.store)
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}"
        self._stalled_since: dict[str, float] = {}
        self.last_sweep = 0.0

    def advance(self, game_id: str) -> dict[str, Any]:
        """Fold a game for one time slice, then hand it back (re-queued if work is left)."""
        if not self.store.acquire_lease(game_id, self.owner, LEASE_MS):
            return {"game": game_id, "skipped": "another worker holds the game"}
        try:
            progress = self.folder.advance(game_id, max_seconds=SLICE_SECONDS)
        except (GameBroken, NoSuchGame) as exc:
            log.error("%s", exc)
            self.store.release_lease(game_id, self.owner)
            self.store.clear_nudge(game_id)
            return {"game": game_id, "error": str(exc)}
        except BaseException:
            self.store.release_lease(game_id, self.owner)
            raise
        # Order matters: release, clear the nudge, then look again, so a command that
        # arrived meanwhile is either seen here or wakes a new job.
        self.store.release_lease(game_id, self.owner)
        self.store.clear_nudge(game_id)
        if progress.more or self.folder.pending(game_id):
            self.service.schedule(game_id)
        return {
            "game": game_id,
            "commands": progress.commands,
            "bot_moves": progress.bot_moves,
            "events": progress.events,
            "conflicts": progress.conflicts,
        }

    def sweep(self) -> int:
        """Re-queue games that have work but nobody on them (a worker died, a job was lost)."""
        self.last_sweep = time.monotonic()
        woken = 0
        now = time.monotonic()
        active = self.store.active_games()
        for game_id in active:
            try:
                if self.store.lease_holder(game_id) is not None or not self.folder.pending(game_id):
                    self._stalled_since.pop(game_id, None)
                    continue
            except NoSuchGame:
                continue
            first = self._stalled_since.setdefault(game_id, now)
            if self.store.set_nudge(game_id, 30_000):
                self.service.enqueue(game_id)
                woken += 1
            elif now - first > STALL_SECONDS:
                # A nudge is set but nothing has run for a while: its job was lost.
                self.service.enqueue(game_id)
                self._stalled_since[game_id] = now
                woken += 1
        for game_id in list(self._stalled_since):
            if game_id not in active:
                del self._stalled_since[game_id]
        return woken


def current_context() -> WorkerContext | None:
    return _CURRENT.get()


def use_context(context: WorkerContext) -> contextvars.Token[WorkerContext | None]:
    return _CURRENT.set(context)
