"""Property-based fuzzing of everything that reads a record, an event or a command.

Bad input gets a one-line error (RecordError, CorruptEvent, ReplayError) or an audit
verdict, never a traceback of another exception, and a damaged record never passes.
The genuine records are played once per module (conftest's ``module_games``); every
property then mutates their bytes, their entries or their decoded maps.

What "never passes" means here.  A record read from a damaged file (``audited``) may
PASS only if it holds what the audit authenticates unchanged: every event's bytes, the
header fields the audit checks against the log (game, variant, seats, commitment,
seed, created, version, head), and every command that was not rejected, as the referee
decodes it.  What the audit cannot and need not authenticate may differ: stream ids,
the cursor (when still past every command), status, exported and the writer's version,
the ``at`` of a command, the bytes of a rejected command (its rejection, which the log
holds byte for byte, is re-derived from them), and the readable copy's spelling of the
same JSON (whitespace, key order, escapes).  A log forged with care (edited maps,
re-chained, the store's version and head fixed) may PASS only if every event decodes
to the genuine one: the audit judges decoded events, so a map with a key decoding
ignores, or an equal value of another type where no type is checked, is not caught.
"""

from __future__ import annotations

import base64
import dataclasses
import itertools
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from red7es.game import BATCH_RULES_VERSIONS
from red7es.service.audit import FAIL, INCOMPLETE, PASS, AuditReport, audit_record
from red7es.service.codec import (
    COMMAND_TYPES,
    EVENT_TYPES,
    GENESIS,
    CorruptEvent,
    Recorded,
    decode_command,
    decode_event,
    event_hash,
    pack_map,
)
from red7es.service.events import CommandRejected
from red7es.service.record_files import Unreadable, read_each, write_all
from red7es.service.records import Entry, Record, RecordError
from red7es.service.replay import Replay, ReplayError
from red7es.variant import Variant

from .conftest import Games

FORMATS = ("jsonl", "msgpack")
FUZZ = settings(max_examples=60, deadline=None)
# The module-scoped records are built once and never changed: sharing them between examples is sound.
SHARED = settings(FUZZ, suppress_health_check=[HealthCheck.function_scoped_fixture])


class Genuine:
    """The module's genuine records and their files in both formats."""

    def __init__(self, records: tuple[Record, ...], files: dict[str, bytes]) -> None:
        self.records = records
        self.files = files

    def __repr__(self) -> str:  # what hypothesis shows of a failing example: not the whole files
        return f"Genuine({', '.join(r.game_id for r in self.records)})"

    def original(self, game: str) -> Record:
        return next(r for r in self.records if r.game_id == game)


@pytest.fixture(scope="module")
def genuine(module_games: Games, tmp_path_factory: pytest.TempPathFactory) -> Genuine:
    """A finished game with people, bots and every kind of rejected command, and one still running."""
    over, on = Variant(2, actions=True, rounds=2), Variant(4, draw=True)
    module_games.people("fuzz-over", over, ("alice",), seed="seed-o3", rng=random.Random(3), mischief=0.5)
    module_games.people(
        "fuzz-on", on, ("alice", "bob"), seed="seed-n9", rng=random.Random(9), mischief=0.5, stop_after=4
    )
    # an operator's withdrawal of a seat; the others play on (RULES.md, Withdrawal)
    module_games.service.withdraw("fuzz-on", "bob", "bob left")
    # a fold after other steps: the turn taken back (TurnTakenBack, batch rules 4)
    module_games.people("fuzz-fold", Variant(2, actions=True), ("alice", "bob"), rng=random.Random(5), mid_fold=1.0)
    # a timed game: clocks, and alice's time-out forfeiting her seat (RULES.md, Time)
    module_games.no_show("fuzz-time", Variant(3, clock=(50, 10)), "alice")
    # a join deadline: nobody takes cy's seat, which forfeits (RULES.md, Time, Join deadline)
    module_games.no_show("fuzz-join", Variant(3, clock=(50, 10), join_time=30), "alice", absent="cy")
    # an operator's adjudication of a game under way (RULES.md, Adjudication)
    module_games.people("fuzz-adj", Variant(2), ("alice", "bob"), rng=random.Random(7), stop_after=2)
    module_games.service.adjudicate("fuzz-adj", ["bob"], "alice left")
    games = ("fuzz-over", "fuzz-on", "fuzz-fold", "fuzz-time", "fuzz-adj", "fuzz-join")
    records = tuple(module_games.record(g) for g in games)
    assert audit_record(records[0]).result == PASS and records[1].seed is None
    assert audit_record(records[2]).result == PASS
    assert audit_record(records[3]).result == PASS
    assert audit_record(records[4]).result == PASS
    assert audit_record(records[5]).result == PASS
    folder = tmp_path_factory.mktemp("fuzz")
    files = {}
    for fmt in FORMATS:
        path = folder / f"both.{fmt}"
        write_all(records, path)
        files[fmt] = path.read_bytes()
    return Genuine(records, files)


