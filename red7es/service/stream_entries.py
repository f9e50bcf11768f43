"""Stream entries as red7es writes them, read back: a field, and a log entry's events.

A log entry holds every event of one append (issue #23: an ``XADD`` per event was most
of the commands a move cost).  Its fields are ``v``, the log's event count through this
entry, then ``e``, ``e1``, ``e2``, … the entry's events, oldest first.  An entry written
by an older red7es (or imported from a record) holds one event, ``e``, and no ``v``.

Each event keeps a stream id of its own, as when it was an entry: an entry of ``k``
events has the id of its last one, ``ms-s``, and ids ``ms-(s-k+1)`` … ``ms-s`` are
its events' (``append.lua`` reserves them: it writes the entry at that id, above every
id the stream used before).  So records, seals, the audit's clock checks and every
reader see the log as one event per id, whichever way it was written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["EVENTS_THROUGH", "entry_field", "field_map", "log_events", "log_rows_events", "events_through"]

# The log entry field holding the log's event count through the entry.
EVENTS_THROUGH = b"v"
_FIRST = b"e"
_LARGEST = (1 << 64) - 1


def field_map(fields: Any) -> Any:
    """A stream entry's fields as a map: a Redis Cluster client answers XRANGE inside a
    transaction unparsed, each entry's fields a flat [field, value, ...] list."""
    return dict(zip(fields[::2], fields[1::2], strict=True)) if isinstance(fields, list) else fields


def entry_field(fields: Mapping[bytes | str, bytes | str] | None, name: bytes) -> bytes:
    """Field ``name`` of a stream entry: bytes, as this connection answers (no decode_responses).

    An entry without the field (written to the stream by hand) reads as no bytes, which
    no decoder accepts: a command is then answered as corrupt and a log event breaks its
    game, as for any other bytes that are not a command or an event.
    """
    value = fields.get(name, b"") if fields is not None else None
    if not isinstance(value, bytes):
        raise TypeError(f"stream entry field {name!r} is {type(value).__name__}, not bytes")
    return value


def log_events(stream_id: Any, fields: Any) -> list[tuple[str, bytes]]:
    """The events of one log entry as (stream id, bytes), oldest first.

    An entry with no ``e`` field (written by hand) reads as one event of no bytes, which
    no decoder accepts, as before entries held several; so does an entry whose id leaves
    no room for the ids of its events (also written by hand): every reader then meets a
    log that cannot be read where it already handles one (the game is broken, the audit
    fails), rather than an error of its own.
    """
    entry_id = stream_id.decode() if isinstance(stream_id, bytes) else str(stream_id)
    fields = field_map(fields)
    raws = [entry_field(fields, _FIRST)]
    while (name := b"e%d" % len(raws)) in fields:
        raws.append(entry_field(fields, name))
    if len(raws) == 1:
        return [(entry_id, raws[0])]
    ms, _, seq = entry_id.partition("-")
    last = int(seq) if seq.isascii() and seq.isdigit() and len(seq) <= 20 else -1
    first = last - len(raws) + 1
    if first < 0 or last > _LARGEST:  # written by hand: one event no decoder takes, as above
        return [(entry_id, b"")]
    return [(f"{ms}-{first + j}", raw) for j, raw in enumerate(raws)]


def log_rows_events(rows: Iterable[Any]) -> list[tuple[str, bytes]]:
    """The events of log entries as read (XRANGE or XREVRANGE rows), in the rows' order
    with each entry's events oldest first: reverse an XREVRANGE's rows for the log's order."""
    return [event for stream_id, fields in rows for event in log_events(stream_id, fields)]


def events_through(fields: Any) -> int | None:
    """The log's event count through this entry (its ``v``); None for an entry without one
    (one event, written by an older red7es or imported) or whose ``v`` is no number."""
    value = field_map(fields).get(EVENTS_THROUGH)
    if not isinstance(value, bytes) or not value.isascii() or not value.isdigit() or len(value) > 20:
        return None
    return int(value)
