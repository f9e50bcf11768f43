"""Record files: game records written to and read from files, in two encodings.

A record file holds one or more :class:`~red7es.service.records.Record` one after the
other; each header starts a new record (the benchmark's export of a thousand games is
one file).  The format is specified in docs/records.md; in short:

* **JSON Lines** (``.jsonl``): a header line, one line per command, one line per
  event.  Each command and event line carries its decoded fields (readable) *and*
  its raw bytes in base64 (authoritative): a reader checks that the two agree, so a
  hand-edited readable copy can never silently disagree with what is audited.
* **compact msgpack** (``.msgpack``): the same header, then one small map per
  command and per event holding the raw bytes.  The raw bytes are msgpack already,
  so this *is* the decoded content, with nothing repeated.

A file comes from anywhere, so reading checks every header field and every entry
(numbering, stream ids, raw bytes, readable copy) and names the line or byte offset
of the first fault; a record that cannot be read is reported as :class:`Unreadable`
rather than skipped, so an audit owes it a verdict.  Writing is atomic (a temporary
file renamed over the target).  Both encodings live here together: the writer and
the reader of a format must change in step.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import io
import json
import os
import secrets
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import msgpack  # type: ignore[import-untyped]

from ..variant import Variant, VariantError
from ..wording import cannot_write, with_article
from .codec import event_hash
from .events import SeatSpec
from .records import FORMAT, MARKER, Entry, Record, RecordError, stream_order
from .store import valid_game_id

__all__ = [
    "FORMATS",
    "Unreadable",
    "detect_format",
    "read",
    "read_all",
    "read_each",
    "record_bytes",
    "write",
    "write_all",
]

FORMATS = ("jsonl", "msgpack")
_EXTENSIONS = {".jsonl": "jsonl", ".msgpack": "msgpack"}


# ---------------------------------------------------------------------------- readable copies


def _jsonable(value: Any) -> Any:
    """msgpack data as JSON: bytes become hex, map keys text (stable both ways)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, msgpack.ExtType):
        return f"ext {value.code}: {value.data.hex()}"
    if isinstance(value, msgpack.Timestamp):  # extension -1, which msgpack decodes itself
        return f"ext -1: {value.to_bytes().hex()}"
    return value


def _same_json(shown: Any, held: Any) -> bool:
    """Whether ``shown`` (as ``json.loads`` gives it) is the same JSON as ``held`` (from
    :func:`_jsonable`): what comparing their canonical JSON text (keys sorted) would say,
    without writing either out.

    Python's ``==`` is not enough: ``1 == 1.0 == True`` and ``0.0 == -0.0`` in Python,
    but a copy that turns the raw bytes' 1 into true or 1.0 does not show what they
    hold.  So types must be the very same (bool, int and float told apart), and floats
    are compared by their JSON spelling (``-0.0`` is not ``0.0``; ``NaN`` is ``NaN``).
    Only JSON's types can agree: anything else is no readable copy.
    """
    kind = type(shown)
    if kind is not type(held):
        return False
    if kind is str or kind is int or kind is bool or shown is None:
        return bool(shown == held)
    if kind is dict:
        return shown.keys() == held.keys() and all(_same_json(v, held[k]) for k, v in shown.items())
    if kind is list:
        return len(shown) == len(held) and all(map(_same_json, shown, held))
    if kind is float:
        return float.__repr__(shown) == float.__repr__(held)
    return False


def _unpack_map(raw: bytes) -> dict[str, Any] | None:
    try:
        obj = msgpack.unpackb(raw, raw=False, strict_map_key=False)
    except Exception:  # msgpack raises several unrelated exception types
        return None
    return obj if isinstance(obj, dict) else None


_COMMAND_FIELDS = ("type", "version", "at", "data")
_EVENT_FIELDS = ("seq", "type", "version", "at", "prev", "hash", "data")


def readable_command(raw: bytes) -> dict[str, Any]:
    """The decoded fields a JSON Lines command line shows beside its raw bytes."""
    obj = _unpack_map(raw) or {}
    return {k: _jsonable(obj.get(k)) for k in _COMMAND_FIELDS}