# ---------------------------------------------------------------------------- strategies

# Text a record holds (cards, steps, seats, kinds), so that hostile values reach past the first type check.
DOMAIN = st.sampled_from(["R7", "V1", "O4", "p:R7", "fold", "person", "bot", "random", "red", "alice", "", "0-0"])
INTEGERS = st.integers(-(2**63), 2**64 - 1)  # what msgpack holds
SCALARS = (
    st.none()
    | st.booleans()
    | INTEGERS
    | st.integers(-3, 8)
    | st.floats()
    | st.text(max_size=12)
    | DOMAIN
    | st.binary(max_size=40)
    | st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=12))
    | st.builds(msgpack.Timestamp, st.integers(0, 2**34 - 1), st.integers(0, 999_999_999))
)
KEYS = st.text(max_size=8) | st.sampled_from(["type", "version", "at", "data", "seq", "prev", "id", "seat"])
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(KEYS | INTEGERS | st.binary(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


def mutated(value: Any, draw: Callable[[st.SearchStrategy[Any]], Any], depth: int = 0) -> Any:
    """``value`` (msgpack data) with one part replaced, dropped or added somewhere inside it."""
    children = list(value) if isinstance(value, dict) else list(range(len(value))) if isinstance(value, list) else []
    if not children or depth > 6 or draw(st.integers(0, 3)) == 0:
        return draw(VALUES)
    key = draw(st.sampled_from(children))
    copy = dict(value) if isinstance(value, dict) else list(value)
    what = draw(st.sampled_from(["into", "into", "drop", "add"]))
    if what == "drop":
        del copy[key]
    elif what == "add" and isinstance(copy, dict):
        copy[draw(KEYS)] = draw(VALUES)
    elif what == "add":
        copy.insert(key, draw(VALUES))
    else:
        copy[key] = mutated(copy[key], draw, depth + 1)
    return copy


def byte_mutations(data: bytes, draw: Callable[[st.SearchStrategy[Any]], Any]) -> bytes:
    """``data`` with a few bytes flipped, set, deleted or inserted, or cut short."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        if not out:
            break
        at = draw(st.integers(0, len(out) - 1))
        kind = draw(st.sampled_from(["flip", "set", "delete", "insert", "truncate"]))
        if kind == "flip":
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set":
            out[at] = draw(st.integers(0, 255))
        elif kind == "delete":
            del out[at : at + draw(st.integers(1, 16))]
        elif kind == "insert":
            out[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            del out[at:]
    return bytes(out)


def entries_of(data: bytes, fmt: str) -> list[bytes]:
    """A genuine file's entries as bytes: its lines, or its msgpack maps."""
    if fmt == "jsonl":
        return [line + b"\n" for line in data.split(b"\n") if line]
    unpacker = msgpack.Unpacker(raw=False)
    unpacker.feed(data)
    offsets = [0]
    for _ in unpacker:
        offsets.append(unpacker.tell())
    return [data[a:b] for a, b in itertools.pairwise(offsets)]


def entry_mutations(data: bytes, fmt: str, draw: Callable[[st.SearchStrategy[Any]], Any]) -> bytes:
    """``data`` with whole entries deleted, duplicated, swapped or moved."""
    entries = entries_of(data, fmt)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(entries) - 1))
        j = draw(st.integers(0, len(entries) - 1))
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "move"]))
        if kind == "delete" and len(entries) > 1:
            del entries[i]
        elif kind == "duplicate":
            entries.insert(j, entries[i])
        elif kind == "swap":
            entries[i], entries[j] = entries[j], entries[i]
        else:
            entries.insert(j, entries.pop(i))
    return b"".join(entries)


