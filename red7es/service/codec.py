"""The versioned msgpack codec for log events and commands (docs/events.md).

Every log event is one msgpack map::

    {"type": "StepApplied", "version": 1, "seq": 17, "prev": <32 bytes>, "at": 1764...,
     "data": {"seat": 0, "step": "p:R7"}}

``seq`` numbers the game's events from 0, ``prev`` is the SHA-256 of the previous
event's encoded bytes (32 zero bytes before event 0), so the log is a hash chain.
Commands are ``{"type", "version", "at", "data"}`` (a turn's signature is ``data["sig"]``).  Cards are text (``"R7"``),
steps and turns are notation, so a client in any language can read a game.

This module holds the game's types and their data maps; the envelope, the hash
chain, the version checks and *upcasters* (which bring an event written by an older
version of red7es up to the current shape, so old logs stay readable) are
:mod:`red7es.service.envelope`'s, shared with tournament events: one set of decoding
rules for every stream red7es writes.  Anything that is not a valid event raises
:class:`CorruptEvent` naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..cards import Card, Color
from ..facts import (
    CardDrawn,
    Forfeited,
    GameOver,
    Outcome,
    PlayerOut,
    RoundDealt,
    RoundWon,
    StepApplied,
    TurnTakenBack,
)
from ..game import BATCH_RULES, BATCH_RULES_VERSIONS
from ..steps import Step
from ..variant import Variant
from .envelope import (
    GENESIS,
    MAX_COMMAND_SIZE,
    QUOTED,
    CommandCodec,
    CorruptEvent,
    EventCodec,
    EventType,
    Field,
    Recorded,
    event_hash,
    flat,
    pack_map,
    register_upcaster,
    too_large,
)
from .events import (
    Adjudicated,
    ClockStarted,
    CommandApplied,
    CommandRejected,
    CreateCommand,
    GameCreated,
    JoinClosed,
    JoinCommand,
    JoinDeadline,
    SeatJoined,
    SeatSpec,
    SeedRevealed,
    TimedOut,
    TurnCommand,
    Withdrawn,
)

__all__ = [
    "CorruptEvent",
    "Recorded",
    "GENESIS",
    "encode_event",
    "decode_event",
    "decode_log",
    "encode_command",
    "decode_command",
    "event_hash",
    "pack_map",
    "register_upcaster",
    "seat_data",
    "parse_seat",
    "outcome_data",
    "type_name",
    "EVENT_TYPES",
    "COMMAND_TYPES",
    "EVENTS",
    "COMMANDS",
    "COMMANDS_BEFORE_RULES_3",
    "command_limit",
    "oversized_command",
]


def _cards(cards: tuple[Card, ...]) -> list[str]:
    return [str(c) for c in cards]


def _parse_cards(items: Any) -> tuple[Card, ...]:
    if not isinstance(items, list):
        raise CorruptEvent(f"expected a list of cards, got {type(items).__name__}")
    return tuple(Card.parse(c) for c in items)


def _parse_steps(items: Any) -> tuple[Step, ...]:
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
        raise CorruptEvent("expected a list of steps (text)")
    return tuple(Step.parse(s) for s in items)


def seat_data(s: SeatSpec) -> dict[str, Any]:
    """A seat as written in ``GameCreated``, ``Create`` and a tournament's entrants."""
    return {"name": s.name, "kind": s.kind, "bot": s.bot}


def parse_seat(d: dict[str, Any]) -> SeatSpec:
    """The seat :func:`seat_data` wrote."""
    return SeatSpec(str(d["name"]), str(d["kind"]), d.get("bot"))


def outcome_data(o: Outcome) -> dict[str, Any]:
    """An outcome as a map: the GameOver event's data and every view's ``outcome``.

    ``forfeited`` is there only when a seat forfeited: every other GameOver is written
    exactly as before it existed."""
    data: dict[str, Any] = {
        "winners": list(o.winners),
        "scores": list(o.scores),
        "round_wins": list(o.round_wins),
        "reason": o.reason,
    }
    if o.forfeited:
        data["forfeited"] = list(o.forfeited)
    return data


def _seats(value: Any) -> tuple[int, ...]:
    """A list of seat numbers as written (ValueError for anything else: the event is malformed)."""
    if not isinstance(value, list | tuple) or any(type(s) is not int for s in value):
        raise ValueError(f"seats must be a list of whole numbers, not {value!r}")
    return tuple(value)