def readable_event(raw: bytes) -> dict[str, Any]:
    """The decoded fields a JSON Lines event line shows beside its raw bytes."""
    obj = _unpack_map(raw) or {}
    fields = {k: _jsonable(obj.get(k)) for k in _EVENT_FIELDS if k != "hash"}
    fields["hash"] = event_hash(raw).hex()
    return {k: fields[k] for k in _EVENT_FIELDS}


# ---------------------------------------------------------------------------- writing


def detect_format(path: str | os.PathLike[str], format: str | None = None) -> str | None:
    """``format`` if given, else the one the file name's extension says (or None)."""
    if format is not None:
        if format not in FORMATS:
            raise RecordError(f"unknown record format {format!r}: choose jsonl or msgpack")
        return format
    return _EXTENSIONS.get(Path(path).suffix.lower())


def write(record: Record, path: str | os.PathLike[str], format: str | None = None) -> None:
    """Write one record; the format comes from ``format`` or the extension."""
    write_all([record], path, format)


def write_all(records: Iterable[Record], path: str | os.PathLike[str], format: str | None = None) -> int:
    """Write records one after another in one file (atomically); returns how many."""
    fmt = detect_format(path, format)
    if fmt is None:
        raise RecordError(f"cannot tell the format of {path}: name it .jsonl or .msgpack, or give the format")
    target = Path(path)
    try:
        fd, tmp = _create_beside(target)
    except OSError as exc:  # name the file asked for, not the temporary one beside it
        raise RecordError(cannot_write(path, exc)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            count = _write_records(records, handle, fmt)
        with contextlib.suppress(FileNotFoundError):  # a file replaced keeps its mode
            os.chmod(tmp, target.stat().st_mode & 0o777)
        os.replace(tmp, target)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # e.g. PATH is a directory: named, not the temporary file
            raise RecordError(cannot_write(path, exc)) from None
        raise
    return count


def record_bytes(records: Iterable[Record], format: str) -> bytes:
    """The bytes of a record file of ``format`` (``jsonl`` or ``msgpack``) holding ``records``:
    what :func:`write_all` writes to a file, for a server that sends it instead."""
    if format not in FORMATS:
        raise RecordError(f"unknown record format {format!r}: jsonl or msgpack")
    handle = io.BytesIO()
    _write_records(records, handle, format)
    return handle.getvalue()


def _write_records(records: Iterable[Record], handle: IO[bytes], fmt: str) -> int:
    """Write records one after another in ``fmt``; returns how many."""
    count = 0
    for record in records:
        if fmt == "jsonl":
            for line in json_lines(record):
                handle.write(line.encode())
                handle.write(b"\n")
        else:
            _write_msgpack(record, handle)
        count += 1
    return count


def _create_beside(target: Path) -> tuple[int, str]:
    """A new temporary file in ``target``'s directory, to be renamed over it once written.

    Created with mode 0666, so the umask applies as to any new file (mkstemp's 0600
    would make every record private, when a record is meant to be shared).
    """
    for _ in range(100):
        tmp = target.parent / f".{target.name}.{secrets.token_hex(4)}"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), str(tmp)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")


def json_lines(record: Record) -> Iterator[str]:
    """The JSON Lines of one record: header, commands, events."""
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    yield dumps(record.header())
    for n, entry in enumerate(record.commands):
        line = {"command": n, "id": entry.stream_id, **readable_command(entry.raw)}
        line["raw"] = base64.b64encode(entry.raw).decode()
        yield dumps(line)
    for n, entry in enumerate(record.events):
        line = {"event": n, "id": entry.stream_id, **readable_event(entry.raw)}
        line["raw"] = base64.b64encode(entry.raw).decode()
        yield dumps(line)


def _write_msgpack(record: Record, handle: IO[bytes]) -> None:
    packer = msgpack.Packer(use_bin_type=True)
    handle.write(packer.pack(record.header()))
    for n, entry in enumerate(record.commands):
        handle.write(packer.pack({"command": n, "id": entry.stream_id, "raw": entry.raw}))
    for n, entry in enumerate(record.events):
        handle.write(packer.pack({"event": n, "id": entry.stream_id, "raw": entry.raw}))


