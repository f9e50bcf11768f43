"""The tournament event codec (versioned msgpack, hash chain) and the strict fold."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgpack
import pytest

from red7es.service.codec import GENESIS, CorruptEvent, register_upcaster
from red7es.service.store import LAST_STREAM_ID
from red7es.tournament.codec import decode, encode, event_hash
from red7es.tournament.events import GameFinished, RoundPaired, Seating, TournamentFinished
from red7es.tournament.state import TournamentCorrupt, TournamentState
from red7es.tournament.store import TournamentKeys, TournamentStore

from .conftest import people, result, spec


def events() -> list[object]:
    s = spec(3, 2, "swiss", rounds=1)
    s = dataclasses.replace(s, name="The Cup", entrants=(*s.entrants[:2], *people("alice")))
    return [
        s,
        RoundPaired(1, (Seating(1, "t-t-r1-1", (2, 0)),), (1,)),
        GameFinished(1, "t-t-r1-1", (0, 1), (12, 12), (1, 1), "deck", 57, "ab" * 32),
        TournamentFinished("00" * 32),
    ]


def chain(items: list[object]) -> list[bytes]:
    raws, prev = [], GENESIS
    for i, e in enumerate(items):
        raw = encode(e, i, prev, 1_764_000_000_000 + i)  # type: ignore[arg-type]
        raws.append(raw)
        prev = event_hash(raw)
    return raws


def test_every_event_round_trips() -> None:
    items = events()
    for i, raw in enumerate(chain(items)):
        r = decode(raw)
        assert r.event == items[i]
        assert r.seq == i and r.raw == raw
        assert encode(r.event, r.seq, r.prev, r.at) == raw  # canonical bytes


def test_wire_format_is_plain_msgpack_maps() -> None:
    raw = chain(events())[1]
    obj = msgpack.unpackb(raw, raw=False)
    assert obj["type"] == "RoundPaired" and obj["version"] == 1 and obj["seq"] == 1
    assert obj["data"] == {"round": 1, "tables": [{"table": 1, "game": "t-t-r1-1", "seats": [2, 0]}], "byes": [1]}
    first = msgpack.unpackb(chain(events())[0], raw=False)["data"]
    assert first["entrants"][2] == {"name": "alice", "kind": "person", "bot": None}
    assert first["variant"]["players"] == 2 and first["format"] == "swiss"


def test_decoding_refuses_what_it_cannot_read() -> None:
    raw = chain(events())[3]
    obj = msgpack.unpackb(raw, raw=False)
    with pytest.raises(CorruptEvent, match="newer than this red7es"):
        decode(msgpack.packb({**obj, "version": 2}, use_bin_type=True))
    with pytest.raises(CorruptEvent, match="unknown type"):
        decode(msgpack.packb({**obj, "type": "Nope"}, use_bin_type=True))
    with pytest.raises(CorruptEvent, match="envelope"):
        decode(msgpack.packb({**obj, "prev": b"short"}, use_bin_type=True))
    with pytest.raises(CorruptEvent, match="not valid msgpack"):
        decode(b"\xc1")
    bad = {**obj, "type": "RoundPaired", "data": {"round": 1, "tables": [{"table": 1, "game": "g", "seats": ["x"]}]}}
    with pytest.raises(CorruptEvent, match="malformed"):
        decode(msgpack.packb(bad, use_bin_type=True))


def test_old_versions_are_upcast(upcasters: dict[tuple[str, int], Any]) -> None:
    """A version-0 TournamentFinished (say it had "secret" instead of "seed") still reads."""
    raw = chain(events())[3]
    obj = msgpack.unpackb(raw, raw=False)
    old = msgpack.packb({**obj, "version": 0, "data": {"secret": "11" * 32}}, use_bin_type=True)
    with pytest.raises(CorruptEvent, match="no upcaster"):
        decode(old)
    register_upcaster("TournamentFinished", 0, lambda d: {"seed": d["secret"]})
    assert decode(old).event == TournamentFinished("11" * 32)


def test_fold_follows_the_stream() -> None:
    raws = chain(events())
    state = TournamentState.of(decode(r) for r in raws)
    assert state.length == 4 and state.head == event_hash(raws[-1])
    assert state.complete and state.finished is not None
    assert state.results["t-t-r1-1"].winners == (0, 1)
    assert state.seating("t-t-r1-1") == (1, Seating(1, "t-t-r1-1", (2, 0)))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda ev: [ev[0], ev[0]], "a second TournamentCreated"),
        (lambda ev: [ev[1]], "starts with TournamentCreated"),
        (lambda ev: [ev[0], ev[1], ev[2], ev[2]], "recorded twice"),
        (lambda ev: [ev[0], ev[2]], "was not paired"),
        (lambda ev: [ev[0], ev[1], ev[3]], "before every game was recorded"),
        (lambda ev: [ev[0], RoundPaired(2, (), (0, 1, 2))], "round 2 paired after 0"),
        (lambda ev: [ev[0], RoundPaired(1, (Seating(1, "g", (0, 0)),), (1, 2))], "every entrant once"),
        (
            lambda ev: [ev[0], ev[1], result(1, "t-t-r1-1", (5,))],
            "malformed outcome",
        ),
    ],
)
def test_fold_refuses_contradictions(mutate: object, message: str) -> None:
    raws = chain(mutate(events()))  # type: ignore[operator]
    with pytest.raises(TournamentCorrupt, match=message):
        TournamentState.of(decode(r) for r in raws)


def test_fold_checks_the_chain() -> None:
    raws = chain(events())
    state = TournamentState()
    state.fold(decode(raws[0]))
    with pytest.raises(TournamentCorrupt, match="numbered 2"):
        state.fold(decode(raws[2]))
    forged = encode(events()[1], 1, GENESIS, 0)  # type: ignore[arg-type]
    with pytest.raises(TournamentCorrupt, match="does not chain"):
        state.fold(decode(forged))


def test_nothing_is_read_after_the_largest_stream_id(real_redis: Any) -> None:
    """``"(" + id`` of the largest id is a range Redis refuses: every later read failed."""
    store = TournamentStore(real_redis)
    real_redis.xadd(TournamentKeys("max").events, {"e": b"x"}, id=LAST_STREAM_ID)
    assert store.read("max", after=LAST_STREAM_ID) == []
    assert [stream_id for stream_id, _raw in store.read("max")] == [LAST_STREAM_ID]
