"""One versioned msgpack envelope for every stream red7es writes.

A game's log and a tournament's events (docs/events.md, docs/tournaments.md) are
msgpack maps ``{"type", "version", "seq", "prev", "at", "data"}``; a game's commands
are ``{"type", "version", "at", "data"}``.  The streams differ only in the types they
hold, so the rules for reading them are written once, here: each stream is an
:class:`EventCodec` (or a :class:`CommandCodec`) over its own table of
:class:`EventType`, and whatever is not a valid record raises :class:`CorruptEvent`
in the same words on every stream.

``seq`` numbers a stream's events from 0 and ``prev`` is the SHA-256 of the previous
event's exact bytes (:data:`GENESIS` before event 0), so every event stream is a hash
chain.  Decoding runs *upcasters* to bring data written by an older version of red7es
up to the current shape (the eventsourcing library's pattern), so old streams stay
readable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeGuard, TypeVar

import msgpack

__all__ = [
    "GENESIS",
    "MAX_COMMAND_SIZE",
    "QUOTED",
    "MAX_SIZE",
    "UPCASTERS",
    "CommandCodec",
    "CorruptEvent",
    "EventCodec",
    "EventType",
    "Field",
    "Recorded",
    "Upcaster",
    "chain_problem",
    "event_hash",
    "flat",
    "pack_map",
    "register_upcaster",
    "too_large",
]

GENESIS = bytes(32)
MAX_SIZE = 1 << 20  # no record is near this: anything larger is refused before msgpack reads it
# A command is far smaller (a Create of four seats with their keys is about 1 KiB). Its
# answer may quote it (a refused turn's text), and the answer must stay well within
# MAX_SIZE, or the log would hold an event no reader accepts.
MAX_COMMAND_SIZE = 1 << 14
QUOTED = 40  # characters of an unknown type's name a command's refusal quotes

V = TypeVar("V")
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

# (type name, version it upgrades from) -> function returning the data one version newer.
# One registry serves every codec: type names are unique across red7es, and the docs
# promise that red7es.service.codec.register_upcaster reads old tournament events as
# well as old game events and commands.
UPCASTERS: dict[tuple[str, int], Upcaster] = {}


class CorruptEvent(ValueError):
    """Bytes that are not a valid event or command of this schema."""


@dataclass(frozen=True)
class Field:
    """A field of a flat type: its attribute, the type a client must send (None: unchecked), its name on the wire."""

    attr: str
    kind: type | None = None
    wire: str = ""

    @property
    def name(self) -> str:
        return self.wire or self.attr


@dataclass(frozen=True)
class EventType:
    """How one type is written: its class, its current version and its data map both ways.

    ``checks`` are fields whose type is checked after decoding: commands come from
    clients, and a field of the wrong type (a seat "0", a signature that is a number)
    must be refused by the codec, not crash the referee later.
    """

    cls: type
    version: int
    to_data: Callable[[Any], dict[str, Any]]
    from_data: Callable[[dict[str, Any]], Any]
    checks: tuple[Field, ...] = ()


def flat(cls: type, *fields: str | Field, version: int = 1) -> EventType:
    """The type of a dataclass whose data map is just these fields, in this order, as they are."""
    specs = tuple(f if isinstance(f, Field) else Field(f) for f in fields)
    return EventType(
        cls,
        version,
        lambda value: {f.name: getattr(value, f.attr) for f in specs},
        lambda data: cls(*(data[f.name] for f in specs)),
        tuple(f for f in specs if f.kind is not None),
    )


def register_upcaster(type_name: str, from_version: int, fn: Upcaster) -> None:
    """Teach every codec sharing :data:`UPCASTERS` to read ``type_name`` written at ``from_version``."""
    UPCASTERS[(type_name, from_version)] = fn


def pack_map(data: dict[str, Any]) -> bytes:
    """msgpack of a plain map (records, views, change notices): one set of settings everywhere."""
    packed: bytes = msgpack.packb(data, use_bin_type=True)
    return packed


def event_hash(raw: bytes) -> bytes:
    """The chain hash of an encoded event: SHA-256 of its bytes."""
    return hashlib.sha256(raw).digest()


def chain_problem(recorded: Sequence[Recorded], start: int = 0, head: bytes = GENESIS) -> str | None:
    """Why a log's events are not numbered 0, 1, 2, ... and hash-chained (the first thing
    found), or None. Events are named by their ``seq``, so a gap reads as one.  A part of
    a log is checked from event ``start``, whose ``prev`` must be ``head``."""
    previous: int | None = None
    for place, r in enumerate(recorded, start):
        if r.seq != place:
            if previous is None:
                return f"the log's first event is event {r.seq}, not {start}"
            return f"event {previous} is followed by event {r.seq}"
        if r.prev != head:
            if previous is None and start == 0:
                return "event 0 does not start the hash chain (its prev is not 32 zero bytes)"
            if previous is None:
                return f"event {r.seq} does not follow the events before it (its prev is not their head)"
            return f"event {r.seq} does not follow event {previous} (its prev is not that event's hash)"
        head, previous = r.hash, r.seq
    return None


def too_large(what: str, limit: int) -> CorruptEvent:
    """The error for a record over ``limit`` bytes: one wording, whether its bytes were read
    or only its size was (a worker never fetches a command too large to read)."""
    return CorruptEvent(f"{what} is larger than {limit} bytes")


def _unpack_map(raw: bytes, what: str, limit: int = MAX_SIZE) -> dict[str, Any]:
    """The msgpack map in ``raw``, refusing anything else before its fields are looked at."""
    if not isinstance(raw, bytes | bytearray | memoryview):
        raise CorruptEvent(f"{what} is not bytes")
    if len(raw) > limit:
        raise too_large(what, limit)
    try:
        obj = msgpack.unpackb(raw, raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises several unrelated exception types
        raise CorruptEvent(f"{what} is not valid msgpack ({type(exc).__name__})") from None
    if not isinstance(obj, dict):
        raise CorruptEvent(f"{what} is not a msgpack map")
    return obj


@dataclass(frozen=True)
class Recorded:
    """A decoded event with its envelope and the exact bytes it was read from (they are what the chain hashes).

    One class for every stream, so ``isinstance(x, Recorded)`` tells a record from a
    bare event; ``event`` is therefore Any, and readers narrow it by its type.
    """

    seq: int
    prev: bytes
    at: int
    event: Any
    raw: bytes
    type: str

    @property
    def hash(self) -> bytes:
        return event_hash(self.raw)


class Codec(Generic[V]):
    """The types of one stream by wire name, and the rules for reading any version of them."""

    def __init__(
        self, types: Mapping[str, EventType], noun: str, *, limit: int = MAX_SIZE, quoted: int | None = None
    ) -> None:
        self.types = types
        self.noun = noun  # what a value of another type is not, in a TypeError
        self.limit = limit  # the largest record read (anything larger is refused unread)
        self.quoted = quoted  # characters of an unknown type's name a refusal quotes (None: all)
        self._names = {t.cls: name for name, t in types.items()}

    def name_of(self, value: V) -> str:
        """The wire name of ``value``'s type; a TypeError for a value this stream does not hold."""
        try:
            return self._names[type(value)]
        except KeyError:
            raise TypeError(f"not a {self.noun}: {value!r}") from None

    def data_of(self, value: V) -> dict[str, Any]:
        """``value``'s data map, as the ``data`` of its record."""
        return self.types[self.name_of(value)].to_data(value)

    def _pack(self, value: V, envelope: dict[str, Any]) -> bytes:
        """The record's bytes: type and version, then the envelope, then the data (the documented key order)."""
        name = self.name_of(value)
        t = self.types[name]
        return pack_map({"type": name, "version": t.version, **envelope, "data": t.to_data(value)})

    def _check(self, obj: dict[str, Any], what: str) -> None:
        """Refuse a map whose type this stream does not hold or that lacks an integer version or a data map."""
        name = obj.get("type")
        if not isinstance(name, str) or name not in self.types:
            shown = repr(name)
            if self.quoted is not None and len(shown) > self.quoted:
                shown = f"{shown[: self.quoted]}… ({len(shown):,} characters)"
            raise CorruptEvent(f"{what} has unknown type {shown}")
        if not _is_int(obj.get("version")) or not isinstance(obj.get("data"), dict):
            raise CorruptEvent(f"{what} ({name}) lacks a version or data")

    def _build(self, obj: dict[str, Any], what: str) -> V:
        """The value of a map :meth:`_check` passed: upcast to the current version, read, field types checked."""
        name: str = obj["type"]
        t = self.types[name]
        where = f"{what} ({name})"
        data = self._upcast(name, obj["version"], t.version, obj["data"], where)
        try:
            value: V = t.from_data(data)
        except (KeyError, TypeError, ValueError) as exc:  # CardError, StepError, VariantError are ValueErrors
            raise CorruptEvent(f"{where} is malformed: {_detail(exc)}") from None
        for f in t.checks:
            found = getattr(value, f.attr)
            if f.kind is not None and (not isinstance(found, f.kind) or isinstance(found, bool)):
                raise CorruptEvent(
                    f"{where} is malformed: {f.name} must be {f.kind.__name__}, not {type(found).__name__}"
                )
        return value

    def _upcast(self, name: str, version: int, current: int, data: dict[str, Any], where: str) -> dict[str, Any]:
        """``data`` written at ``version`` brought up to ``current``, one registered step at a time."""
        while version < current:
            fn = UPCASTERS.get((name, version))
            if fn is None:
                raise CorruptEvent(f"{where} version {version} cannot be read (no upcaster to version {version + 1})")
            try:
                data = fn(data)
            except (KeyError, TypeError, ValueError) as exc:
                raise CorruptEvent(f"{where} version {version} cannot be upcast: {_detail(exc)}") from None
            version += 1
        if version > current:
            raise CorruptEvent(f"{where} version {version} is newer than this red7es understands ({current})")
        return data


