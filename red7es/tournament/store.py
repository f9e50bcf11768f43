"""Where a tournament lives in Redis: its event stream, its secret seed, the index.

Keys (the hash tag ``{T}`` keeps one tournament's keys on one shard, so the scripts
below are atomic)::

    red7:t:{T}:events   stream  the tournament's events, field e = msgpack (codec.py)
    red7:t:{T}:secret   hash    seed (hex): derives every game's seed
    red7:tournaments    sorted set  tournament ids by creation time

Events are only ever appended with a compare-and-append on the stream's length: a
writer states how many events it has folded, and the append fails if anyone wrote in
between.  Two ``red7 tournament run`` processes can therefore never both pair a round
or record a game twice; the loser re-reads and finds the work done.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis

from ..service.store import entry_field, now_ms, start_after, text
from .codec import TRecorded, decode, encode, event_hash
from .events import TournamentEvent
from .ids import NoSuchTournament, check_tournament_id
from .state import TournamentState

__all__ = ["TournamentStore", "TournamentKeys", "INDEX"]

INDEX = "red7:tournaments"

# KEYS: 1 events stream.  ARGV: 1 expected length, 2.. encoded events.
# Returns {1, new length} or {0, actual length}.
_APPEND = """
local n = redis.call('XLEN', KEYS[1])
if n ~= tonumber(ARGV[1]) then return {0, n} end
for i = 2, #ARGV do redis.call('XADD', KEYS[1], '*', 'e', ARGV[i]) end
return {1, n + #ARGV - 1}
"""

# KEYS: 1 events stream, 2 secret hash.  ARGV: 1 seed (hex), 2 the TournamentCreated event.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[2], 'seed', ARGV[1])
redis.call('XADD', KEYS[1], '*', 'e', ARGV[2])
return 1
"""


class TournamentKeys:
    """The Redis keys of one tournament."""

    def __init__(self, tournament: str) -> None:
        check_tournament_id(tournament)
        base = f"red7:t:{{{tournament}}}"
        self.tournament = tournament
        self.events = f"{base}:events"
        self.secret = f"{base}:secret"


class TournamentStore:
    """Reads and appends tournament events (bytes in, bytes out) on one connection."""

    def __init__(self, connection: redis.Redis) -> None:
        self.redis = connection
        self._append = connection.register_script(_APPEND)
        self._create = connection.register_script(_CREATE)

    def create(self, tournament: str, seed: bytes, event: bytes, created: int) -> bool:
        """Store a new tournament's seed and first event; False if the id is taken."""
        k = TournamentKeys(tournament)
        if not self._create(keys=[k.events, k.secret], args=[seed.hex(), event]):
            return False
        self.redis.zadd(INDEX, {tournament: created})
        return True

    def append(self, tournament: str, expected: int, events: list[bytes]) -> bool:
        """Append ``events`` if the stream still has ``expected`` events; False if it moved on."""
        k = TournamentKeys(tournament)
        ok, _length = self._append(keys=[k.events], args=[expected, *events])
        return bool(ok)

    def append_after(self, tournament: str, state: TournamentState, events: Sequence[TournamentEvent]) -> bool:
        """Encode ``events`` to follow the folded ``state`` (numbered and hash-chained after
        its last event, stamped now) and compare-and-append them; False if someone wrote first."""
        raws, head, at = [], state.head, now_ms()
        for i, event in enumerate(events):
            raw = encode(event, state.length + i, head, at)
            head = event_hash(raw)
            raws.append(raw)
        return self.append(tournament, state.length, raws)

    def read(self, tournament: str, after: str = "0-0") -> list[tuple[str, bytes]]:
        """(stream id, bytes) of the events after stream id ``after``, oldest first."""
        start = start_after(after)
        if start is None:
            return []  # nothing can follow the largest stream id
        rows: Any = self.redis.xrange(TournamentKeys(tournament).events, min=start, max="+")
        if after == "0-0" and not rows:
            raise NoSuchTournament(tournament)
        return [(text(i), entry_field(fields, b"e")) for i, fields in rows]

    def catch_up(self, tournament: str, state: TournamentState) -> None:
        """Fold into ``state`` the events written after it (all of them into a new state)."""
        for stream_id, raw in self.read(tournament, after=state.last_id):
            state.fold(decode(raw, f"tournament event {state.length}"), stream_id)

    def events(self, tournament: str) -> list[TRecorded]:
        return [decode(raw, f"tournament event {i}") for i, (_id, raw) in enumerate(self.read(tournament))]

    def seed(self, tournament: str) -> bytes | None:
        value = self.redis.hget(TournamentKeys(tournament).secret, "seed")
        return bytes.fromhex(text(value)) if value else None

    def tournaments(self, limit: int = 100) -> list[str]:
        """Tournament ids, newest first."""
        return [text(t) for t in self.redis.zrevrange(INDEX, 0, limit - 1)]