def parse_outcome(d: dict[str, Any]) -> Outcome:
    """The outcome :func:`outcome_data` wrote."""
    return Outcome(
        tuple(d["winners"]),
        tuple(d["scores"]),
        tuple(d["round_wins"]),
        str(d["reason"]),
        tuple(d.get("forfeited", ())),
    )


# The batch rules a GameCreated of version 2 may name: only those red7es has written in
# one (version 1 is read as 2; rules 1 are only ever tried by the audit, for version 1).
_NAMED_BATCH_RULES = tuple(v for v in BATCH_RULES_VERSIONS if v >= 2)


def _batch_rules(value: Any) -> int:
    """GameCreated's ``batch_rules``: a version the engine referees (it decides how every turn is judged)."""
    if type(value) is not int or value not in _NAMED_BATCH_RULES:
        raise ValueError(f"batch_rules {value!r} is not a version this red7es referees ({_NAMED_BATCH_RULES})")
    return value


# A Create comes from a client, so its parts are read as docs/events.md gives them, not
# converted: a "scoring": 1 or a join's seat "0" is refused, not stored as sent.
_VARIANT_KINDS: dict[str, tuple[type, ...]] = {
    "players": (int,),
    "scoring": (bool,),
    "draw": (bool,),
    "actions": (bool,),
    "rounds": (int,),
    "target": (int, type(None)),
}
# Time controls (RULES.md, Time): present only in a timed game's variant.
_TIME_KINDS: dict[str, tuple[type, ...]] = {"clock": (list,), "turn_time": (int,), "join_time": (int,)}


def _exactly(value: Any, kinds: tuple[type, ...], what: str) -> Any:
    """``value`` if its type is exactly one of ``kinds`` (so a bool is not taken for an int)."""
    if type(value) not in kinds:
        names = " or ".join("nil" if kind is type(None) else kind.__name__ for kind in kinds)
        raise TypeError(f"{what} must be {names}, not {type(value).__name__}")
    return value


def _command_variant(data: Any) -> Variant:
    """A Create's ``variant``: exactly the six keys, each of its documented type, and
    optionally a time control (``clock`` [base ms, increment ms] or ``turn_time`` ms, and
    ``join_time`` ms)."""
    _exactly(data, (dict,), "variant")
    missing = [key for key in _VARIANT_KINDS if key not in data]
    unknown = sorted(repr(key) for key in data if key not in _VARIANT_KINDS and key not in _TIME_KINDS)
    if missing or unknown:
        raise ValueError(
            f"variant must have exactly the keys {', '.join(_VARIANT_KINDS)} (and optionally {', '.join(_TIME_KINDS)})"
        )
    for key, kinds in {**_VARIANT_KINDS, **_TIME_KINDS}.items():
        if key in data:
            _exactly(data[key], kinds, f"variant.{key}")
    if "clock" in data:
        clock = data["clock"]
        if len(clock) != 2 or not all(type(v) is int for v in clock):
            raise TypeError("variant.clock must be [base ms, increment ms], two ints")
    return Variant.from_dict(data)


def _command_seats(items: Any) -> tuple[SeatSpec, ...]:
    """A Create's ``seats``: maps of ``name`` str, ``kind`` str and ``bot`` str or nil."""
    _exactly(items, (list,), "seats")
    seats = []
    for i, d in enumerate(items):
        _exactly(d, (dict,), f"seats[{i}]")
        seats.append(
            SeatSpec(
                _exactly(d["name"], (str,), f"seats[{i}].name"),
                _exactly(d["kind"], (str,), f"seats[{i}].kind"),
                _exactly(d.get("bot"), (str, type(None)), f"seats[{i}].bot"),
            )
        )
    return tuple(seats)


def _command_joins(items: Any) -> tuple[tuple[int, str], ...]:
    """A Create's ``joins``: ``[seat, key]`` pairs, an int and a str."""
    return _command_pairs(items, "joins", "key")


def _command_pairs(items: Any, what: str, second: str) -> tuple[tuple[int, str], ...]:
    """A Create's ``joins`` or ``withdrawn``: ``[seat, <second>]`` pairs, an int and a str."""
    _exactly(items, (list,), what)
    pairs = []
    for i, pair in enumerate(items):
        if type(pair) is not list or len(pair) != 2:
            raise TypeError(f"{what}[{i}] must be a list [seat, {second}]")
        pairs.append((_exactly(pair[0], (int,), f"{what}[{i}][0]"), _exactly(pair[1], (str,), f"{what}[{i}][1]")))
    return tuple(pairs)


