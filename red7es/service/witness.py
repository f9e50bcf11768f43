"""What a client was shown of a game, checked against the game's record or Redis now.

The audit proves a record consistent with itself: its chain, its signatures, its
re-execution.  It cannot prove the record is the one the players saw, since whoever
can write to Redis can rewrite a whole record consistently (seat a key of their own
before the seat's first move and sign for it, or cut the log back to an earlier
version, as an OS crash with ``appendfsync everysec`` can).  Only the players can tell,
from what their clients remember (docs/trust.md): the log heads they were shown, as
``version -> head`` (the head at version ``v`` is the SHA-256 of event ``v - 1``, so a
remembered head fixes every event before it) and the keys of the seats they took.

:func:`record_divergence` checks a record against them (``red7 audit --as``), and
:func:`live_divergence` checks Redis now, cheaply, for ``show``, ``watch`` and ``play``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from .codec import GENESIS, event_hash
from .sealing import sealed_entries
from .store import Keys, text, whole_number
from .stream_entries import events_through, log_rows_events

__all__ = ["Divergent", "Head", "head_now", "live_divergence", "record_divergence"]

_SHOW = 16  # hex digits of a head shown in a message
_LOOKS = 3  # reads of a log that moves under them before live_divergence leaves it to the next


@dataclass(frozen=True)
class Divergent:
    """The first thing a record or Redis holds that disagrees with what a client saw."""

    check: str  # "seat-key", "rolled-back" or "rewritten"
    event: int | None  # the first event concerned
    expected: str
    found: str
    reason: str


@dataclass(frozen=True)
class Head:
    """The game's log as Redis says it now: its length (version) and last hash."""

    version: int
    head: str


def short(head: str) -> str:
    return head[:_SHOW] + "…" if len(head) > _SHOW else head


def _rolled_back(version: int, seen: str, length: int) -> Divergent:
    return Divergent(
        "rolled-back",
        length,
        f"at least {version} events (you were shown version {version}, head {short(seen)})",
        f"{length} events",
        f"the log was rolled back: events {length} to {version - 1}, which you were shown, are gone",
    )


def _rewritten(version: int, seen: str, now: str) -> Divergent:
    return Divergent(
        "rewritten",
        max(version - 1, 0),
        f"head {short(seen)} at version {version} (as you were shown)",
        f"head {short(now)}",
        f"events 0 to {version - 1} are not the ones you were shown: the log was rewritten, "
        "or rolled back and played on",
    )


def chain_divergence(heads: Mapping[int, str], hashes: Sequence[bytes]) -> Divergent | None:
    """The first remembered head (lowest version) the chain of these event hashes does not have."""
    for version in sorted(heads):
        if version > len(hashes):
            return _rolled_back(version, heads[version], len(hashes))
        now = (hashes[version - 1] if version else GENESIS).hex()
        if now != heads[version]:
            return _rewritten(version, heads[version], now)
    return None


def record_divergence(
    raws: Sequence[bytes], keys: Mapping[str, str], joined: Mapping[str, tuple[int, str]], heads: Mapping[int, str]
) -> Divergent | None:
    """The first disagreement of a record with what a client saw, by event number.

    ``raws`` are the record's events, ``keys`` the public keys of the seats the client
    took (seat name -> key), ``joined`` the record's (event, key) of each seat's
    SeatJoined, ``heads`` the remembered ``version -> head``.
    """
    found = []
    for name, key in sorted(keys.items()):
        event, recorded = joined.get(name, (None, None))
        if recorded != key:
            found.append(
                Divergent(
                    "seat-key",
                    event,
                    f"seat {name} joined with your key {short(key)}",
                    "the seat never joined" if recorded is None else f"key {short(recorded)}",
                    f"seat {name} is held in this record by a key that is not the one your client created",
                )
            )
    chain = chain_divergence(heads, [event_hash(raw) for raw in raws])
    if chain is not None:
        found.append(chain)
    return min(found, key=lambda d: -1 if d.event is None else d.event, default=None)


def _sealed_divergence(connection: redis.Redis, game_id: str, version: int, head: str) -> Divergent | None:
    """:func:`live_divergence` for a game with no log stream: read from its seal, if any
    (a sealed game never grows again, so one read is exact)."""
    entries = sealed_entries(connection, game_id) or []
    if len(entries) < version:
        return _rolled_back(version, head, len(entries))
    return None if version == 0 else _against(version, head, entries[version - 1][1])


def _against(version: int, head: str, shown_last: bytes) -> Divergent | None:
    """Whether event ``version - 1`` as Redis holds it now (``shown_last``) still hashes to
    the head a client was shown at ``version``."""
    now = event_hash(shown_last).hex()
    return None if now == head else _rewritten(version, head, now)


def head_now(connection: redis.Redis, game_id: str) -> Head | None:
    """The game's version and head as its meta says (None if it has none readable)."""
    version, head = connection.hmget(Keys(game_id).meta, ["version", "head"])
    number = None if version is None else whole_number(version)
    if number is None or head is None:
        return None
    return Head(number, text(head))


def live_divergence(connection: redis.Redis, game_id: str, heads: Mapping[int, str]) -> Divergent | None:
    """Whether Redis still holds the log a client was shown, up to the newest head it remembers.

    Reads only the log's length and its events from that version on (usually a few),
    so it can run on every read: the newest head fixes all the earlier ones.
    """
    if not heads:
        return None
    version = max(heads)
    log = Keys(game_id).log
    for _ in range(_LOOKS):
        newest: Any = connection.xrevrange(log, max="+", min="-", count=1)
        if not newest:  # no stream: a finished game whose log is sealed (or a log gone)
            return _sealed_divergence(connection, game_id, version, heads[version])
        # The log's event count: the newest entry's ``v`` (an entry holds an append's
        # events), or, for a log of one-event entries (an older red7es's), its length.
        length = events_through(newest[0][1])
        if length is None:
            length = int(connection.xlen(log))
        if length < version:
            return _rolled_back(version, heads[version], length)
        if version == 0:
            return None
        # The newest ``count`` entries hold event ``version - 1`` (each holds one event or
        # more) while the log still ends with the entry read above: one appended between
        # the two reads would shift the events and make a genuine log look rewritten, so
        # the tail is read anew when its newest entry moved (a log only grows). (Not one
        # MULTI: a cluster pipeline leaves XREVRANGE's reply unparsed.)
        count = length - version + 1
        rows: Any = connection.xrevrange(log, max="+", min="-", count=count)
        if not rows or text(rows[0][0]) != text(newest[0][0]):
            continue
        events = log_rows_events(reversed(rows))
        if len(events) < count:  # fewer events than the newest entry counts: some are gone
            return _rolled_back(version, heads[version], length - count + len(events))
        return _against(version, heads[version], events[-count][1])
    return None  # the game moved at every look: the next read tells
