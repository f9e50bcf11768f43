"""The versioned msgpack codec for log events and commands (docs/events.md).

Every log event is one msgpack map::

    {"type": "StepApplied", "version": 1, "seq": 17, "prev": <32 bytes>, "at": 1764...,
     "data": {"seat": 0, "step": "p:R7"}}

``seq`` numbers the game's events from 0, ``prev`` is the SHA-256 of the previous
event's encoded bytes (32 zero bytes before event 0), so the log is a hash chain.
Commands are ``{"type", "version", "at", "data"}`` (a turn's signature is ``data["sig"]``).  Cards are text (``"R7"``),
steps and turns are notation, so a client in any language can read a game.

Decoding looks the type up in a registry and runs *upcasters* to bring an event
written by an older version of red7es up to the current shape, so old logs stay
readable (the eventsourcing library's pattern).  Anything that is not a valid event
raises :class:`CorruptEvent` naming what is wrong.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack

from ..cards import Card, CardError, Color
from ..facts import CardDrawn, GameOver, Outcome, PlayerOut, RoundDealt, RoundWon, StepApplied
from ..steps import Step, StepError
from ..variant import Variant, VariantError
from .events import (
    CommandApplied,
    CommandRejected,
    CreateCommand,
    GameCreated,
    JoinCommand,
    SeatJoined,
    SeatSpec,
    SeedRevealed,
    TurnCommand,
)

__all__ = [
    "CorruptEvent",
    "Recorded",
    "GENESIS",
    "encode_event",
    "decode_event",
    "encode_command",
    "decode_command",
    "event_hash",
    "pack_map",
    "register_upcaster",
    "EVENT_TYPES",
    "COMMAND_TYPES",
]

GENESIS = bytes(32)
_MAX_SIZE = 1 << 20


class CorruptEvent(ValueError):
    """Bytes that are not a valid event or command of this schema."""


@dataclass(frozen=True)
class _Type:
    cls: type
    version: int
    to_data: Callable[[Any], dict[str, Any]]
    from_data: Callable[[dict[str, Any]], Any]


def _cards(cards: tuple[Card, ...]) -> list[str]:
    return [str(c) for c in cards]


def _parse_cards(items: Any) -> tuple[Card, ...]:
    if not isinstance(items, list):
        raise CorruptEvent(f"expected a list of cards, got {type(items).__name__}")
    return tuple(Card.parse(c) for c in items)


def _variant_data(v: Variant) -> dict[str, Any]:
    return v.to_dict()


def _seat_data(s: SeatSpec) -> dict[str, Any]:
    return {"name": s.name, "kind": s.kind, "bot": s.bot}


def _seat(d: dict[str, Any]) -> SeatSpec:
    return SeatSpec(str(d["name"]), str(d["kind"]), d.get("bot"))


def _outcome_data(o: Outcome) -> dict[str, Any]:
    return {
        "winners": list(o.winners),
        "scores": list(o.scores),
        "round_wins": list(o.round_wins),
        "reason": o.reason,
    }


EVENT_TYPES: dict[str, _Type] = {
    "GameCreated": _Type(
        GameCreated,
        1,
        lambda e: {
            "game": e.game,
            "variant": _variant_data(e.variant),
            "seats": [_seat_data(s) for s in e.seats],
            "commitment": e.commitment,
            "created": e.created,
        },
        lambda d: GameCreated(
            d["game"],
            Variant.from_dict(d["variant"]),
            tuple(_seat(s) for s in d["seats"]),
            d["commitment"],
            d["created"],
        ),
    ),
    "SeatJoined": _Type(
        SeatJoined,
        1,
        lambda e: {"seat": e.seat, "name": e.name, "key": e.key},
        lambda d: SeatJoined(d["seat"], d["name"], d["key"]),
    ),
    "CommandApplied": _Type(
        CommandApplied,
        1,
        lambda e: {"id": e.id, "seat": e.seat, "turn": e.turn, "by": e.by},
        lambda d: CommandApplied(d["id"], d["seat"], d["turn"], d["by"]),
    ),
    "CommandRejected": _Type(
        CommandRejected,
        1,
        lambda e: {"id": e.id, "seat": e.seat, "kind": e.kind, "text": e.text, "reason": e.reason},
        lambda d: CommandRejected(d["id"], d["seat"], d["kind"], d["text"], d["reason"]),
    ),
    "SeedRevealed": _Type(SeedRevealed, 1, lambda e: {"seed": e.seed}, lambda d: SeedRevealed(d["seed"])),
    "RoundDealt": _Type(
        RoundDealt,
        1,
        lambda e: {
            "round": e.round,
            "hands": [_cards(h) for h in e.hands],
            "palettes": _cards(e.palettes),
            "deck": _cards(e.deck),
            "first": e.first,
        },
        lambda d: RoundDealt(
            d["round"],
            tuple(_parse_cards(h) for h in d["hands"]),
            _parse_cards(d["palettes"]),
            _parse_cards(d["deck"]),
            d["first"],
        ),
    ),
    "StepApplied": _Type(
        StepApplied,
        1,
        lambda e: {"seat": e.seat, "step": str(e.step)},
        lambda d: StepApplied(d["seat"], Step.parse(d["step"])),
    ),
    "CardDrawn": _Type(
        CardDrawn,
        1,
        lambda e: {"seat": e.seat, "card": str(e.card), "cause": e.cause, "public": e.public},
        lambda d: CardDrawn(d["seat"], Card.parse(d["card"]), d["cause"], d["public"]),
    ),
    "PlayerOut": _Type(
        PlayerOut, 1, lambda e: {"seat": e.seat, "reason": e.reason}, lambda d: PlayerOut(d["seat"], d["reason"])
    ),
    "RoundWon": _Type(
        RoundWon,
        1,
        lambda e: {"round": e.round, "seat": e.seat, "rule": e.rule.name.lower(), "cards": _cards(e.cards)},
        lambda d: RoundWon(d["round"], d["seat"], Color.parse(d["rule"]), _parse_cards(d["cards"])),
    ),
    "GameOver": _Type(
        GameOver,
        1,
        lambda e: _outcome_data(e.outcome),
        lambda d: GameOver(Outcome(tuple(d["winners"]), tuple(d["scores"]), tuple(d["round_wins"]), d["reason"])),
    ),
}

COMMAND_TYPES: dict[str, _Type] = {
    "Create": _Type(
        CreateCommand,
        1,
        lambda c: {
            "id": c.id,
            "variant": _variant_data(c.variant),
            "seats": [_seat_data(s) for s in c.seats],
            "commitment": c.commitment,
            "joins": [[seat, key] for seat, key in c.joins],
        },
        lambda d: CreateCommand(
            d["id"],
            Variant.from_dict(d["variant"]),
            tuple(_seat(s) for s in d["seats"]),
            d["commitment"],
            tuple((int(s), str(k)) for s, k in d["joins"]),
        ),
    ),
    "Join": _Type(
        JoinCommand,
        1,
        lambda c: {"id": c.id, "seat": c.seat, "key": c.key},
        lambda d: JoinCommand(d["id"], d["seat"], d["key"]),
    ),
    "Turn": _Type(
        TurnCommand,
        1,
        lambda c: {"id": c.id, "seat": c.seat, "turn": c.turn, "by": c.by, "sig": c.signature},
        lambda d: TurnCommand(d["id"], d["seat"], d["turn"], d["by"], d["sig"]),
    ),
}

# (attribute, field name in the data map, type) of command fields checked on decoding.
_FIELD_TYPES: dict[str, tuple[tuple[str, str, type], ...]] = {
    "Create": (("id", "id", str), ("commitment", "commitment", str)),
    "Join": (("id", "id", str), ("seat", "seat", int), ("key", "key", str)),
    "Turn": (
        ("id", "id", str),
        ("seat", "seat", int),
        ("turn", "turn", str),
        ("by", "by", str),
        ("signature", "sig", str),
    ),
}

_NAME_OF = {t.cls: name for name, t in EVENT_TYPES.items()}
_COMMAND_NAME_OF = {t.cls: name for name, t in COMMAND_TYPES.items()}

# (type name, version it upgrades from) -> function returning the data one version newer.
_UPCASTERS: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {}


def register_upcaster(type_name: str, from_version: int, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Teach the codec to read ``type_name`` events written at ``from_version``."""
    _UPCASTERS[(type_name, from_version)] = fn