# ---------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class Unreadable:
    """A record of a file that could not be read, and why: what an audit must fail, not skip.

    ``game`` is the header's game id when the header was read that far (None when the
    header itself is what cannot be read, or the file does not start with one);
    ``error`` is the reader's one line, naming the file and the line or byte offset.
    """

    game: str | None
    error: str
    event: int | None = None  # the event (or command) position the error names, if it names one
    command: int | None = None

    @classmethod
    def of(cls, game: str | None, exc: RecordError) -> Unreadable:
        """The record ``exc`` made unreadable, with the position it names."""
        return cls(game, str(exc), exc.event, exc.command)


def read(path: str | os.PathLike[str], format: str | None = None) -> Record:
    """The one record in a file; RecordError if it holds none or several."""
    records = read_all(path, format)
    if len(records) != 1:
        what = "no game" if not records else f"{len(records)} games"
        raise RecordError(f"{path} holds {what}, not one")
    return records[0]


def read_all(path: str | os.PathLike[str], format: str | None = None, *, data: bytes | None = None) -> list[Record]:
    """Every record in a file, checked field by field (errors name the line or offset).

    Raises RecordError at the first record that cannot be read: replaying or importing
    part of a file would act on a game the file does not faithfully hold.
    """
    records = []
    for item in read_each(path, format, data=data):
        if isinstance(item, Unreadable):
            raise RecordError(item.error)
        records.append(item)
    return records


def read_each(
    path: str | os.PathLike[str], format: str | None = None, *, data: bytes | None = None
) -> Iterator[Record | Unreadable]:
    """Every record in a file, in order: each one read, or :class:`Unreadable` saying why not.

    For the audit, which owes a verdict on every game of a file: a record that cannot
    be read is one failed game, not the end of the file.  After a fault the rest of
    that record is skipped and reading resumes at the next header (compact msgpack
    finds it by its first bytes, see :func:`_next_header`).  A fault right after a
    whole record (a header that cannot be read, junk between records) is an
    unreadable record of its own, not the finished one's.  Raises RecordError only
    when the file itself cannot be read.  ``data``, when given, is the file's bytes
    (read from a pipe, say) and ``path`` only names them in messages.
    """
    fmt = detect_format(path, format)
    if data is None:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None
    if fmt is None:
        fmt = "jsonl" if data.lstrip()[:1] == b"{" else "msgpack"
    if fmt == "jsonl":
        return _assemble(_jsonl_entries(str(path), data), readable=True)
    return _assemble(_msgpack_entries(str(path), data), readable=False)


_Located = tuple[Callable[[], str], Any]
"""An entry as decoded from the file, and how to name where it is (built only for errors)."""


