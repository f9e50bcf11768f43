"""What a finished game stops keeping in Redis: the changes before its end, its bots' command
ids, and its log as a stream (sealed into one compressed value: :mod:`red7es.service.sealing`).

A game that is over takes no more commands (``submit.lua`` refuses them), so two of its
keys hold data nobody needs any more (docs/records.md, *A finished game in Redis*):

* ``red7:{g}:changes``: each entry is the public part of one append, for watchers to
  follow the game live; all of it is in the log, which ``export``, ``replay`` and
  ``audit`` read.  The stream is trimmed to the change that holds ``GameOver`` (and the
  few that may follow it: refusals of commands submitted before the end).  A reader
  resuming from any earlier change id gets that change, then the final view, and so
  learns that the game is over; a fresh reader starts from the view, as before.
* ``red7:{g}:cmdids``: command id → stream id, which makes a client's retried submit a
  no-op.  Bots' turns (``bot-<n>``) are written only by workers, together with their
  facts, never submitted or retried, so the ids a worker before 5 December 2026 stored
  for them are dropped (workers no longer store them); people's stay, so a
  client retrying a command of the finished game is still told it was taken.

Not at once: a watcher whose connection dropped just before the end must still be able
to resume from its last change id and be told every move (docs/gateway.md, streams).  A
worker finishing a game (``GameStore.finish``) schedules its compaction
:data:`KEEP_CHANGES_MS` later (Redis's clock) in the sorted set ``red7:compactions``,
and workers compact the games due there on each sweep (:func:`compact_due`).  Running
it again changes nothing, so a game finished twice (the sweep finishing one whose
worker died) is compacted once.
"""

from __future__ import annotations

import logging
from typing import Any

import msgpack
import redis

from . import deadlines
from .events import BOT_ID_PREFIX
from .sealing import LATER, UNSEALABLE, SealError, seal_finished
from .store import KEEP_CHANGES_MS, Keys, NoSuchGame, entry_field, registered_script, text

__all__ = ["COMPACTIONS", "KEEP_CHANGES_MS", "compact_due", "compact_finished", "game_over_change", "schedule"]

COMPACTIONS = "red7:compactions"  # game id -> when (Redis ms) it may be compacted
RESEAL_MS = 5_000  # a game whose log could not be sealed yet is tried again this much later


log = logging.getLogger(__name__)

_PAGE = 50  # changes read per look back for the one that holds GameOver


def game_over_change(connection: redis.Redis, game_id: str) -> str | None:
    """The id of the change that holds the game's ``GameOver`` (the newest such), or None."""
    key = Keys(game_id).changes
    before = "+"
    while True:
        rows: Any = connection.xrevrange(key, max=before, min="-", count=_PAGE)
        for change_id, fields in rows:
            if _holds_game_over(entry_field(fields, b"p")):
                return text(change_id)
        if len(rows) < _PAGE:
            return None
        before = "(" + text(rows[-1][0])


def _holds_game_over(payload: bytes) -> bool:
    try:
        change: Any = msgpack.unpackb(payload, raw=False)
    except Exception:  # msgpack raises several unrelated types for bad bytes: not this change
        return False
    events = change.get("events") if isinstance(change, dict) else None
    return isinstance(events, list) and any(isinstance(e, dict) and e.get("type") == "GameOver" for e in events)


def compact_finished(connection: redis.Redis, game_id: str, *, seal: bool = True) -> tuple[int, int]:
    """Trim a finished game's changes to its end, drop its bots' command ids and seal its
    log (unless ``seal`` is False: bench/footprint.py measures the steps apart).

    Returns (changes removed, command ids removed).  A game not over is left as it is;
    one whose changes hold no ``GameOver`` (its stream damaged) keeps its changes.
    """
    removed, dropped, _sealing = _compact(connection, game_id, seal)
    return removed, dropped


def _compact(connection: redis.Redis, game_id: str, seal: bool) -> tuple[int, int, str]:
    """:func:`compact_finished`, with what sealing did (:data:`~red7es.service.sealing.LATER`:
    try again later)."""
    k = Keys(game_id)
    try:
        end = game_over_change(connection, game_id)
        bots = [f for f in connection.hkeys(k.cmdids) if text(f).startswith(BOT_ID_PREFIX)]
    except redis.ResponseError as exc:  # a key of the wrong type, written by hand: keep it as it is
        log.warning("game %s: not compacted: %s", game_id, str(exc).splitlines()[0])
        return 0, 0, UNSEALABLE
    sealing = UNSEALABLE
    if seal:
        try:
            sealing = seal_finished(connection, game_id)  # first: the stream it deletes need not be repacked
        except SealError as exc:  # (a seal that does not read back is never written) the stream is kept
            log.error("game %s: log not sealed: %s", game_id, exc)
    removed, dropped, _repacked = registered_script(connection, "compact.lua")(
        keys=[k.changes, k.cmdids, k.log, k.commands, k.meta], args=[end or "", *bots]
    )
    return int(removed), int(dropped), sealing


def schedule(connection: redis.Redis, game_id: str, keep_ms: int = KEEP_CHANGES_MS) -> None:
    """Compact a finished game ``keep_ms`` from now (0: now, here, and its log sealed by the
    next sweep: the worker finishing it still holds its lease, which sealing waits for)."""
    if keep_ms <= 0:
        compact_finished(connection, game_id, seal=False)
    deadlines.schedule(connection, COMPACTIONS, max(keep_ms, 0), [game_id], keep_earlier=True)


def compact_due(connection: redis.Redis, limit: int = 100) -> int:
    """Compact the finished games whose time has come (at most ``limit``); how many.

    Each is taken off the set only once compacted, so a worker dying midway leaves it
    for the next sweep (compacting twice changes nothing).
    """
    _now, games = deadlines.due(connection, limit, COMPACTIONS)
    for game_id in games:
        sealing = UNSEALABLE
        try:
            _removed, _dropped, sealing = _compact(connection, game_id, True)
        except (redis.ResponseError, NoSuchGame) as exc:  # keys written by hand: left as they are, said once
            log.error("game %r: not compacted: %s", game_id, str(exc).splitlines()[0])
        if sealing == LATER:  # a worker holds it or a command waits: its log is sealed on a later sweep
            deadlines.schedule(connection, COMPACTIONS, RESEAL_MS, [game_id], keep_earlier=False)
        else:
            connection.zrem(COMPACTIONS, game_id)
    return len(games)