def _upcast(type_name: str, version: int, current: int, data: dict[str, Any], what: str = "event") -> dict[str, Any]:
    where = f"{what} ({type_name})"
    while version < current:
        fn = _UPCASTERS.get((type_name, version))
        if fn is None:
            raise CorruptEvent(f"{where} version {version} cannot be read (no upcaster to version {version + 1})")
        try:
            data = fn(data)
        except (KeyError, TypeError, ValueError) as exc:
            detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise CorruptEvent(f"{where} version {version} cannot be upcast: {detail}") from None
        version += 1
    if version > current:
        raise CorruptEvent(f"{where} version {version} is newer than this red7es understands ({current})")
    return data


@dataclass(frozen=True)
class Recorded:
    """A decoded log event with its envelope and the exact bytes it was read from."""

    seq: int
    prev: bytes
    at: int
    event: Any
    raw: bytes

    @property
    def hash(self) -> bytes:
        return event_hash(self.raw)

    @property
    def type(self) -> str:
        return _NAME_OF[type(self.event)]


def pack_map(data: dict[str, Any]) -> bytes:
    """msgpack of a plain map (views, change notices): the same settings as events."""
    packed: bytes = msgpack.packb(data, use_bin_type=True)
    return packed


def event_hash(raw: bytes) -> bytes:
    """The chain hash of an encoded event: SHA-256 of its bytes."""
    return hashlib.sha256(raw).digest()