class _Builder:
    """Collects one record's entries, checking each as it comes."""

    def __init__(self, where: str, header: Any) -> None:
        self.where = where
        self.header = _check_header(where, header)
        self.commands: list[Entry] = []
        self.events: list[Entry] = []
        self.last = {"command": (0, 0), "event": (0, 0)}  # stream ids must increase

    def add(self, locate: Callable[[], str], obj: dict[str, Any], readable: bool) -> None:
        """Check and keep one entry; ``locate()`` names its line or offset (built only for errors).

        An error names the entry's position (``event 4``), the one it should have when its
        own is wrong: the error carries it as a number too (:class:`RecordError`).
        """
        kind = "command" if "command" in obj else "event"
        entries = self.commands if kind == "command" else self.events
        try:
            self._add(locate, obj, readable, kind, entries)
        except RecordError as exc:
            if exc.event is None and exc.command is None:
                if kind == "event":
                    exc.event = len(entries)
                else:
                    exc.command = len(entries)
            raise

    def _add(
        self, locate: Callable[[], str], obj: dict[str, Any], readable: bool, kind: str, entries: list[Entry]
    ) -> None:
        if kind == "command" and self.events:
            raise RecordError(f"{locate()}: command {len(entries)} after the events (commands come first)")
        index = obj.get(kind)
        if type(index) is not int or index != len(entries):
            raise RecordError(f"{locate()}: expected {kind} {len(entries)}, found {kind} {index!r}")
        stream_id = obj.get("id")
        order = stream_order(stream_id) if type(stream_id) is str else (-1, -1)
        if order <= (0, 0):
            raise RecordError(f"{locate()}: {kind} {index}: id must be a Redis stream id like 1700000000000-0")
        if order <= self.last[kind]:
            raise RecordError(
                f"{locate()}: {kind} {index}: stream id {stream_id} does not follow {entries[-1].stream_id}"
            )
        self.last[kind] = order
        raw = obj.get("raw")
        if readable or type(raw) is not bytes:
            raw = _raw_bytes(locate(), kind, index, raw, readable)
            if readable:
                _check_readable(locate(), kind, index, obj, raw)
        entries.append(Entry(stream_id, raw))  # type: ignore[arg-type]

    @property
    def complete(self) -> bool:
        """Whether the record holds every command and event its header announces."""
        announced: tuple[int, int] = (self.header["commands"], self.header["events"])
        return (len(self.commands), len(self.events)) == announced

    def finish(self) -> Record:
        h = self.header
        for kind, entries in (("commands", self.commands), ("events", self.events)):
            if h[kind] != len(entries):
                raise RecordError(
                    f"{self.where}: the header announces {h[kind]} {kind}, the record holds {len(entries)}"
                )
        return Record(
            game_id=h["game"],
            variant=h["variant"],
            seats=h["seats"],
            commitment=h["commitment"],
            seed=h["seed"],
            created=h["created"],
            status=h["status"],
            version=h["version"],
            head=h["head"],
            cursor=h["cursor"],
            commands=tuple(self.commands),
            events=tuple(self.events),
            red7es_version=h["red7es"],
            format=h["format"],
            exported=h["exported"],
        )


def _check_readable(where: str, kind: str, index: int, line: dict[str, Any], raw: bytes) -> None:
    """A line's decoded fields must be exactly what its raw bytes decode to."""
    m = _unpack_map(raw) or {}
    if kind == "event":
        m = {**m, "hash": event_hash(raw).hex()}
    for key in _COMMAND_FIELDS if kind == "command" else _EVENT_FIELDS:
        if key not in line:
            raise RecordError(f"{where}: {kind} {index}: missing field {key!r}")
        try:
            same = _shows(line[key], m.get(key))
        except RecursionError:  # nested too deeply to compare: no faithful copy either
            same = False
        if not same:
            raise RecordError(
                f"{where}: {kind} {index}: field {key!r} does not match the raw bytes "
                "(the raw bytes are the record; the decoded fields are only a readable copy)"
            )


def _shows(shown: Any, held: Any) -> bool:
    """``_same_json(shown, _jsonable(held))``, without copying ``held`` where it is JSON
    already (text-keyed maps, lists, text, numbers): reading a JSON Lines file checks
    every field of every line, so this is what a JSON Lines read costs beside msgpack."""
    kind = type(held)
    if kind is str or kind is int or kind is bool or held is None:  # most of what a record holds
        return type(shown) is kind and shown == held  # type: ignore[no-any-return]
    if kind is dict:
        if type(shown) is not dict:
            return False
        if shown.keys() != held.keys():  # or keys that are not text, which only _jsonable spells
            return _same_json(shown, _jsonable(held))
        for key, value in shown.items():  # a loop, not all(...): this is the hot path
            if not _shows(value, held[key]):
                return False
        return True
    if kind is list:
        return type(shown) is list and len(shown) == len(held) and all(map(_shows, shown, held))
    return _same_json(shown, _jsonable(held))  # floats by their spelling; bytes, extensions


def _raw_bytes(where: str, kind: str, index: int, value: Any, readable: bool) -> bytes:
    if readable:
        if not isinstance(value, str):
            raise RecordError(f"{where}: {kind} {index}: raw must be base64 text")
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise RecordError(f"{where}: {kind} {index}: raw is not valid base64") from None
    if not isinstance(value, bytes):
        raise RecordError(f"{where}: {kind} {index}: raw must be msgpack bin (bytes)")
    return value