# Events' fields are type-checked as commands' are: a damaged log's "id": null or
# "commitment": null is a corrupt event, not a TypeError in whatever reads it later.
EVENT_TYPES: dict[str, EventType] = {
    "GameCreated": EventType(
        GameCreated,
        2,
        lambda e: {
            "game": e.game,
            "variant": e.variant.to_dict(),
            "seats": [seat_data(s) for s in e.seats],
            "commitment": e.commitment,
            "created": e.created,
            "batch_rules": e.batch_rules,
        },
        lambda d: GameCreated(
            d["game"],
            Variant.from_dict(d["variant"]),
            tuple(parse_seat(s) for s in d["seats"]),
            d["commitment"],
            d["created"],
            _batch_rules(d["batch_rules"]),
        ),
        checks=(Field("game", str), Field("commitment", str), Field("created", int)),
    ),
    "SeatJoined": flat(SeatJoined, Field("seat", int), Field("name", str), Field("key", str)),
    "CommandApplied": flat(CommandApplied, Field("id", str), Field("seat", int), Field("turn", str), Field("by", str)),
    "CommandRejected": flat(
        CommandRejected,
        Field("id", str),
        Field("seat", int),
        Field("kind", str),
        Field("text", str),
        Field("reason", str),
    ),
    "SeedRevealed": flat(SeedRevealed, Field("seed", str)),
    "RoundDealt": EventType(
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
    "StepApplied": EventType(
        StepApplied,
        1,
        lambda e: {"seat": e.seat, "step": str(e.step)},
        lambda d: StepApplied(d["seat"], Step.parse(d["step"])),
    ),
    "CardDrawn": EventType(
        CardDrawn,
        1,
        lambda e: {"seat": e.seat, "card": str(e.card), "cause": e.cause, "public": e.public},
        lambda d: CardDrawn(d["seat"], Card.parse(d["card"]), d["cause"], d["public"]),
    ),
    "TurnTakenBack": EventType(
        TurnTakenBack,
        1,
        lambda e: {"seat": e.seat, "steps": [str(s) for s in e.steps]},
        lambda d: TurnTakenBack(d["seat"], _parse_steps(d["steps"])),
        checks=(Field("seat", int),),
    ),
    "PlayerOut": flat(PlayerOut, Field("seat", int), Field("reason", str)),
    "Forfeited": flat(Forfeited, Field("seat", int), Field("reason", str)),
    "ClockStarted": EventType(
        ClockStarted,
        1,
        lambda e: {"seat": e.seat, "at": e.at, "deadline": e.deadline, "remaining": list(e.remaining)},
        lambda d: ClockStarted(d["seat"], d["at"], d["deadline"], tuple(d["remaining"])),
        checks=(Field("seat", int), Field("at", int), Field("deadline", int)),
    ),
    "TimedOut": flat(TimedOut, Field("seat", int), Field("deadline", int), Field("at", int)),
    "Adjudicated": EventType(
        Adjudicated,
        1,
        lambda e: {"winners": list(e.winners), "reason": e.reason},
        lambda d: Adjudicated(_seats(d["winners"]), d["reason"]),
        checks=(Field("reason", str),),
    ),
    "JoinDeadline": flat(JoinDeadline, Field("at", int), Field("deadline", int)),
    "JoinClosed": flat(JoinClosed, Field("deadline", int), Field("at", int)),
    "Withdrawn": flat(Withdrawn, Field("seat", int), Field("reason", str), Field("at", int)),
    "RoundWon": EventType(
        RoundWon,
        1,
        lambda e: {"round": e.round, "seat": e.seat, "rule": e.rule.name.lower(), "cards": _cards(e.cards)},
        lambda d: RoundWon(d["round"], d["seat"], Color.parse(d["rule"]), _parse_cards(d["cards"])),
    ),
    "GameOver": EventType(
        GameOver,
        1,
        lambda e: outcome_data(e.outcome),
        lambda d: GameOver(parse_outcome(d)),
    ),
}

# Commands come from clients, so the fields the referee relies on are type-checked (Field kinds).
COMMAND_TYPES: dict[str, EventType] = {
    "Create": EventType(
        CreateCommand,
        1,
        lambda c: {
            "id": c.id,
            "variant": c.variant.to_dict(),
            "seats": [seat_data(s) for s in c.seats],
            "commitment": c.commitment,
            "joins": [[seat, key] for seat, key in c.joins],
            # only when any: every other create is byte-identical to what it always was
            **({"withdrawn": [[seat, why] for seat, why in c.withdrawn]} if c.withdrawn else {}),
        },
        lambda d: CreateCommand(
            d["id"],
            _command_variant(d["variant"]),
            _command_seats(d["seats"]),
            d["commitment"],
            _command_joins(d["joins"]),
            _command_pairs(d.get("withdrawn", []), "withdrawn", "reason"),
        ),
        checks=(Field("id", str), Field("commitment", str)),
    ),
    "Join": flat(JoinCommand, Field("id", str), Field("seat", int), Field("key", str)),
    "Turn": flat(
        TurnCommand,
        Field("id", str),
        Field("seat", int),
        Field("turn", str),
        Field("by", str),
        Field("signature", str, "sig"),
    ),
}

# GameCreated version 1 had no batch_rules. It was written under batch rules 1 and, from
# 4c24a14 on, 2: read as 2, the rules of the last red7es that wrote it, so a game that
# was running across the upgrade keeps them (the audit also accepts 1 for such records).
register_upcaster("GameCreated", 1, lambda d: {**d, "batch_rules": 2})

EVENTS: EventCodec[Any] = EventCodec(EVENT_TYPES, "log event")
COMMANDS: CommandCodec[Any] = CommandCodec(COMMAND_TYPES, "command", limit=MAX_COMMAND_SIZE, quoted=QUOTED)

# How commands were read by the referees of batch rules 1 and 2, kept so that their games
# re-execute as they were refereed (red7 audit) and a game running across the upgrade
# keeps its rules: any size up to MAX_SIZE, an unknown type quoted whole, and a Create's
# fields converted rather than type-checked (scoring 0 read as false, a join's seat "0" as 0).
_CONVERTED_CREATE = EventType(
    CreateCommand,
    1,
    COMMAND_TYPES["Create"].to_data,
    lambda d: CreateCommand(
        d["id"],
        Variant.from_dict(d["variant"]),
        tuple(parse_seat(s) for s in d["seats"]),
        d["commitment"],
        tuple((int(s), str(k)) for s, k in d["joins"]),
    ),
    checks=COMMAND_TYPES["Create"].checks,
)
COMMANDS_BEFORE_RULES_3: CommandCodec[Any] = CommandCodec({**COMMAND_TYPES, "Create": _CONVERTED_CREATE}, "command")


def type_name(event: Any) -> str:
    """The wire name of a log event's type (a TypeError for anything else)."""
    return EVENTS.name_of(event)


def encode_event(event: Any, seq: int, prev: bytes, at: int) -> bytes:
    """The bytes of log event number ``seq``, chained to the previous event's hash ``prev``."""
    return EVENTS.encode(event, seq, prev, at)


def decode_event(raw: bytes, what: str = "event") -> Recorded:
    """Decode one log event; raises :class:`CorruptEvent` saying what is wrong."""
    return EVENTS.decode(raw, what)


def decode_log(raws: Iterable[bytes], start: int = 0) -> list[Recorded]:
    """Decode a game's log (or its events from ``start`` on) in order; :class:`CorruptEvent`
    names the first bad one ("event 7")."""
    return [EVENTS.decode(raw, f"event {i}") for i, raw in enumerate(raws, start)]


def encode_command(command: Any, at: int) -> bytes:
    """The bytes of a command submitted at ``at``."""
    return COMMANDS.encode(command, at)


# From these batch rules on, the referee reads commands strictly (docs/events.md, Batch rules).
STRICT_COMMAND_RULES = 3


def decode_command(raw: bytes, what: str = "command", rules: int = BATCH_RULES) -> tuple[Any, int]:
    """Decode a command as the referee of a game under batch rules ``rules`` reads it; returns
    (command, at).  From batch rules 3, a command is at most :data:`MAX_COMMAND_SIZE` bytes
    and a Create is read exactly as docs/events.md types it (docs/events.md, Batch rules)."""
    return _command_codec(rules).decode(raw, what)


def command_limit(rules: int = BATCH_RULES) -> int:
    """The largest command, in bytes, the referee of batch rules ``rules`` reads: a larger
    one is answered as corrupt (:func:`oversized_command`) without its bytes being read."""
    return _command_codec(rules).limit


def oversized_command(what: str, rules: int = BATCH_RULES) -> CorruptEvent:
    """What :func:`decode_command` raises for a command over :func:`command_limit`: a worker
    that was sent only the size of such a command answers it exactly as the audit, which
    has its bytes, re-executes it."""
    return too_large(what, command_limit(rules))


def _command_codec(rules: int) -> CommandCodec[Any]:
    return COMMANDS if rules >= STRICT_COMMAND_RULES else COMMANDS_BEFORE_RULES_3
