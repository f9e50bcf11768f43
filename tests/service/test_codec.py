"""The versioned msgpack codec: round trips, the hash chain, corruption, upcasters."""

from __future__ import annotations

import hashlib
from typing import Any

import msgpack
import pytest

from red7es.cards import Card, Color
from red7es.facts import (
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
from red7es.game import BATCH_RULES
from red7es.service import codec
from red7es.service.codec import (
    COMMAND_TYPES,
    EVENT_TYPES,
    GENESIS,
    CorruptEvent,
    decode_command,
    decode_event,
    encode_command,
    encode_event,
    event_hash,
    register_upcaster,
)
from red7es.service.envelope import UPCASTERS
from red7es.service.events import (
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
from red7es.steps import Step
from red7es.variant import Variant

C = Card.parse

EVENTS: list[Any] = [
    GameCreated(
        "g1",
        Variant(3, scoring=True, draw=True, actions=True, target=20),
        (SeatSpec("ann"), SeatSpec("bob", "bot", "greedy"), SeatSpec("cy", "bot", "ismcts:iterations=5")),
        "ab" * 32,
        1_700_000_000_000,
    ),
    SeatJoined(0, "ann", "cd" * 32),
    CommandApplied("c1", 0, "p:R7 c:B3", "person"),
    CommandApplied("bot-7", 1, "fold", "bot"),
    CommandRejected("c2", 0, "turn", "p:R1", "R1 is not in your hand"),
    CommandRejected("1-0", -1, "corrupt", "", "command 1-0 is not valid msgpack"),
    SeedRevealed("ef" * 32),
    RoundDealt(2, ((C("R7"), C("V1")), (C("B3"),), ()), (C("O4"), C("Y6"), C("G2")), (C("I5"), C("R2")), 1),
    StepApplied(1, Step.parse("p:R7")),
    StepApplied(0, Step.parse("7d:G2")),
    StepApplied(2, Step.parse("end")),
    CardDrawn(0, C("V7"), "3", True),
    CardDrawn(2, C("I1"), "draw", False),
    TurnTakenBack(1, (Step.parse("p:Y1"), Step.parse("1:R7"))),
    PlayerOut(1, "fold"),
    RoundWon(2, 0, Color.INDIGO, (C("I5"), C("B6"))),
    RoundWon(1, 2, Color.RED, ()),
    GameOver(Outcome((0, 2), (12, 3, 12), (2, 0, 2), "target")),
    GameOver(Outcome((1,), (0, 0, 0), (0, 0, 0), "time", (2, 0))),
    Forfeited(2, "time"),
    ClockStarted(1, 1_700_000_000_500, 1_700_000_300_000, (120_000, 299_500, 0)),
    ClockStarted(0, 1_700_000_000_500, 1_700_000_030_500),
    TimedOut(2, 1_700_000_000_400, 1_700_000_000_500),
    Adjudicated((0, 2), "bob left the club"),
    Adjudicated((), "a broken deck"),
    Withdrawn(2, "cy left the club", 1_700_000_000_000),
    JoinDeadline(1_700_000_000_000, 1_700_000_600_000),
    JoinClosed(1_700_000_600_000, 1_700_000_600_004),
    GameOver(Outcome((), (0, 0), (0, 0), "aborted")),
]

COMMANDS: list[Any] = [
    CreateCommand(
        "create-g1",
        Variant(2, rounds=3),
        (SeatSpec("ann"), SeatSpec("bob", "bot", "random")),
        "01" * 32,
        ((0, "cd" * 32),),
    ),
    CreateCommand("create-g2", Variant(4), tuple(SeatSpec(f"p{i}") for i in range(4)), "02" * 32, ()),
    JoinCommand("j1", 1, "ef" * 32),
    TurnCommand("t1", 0, "p:R7 c:B3", "person", "aa" * 64),
    TurnCommand("bot-12", 1, "fold", "bot", ""),
]


def test_every_event_and_command_type_is_covered() -> None:
    assert {codec.type_name(e) for e in EVENTS} == set(EVENT_TYPES)
    assert {type(c) for c in COMMANDS} == {t.cls for t in COMMAND_TYPES.values()}


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_event_round_trip(event: Any) -> None:
    raw = encode_event(event, 5, b"\x07" * 32, 1234)
    r = decode_event(raw)
    assert r.event == event
    assert (r.seq, r.prev, r.at, r.raw) == (5, b"\x07" * 32, 1234, raw)
    assert r.type == type(event).__name__
    assert r.hash == hashlib.sha256(raw).digest()
    # re-encoding the decoded event gives the very same bytes
    assert encode_event(r.event, 5, b"\x07" * 32, 1234) == raw


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: f"{type(c).__name__}-{c.id}")
def test_command_round_trip(command: Any) -> None:
    raw = encode_command(command, 99)
    assert decode_command(raw) == (command, 99)
    assert encode_command(decode_command(raw)[0], 99) == raw


def test_envelope_is_plain_msgpack_with_text_cards() -> None:
    obj = msgpack.unpackb(encode_event(StepApplied(1, Step.parse("p:R7")), 3, GENESIS, 10), raw=False)
    assert obj == {
        "type": "StepApplied",
        "version": 1,
        "seq": 3,
        "prev": GENESIS,
        "at": 10,
        "data": {"seat": 1, "step": "p:R7"},
    }
    cmd = msgpack.unpackb(encode_command(TurnCommand("x", 0, "fold", "person", "ab"), 5), raw=False)
    assert cmd == {
        "type": "Turn",
        "version": 1,
        "at": 5,
        "data": {"id": "x", "seat": 0, "turn": "fold", "by": "person", "sig": "ab"},
    }


def test_hash_chain() -> None:
    """prev of event n is the SHA-256 of event n-1's bytes; event 0 chains to 32 zero bytes."""
    assert bytes(32) == GENESIS
    head = GENESIS
    raws = []
    for seq, event in enumerate(EVENTS):
        raw = encode_event(event, seq, head, 1000 + seq)
        raws.append(raw)
        head = event_hash(raw)
    decoded = [decode_event(raw) for raw in raws]
    assert decoded[0].prev == GENESIS
    for n in range(1, len(raws)):
        assert decoded[n].prev == hashlib.sha256(raws[n - 1]).digest() == decoded[n - 1].hash
        assert decoded[n].seq == n


def _envelope(**overrides: Any) -> bytes:
    obj: dict[str, Any] = {
        "type": "SeatJoined",
        "version": 1,
        "seq": 0,
        "prev": GENESIS,
        "at": 1,
        "data": {"seat": 0, "name": "ann", "key": "ab" * 32},
    }
    for key, value in overrides.items():
        if value is None:
            obj.pop(key)
        else:
            obj[key] = value
    return msgpack.packb(obj, use_bin_type=True)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\xc1", "event 7 is not valid msgpack"),
        (b"", "event 7 is not valid msgpack"),
        (msgpack.packb([1, 2, 3]), "event 7 is not a msgpack map"),
        (msgpack.packb("SeatJoined"), "event 7 is not a msgpack map"),
        (_envelope(type="SeatLeft"), "event 7 has unknown type 'SeatLeft'"),
        (_envelope(type=None), "event 7 has unknown type None"),
        (_envelope(type=["x"]), "event 7 has unknown type ['x']"),
        (_envelope(data={"seat": 0, "name": "ann"}), "event 7 (SeatJoined) is malformed: missing field 'key'"),
        (_envelope(data=None), "event 7 (SeatJoined) lacks a version or data"),
        (_envelope(version="1"), "event 7 (SeatJoined) lacks a version or data"),
        (
            _envelope(type="CardDrawn", data={"seat": 0, "card": "X9", "cause": "draw", "public": False}),
            "event 7 (CardDrawn) is malformed: not a card: 'X9'",
        ),
        (
            _envelope(type="RoundWon", data={"round": 1, "seat": 0, "rule": "red", "cards": "R7"}),
            "event 7 (RoundWon) is malformed: expected a list of cards, got str",
        ),
        (
            _envelope(type="StepApplied", data={"seat": 0, "step": "q:R7"}),
            "event 7 (StepApplied) is malformed: not a step: 'q:R7'",
        ),
        (
            _envelope(type="SeatJoined", version=2),
            "event 7 (SeatJoined) version 2 is newer than this red7es understands (1)",
        ),
        (
            _envelope(type="SeatJoined", version=0),
            "event 7 (SeatJoined) version 0 cannot be read (no upcaster to version 1)",
        ),
        (_envelope(seq=None), "event 7 has a malformed envelope (seq, prev, at)"),
        (_envelope(prev=b"\x00" * 31), "event 7 has a malformed envelope (seq, prev, at)"),
        (_envelope(at="yesterday"), "event 7 has a malformed envelope (seq, prev, at)"),
        (_envelope(seq=True), "event 7 has a malformed envelope (seq, prev, at)"),
        (_envelope(at=False), "event 7 has a malformed envelope (seq, prev, at)"),
        (_envelope(type="SeatJoined", version=True), "event 7 (SeatJoined) lacks a version or data"),
        (b"\x00" * ((1 << 20) + 1), "event 7 is larger than 1048576 bytes"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_corrupt_event_messages(raw: bytes, message: str) -> None:
    with pytest.raises(CorruptEvent) as info:
        decode_event(raw, "event 7")
    # the message names the event and says exactly what is wrong
    assert str(info.value).startswith(message)
    assert isinstance(info.value, ValueError)


def test_corrupt_command_messages() -> None:
    def cmd(**data: Any) -> bytes:
        base = {"type": "Turn", "version": 1, "at": 1, "data": {"id": "x", "seat": 0, "turn": "fold", "by": "person"}}
        base.update(data)
        return msgpack.packb(base, use_bin_type=True)

    with pytest.raises(CorruptEvent, match=r"^command 1-1 is not valid msgpack \(\w+\)$"):
        decode_command(b"\xc1", "command 1-1")
    with pytest.raises(CorruptEvent, match=r"^command is not a msgpack map$"):
        decode_command(msgpack.packb(7))
    with pytest.raises(CorruptEvent, match=r"^command has unknown type 'Resign'$"):
        decode_command(cmd(type="Resign"))
    with pytest.raises(CorruptEvent, match=r"^command \(Turn\) is malformed: missing field 'sig'$"):
        decode_command(cmd())
    with pytest.raises(CorruptEvent, match=r"^command has no timestamp$"):
        decode_command(cmd(at=None))
    with pytest.raises(CorruptEvent, match=r"^command has no timestamp$"):
        decode_command(cmd(at=True))  # msgpack's true is not a number
    with pytest.raises(CorruptEvent, match="newer than this red7es understands"):
        decode_command(cmd(version=9))
    # an event is not a command, nor a command an event
    with pytest.raises(CorruptEvent, match="unknown type 'StepApplied'"):
        decode_command(encode_event(StepApplied(0, Step.parse("fold")), 0, GENESIS, 1))
    with pytest.raises(CorruptEvent, match="unknown type 'Turn'"):
        decode_event(
            msgpack.packb(
                {"type": "Turn", "version": 1, "seq": 0, "prev": GENESIS, "at": 1, "data": {}}, use_bin_type=True
            )
        )


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"id": "x", "seat": "0", "turn": "fold", "by": "person", "sig": ""}, "seat"),
        ({"id": "x", "seat": 0, "turn": 5, "by": "person", "sig": ""}, "turn"),
        ({"id": "x", "seat": 0, "turn": "fold", "by": "person", "sig": 5}, "sig"),
        ({"id": 3, "seat": 0, "turn": "fold", "by": "person", "sig": ""}, "id"),
        ({"id": "x", "seat": 0, "turn": "fold", "by": None, "sig": ""}, "by"),
    ],
)
def test_command_fields_of_the_wrong_type_are_corrupt(data: dict[str, Any], field: str) -> None:
    """A command whose fields have the wrong types must not reach the referee (it would crash it)."""
    raw = msgpack.packb({"type": "Turn", "version": 1, "at": 1, "data": data}, use_bin_type=True)
    with pytest.raises(CorruptEvent, match=rf"^command \(Turn\) is malformed: .*\b{field}\b"):
        decode_command(raw)


