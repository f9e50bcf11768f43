"""The versioned msgpack codec of tournament events (docs/tournaments.md).

Same envelope and rules as a game's log (:mod:`red7es.service.codec`)::

    {"type": "RoundPaired", "version": 1, "seq": 3, "prev": <32 bytes>, "at": 1764...,
     "data": {"round": 2, "tables": [...], "byes": [...]}}

``seq`` numbers the tournament's events from 0 and ``prev`` is the SHA-256 of the
previous event's bytes, so the stream is a hash chain too.  The type registry,
version checks and upcasters are the game codec's own (its ``_Type``, ``_unpack`` and
``_build`` helpers, and :func:`~red7es.service.codec.register_upcaster` for old
versions): one set of decoding rules for every stream red7es writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgpack  # type: ignore[import-untyped,unused-ignore]

from ..service.codec import GENESIS, CorruptEvent, _build, _Type, _unpack, event_hash
from ..service.events import SeatSpec
from ..variant import Variant
from .events import (
    GameFinished,
    RoundPaired,
    Seating,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
)

__all__ = ["TOURNAMENT_EVENT_TYPES", "CorruptEvent", "GENESIS", "TRecorded", "decode", "encode", "event_hash"]


def _seat(d: dict[str, Any]) -> SeatSpec:
    return SeatSpec(str(d["name"]), str(d["kind"]), d.get("bot"))


def _ints(items: Any) -> tuple[int, ...]:
    if not isinstance(items, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in items):
        raise ValueError(f"expected a list of integers, got {items!r}")
    return tuple(items)


def _created(d: dict[str, Any]) -> TournamentCreated:
    return TournamentCreated(
        str(d["tournament"]),
        str(d["name"]),
        tuple(_seat(s) for s in d["entrants"]),
        Variant.from_dict(d["variant"]),
        str(d["format"]),
        int(d["rounds"]),
        str(d["commitment"]),
        int(d["created"]),
    )


def _paired(d: dict[str, Any]) -> RoundPaired:
    tables = tuple(Seating(int(t["table"]), str(t["game"]), _ints(t["seats"])) for t in d["tables"])
    return RoundPaired(int(d["round"]), tables, _ints(d["byes"]))


def _finished(d: dict[str, Any]) -> GameFinished:
    return GameFinished(
        int(d["round"]),
        str(d["game"]),
        _ints(d["winners"]),
        _ints(d["scores"]),
        _ints(d["round_wins"]),
        str(d["reason"]),
        int(d["version"]),
        str(d["head"]),
    )


TOURNAMENT_EVENT_TYPES: dict[str, _Type] = {
    "TournamentCreated": _Type(
        TournamentCreated,
        1,
        lambda e: {
            "tournament": e.tournament,
            "name": e.name,
            "entrants": [{"name": s.name, "kind": s.kind, "bot": s.bot} for s in e.entrants],
            "variant": e.variant.to_dict(),
            "format": e.format,
            "rounds": e.rounds,
            "commitment": e.commitment,
            "created": e.created,
        },
        _created,
    ),
    "RoundPaired": _Type(
        RoundPaired,
        1,
        lambda e: {
            "round": e.round,
            "tables": [{"table": t.table, "game": t.game, "seats": list(t.seats)} for t in e.tables],
            "byes": list(e.byes),
        },
        _paired,
    ),
    "GameFinished": _Type(
        GameFinished,
        1,
        lambda e: {
            "round": e.round,
            "game": e.game,
            "winners": list(e.winners),
            "scores": list(e.scores),
            "round_wins": list(e.round_wins),
            "reason": e.reason,
            "version": e.version,
            "head": e.head,
        },
        _finished,
    ),
    "TournamentFinished": _Type(
        TournamentFinished, 1, lambda e: {"seed": e.seed}, lambda d: TournamentFinished(d["seed"])
    ),
}

_NAME_OF = {t.cls: name for name, t in TOURNAMENT_EVENT_TYPES.items()}


@dataclass(frozen=True)
class TRecorded:
    """A decoded tournament event with its envelope and the exact bytes it was read from."""

    seq: int
    prev: bytes
    at: int
    event: TournamentEvent
    raw: bytes

    @property
    def hash(self) -> bytes:
        return event_hash(self.raw)

    @property
    def type(self) -> str:
        return _NAME_OF[type(self.event)]


def encode(event: TournamentEvent, seq: int, prev: bytes, at: int) -> bytes:
    """The bytes of event number ``seq``, chained to the previous event's hash ``prev``."""
    try:
        name = _NAME_OF[type(event)]
    except KeyError:
        raise TypeError(f"not a tournament event: {event!r}") from None
    t = TOURNAMENT_EVENT_TYPES[name]
    data = {"type": name, "version": t.version, "seq": seq, "prev": prev, "at": at, "data": t.to_data(event)}
    packed: bytes = msgpack.packb(data, use_bin_type=True)
    return packed


def decode(raw: bytes, what: str = "tournament event") -> TRecorded:
    """Decode one tournament event; raises :class:`CorruptEvent` saying what is wrong."""
    obj = _unpack(raw, what)
    seq, prev, at = obj.get("seq"), obj.get("prev"), obj.get("at")
    if not isinstance(seq, int) or not isinstance(prev, bytes) or len(prev) != 32 or not isinstance(at, int):
        raise CorruptEvent(f"{what} has a malformed envelope (seq, prev, at)")
    return TRecorded(seq, prev, at, _build(TOURNAMENT_EVENT_TYPES, obj, what), bytes(raw))