# ---------------------------------------------------------------------------- checks


def one_line(message: str) -> None:
    assert message and "\n" not in message, message


def read_any(data: bytes, fmt: str | None, suffix: str = ".record") -> list[Record | Unreadable] | None:
    """Every record of ``data``, or None when the reader refuses the whole file in one line."""
    try:
        return list(read_each(f"fuzzed{suffix}", fmt, data=data))
    except RecordError as exc:
        one_line(str(exc))
        return None


def verdict(item: Record | Unreadable) -> AuditReport:
    """The audit's report on a record, checked to be a verdict in one line."""
    report = audit_record(item)
    assert report.result in (PASS, FAIL, INCOMPLETE)
    one_line(report.line())
    if isinstance(item, Unreadable):
        one_line(item.error)
        assert report.result == FAIL and report.divergence is not None
        assert report.divergence.check == "unreadable"
    return report


def as_referee_reads(record: Record, entry: Entry) -> Any:
    """A command as the referee of ``record``'s game decodes it, without its ``at``; or its error."""
    rules = decode_event(record.events[0].raw).event.batch_rules
    try:
        return decode_command(entry.raw, "command", rules)[0]
    except CorruptEvent as exc:
        return str(exc)


def rejected(record: Record) -> set[str]:
    """The ids the log rejects (a corrupt command's is its stream id)."""
    events = (decode_event(e.raw).event for e in record.events)
    return {e.id for e in events if isinstance(e, CommandRejected)}


def audited(record: Record, like: Record) -> tuple[Any, ...]:
    """What the audit authenticates in ``record`` (see the module's docstring); ``like`` is
    the genuine record, whose log says which commands were rejected."""
    no = rejected(like)
    commands = []
    for entry in record.commands:
        command = as_referee_reads(record, entry)
        name = command if isinstance(command, str) else command.id
        commands.append(None if name in no or entry.stream_id in no else command)
    return (
        (record.game_id, record.variant, record.seats, record.commitment, record.seed, record.created),
        (record.version, record.head),
        tuple(e.raw for e in record.events),
        tuple(commands),
    )


def no_false_pass(item: Record | Unreadable, report: AuditReport, genuine: Genuine) -> None:
    if report.result != PASS:
        return
    assert isinstance(item, Record)
    original = genuine.original(item.game_id)
    assert audited(item, original) == audited(original, original), report.line()


# ---------------------------------------------------------------------------- record files


@FUZZ
@given(data=st.binary(max_size=300), fmt=st.sampled_from([None, *FORMATS]))
def test_any_bytes_read_as_records_or_fail_in_one_line(data: bytes, fmt: str | None) -> None:
    for item in read_any(data, fmt) or []:
        assert verdict(item).result != PASS


def _objects(draw: Callable[[st.SearchStrategy[Any]], Any], genuine: Genuine) -> list[Any]:
    """Up to five entries, each a genuine one (header, command or event), a hostile copy of one, or anything."""
    entries = [msgpack.unpackb(e, raw=False) for e in entries_of(genuine.files["msgpack"], "msgpack")]
    out: list[Any] = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["genuine", "hostile", "anything"]))
        base = draw(st.sampled_from(entries))
        out.append(base if kind == "genuine" else mutated(base, draw) if kind == "hostile" else draw(VALUES))
    return out