def test_join_fields_of_the_wrong_type_are_corrupt() -> None:
    for data in ({"id": "j", "seat": 0, "key": 12}, {"id": "j", "seat": [0], "key": "ab" * 32}):
        raw = msgpack.packb({"type": "Join", "version": 1, "at": 1, "data": data}, use_bin_type=True)
        with pytest.raises(CorruptEvent, match=r"^command \(Join\) is malformed"):
            decode_command(raw)


_CREATE = {
    "id": "create-g",
    "variant": {"players": 2, "scoring": False, "draw": False, "actions": False, "rounds": 1, "target": None},
    "seats": [{"name": "ann", "kind": "person", "bot": None}, {"name": "g", "kind": "bot", "bot": "greedy"}],
    "commitment": "ab" * 32,
    "joins": [[0, "cd" * 32]],
}


def _create(**changes: Any) -> bytes:
    data = {**_CREATE, **changes}
    return msgpack.packb({"type": "Create", "version": 1, "at": 1, "data": data}, use_bin_type=True)


def test_a_create_as_the_page_gives_it_is_read() -> None:
    command, _at = decode_command(_create())
    assert command.variant == Variant(2) and command.joins == ((0, "cd" * 32),)
    assert [(s.name, s.kind, s.bot) for s in command.seats] == [("ann", "person", None), ("g", "bot", "greedy")]


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"variant": {**_CREATE["variant"], "scoring": 1}}, "variant.scoring must be bool, not int"),
        ({"variant": {**_CREATE["variant"], "actions": "yes"}}, "variant.actions must be bool, not str"),
        ({"variant": {**_CREATE["variant"], "players": True}}, "variant.players must be int, not bool"),
        ({"variant": {**_CREATE["variant"], "rounds": 1.0}}, "variant.rounds must be int, not float"),
        ({"variant": {**_CREATE["variant"], "target": "40"}}, "variant.target must be int or nil, not str"),
        ({"variant": {"players": 2}}, "variant must have exactly the keys players, scoring, draw, actions, rounds"),
        ({"variant": {**_CREATE["variant"], "colour": True}}, "variant must have exactly the keys"),
        ({"variant": [2]}, "variant must be dict, not list"),
        ({"seats": {"ann": "person"}}, "seats must be list, not dict"),
        ({"seats": ["ann", "bob"]}, r"seats\[0\] must be dict, not str"),
        ({"seats": [{"name": 7, "kind": "person"}, _CREATE["seats"][1]]}, r"seats\[0\].name must be str, not int"),
        ({"seats": [{"name": "ann", "kind": "person", "bot": 3}, _CREATE["seats"][1]]}, r"seats\[0\].bot must be str"),
        ({"seats": [{"name": "ann"}, _CREATE["seats"][1]]}, "missing field 'kind'"),
        ({"joins": [["0", "cd" * 32]]}, r"joins\[0\]\[0\] must be int, not str"),
        ({"joins": [[0, b"\xcd" * 32]]}, r"joins\[0\]\[1\] must be str, not bytes"),
        ({"joins": [[0]]}, r"joins\[0\] must be a list \[seat, key\]"),
        ({"joins": {"0": "cd"}}, "joins must be list, not dict"),
    ],
)
def test_a_create_is_read_as_typed_not_converted(changes: dict[str, Any], problem: str) -> None:
    """``scoring: 1`` was stored as 1 and a join's seat ``"0"`` as 0: a Create is now read as the page types it."""
    with pytest.raises(CorruptEvent, match=rf"^command \(Create\) is malformed: {problem}"):
        decode_command(_create(**changes))


