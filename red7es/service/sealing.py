"""A finished game's log sealed: its entries, byte for byte, in one compressed value.

A game's log is a stream of msgpack events, each with its map keys and a 32-byte
``prev`` (the SHA-256 of the event before it).  Once the game is over nothing is ever
appended to it again, so the stream's per-entry costs buy nothing: the log of a
finished game is 55–76% of what the game keeps in Redis (bench/results/footprint.md).
Sealing writes the same entries into one string key, ``red7:{g}:sealed``, and deletes
the stream, in one atomic step (``seal.lua``).  Nothing is lost or re-encoded:

* each entry keeps its stream id and its exact bytes;
* a ``prev`` that is the hash of the entry before it (always, in a log red7es wrote)
  is stored as zeros and computed again when the seal is read, so the incompressible
  hashes cost nothing; any other ``prev`` (a damaged log) is kept as it is, so the
  audit still finds what it finds in the stream;
* the whole is zlib-compressed (the map keys repeat in every event).

A seal is checked before it is written: read back, it must give the very entries the
stream held.  Readers of the log fall back to the seal when the stream is gone
(:func:`sealed_entries`), so ``export``, ``replay``, ``audit``, the gateway's record and
a client's check of its heads read a sealed game as they read it before.  The worker
seals a game when it compacts it (:mod:`red7es.service.compaction`): only a game that is
over, whose lease nobody holds and whose commands have all been answered, so no worker
can append to it afterwards.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import msgpack
import redis

from .envelope import GENESIS, CorruptEvent, event_hash
from .store import Keys, registered_script, text
from .stream_entries import log_rows_events

__all__ = [
    "LATER",
    "SEALED",
    "SEAL_MAGIC",
    "UNSEALABLE",
    "SealError",
    "seal",
    "seal_finished",
    "sealed_entries",
    "unseal",
]

# What seal_finished did: sealed the log; not now (a worker holds the game, a command
# waits for its answer, or the log moved while it was read: try again later); not at all
# (the game is not over, has no log stream, or is sealed already).
SEALED, LATER, UNSEALABLE = "sealed", "later", "unsealable"

SEAL_MAGIC = b"red7es/sealed-log/1\n"  # a seal's first bytes: its format and version
MAX_SEALED_BYTES = 64 << 20  # more than any log holds (an event is at most 1 MiB, a game a few hundred)
_PREV = b"\xa4prev\xc4\x20"  # msgpack: the key "prev", then 32 bytes of bin 8
_HASH = 32

Entry = tuple[str, bytes]  # (stream id, the event's bytes)


class SealError(CorruptEvent):
    """A seal that cannot be read (written by hand, or damaged): said in one line.  It is
    a log that cannot be read: a worker breaks the game with it, as for a corrupt event."""


def _prev_at(raw: bytes) -> int:
    """Where the ``prev`` hash of an event starts in its bytes (-1: no such field)."""
    found = raw.find(_PREV)
    return found + len(_PREV) if found >= 0 and found + len(_PREV) + _HASH <= len(raw) else -1


def seal(entries: Sequence[Entry]) -> bytes:
    """The seal of a log's ``entries`` (stream id, bytes), oldest first.

    An event whose ``prev`` is the hash of the event before it (GENESIS for the first)
    is stored with zeros there: :func:`unseal` computes it again.  The first match of
    the field in an event's bytes is the one stripped and restored, the same one both
    ways, since stripping changes only the 32 bytes after it.
    """
    ids: list[list[int]] = []
    events: list[bytes] = []
    stripped: list[bool] = []
    head, last_ms = GENESIS, 0
    for stream_id, raw in entries:
        ms, _, seq = stream_id.partition("-")
        ids.append([int(ms) - last_ms, int(seq)])
        last_ms = int(ms)
        at = _prev_at(raw)
        strip = at >= 0 and raw[at : at + _HASH] == head
        events.append(raw[:at] + bytes(_HASH) + raw[at + _HASH :] if strip else raw)
        stripped.append(strip)
        head = event_hash(raw)
    body = msgpack.packb([ids, events, stripped], use_bin_type=True)
    return SEAL_MAGIC + zlib.compress(body, 9)


def unseal(blob: bytes) -> list[Entry]:
    """The entries a seal holds, exactly as the stream held them; :class:`SealError` if
    the value is not a seal this version of red7es can read."""
    if not blob.startswith(SEAL_MAGIC):
        raise SealError("not a sealed log (it does not start with the seal's header)")
    try:
        inflate = zlib.decompressobj()
        body = inflate.decompress(blob[len(SEAL_MAGIC) :], MAX_SEALED_BYTES)
        if inflate.unconsumed_tail or not inflate.eof:
            raise SealError("a sealed log that is cut short or larger than any log")
        ids, events, stripped = msgpack.unpackb(body, raw=False, use_list=True)
        if not (len(ids) == len(events) == len(stripped)):
            raise SealError("a sealed log whose ids, events and hashes do not match in number")
        out: list[Entry] = []
        head, ms = GENESIS, 0
        for (delta, seq), event, strip in zip(ids, events, stripped, strict=True):
            if not isinstance(event, bytes) or not isinstance(delta, int) or not isinstance(seq, int):
                raise SealError("a sealed log holding an entry that is not one")
            if strip:
                at = _prev_at(event)
                if at < 0:
                    raise SealError("a sealed log whose event has no prev to restore")
                event = event[:at] + head + event[at + _HASH :]
            ms += delta
            out.append((f"{ms}-{seq}", event))
            head = event_hash(event)
        return out
    except SealError:
        raise
    except (zlib.error, ValueError, TypeError, msgpack.UnpackException) as exc:
        raise SealError(f"a sealed log that cannot be read ({type(exc).__name__})") from None


def sealed_entries(connection: redis.Redis, game_id: str) -> list[Entry] | None:
    """The log of a sealed game, read from its seal; None if the game has none."""
    blob = connection.get(Keys(game_id).sealed)
    if blob is None:
        return None
    if not isinstance(blob, bytes):
        raise SealError(f"the sealed log of game {game_id} is not bytes")
    try:
        return unseal(blob)
    except SealError as exc:
        raise SealError(f"game {game_id}: {exc}") from None


def seal_finished(connection: redis.Redis, game_id: str) -> str:
    """Seal a finished game's log: :data:`SEALED`, or why not (nothing changed then).

    :data:`LATER`: a worker holds the game, a command waits for its answer (the log may
    still grow), or the log changed between the read and the seal (``seal.lua`` checks
    its length and last id).  :data:`UNSEALABLE`: the game is not over, has no log
    stream (sealed already, or none), or has a seal beside its stream (written by hand:
    tried again, it would be refused again).
    """
    k = Keys(game_id)
    pipe = connection.pipeline(transaction=True)
    pipe.hmget(k.meta, "status", "cursor")
    pipe.xrevrange(k.commands, max="+", min="-", count=1)
    pipe.exists(k.lease)
    pipe.exists(k.sealed)
    pipe.xrange(k.log, min="-", max="+")
    replies = pipe.execute(raise_on_error=False)
    for reply in replies:
        if isinstance(reply, Exception):  # a key of the wrong type, written by hand: said as Redis says it
            raise reply
    (status, cursor), last_command, held, sealed, rows = replies
    if text(status or b"") != "over" or not rows or sealed:  # (a seal beside a stream: written by hand)
        return UNSEALABLE
    if held or (bool(last_command) and text(last_command[0][0]) != text(cursor or b"0-0")):
        return LATER
    entries = log_rows_events(rows)
    blob = seal(entries)  # a seal holds each event under its own id (an entry holds an append's)
    if unseal(blob) != entries:  # cannot happen: but a seal that does not read back is never written
        raise SealError(f"game {game_id}: its log does not read back from its seal")
    done: Any = registered_script(connection, "seal.lua")(
        keys=[k.log, k.meta, k.sealed, k.commands, k.lease], args=[len(rows), text(rows[-1][0]), blob]
    )
    return SEALED if done else LATER
