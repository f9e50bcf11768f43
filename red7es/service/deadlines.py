"""The deadline index: which timed games have a seat whose time runs out, and when.

``red7:deadlines`` is a sorted set, member the game id, score the deadline of the seat
to move in Redis milliseconds (RULES.md, Time; docs/architecture.md, Clocks).  The truth
is each game's own ``meta.deadline``, written by the compare-and-append (``append.lua``)
atomically with the turn that set it.  On one Redis the index is set from that meta in
the same transaction as the append (:func:`append_indexed`: ``MULTI``, the append script,
a script that copies ``meta.deadline`` into the index, ``EXEC``), so it can never be lost
or disagree with the game.  A Redis Cluster cannot run one transaction over a game's keys
and a global key: there the index is written right after a successful append, and
should a worker die between the two, the sweep puts the game back from its meta (``ZADD LT``: it
also lowers an entry later than the meta says, which two workers' writes crossing when
a lease was lost could leave), and a worker that folds a timed game writes the index
from the game it just folded, so an entry that is early, or left by a game that ended
or broke, is corrected the first time it is due.

Workers look at it on every pass (:func:`due`: one script, Redis's ``TIME`` and
``ZRANGEBYSCORE -inf now``), and post each game that is due to the inbox: the
time-out itself is decided by the folder and written through the same
compare-and-append as any turn, so it happens exactly once however many workers see it.

The index is general on purpose: an entry means "this game has work due at this time".
The sweep of issue #23 (find games with work due instead of reading every game) can put
other due work in the same set with the same score semantics, and read it the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis
from redis.commands.core import Script

from .connection import is_cluster

__all__ = ["DEADLINES", "SYNC", "append_indexed", "due", "index", "redis_now", "restore", "schedule"]

DEADLINES = "red7:deadlines"

# Redis's clock and the games due by it, in one round trip (TIME in a read-only script).
_DUE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {now, redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))}
"""


# The index entry of one game from its meta (KEYS: meta, index; ARGV: game id), run in the
# append's transaction: whatever the append did (appended, or refused), the index then
# holds exactly the game's meta.deadline.
SYNC = """
local deadline = redis.call('HGET', KEYS[1], 'deadline')
if deadline and deadline ~= '' then
  redis.call('ZADD', KEYS[2], deadline, ARGV[1])
else
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return 1
"""


def append_indexed(
    connection: redis.Redis,
    append: Script,
    sync: Script,
    game_id: str,
    meta_key: str,
    keys: Sequence[Any],
    args: Sequence[Any],
    deadline: int | None,
) -> Any:
    """A timed game's compare-and-append (``append`` run with ``keys`` and ``args``) and its
    index entry, in one transaction on one Redis; on a cluster the entry follows a
    successful append. Returns the append script's reply."""
    if is_cluster(connection):
        reply = append(keys=keys, args=args)
        if reply[0] == 1:
            index(connection, game_id, deadline)
        return reply
    # EVALSHA in the transaction, not the Script objects: a Script queued in a pipeline
    # makes redis-py send SCRIPT EXISTS first, one more round trip on every clocked turn
    # (bench/sweep_load.py).  A server that lost its scripts (a restart, SCRIPT FLUSH)
    # answers NOSCRIPT and the append is not written (at most the index is set again from
    # the meta, which changes nothing): load them and run the transaction again.
    for attempt in (1, 2):
        pipe = connection.pipeline(transaction=True)
        pipe.evalsha(append.sha, len(keys), *keys, *args)
        pipe.evalsha(sync.sha, 2, meta_key, DEADLINES, game_id)
        try:
            reply, _synced = pipe.execute()
        except redis.exceptions.NoScriptError:
            if attempt == 2:
                raise
            connection.script_load(append.script)
            connection.script_load(sync.script)
            continue
        return reply
    raise AssertionError("unreachable")


def redis_now(connection: redis.Redis) -> int:
    """Redis's own time in ms: the referee's clock (never this machine's)."""
    seconds, micros = connection.time()
    return int(seconds) * 1000 + int(micros) // 1000


def due(connection: redis.Redis, limit: int = 100, key: str = DEADLINES) -> tuple[int, list[str]]:
    """(Redis's time in ms, the games whose deadline is at or before it), at most ``limit``.

    ``key``: another set of the same kind (member a game, score a Redis time when it has
    work due): the work index and the compaction schedule are read the same way."""
    now, games = connection.eval(_DUE, 1, key, limit)  # type: ignore[no-untyped-call]
    return int(now), [g.decode("utf-8", "replace") if isinstance(g, bytes) else str(g) for g in games]


# Give members a score ARGV[1] ms after Redis's clock (KEYS: the set; ARGV: ms, 'NX' to
# keep a member's earlier score or '' to replace it, then the members).
_SCHEDULE = """
local t = redis.call('TIME')
local at = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 3, #ARGV do
  if ARGV[2] == 'NX' then
    redis.call('ZADD', KEYS[1], 'NX', at, ARGV[i])
  else
    redis.call('ZADD', KEYS[1], at, ARGV[i])
  end
end
return 1
"""


def schedule(connection: redis.Redis, key: str, after_ms: int, games: Sequence[str], *, keep_earlier: bool) -> None:
    """Make ``games`` due ``after_ms`` from now by Redis's clock in the set ``key`` (read by
    :func:`due`); ``keep_earlier``: a game already there keeps its time."""
    if games:
        connection.eval(_SCHEDULE, 1, key, after_ms, "NX" if keep_earlier else "", *games)  # type: ignore[no-untyped-call]


def index(connection: redis.Redis, game_id: str, deadline: int | None) -> None:
    """Record a timed game's current deadline (None: no seat is timed now, e.g. it is over)."""
    if deadline is None:
        connection.zrem(DEADLINES, game_id)
    else:
        connection.zadd(DEADLINES, {game_id: deadline})


def restore(connection: redis.Redis, deadlines: dict[str, int]) -> None:
    """Put back games missing from the index, and lower entries later than their game's
    meta.deadline (the sweep, from each game's meta): never fire a time-out late. An entry
    earlier than the meta is left: it is corrected when it comes due."""
    if deadlines:
        mapping: dict[Any, Any] = dict(deadlines)
        connection.zadd(DEADLINES, mapping, lt=True)
