"""Game records: a game as one self-contained value that anyone can re-check offline.

A :class:`Record` holds a game's metadata, every command of its commands stream and
every event of its log **as the exact bytes Redis stored**, so the hash chain, the
seat signatures and the deals (from the revealed seed) can all be verified without
Redis and without trusting the program that wrote it (docs/records.md).

This module is the record itself and its way in and out of Redis: :func:`export`
reads a game into a record in one transaction, :func:`import_record` stores a record
that passes its audit as a game.  Writing records to files and reading them back,
with every entry checked, is :mod:`red7es.service.record_files`, which builds on this
module: the record is what the audit, replay and import work on, whatever file (or
none) it came from, so it does not depend on the file formats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import redis

from .. import __version__
from ..variant import Variant
from .client import meta_int
from .codec import CorruptEvent, Recorded, decode_event, decode_log, seat_data
from .events import BOT_ID_PREFIX, GameCreated, SeatSpec, SeedRevealed
from .sealing import SealError, sealed_entries
from .store import INDEX, Keys, NoSuchGame, now_ms, stream_order, text
from .stream_entries import entry_field, field_map, log_rows_events

if TYPE_CHECKING:
    from .audit import AuditReport
    from .client import GameService

__all__ = [
    "FORMAT",
    "MARKER",
    "Entry",
    "ImportRefused",
    "Record",
    "RecordError",
    "decode_events",
    "export",
    "import_record",
    "stream_order",
]

FORMAT = 1
"""The record format this red7es writes (and the newest it reads)."""

MARKER = "red7es-game"
"""The value of ``record`` in every header: what makes a line or map a header."""


class RecordError(ValueError):
    """A record that cannot be read, written or imported; one line naming where.

    ``event`` and ``command`` are the positions the line names (``event 4: ...``), when
    it names one: an audit's JSON carries them as numbers, not only inside the text.
    """

    def __init__(self, message: str, *, event: int | None = None, command: int | None = None) -> None:
        super().__init__(message)
        self.event = event
        self.command = command


class ImportRefused(RecordError):
    """A record whose audit did not pass, so it is not stored."""

    def __init__(self, message: str, report: AuditReport) -> None:
        super().__init__(message)
        self.report = report


class Entry(NamedTuple):
    """One stream entry: its Redis stream id and its exact stored bytes (a tuple: cheap to build)."""

    stream_id: str
    raw: bytes


@dataclass(frozen=True)
class Record:
    """A game: metadata, its commands stream and its log, byte for byte.

    ``version``, ``head`` and ``cursor`` are the store's bookkeeping at export time
    (number of log events, SHA-256 of the last event, last command folded): Redis
    writes them atomically with the log, so the audit uses them to notice a log
    cut short or a last event altered, which the chain alone cannot show.
    """

    game_id: str
    variant: Variant
    seats: tuple[SeatSpec, ...]
    commitment: str
    seed: str | None
    created: int
    status: str
    version: int
    head: str
    cursor: str
    commands: tuple[Entry, ...]
    events: tuple[Entry, ...]
    red7es_version: str = __version__
    format: int = FORMAT
    exported: int = field(default=0, compare=False)

    @property
    def over(self) -> bool:
        return self.seed is not None

    def header(self) -> dict[str, Any]:
        """The header line/map, field by field as docs/records.md lists them."""
        return {
            "record": MARKER,
            "format": self.format,
            "red7es": self.red7es_version,
            "exported": self.exported,
            "game": self.game_id,
            "variant": self.variant.to_dict(),
            "seats": [seat_data(s) for s in self.seats],
            "commitment": self.commitment,
            "seed": self.seed,
            "created": self.created,
            "status": self.status,
            "version": self.version,
            "head": self.head,
            "cursor": self.cursor,
            "commands": len(self.commands),
            "events": len(self.events),
        }


# ---------------------------------------------------------------------------- export


def _entries(rows: Any, name: bytes) -> tuple[Entry, ...]:
    """Stream entries as read by XRANGE in a transaction.

    A Redis Cluster client answers XRANGE inside a transaction unparsed, each entry's
    fields as a flat [field, value, ...] list rather than a map: both are read.
    """
    return tuple(Entry(text(stream_id), entry_field(field_map(fields), name)) for stream_id, fields in rows)


def export(service: GameService, game_id: str) -> Record:
    """A record of a game in Redis, read in one transaction (a consistent snapshot); of an
    archived game (``red7 archive``), the record its file holds."""
    keys = Keys(game_id)
    pipe = service.redis.pipeline(transaction=True)
    pipe.hgetall(keys.meta)
    pipe.xrange(keys.commands, min="-", max="+")
    pipe.xrange(keys.log, min="-", max="+")
    meta_raw, command_rows, log_rows = pipe.execute()
    if not meta_raw:
        from .archive import archived_record  # (it reads records: imported when needed)

        archived = archived_record(service.redis, game_id)  # moved to a file by red7 archive
        if archived is not None:
            return archived
        raise NoSuchGame(game_id)
    meta = {text(k): text(v) for k, v in meta_raw.items()}
    commands = _entries(command_rows, b"c")
    events = tuple(Entry(*event) for event in log_rows_events(log_rows))
    if not events and meta.get("status") == "over":  # a finished game's log may be sealed
        try:
            sealed = sealed_entries(service.redis, game_id)
        except SealError as exc:
            raise RecordError(str(exc)) from None
        if sealed is None:  # archived since the read above?
            from .archive import archived_record

            archived = archived_record(service.redis, game_id)
            if archived is not None:
                return archived
        events = tuple(Entry(i, raw) for i, raw in sealed or [])
    if not events:
        if meta.get("broken"):  # its create command could not start it (docs/events.md, A create that fails)
            raise RecordError(f"game {game_id} is broken: {meta['broken']}")
        if meta.get("version", "0") not in ("", "0"):  # events were appended: the log is gone, not late
            raise RecordError(f"game {game_id} has no log, although its meta counts {meta['version']} events")
        raise RecordError(f"game {game_id} has no log yet: no worker has created it")
    try:
        first = decode_event(events[0].raw, "event 0").event
    except CorruptEvent as exc:
        raise RecordError(f"game {game_id}: {exc}") from None
    if not isinstance(first, GameCreated):
        raise RecordError(f"game {game_id}: event 0 is not GameCreated")
    return Record(
        game_id=game_id,
        variant=first.variant,
        seats=first.seats,
        commitment=first.commitment,
        seed=_revealed_seed(events),
        created=first.created,
        status="broken" if meta.get("broken") else meta.get("status", "playing"),
        version=meta_int(game_id, meta, "version", len(events)),
        head=meta.get("head", ""),
        cursor=meta.get("cursor", "0-0"),
        commands=commands,
        events=events,
        exported=now_ms(),
    )


def _revealed_seed(events: tuple[Entry, ...]) -> str | None:
    """The seed of the log's SeedRevealed event (searched from the end), if any."""
    for entry in reversed(events):
        try:
            event = decode_event(entry.raw).event
        except CorruptEvent:
            continue
        if isinstance(event, SeedRevealed):
            return event.seed
    return None