def _jsonl_entries(path: str, data: bytes) -> Iterator[_Located | RecordError]:
    """Each non-blank line as JSON, or the error for a line that is not JSON.

    A file whose first line is not JSON and does not even start like a JSON object
    (a compact msgpack record named .jsonl, say) is not JSON Lines at all: the error
    says so, rather than what the JSON decoder made of its bytes.
    """
    first = True
    for lineno, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except RecursionError:  # a hostile file: arrays nested thousands deep
            yield RecordError(f"{path} line {lineno}: not JSON (nested too deeply)")
            first = False
            continue
        except ValueError as exc:
            if first and not line.lstrip().startswith(b"{"):
                yield RecordError(
                    f"{path} line {lineno}: the file does not look like JSON Lines (its first line is no JSON "
                    "object): if it is a compact msgpack record, give --format msgpack"
                )
            else:
                yield RecordError(f"{path} line {lineno}: not JSON ({getattr(exc, 'msg', exc)})")
            first = False
            continue
        first = False
        yield functools.partial(_line, path, lineno), obj


def _msgpack_entries(path: str, data: bytes) -> Iterator[_Located | RecordError]:
    """Each msgpack object of the file; bytes that are not msgpack give their error, then the next header on."""
    start: int | None = 0
    while start is not None:
        start = yield from _msgpack_run(path, data, start)


def _msgpack_run(path: str, data: bytes, start: int) -> Generator[_Located | RecordError, None, int | None]:
    """The objects from byte ``start``, until the end (None) or a fault: then where the next header starts."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=max(len(data) - start, 1 << 20))
    unpacker.feed(memoryview(data)[start:])
    while True:
        offset = start + unpacker.tell()
        try:
            obj = unpacker.unpack()
        except msgpack.OutOfData:
            if offset < len(data):
                yield RecordError(f"{_offset(path, offset)}: the file ends in the middle of an entry")
            return None
        except Exception as exc:  # msgpack raises several unrelated exception types
            yield RecordError(f"{_offset(path, offset)}: not valid msgpack ({type(exc).__name__})")
            return _next_header(data, offset + 1)
        yield functools.partial(_offset, path, offset), obj


# How a record header's bytes begin after its map's length: the key "record", then the marker.
_HEADER_KEY = msgpack.packb("record") + msgpack.packb(MARKER)


def _next_header(data: bytes, after: int) -> int | None:
    """Where the next record header starts at or after ``after``, if any.

    msgpack has no resynchronisation point, but a header begins with a map (1 length
    byte, or 3 for 16 keys or more) whose first key is ``record``: finding those bytes
    lets reading go on at the next record after a fault instead of dropping the rest.
    """
    found = data.find(_HEADER_KEY, after)
    while found != -1:
        for begin in (found - 3, found - 1):
            if begin >= after and _is_header_at(data, begin):
                return begin
        found = data.find(_HEADER_KEY, found + 1)
    return None


def _is_header_at(data: bytes, begin: int) -> bool:
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=max(len(data) - begin, 1 << 20))
    unpacker.feed(memoryview(data)[begin:])
    try:
        obj = unpacker.unpack()
    except Exception:  # not a whole msgpack object here: not a header
        return False
    return type(obj) is dict and obj.get("record") == MARKER


def _line(path: str, lineno: int) -> str:
    return f"{path} line {lineno}"


def _offset(path: str, offset: int) -> str:
    return f"{path} byte offset {offset}"


def _assemble(entries: Iterable[_Located | RecordError], *, readable: bool) -> Iterator[Record | Unreadable]:
    """Group entries into records at each header; a fault makes its record Unreadable up to the next header."""
    current: _Builder | Unreadable | None = None
    for entry in entries:
        header = _header_of(entry)
        if header is not None and current is not None:
            yield _finish(current)
            current = None
        if isinstance(current, Unreadable):
            continue  # the rest of a record already found unreadable
        try:
            current = _accept(current, entry, readable=readable)
        except RecordError as exc:
            if current is not None and current.complete:
                # A fault after a whole record (a header that cannot be read, junk between
                # records) is not the finished record's: it starts an unreadable one.
                yield _finish(current)
                current = Unreadable.of(None, exc)
                continue
            game = current.header["game"] if current is not None else _game_of(header)
            current = Unreadable.of(game, exc)
    if current is not None:
        yield _finish(current)


def _header_of(entry: _Located | RecordError) -> dict[str, Any] | None:
    """The entry's object if it is a header (a map with ``record``), else None."""
    if isinstance(entry, RecordError):
        return None
    obj = entry[1]
    return obj if type(obj) is dict and "record" in obj else None