def test_upcaster_brings_an_old_event_up_to_date(upcasters: dict[tuple[str, int], Any]) -> None:
    """A test-only v0 of SeatJoined named the key 'public_key' and had no name."""
    calls = []

    def v0_to_v1(data: dict[str, Any]) -> dict[str, Any]:
        calls.append(dict(data))
        return {"seat": data["seat"], "name": f"seat{data['seat']}", "key": data["public_key"]}

    old = msgpack.packb(
        {
            "type": "SeatJoined",
            "version": 0,
            "seq": 4,
            "prev": GENESIS,
            "at": 9,
            "data": {"seat": 2, "public_key": "k"},
        },
        use_bin_type=True,
    )
    with pytest.raises(CorruptEvent, match="no upcaster"):
        decode_event(old)
    register_upcaster("SeatJoined", 0, v0_to_v1)
    r = decode_event(old)
    assert r.event == SeatJoined(2, "seat2", "k")
    assert (r.seq, r.at, r.raw) == (4, 9, old)  # the raw bytes (and so the chain hash) are the stored ones
    assert calls == [{"seat": 2, "public_key": "k"}]
    # current-version events never go through the upcaster
    decode_event(encode_event(SeatJoined(0, "a", "b"), 0, GENESIS, 1))
    assert len(calls) == 1