@SHARED
@given(data=st.data(), fmt=st.sampled_from(FORMATS))
def test_hostile_entries_read_as_records_or_fail_in_one_line(genuine: Genuine, data: Any, fmt: str) -> None:
    objects = _objects(data.draw, genuine)
    if fmt == "msgpack":
        raw = b"".join(msgpack.packb(o, use_bin_type=True) for o in objects)
    else:
        raw = b"".join(_json_line(o) + b"\n" for o in objects)
    for item in read_any(raw, data.draw(st.sampled_from([None, fmt]))) or []:
        no_false_pass(item, verdict(item), genuine)


def _json_line(value: Any) -> bytes:
    """msgpack data as one JSON line, as a hostile writer might spell it (bytes as base64 text)."""

    def plain(v: Any) -> Any:
        if isinstance(v, bytes):
            return base64.b64encode(v).decode()
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, msgpack.ExtType | msgpack.Timestamp):
            return repr(v)
        return v

    return json.dumps(plain(value)).encode()


@SHARED
@given(data=st.data(), fmt=st.sampled_from(FORMATS), level=st.sampled_from(["bytes", "entries", "both"]))
def test_a_damaged_file_reads_or_fails_in_one_line_and_never_falsely_passes(
    genuine: Genuine, data: Any, fmt: str, level: str
) -> None:
    damaged = genuine.files[fmt]
    if level != "bytes":
        damaged = entry_mutations(damaged, fmt, data.draw)
    if level != "entries":
        damaged = byte_mutations(damaged, data.draw)
    suffix = data.draw(st.sampled_from([".record", f".{fmt}"]))
    for item in read_any(damaged, data.draw(st.sampled_from([None, *FORMATS])), suffix) or []:
        no_false_pass(item, verdict(item), genuine)


# ---------------------------------------------------------------------------- hostile logs, re-chained


def rechained(record: Record, maps: list[Any], *, fix_store: bool) -> Record:
    """The record with its log made of ``maps``, each ``prev`` re-linked (a careful forger)."""
    raws, head = [], GENESIS
    for m in maps:
        if isinstance(m, dict) and "prev" in m:
            m = {**m, "prev": head}
        raw = msgpack.packb(m, use_bin_type=True)
        raws.append(raw)
        head = event_hash(raw)
    ids = [f"1700000000000-{i}" for i in range(len(raws))]
    changes: dict[str, Any] = {"events": tuple(Entry(i, raw) for i, raw in zip(ids, raws, strict=True))}
    if fix_store:
        changes.update(version=len(raws), head=head.hex())
    return dataclasses.replace(record, **changes)


def hostile_log(record: Record, draw: Callable[[st.SearchStrategy[Any]], Any]) -> list[Any]:
    """The record's event maps, a few of them changed inside, dropped, duplicated or swapped."""
    maps = [msgpack.unpackb(e.raw, raw=False) for e in record.events]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(maps) - 1))
        kind = draw(st.sampled_from(["data", "data", "data", "envelope", "drop", "duplicate", "swap"]))
        if kind == "data" and isinstance(maps[i], dict):
            maps[i] = {**maps[i], "data": mutated(maps[i].get("data"), draw)}
        elif kind == "envelope":
            maps[i] = mutated(maps[i], draw)
        elif kind == "drop" and len(maps) > 1:
            del maps[i]
        elif kind == "duplicate":
            maps.insert(i, maps[i])
        elif kind == "swap" and i + 1 < len(maps):
            maps[i], maps[i + 1] = maps[i + 1], maps[i]
    return maps


@SHARED
@given(data=st.data(), which=st.sampled_from([0, 1]), fix_store=st.booleans())
def test_a_hostile_log_gets_a_verdict(genuine: Genuine, data: Any, which: int, fix_store: bool) -> None:
    record = genuine.records[which]
    forged = rechained(record, hostile_log(record, data.draw), fix_store=fix_store)
    report = verdict(forged)
    if report.result == PASS:  # the audit judges decoded events: see the module's docstring
        assert decoded(forged) == decoded(record), report.line()


def decoded(record: Record) -> list[Any]:
    return [decode_event(e.raw).event for e in record.events]