def type_name(event: Any) -> str:
    try:
        return _NAME_OF[type(event)]
    except KeyError:
        raise TypeError(f"not a log event: {event!r}") from None


def encode_event(event: Any, seq: int, prev: bytes, at: int) -> bytes:
    name = type_name(event)
    t = EVENT_TYPES[name]
    packed: bytes = msgpack.packb(
        {"type": name, "version": t.version, "seq": seq, "prev": prev, "at": at, "data": t.to_data(event)},
        use_bin_type=True,
    )
    return packed


def _unpack(raw: bytes, what: str) -> dict[str, Any]:
    if not isinstance(raw, bytes | bytearray | memoryview):
        raise CorruptEvent(f"{what} is not bytes")
    if len(raw) > _MAX_SIZE:
        raise CorruptEvent(f"{what} is larger than {_MAX_SIZE} bytes")
    try:
        obj = msgpack.unpackb(raw, raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises several unrelated exception types
        raise CorruptEvent(f"{what} is not valid msgpack ({type(exc).__name__})") from None
    if not isinstance(obj, dict):
        raise CorruptEvent(f"{what} is not a msgpack map")
    return obj


def _build(types: dict[str, _Type], obj: dict[str, Any], what: str) -> Any:
    name = obj.get("type")
    if not isinstance(name, str) or name not in types:
        raise CorruptEvent(f"{what} has unknown type {name!r}")
    t = types[name]
    version = obj.get("version")
    data = obj.get("data")
    if not isinstance(version, int) or not isinstance(data, dict):
        raise CorruptEvent(f"{what} ({name}) lacks a version or data")
    data = _upcast(name, version, t.version, data, what)
    try:
        value = t.from_data(data)
    except (KeyError, TypeError, ValueError, CardError, StepError, VariantError) as exc:
        detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise CorruptEvent(f"{what} ({name}) is malformed: {detail}") from None
    # Commands come from clients: a field of the wrong type must be refused here,
    # not crash the referee later (e.g. a seat "0" or a signature that is a number).
    for attr, wire, kind in _FIELD_TYPES.get(name, ()):
        field = getattr(value, attr)
        if not isinstance(field, kind) or isinstance(field, bool):
            raise CorruptEvent(
                f"{what} ({name}) is malformed: {wire} must be {kind.__name__}, not {type(field).__name__}"
            )
    return value


def decode_event(raw: bytes, what: str = "event") -> Recorded:
    """Decode one log event; raises :class:`CorruptEvent` saying what is wrong."""
    obj = _unpack(raw, what)
    seq, prev, at = obj.get("seq"), obj.get("prev"), obj.get("at")
    if not isinstance(seq, int) or not isinstance(prev, bytes) or len(prev) != 32 or not isinstance(at, int):
        raise CorruptEvent(f"{what} has a malformed envelope (seq, prev, at)")
    return Recorded(seq, prev, at, _build(EVENT_TYPES, obj, what), bytes(raw))


def encode_command(command: Any, at: int) -> bytes:
    name = _COMMAND_NAME_OF[type(command)]
    t = COMMAND_TYPES[name]
    packed: bytes = msgpack.packb(
        {"type": name, "version": t.version, "at": at, "data": t.to_data(command)}, use_bin_type=True
    )
    return packed


def decode_command(raw: bytes, what: str = "command") -> tuple[Any, int]:
    """Decode a command; returns (command, at)."""
    obj = _unpack(raw, what)
    at = obj.get("at")
    if not isinstance(at, int):
        raise CorruptEvent(f"{what} has no timestamp")
    return _build(COMMAND_TYPES, obj, what), at
