"""The versioned msgpack codec of tournament events (docs/tournaments.md).

Same envelope and rules as a game's log (:mod:`red7es.service.codec`)::

    {"type": "RoundPaired", "version": 1, "seq": 3, "prev": <32 bytes>, "at": 1764...,
     "data": {"round": 2, "tables": [...], "byes": [...]}}

``seq`` numbers the tournament's events from 0 and ``prev`` is the SHA-256 of the
previous event's bytes, so the stream is a hash chain too.  Only the types are this
module's: the stream is an :class:`~red7es.service.envelope.EventCodec` over them,
so the envelope, version checks, errors and upcasters (registered with
:func:`~red7es.service.codec.register_upcaster`, as for game events) are the game
log's own: one set of decoding rules for every stream red7es writes.
"""

from __future__ import annotations

from typing import Any

from ..service.codec import parse_seat, seat_data
from ..service.envelope import GENESIS, CorruptEvent, EventCodec, EventType, Field, Recorded, event_hash, flat
from ..variant import Variant
from .events import (
    TOURNAMENT_RULES,
    EntrantWithdrew,
    GameFinished,
    RoundPaired,
    Seating,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
)

__all__ = [
    "TOURNAMENT_EVENTS",
    "TOURNAMENT_EVENT_TYPES",
    "CorruptEvent",
    "GENESIS",
    "TRecorded",
    "decode",
    "encode",
    "event_hash",
]


def _ints(items: Any) -> tuple[int, ...]:
    if not isinstance(items, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in items):
        raise ValueError(f"expected a list of integers, got {items!r}")
    return tuple(items)


def _texts(items: Any) -> tuple[str, ...]:
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise ValueError(f"expected a list of strings, got {items!r}")
    return tuple(items)


def _created(d: dict[str, Any]) -> TournamentCreated:
    return TournamentCreated(
        str(d["tournament"]),
        str(d["name"]),
        tuple(parse_seat(s) for s in d["entrants"]),
        Variant.from_dict(d["variant"]),
        str(d["format"]),
        int(d["rounds"]),
        str(d["commitment"]),
        int(d["created"]),
        _keys(d.get("keys", {})),
        _rules(d.get("rules", 1)),
    )


def _rules(rules: Any) -> int:
    if not isinstance(rules, int) or isinstance(rules, bool) or not 1 <= rules <= TOURNAMENT_RULES:
        raise ValueError(f"expected tournament rules 1 to {TOURNAMENT_RULES}, got {rules!r}")
    return rules


def _keys(keys: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(keys, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in keys.items()):
        raise ValueError(f"expected entrant keys as a map of names to keys, got {keys!r}")
    return tuple(sorted(keys.items()))


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
        _ints(d.get("forfeited", [])),
        _texts(d.get("forfeit_reasons", [])),
    )


TOURNAMENT_EVENT_TYPES: dict[str, EventType] = {
    "TournamentCreated": EventType(
        TournamentCreated,
        1,
        lambda e: {
            "tournament": e.tournament,
            "name": e.name,
            "entrants": [seat_data(s) for s in e.entrants],
            "variant": e.variant.to_dict(),
            "format": e.format,
            "rounds": e.rounds,
            "commitment": e.commitment,
            "created": e.created,
            # only when some entrant has a key: tournaments without stay byte-identical
            **({"keys": dict(e.keys)} if e.keys else {}),
            **({"rules": e.rules} if e.rules != 1 else {}),
        },
        _created,
    ),
    "RoundPaired": EventType(
        RoundPaired,
        1,
        lambda e: {
            "round": e.round,
            "tables": [{"table": t.table, "game": t.game, "seats": list(t.seats)} for t in e.tables],
            "byes": list(e.byes),
        },
        _paired,
    ),
    "GameFinished": EventType(
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
            # only when a seat forfeited: every other result stays byte-identical
            **({"forfeited": list(e.forfeited)} if e.forfeited else {}),
            **({"forfeit_reasons": list(e.forfeit_reasons)} if e.forfeit_reasons else {}),
        },
        _finished,
    ),
    "EntrantWithdrew": flat(EntrantWithdrew, Field("entrant", int), Field("reason", str)),
    "TournamentFinished": flat(TournamentFinished, "seed"),
}

TOURNAMENT_EVENTS: EventCodec[TournamentEvent] = EventCodec(TOURNAMENT_EVENT_TYPES, "tournament event")

# A decoded tournament event: the game log's record class (its event is a TournamentEvent).
TRecorded = Recorded


def encode(event: TournamentEvent, seq: int, prev: bytes, at: int) -> bytes:
    """The bytes of event number ``seq``, chained to the previous event's hash ``prev``."""
    return TOURNAMENT_EVENTS.encode(event, seq, prev, at)


def decode(raw: bytes, what: str = "tournament event") -> TRecorded:
    """Decode one tournament event; raises :class:`CorruptEvent` saying what is wrong."""
    return TOURNAMENT_EVENTS.decode(raw, what)
