"""Ways to corrupt a game record, naive (bytes) and careful (re-encoded and re-chained).

A careful forger re-encodes every event after the change with contiguous ``seq``
numbers and a fresh hash chain, and updates the store's ``version`` and ``head``,
so only re-execution can catch the change; a naive one edits bytes in place.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import msgpack

from red7es.service.audit import Divergence, audit_record
from red7es.service.codec import (
    GENESIS,
    decode_command,
    decode_event,
    encode_command,
    encode_event,
    event_hash,
    pack_map,
)
from red7es.service.events import LogEvent
from red7es.service.folding import Folder
from red7es.service.records import Entry, Record


def events_of(record: Record) -> list[LogEvent]:
    return [decode_event(e.raw).event for e in record.events]


def rechain(record: Record, events: Sequence[LogEvent], *, fix_store: bool = True) -> Record:
    """The record with its log re-encoded from ``events`` (seq, prev and head all consistent)."""
    ats = [decode_event(e.raw).at for e in record.events]
    ids = [e.stream_id for e in record.events]
    while len(ids) < len(events):  # an added event needs a stream id after the last
        ms, seq = ids[-1].split("-")
        ids.append(f"{ms}-{int(seq) + 1}")
        ats.append(ats[-1])
    head = GENESIS
    entries = []
    for i, event in enumerate(events):
        raw = encode_event(event, i, head, ats[i])
        entries.append(Entry(ids[i], raw))
        head = event_hash(raw)
    changes: dict[str, Any] = {"events": tuple(entries)}
    if fix_store:
        changes.update(version=len(entries), head=head.hex())
    return dataclasses.replace(record, **changes)


def edit_event(record: Record, index: int, change: Callable[[Any], Any]) -> Record:
    """Re-chained: event ``index`` replaced by ``change(event)``."""
    events = events_of(record)
    events[index] = change(events[index])
    return rechain(record, events)


def with_raws(record: Record, raws: Sequence[bytes], *, version: int | None = None) -> Record:
    """Naive: the log replaced by these bytes (stream ids kept where they exist)."""
    ids = [e.stream_id for e in record.events]
    while len(ids) < len(raws):
        ms, seq = ids[-1].split("-")
        ids.append(f"{ms}-{int(seq) + 1}")
    entries = tuple(Entry(ids[i], raw) for i, raw in enumerate(raws))
    return dataclasses.replace(record, events=entries, version=record.version if version is None else version)


def raws_of(record: Record) -> list[bytes]:
    return [e.raw for e in record.events]


def flip_byte(record: Record, index: int, offset: int) -> Record:
    raws = raws_of(record)
    raw = bytearray(raws[index])
    raw[offset] ^= 0x01
    raws[index] = bytes(raw)
    return with_raws(record, raws)


def edit_command(record: Record, index: int, change: Callable[[Any], Any]) -> Record:
    """Command ``index`` decoded, changed and re-encoded (commands are not chained)."""
    entry = record.commands[index]
    command, at = decode_command(entry.raw)
    commands = list(record.commands)
    commands[index] = Entry(entry.stream_id, encode_command(change(command), at))
    return dataclasses.replace(record, commands=tuple(commands))


def command_index(record: Record, command_id: str) -> int:
    """Position of the command with this id in the commands stream (corrupt ones skipped)."""
    for k, entry in enumerate(record.commands):
        try:
            command, _at = decode_command(entry.raw)
        except ValueError:
            continue
        if command.id == command_id:
            return k
    raise LookupError(command_id)


def find(record: Record, predicate: Callable[[LogEvent], bool], start: int = 0) -> int:
    for i, event in enumerate(events_of(record)):
        if i >= start and predicate(event):
            return i
    raise LookupError("no such event")


def rewrite_envelope(record: Record, index: int, change: Callable[[dict[str, Any]], None]) -> Record:
    """Re-chained: event ``index``'s msgpack map edited by ``change`` (store head fixed too)."""
    raws, head = [], GENESIS
    for i, entry in enumerate(record.events):
        obj = msgpack.unpackb(entry.raw, raw=False)
        obj["prev"] = head
        if i == index:
            change(obj)
        raw = pack_map(obj)
        raws.append(raw)
        head = event_hash(raw)
    return dataclasses.replace(with_raws(record, raws), head=head.hex())


def settle(folder: Folder, game_id: str) -> None:
    """Fold a game with the worker's code until nothing is pending (no worker process)."""
    for _ in range(100):
        progress = folder.advance(game_id, max_seconds=5.0)
        if not progress.more and not folder.pending(game_id):
            return
    raise AssertionError("never settled")


def first_divergence(record: Record) -> Divergence:
    """The first divergence of a record that must fail its audit."""
    report = audit_record(record)
    assert not report.passed, "the tampered record should fail"
    assert report.divergence is not None
    return report.divergence