class EventCodec(Codec[V]):
    """A hash-chained stream of events: ``{"type", "version", "seq", "prev", "at", "data"}``."""

    def encode(self, value: V, seq: int, prev: bytes, at: int) -> bytes:
        """The bytes of event number ``seq``, chained to the previous event's hash ``prev``."""
        return self._pack(value, {"seq": seq, "prev": prev, "at": at})

    def unpack(self, raw: bytes, what: str) -> dict[str, Any]:
        """The event's map with its envelope, type and version checked, its data not yet read.

        Enough for a reader that compares maps rather than events (the audit); an
        older version still needs :meth:`decode` to tell whether it can be upcast.
        """
        obj = _unpack_map(raw, what, self.limit)
        seq, prev, at = obj.get("seq"), obj.get("prev"), obj.get("at")
        if not _is_int(seq) or not isinstance(prev, bytes) or len(prev) != 32 or not _is_int(at):
            raise CorruptEvent(f"{what} has a malformed envelope (seq, prev, at)")
        self._check(obj, what)
        return obj

    def is_current(self, obj: dict[str, Any]) -> bool:
        """Whether an unpacked event is at its type's current version (its data then needs no upcaster)."""
        return bool(obj["version"] == self.types[obj["type"]].version)

    def decode(self, raw: bytes, what: str) -> Recorded:
        """Decode one event; raises :class:`CorruptEvent` saying what is wrong."""
        obj = self.unpack(raw, what)
        return Recorded(obj["seq"], obj["prev"], obj["at"], self._build(obj, what), bytes(raw), obj["type"])


class CommandCodec(Codec[V]):
    """Commands: ``{"type", "version", "at", "data"}``, unchained (clients append them concurrently)."""

    def encode(self, value: V, at: int) -> bytes:
        """The bytes of a command submitted at ``at``."""
        return self._pack(value, {"at": at})

    def decode(self, raw: bytes, what: str) -> tuple[V, int]:
        """Decode a command; returns (command, at)."""
        obj = _unpack_map(raw, what, self.limit)
        at = obj.get("at")
        if not _is_int(at):
            raise CorruptEvent(f"{what} has no timestamp")
        self._check(obj, what)
        return self._build(obj, what), at


def _is_int(value: object) -> TypeGuard[int]:
    """An integer on the wire: msgpack's true and false are not numbers here."""
    return type(value) is int


def _detail(exc: Exception) -> str:
    """An exception from reading data, in words: a KeyError names the missing field."""
    return f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