def _game_of(header: dict[str, Any] | None) -> str | None:
    """The game id of a header that cannot be read as a whole, if that field itself is sound."""
    game = None if header is None else header.get("game")
    return game if isinstance(game, str) and valid_game_id(game) else None


def _finish(current: _Builder | Unreadable) -> Record | Unreadable:
    if isinstance(current, Unreadable):
        return current
    try:
        return current.finish()
    except RecordError as exc:
        return Unreadable.of(current.header["game"], exc)


def _accept(builder: _Builder | None, entry: _Located | RecordError, *, readable: bool) -> _Builder:
    """The record ``entry`` belongs to, after checking and adding it (a header starts a new one)."""
    if isinstance(entry, RecordError):
        raise entry
    locate, obj = entry
    if type(obj) is not dict and builder is None:  # e.g. a text file read as msgpack
        raise RecordError(
            f"{locate()}: not a red7es game record (it starts with no header, but {with_article(type(obj).__name__)})"
        )
    if type(obj) is not dict:
        raise RecordError(f"{locate()}: expected an object, found {type(obj).__name__}")
    if "record" in obj:
        return _Builder(locate(), obj)
    if builder is None:
        raise RecordError(f"{locate()}: the file does not start with a record header")
    if "command" not in obj and "event" not in obj:
        raise RecordError(f"{locate()}: neither a header, a command nor an event")
    builder.add(locate, obj, readable)
    return builder


def _check_header(where: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The header's fields, typed; RecordError naming the first wrong one."""
    if obj.get("record") != MARKER:
        raise RecordError(f"{where}: not a red7es game record (record must be {MARKER!r})")
    fmt = _get(where, obj, "format", int)
    if fmt > FORMAT or fmt < 1:
        raise RecordError(f"{where}: record format {fmt} is not one this red7es reads (1 to {FORMAT})")
    h: dict[str, Any] = {"format": fmt}
    for key, kind in (
        ("red7es", str),
        ("exported", int),
        ("commitment", str),
        ("created", int),
        ("status", str),
        ("version", int),
        ("head", str),
        ("cursor", str),
        ("commands", int),
        ("events", int),
    ):
        h[key] = _get(where, obj, key, kind)
    game = _get(where, obj, "game", str)
    if not valid_game_id(game):
        raise RecordError(f"{where}: {game!r} is not a valid game id")
    h["game"] = game
    seed = obj.get("seed")
    if seed is not None and not isinstance(seed, str):
        raise RecordError(f"{where}: seed must be hex text or null")
    h["seed"] = seed
    h["variant"] = _variant(where, obj.get("variant"))
    h["seats"] = _seats(where, obj.get("seats"))
    return h


def _get(where: str, obj: dict[str, Any], key: str, kind: type) -> Any:
    value = obj.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise RecordError(f"{where}: header field {key!r} must be {kind.__name__}, found {value!r}")
    return value


def _variant(where: str, value: Any) -> Variant:
    if not isinstance(value, dict):
        raise RecordError(f"{where}: header field 'variant' must be an object")
    try:
        return Variant.from_dict(value)
    except (TypeError, VariantError) as exc:
        raise RecordError(f"{where}: bad variant: {exc}") from None


def _seats(where: str, value: Any) -> tuple[SeatSpec, ...]:
    if not isinstance(value, list):
        raise RecordError(f"{where}: header field 'seats' must be a list")
    seats = []
    for s in value:
        if not isinstance(s, dict) or not isinstance(s.get("name"), str) or not isinstance(s.get("kind"), str):
            raise RecordError(f"{where}: every seat needs a name and a kind")
        bot = s.get("bot")
        if bot is not None and not isinstance(bot, str):
            raise RecordError(f"{where}: a seat's bot must be text or null")
        seats.append(SeatSpec(s["name"], s["kind"], bot))
    return tuple(seats)