def test_upcasters_chain_over_several_versions(upcasters: dict[tuple[str, int], Any]) -> None:
    """v-1 -> v0 -> v1 of CommandApplied: each step runs once, in order."""
    register_upcaster("CommandApplied", -1, lambda d: {**d, "by": "person", "trail": ["-1"]})
    register_upcaster("CommandApplied", 0, lambda d: {k: v for k, v in d.items() if k != "trail"})
    old = msgpack.packb(
        {
            "type": "CommandApplied",
            "version": -1,
            "seq": 0,
            "prev": GENESIS,
            "at": 1,
            "data": {"id": "c", "seat": 1, "turn": "fold"},
        },
        use_bin_type=True,
    )
    assert decode_event(old).event == CommandApplied("c", 1, "fold", "person")


def test_a_failing_upcaster_is_a_corrupt_event(upcasters: dict[tuple[str, int], Any]) -> None:
    register_upcaster("SeatJoined", 0, lambda d: {"seat": d["seat"], "name": "x", "key": d["public_key"]})
    old = msgpack.packb(
        {"type": "SeatJoined", "version": 0, "seq": 0, "prev": GENESIS, "at": 1, "data": {"seat": 1}},
        use_bin_type=True,
    )
    with pytest.raises(
        CorruptEvent, match=r"^event 3 \(SeatJoined\) version 0 cannot be upcast: missing field 'public_key'$"
    ):
        decode_event(old, "event 3")