@SHARED
@given(data=st.data(), which=st.sampled_from([0, 1]))
def test_a_hostile_log_replays_or_says_why_not(genuine: Genuine, data: Any, which: int) -> None:
    record = genuine.records[which]
    forged = rechained(record, hostile_log(record, data.draw), fix_store=data.draw(st.booleans()))
    recorded: list[Recorded] = []
    for n, entry in enumerate(forged.events):
        try:
            recorded.append(decode_event(entry.raw, f"event {n}"))
        except CorruptEvent as exc:
            one_line(str(exc))
    for check in _replay_checks(recorded, forged, data.draw):
        try:
            check()
        except ReplayError as exc:
            one_line(str(exc))


def _replay_checks(
    recorded: list[Recorded], record: Record, draw: Callable[[st.SearchStrategy[Any]], Any]
) -> Iterator[Callable[[], Any]]:
    try:
        replay = Replay(recorded, version=record.version, head=record.head)
    except ReplayError as exc:
        one_line(str(exc))
        return
    at = draw(st.none() | st.integers(-len(replay) - 1, len(replay)))
    seats = replay.names  # a seat the caller names (red7 replay --as checks it with seat_of)
    seat = draw(st.none() | st.sampled_from(range(len(seats)))) if seats else None
    yield lambda: replay.problem()
    yield lambda: replay.view(at, seat)
    yield lambda: replay.fold(at)
    yield lambda: [replay.visible_events(turn, seat) for turn, _table in replay.walk(at)]


# ---------------------------------------------------------------------------- single commands and events


def _decodes_or_is_corrupt(decode: Callable[[], Any]) -> None:
    try:
        decode()
    except CorruptEvent as exc:
        one_line(str(exc))


@FUZZ
@given(raw=st.binary(max_size=200), rules=st.sampled_from(BATCH_RULES_VERSIONS))
def test_any_bytes_decode_as_a_command_or_an_event_or_are_corrupt(raw: bytes, rules: int) -> None:
    _decodes_or_is_corrupt(lambda: decode_command(raw, rules=rules))
    _decodes_or_is_corrupt(lambda: decode_event(raw))


@FUZZ
@given(value=VALUES, rules=st.sampled_from(BATCH_RULES_VERSIONS))
def test_any_msgpack_decodes_as_a_command_or_an_event_or_is_corrupt(value: Any, rules: int) -> None:
    raw = msgpack.packb(value, use_bin_type=True)
    _decodes_or_is_corrupt(lambda: decode_command(raw, rules=rules))
    _decodes_or_is_corrupt(lambda: decode_event(raw))


def _unpacked(raw: bytes) -> Any:
    try:
        return msgpack.unpackb(raw, raw=False)
    except ValueError:
        return None


@SHARED
@given(data=st.data(), rules=st.sampled_from(BATCH_RULES_VERSIONS))
def test_a_hostile_command_decodes_or_is_corrupt(genuine: Genuine, data: Any, rules: int) -> None:
    """A genuine command of every type with one part of its map replaced."""
    commands = [_unpacked(e.raw) for r in genuine.records for e in r.commands]
    commands = [c for c in commands if c is not None]  # (not the corrupt ones)
    assert {c["type"] for c in commands} == set(COMMAND_TYPES)
    command = data.draw(st.sampled_from(commands))
    if data.draw(st.booleans()):
        command = {**command, "data": mutated(command["data"], data.draw)}
    else:
        command = mutated(command, data.draw)
    raw = pack_map(command)
    _decodes_or_is_corrupt(lambda: decode_command(raw, rules=rules))


@SHARED
@given(data=st.data())
def test_a_hostile_event_decodes_or_is_corrupt(genuine: Genuine, data: Any) -> None:
    """A genuine event of every type with one part of its map replaced."""
    events = [msgpack.unpackb(e.raw, raw=False) for r in genuine.records for e in r.events]
    assert {e["type"] for e in events} == set(EVENT_TYPES)
    event = data.draw(st.sampled_from(events))
    raw = pack_map({**event, "data": mutated(event["data"], data.draw)})
    _decodes_or_is_corrupt(lambda: decode_event(raw))