def decode_events(record: Record) -> list[Recorded]:
    """Every event of a record, decoded; raises RecordError naming the first bad one."""
    try:
        return decode_log(entry.raw for entry in record.events)
    except CorruptEvent as exc:
        raise RecordError(f"game {record.game_id}: {exc}") from None


# ---------------------------------------------------------------------------- import


def import_record(connection: redis.Redis, record: Record) -> AuditReport:
    """Store a record's game in Redis so ``show``/``replay``/``audit`` work on it.

    The record must pass its audit first (an unfinished game cannot), and the game
    id must be free; the game's keys are written in one transaction.  Returns the
    passing audit report.
    """
    from .audit import audit_record
    from .table import Table

    report = audit_record(record)
    if not report.passed:
        raise ImportRefused(f"refusing to import game {record.game_id}: {report.line()}", report)
    keys = Keys(record.game_id)
    decoded = decode_events(record)
    table = Table.rebuild([r.event for r in decoded], None)
    version = len(decoded)
    views = table.packed_views(version)
    command_ids = _command_ids(record)
    with connection.pipeline(transaction=True) as pipe:
        try:
            pipe.watch(keys.meta, keys.commands, keys.log, keys.sealed)  # type: ignore[no-untyped-call]
            if pipe.exists(keys.meta, keys.commands, keys.log, keys.sealed):
                raise RecordError(f"a game {record.game_id!r} already exists: not importing over it")
            pipe.multi()
            for entry in record.commands:
                pipe.xadd(keys.commands, {"c": entry.raw}, id=entry.stream_id)
            if command_ids:
                pipe.hset(keys.cmdids, mapping=command_ids)
            for entry in record.events:
                pipe.xadd(keys.log, {"e": entry.raw}, id=entry.stream_id)
            pipe.hset(
                keys.meta,
                mapping={
                    "version": version,
                    "cursor": record.cursor,
                    "head": decoded[-1].hash.hex(),
                    "status": "over",
                    "created": record.created,
                    "to_move": "",
                    "bot_to_move": 0,
                    "updated": now_ms(),
                    "imported": now_ms(),
                },
            )
            for key, value in views.items():
                pipe.set(key, value)
            pipe.execute()
        except redis.WatchError:
            raise RecordError(f"a game {record.game_id!r} appeared while importing: not importing over it") from None
    connection.zadd(INDEX, {record.game_id: record.created})  # outside the game's hash slot
    return report


def _command_ids(record: Record) -> dict[Any, Any]:
    """Command id -> stream id, so resubmitting an imported command stays a no-op; not for
    bots' turns, which are never submitted (workers store no id for them either)."""
    from .codec import decode_command

    ids: dict[Any, Any] = {}
    for entry in record.commands:
        try:
            command, _at = decode_command(entry.raw)
        except CorruptEvent:
            continue
        if not command.id.startswith(BOT_ID_PREFIX):
            ids[command.id] = entry.stream_id
    return ids