def test_upcaster_registry_is_clean() -> None:
    """No test leaves a test-only upcaster behind."""
    assert not any(version <= 0 for _name, version in UPCASTERS)


def test_upcaster_for_commands(upcasters: dict[tuple[str, int], Any]) -> None:
    register_upcaster("Join", 0, lambda d: {"id": d["id"], "seat": d["seat"], "key": d["pub"]})
    old = msgpack.packb(
        {"type": "Join", "version": 0, "at": 3, "data": {"id": "j", "seat": 1, "pub": "ab"}}, use_bin_type=True
    )
    assert decode_command(old) == (JoinCommand("j", 1, "ab"), 3)


def _game_created_v1(**data: Any) -> bytes:
    """GameCreated as red7es wrote it before batch_rules (version 1)."""
    fields = {
        "game": "old",
        "variant": Variant(2, actions=True).to_dict(),
        "seats": [{"name": "ann", "kind": "person", "bot": None}, {"name": "b", "kind": "bot", "bot": "greedy"}],
        "commitment": "ab" * 32,
        "created": 5,
        **data,
    }
    envelope = {"type": "GameCreated", "version": 1, "seq": 0, "prev": GENESIS, "at": 5, "data": fields}
    return bytes(msgpack.packb(envelope, use_bin_type=True))


def test_game_created_version_1_is_read_as_batch_rules_2() -> None:
    """The last red7es that wrote version 1 refereed under batch rules 2 (the audit also tries 1)."""
    created = decode_event(_game_created_v1(), "event 0").event
    assert isinstance(created, GameCreated) and created.batch_rules == 2
    assert created.variant == Variant(2, actions=True)


def test_new_games_are_created_under_the_current_batch_rules() -> None:
    created = GameCreated("g", Variant(2), (SeatSpec("a"), SeatSpec("b")), "ab" * 32, 1)
    raw = encode_event(created, 0, GENESIS, 1)
    wire = msgpack.unpackb(raw)
    assert wire["version"] == 2 and wire["data"]["batch_rules"] == BATCH_RULES == 7
    assert decode_event(raw).event == created


@pytest.mark.parametrize("value", [0, 1, 8, "2", True, None, 2.0])  # 1: never written in a version 2
def test_batch_rules_this_red7es_does_not_referee_are_corrupt(value: Any) -> None:
    created = GameCreated("g", Variant(2), (SeatSpec("a"), SeatSpec("b")), "ab" * 32, 1)
    wire = msgpack.unpackb(encode_event(created, 0, GENESIS, 1))
    wire["data"]["batch_rules"] = value
    with pytest.raises(CorruptEvent, match=r"^event 0 \(GameCreated\) is malformed: batch_rules"):
        decode_event(msgpack.packb(wire, use_bin_type=True), "event 0")


@pytest.mark.parametrize("winners", ["0", [0, "1"], [True], None])
def test_an_adjudication_whose_winners_are_not_seat_numbers_is_corrupt(winners: Any) -> None:
    raw = encode_event(Adjudicated((0,), "x"), 5, b"\x07" * 32, 1234)
    obj = msgpack.unpackb(raw, raw=False)
    obj["data"]["winners"] = winners
    with pytest.raises(CorruptEvent, match="Adjudicated"):
        decode_event(codec.pack_map(obj))
