"""Game records: both encodings round-trip, malformed files fail naming where, import is guarded."""

from __future__ import annotations

import base64
import dataclasses
import itertools
import json
import os
import random
import stat
from pathlib import Path
from typing import Any

import fakeredis
import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from red7es.service.audit import FAIL, audit_game, audit_record
from red7es.service.client import GameService
from red7es.service.codec import decode_event
from red7es.service.record_files import (
    Unreadable,
    read,
    read_all,
    read_each,
    readable_event,
    record_bytes,
    write,
    write_all,
)
from red7es.service.records import FORMAT, ImportRefused, Record, RecordError, export, import_record
from red7es.service.replay import Replay
from red7es.variant import Variant

from .conftest import ADVANCED, Games
from .tamper import edit_event, flip_byte


@pytest.fixture(scope="module")
def finished(module_games: Games) -> Record:
    module_games.people("rec", Variant(3, **ADVANCED), ("alice", "bob"), rng=random.Random(3), mischief=0.3)
    return module_games.record("rec")


@pytest.fixture(scope="module")
def others(module_games: Games) -> list[Record]:
    return [module_games.record(module_games.bots(f"other-{i}", Variant(2 + i), ("random",))) for i in range(3)]


@pytest.fixture
def other_redis() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis(server=fakeredis.FakeServer())


@pytest.mark.parametrize("suffix", [".jsonl", ".msgpack"])
def test_a_record_round_trips_in_both_formats(finished: Record, tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"game{suffix}"
    write(finished, path)
    again = read(path)
    assert again == finished
    assert again.exported == finished.exported
    assert audit_record(again).passed


@pytest.mark.parametrize("fmt", ["jsonl", "msgpack"])
def test_the_format_can_be_given_and_is_sniffed_when_reading(finished: Record, tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "game.record"
    write(finished, path, fmt)
    assert read(path) == finished
    assert read(path, fmt) == finished


def test_a_written_record_is_shared_like_any_new_file(finished: Record, tmp_path: Path) -> None:
    """Written atomically through a 0600 temporary file, the record still gets the umask's mode (or keeps its own)."""
    path = tmp_path / "game.jsonl"
    old = os.umask(0o027)
    try:
        write(finished, path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    path.chmod(0o604)
    write(finished, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o604


def test_a_file_holds_several_records(finished: Record, others: list[Record], tmp_path: Path) -> None:
    for suffix in (".jsonl", ".msgpack"):
        path = tmp_path / f"many{suffix}"
        assert write_all([finished, *others], path) == 4
        assert read_all(path) == [finished, *others]
        with pytest.raises(RecordError, match="holds 4 games, not one"):
            read(path)


def test_json_lines_are_readable_and_carry_the_raw_bytes(finished: Record, tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    write(finished, path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    header, rest = lines[0], lines[1:]
    assert header["record"] == "red7es-game" and header["format"] == FORMAT
    assert header["game"] == "rec" and header["seed"] == finished.seed and header["status"] == "over"
    assert header["commands"] == len(finished.commands) and header["events"] == len(finished.events)
    commands = [line for line in rest if "command" in line]
    events = [line for line in rest if "event" in line]
    assert [c["command"] for c in commands] == list(range(len(finished.commands)))
    assert commands[0]["type"] == "Create" and commands[0]["data"]["id"] == "create-rec"
    signed = [c for c in commands if c["type"] == "Turn" and c["data"]["by"] == "person"]
    assert signed and all(len(c["data"]["sig"]) == 128 for c in signed)
    dealt = next(e for e in events if e["type"] == "RoundDealt")
    assert len(dealt["data"]["hands"]) == 3 and len(dealt["data"]["hands"][0]) == 7
    for event in events:
        raw = base64.b64decode(event["raw"])
        recorded = decode_event(raw)
        assert event["seq"] == recorded.seq and event["hash"] == recorded.hash.hex()
        assert event["prev"] == recorded.prev.hex()
    assert events[0]["prev"] == "00" * 32
    assert all(b["prev"] == a["hash"] for a, b in itertools.pairwise(events))


def test_compact_records_are_smaller(finished: Record, tmp_path: Path) -> None:
    write(finished, tmp_path / "a.jsonl")
    write(finished, tmp_path / "a.msgpack")
    assert (tmp_path / "a.msgpack").stat().st_size < (tmp_path / "a.jsonl").stat().st_size / 2


# ---------------------------------------------------------------------------- malformed files


def _lines(record: Record, tmp_path: Path) -> tuple[Path, list[str]]:
    path = tmp_path / "game.jsonl"
    write(record, path)
    return path, path.read_text().splitlines()


def _error(path: Path) -> str:
    with pytest.raises(RecordError) as info:
        read_all(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_line_that_is_not_json(finished: Record, tmp_path: Path) -> None:
    path, lines = _lines(finished, tmp_path)
    lines[4] = lines[4][:-3]
    path.write_text("\n".join(lines))
    assert _error(path).startswith(f"{path} line 5: not JSON")


def test_a_line_nested_too_deeply_is_not_json_rather_than_a_recursion_error(tmp_path: Path) -> None:
    """``[[[[…]]]]`` 100,000 deep made the JSON decoder raise RecursionError: a traceback."""
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    assert _error(path) == f"{path} line 1: not JSON (nested too deeply)"


def test_an_edited_readable_copy_is_refused(finished: Record, tmp_path: Path) -> None:
    path, lines = _lines(finished, tmp_path)
    n = next(i for i, line in enumerate(lines) if '"type":"RoundWon"' in line)
    line = json.loads(lines[n])
    line["data"]["seat"] = (line["data"]["seat"] + 1) % 3
    lines[n] = json.dumps(line)
    path.write_text("\n".join(lines))
    message = _error(path)
    assert f"line {n + 1}: event {line['event']}: field 'data' does not match the raw bytes" in message


@pytest.mark.parametrize(
    ("path_to", "retyped"),
    [(("data", "seat"), float), (("version",), bool), (("at",), float)],
    ids=["seat-as-float", "version-as-true", "time-as-float"],
)
def test_a_readable_copy_edited_to_an_equal_value_of_another_type_is_refused(
    finished: Record, tmp_path: Path, path_to: tuple[str, ...], retyped: type
) -> None:
    """``1``, ``1.0`` and ``true`` are equal in Python but are not the same JSON, nor the
    same msgpack: a readable copy must match its raw bytes exactly (docs/records.md)."""
    path, lines = _lines(finished, tmp_path)
    n = next(i for i, line in enumerate(lines) if '"type":"RoundWon"' in line)
    line = json.loads(lines[n])
    *parents, key = path_to
    holder = line
    for parent in parents:
        holder = holder[parent]
    assert retyped(holder[key]) == holder[key]  # equal in Python: only the type differs
    holder[key] = retyped(holder[key])
    lines[n] = json.dumps(line)
    path.write_text("\n".join(lines))
    message = _error(path)
    assert f"line {n + 1}: event {line['event']}: field {path_to[0]!r} does not match the raw bytes" in message


def _showing(record: Record, held: Any, shown: Any) -> bytes:
    """``record`` as JSON Lines, its first event's raw bytes holding ``held`` as data
    and its readable copy showing ``shown`` there (every other field faithful)."""
    lines = record_bytes([record], "jsonl").decode().splitlines()
    n = next(i for i, line in enumerate(lines) if line.startswith('{"event":0,'))
    line = json.loads(lines[n])
    event = msgpack.unpackb(base64.b64decode(line["raw"]), raw=False)
    raw = msgpack.packb({**event, "data": held}, use_bin_type=True)
    line.update(readable_event(raw), raw=base64.b64encode(raw).decode(), data=shown)
    lines[n] = json.dumps(line)
    return "\n".join(lines).encode()


def _accepted(record: Record, held: Any, shown: Any) -> bool:
    try:
        read_all("game.jsonl", data=_showing(record, held, shown))
    except RecordError as exc:
        assert "field 'data' does not match the raw bytes" in str(exc)
        return False
    return True


@pytest.mark.parametrize(
    ("held", "shown"),
    [
        (1, True),
        (1, 1.0),
        (True, 1),
        (0, False),
        (1.0, 1),
        (0.0, -0.0),
        (1, "1"),
        ("1", 1),
        ([], {}),
        ({}, []),
        (None, 0),
        ([1, [2]], [1, [2.0]]),
        ({"a": {"b": [0]}}, {"a": {"b": [False]}}),
        ({"a": 1}, {"a": 1, "b": 1}),
        (b"\x01", [1]),
        (b"\x01", "01 "),
    ],
    ids=repr,
)
def test_a_readable_copy_showing_another_json_value_is_refused(finished: Record, held: Any, shown: Any) -> None:
    """Every confusion Python's ``==`` would let through (1, 1.0, true; 0.0, -0.0), and
    the plainer ones, at the top of a field or nested: the copy must be the same JSON."""
    assert not _accepted(finished, held, shown)


@pytest.mark.parametrize(
    ("held", "shown"),
    [
        ({"a": 1, "b": [True, None, 1.5]}, {"b": [True, None, 1.5], "a": 1}),  # keys in another order
        (b"\x01\xff", "01ff"),
        ({1: "x", b"k": 2}, {"1": "x", "b'k'": 2}),  # msgpack keys that are not text
        (msgpack.Timestamp(1, 2), "ext -1: 0000000800000001"),
        (float("nan"), float("nan")),
        (-0.0, -0.0),
    ],
    ids=repr,
)
def test_a_faithful_readable_copy_is_accepted(finished: Record, held: Any, shown: Any) -> None:
    assert _accepted(finished, held, shown)


_NEAR = st.sampled_from([0, 1, -1, 0.0, -0.0, 1.0, True, False, None, "", "1", "a", float("nan"), 2**64 - 1])
_SHOWN = st.recursive(
    _NEAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab1"), inner, max_size=3),
    max_leaves=8,
)
_HELD = st.recursive(
    _NEAR | st.binary(max_size=2),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "1", 1, b"a"]), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(held=_HELD, shown=_SHOWN, faithful=st.booleans())
def test_a_readable_copy_is_accepted_exactly_when_it_is_the_same_canonical_json(
    finished: Record, held: Any, shown: Any, faithful: bool
) -> None:
    """The reference for what "matches the raw bytes" means (docs/records.md): the two
    written out as canonical JSON (keys sorted) are the same text.  Values drawn from a
    small pool of near-equals, so that confusions come often."""
    expected = readable_event(msgpack.packb({"data": held}, use_bin_type=True))["data"]
    if faithful:
        shown = json.loads(json.dumps(expected))
    same = json.dumps(shown, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert _accepted(finished, held, shown) == same


def test_a_missing_event_line(finished: Record, tmp_path: Path) -> None:
    path, lines = _lines(finished, tmp_path)
    n = len(finished.commands) + 10  # line index of event 9
    del lines[n]
    path.write_text("\n".join(lines))
    assert f"line {n + 1}: expected event 9, found event 10" in _error(path)


def test_raw_bytes_that_are_not_base64(finished: Record, tmp_path: Path) -> None:
    path, lines = _lines(finished, tmp_path)
    line = json.loads(lines[2])
    line["raw"] = "***"
    lines[2] = json.dumps(line)
    path.write_text("\n".join(lines))
    assert "line 3: command 1: raw is not valid base64" in _error(path)


def test_a_file_without_a_header(finished: Record, tmp_path: Path) -> None:
    path, lines = _lines(finished, tmp_path)
    path.write_text("\n".join(lines[1:]))
    assert "line 1: the file does not start with a record header" in _error(path)


def test_a_newer_format(finished: Record, tmp_path: Path) -> None:
    path, lines = _lines(finished, tmp_path)
    header = json.loads(lines[0])
    header["format"] = FORMAT + 1
    lines[0] = json.dumps(header)
    path.write_text("\n".join(lines))
    assert f"record format {FORMAT + 1} is not one this red7es reads" in _error(path)


def test_a_header_announcing_other_counts(finished: Record, tmp_path: Path) -> None:
    path, lines = _lines(finished, tmp_path)
    path.write_text("\n".join(lines[:-1]))
    assert f"announces {len(finished.events)} events, the record holds {len(finished.events) - 1}" in _error(path)


def test_a_stream_id_of_thousands_of_digits_is_no_stream_id(finished: Record, tmp_path: Path) -> None:
    """int() refuses more than 4,300 digits: reading such an id (or the audit reading such
    a cursor) raised that ValueError instead of naming the line (or giving a verdict)."""
    path, lines = _lines(finished, tmp_path)
    command = json.loads(lines[1])
    command["id"] = "1" * 5000 + "-0"
    path.write_text("\n".join([lines[0], json.dumps(command), *lines[2:]]))
    assert _error(path) == f"{path} line 2: command 0: id must be a Redis stream id like 1700000000000-0"
    header = json.loads(lines[0])
    header["cursor"] = "9" * 5000 + "-0"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]))
    assert audit_record(read(path)).passed  # a cursor that is no stream id holds nothing back, as before


def test_a_bad_header_field(finished: Record, tmp_path: Path) -> None:
    path, lines = _lines(finished, tmp_path)
    header = json.loads(lines[0])
    header["variant"]["players"] = 9
    lines[0] = json.dumps(header)
    path.write_text("\n".join(lines))
    assert "line 1: bad variant" in _error(path)


def test_a_truncated_msgpack_file(finished: Record, tmp_path: Path) -> None:
    path = tmp_path / "game.msgpack"
    write(finished, path)
    data = path.read_bytes()
    path.write_bytes(data[:-7])
    message = _error(path)
    assert "byte offset" in message and "ends in the middle of an entry" in message


def test_a_msgpack_entry_with_text_for_bytes(finished: Record, tmp_path: Path) -> None:
    path = tmp_path / "game.msgpack"
    packer = msgpack.Packer(use_bin_type=True)
    header = packer.pack(finished.header())
    path.write_bytes(header + packer.pack({"command": 0, "id": "1-0", "raw": "text"}))
    assert f"byte offset {len(header)}: command 0: raw must be msgpack bin" in _error(path)


def test_garbage(tmp_path: Path) -> None:
    path = tmp_path / "junk.msgpack"
    path.write_bytes(b"\xc1\xc1\xc1")
    assert "byte offset 0: not valid msgpack" in _error(path)


def test_a_missing_file(tmp_path: Path) -> None:
    assert "cannot read" in _error(tmp_path / "nothing.jsonl")


def test_writing_needs_a_known_format(finished: Record, tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"name it \.jsonl or \.msgpack"):
        write(finished, tmp_path / "game.txt")
    with pytest.raises(RecordError, match="unknown record format"):
        write(finished, tmp_path / "game.txt", "xml")
    assert not list(tmp_path.iterdir())


def test_a_file_that_cannot_be_written_is_named(finished: Record, tmp_path: Path) -> None:
    """Not the temporary file beside it, nor Python's ``[Errno N]``."""
    missing = tmp_path / "no-such-dir" / "game.jsonl"
    with pytest.raises(RecordError) as info:
        write(finished, missing)
    assert str(info.value) == f"cannot write {missing}: No such file or directory"
    directory = tmp_path / "dir.jsonl"
    directory.mkdir()
    with pytest.raises(RecordError) as info:
        write(finished, directory)
    assert str(info.value) == f"cannot write {directory}: Is a directory"
    assert [p.name for p in tmp_path.iterdir()] == ["dir.jsonl"] and not list(directory.iterdir())


# ---------------------------------------------------------------------------- record by record


def _several(records: list[Record], tmp_path: Path) -> tuple[Path, list[str], list[int]]:
    """A JSON Lines file of these records, its lines and the index of each header line."""
    path = tmp_path / "many.jsonl"
    write_all(records, path)
    lines = path.read_text().splitlines()
    return path, lines, [i for i, line in enumerate(lines) if line.startswith('{"record"')]


def test_an_unreadable_record_does_not_hide_the_others(finished: Record, others: list[Record], tmp_path: Path) -> None:
    path, lines, headers = _several([others[0], finished, others[1]], tmp_path)
    n = headers[1] + 1 + len(finished.commands) + 4  # event 4 of the middle record
    line = json.loads(lines[n])
    line["data"] = {}
    lines[n] = json.dumps(line)
    path.write_text("\n".join(lines))
    error = f"{path} line {n + 1}: event 4: field 'data' does not match the raw bytes"
    items = list(read_each(path))
    assert items[0] == others[0] and items[2] == others[1]
    assert isinstance(items[1], Unreadable) and items[1].game == "rec"
    assert items[1].error.startswith(error)
    assert _error(path) == items[1].error  # read_all refuses the file at that same fault


def test_a_record_cut_short_is_unreadable_and_reading_goes_on(
    finished: Record, others: list[Record], tmp_path: Path
) -> None:
    path, lines, headers = _several([finished, others[0]], tmp_path)
    del lines[headers[1] - 5 : headers[1]]  # the last five events of the first record
    path.write_text("\n".join(lines))
    n = len(finished.events)
    assert list(read_each(path)) == [
        Unreadable("rec", f"{path} line 1: the header announces {n} events, the record holds {n - 5}"),
        others[0],
    ]


def test_an_unreadable_header_leaves_the_game_unknown(finished: Record, others: list[Record], tmp_path: Path) -> None:
    path, lines, headers = _several([finished, others[0], others[1]], tmp_path)
    header = json.loads(lines[headers[1]])
    header["game"] = 5
    lines[headers[1]] = json.dumps(header)
    path.write_text("\n".join(lines))
    where = f"{path} line {headers[1] + 1}"
    assert list(read_each(path)) == [
        finished,
        Unreadable(None, f"{where}: header field 'game' must be str, found 5"),
        others[1],
    ]
    header["game"], header["seats"] = "other-0", "everyone"  # a sound game id is kept
    lines[headers[1]] = json.dumps(header)
    path.write_text("\n".join(lines))
    assert list(read_each(path))[1] == Unreadable("other-0", f"{where}: header field 'seats' must be a list")


def test_lines_before_the_first_header(finished: Record, tmp_path: Path) -> None:
    path, lines, _headers = _several([finished], tmp_path)
    path.write_text("\n".join(["{oops", lines[3], *lines]))
    assert list(read_each(path)) == [
        Unreadable(None, f"{path} line 1: not JSON (Expecting property name enclosed in double quotes)"),
        finished,
    ]


def test_compact_msgpack_reading_goes_on_at_the_next_header_after_bytes_that_are_not_msgpack(
    finished: Record, others: list[Record], tmp_path: Path
) -> None:
    path = tmp_path / "many.msgpack"
    write_all([others[0], finished], path)
    data = path.read_bytes()
    path.write_bytes(data[:-7])
    items = list(read_each(path))
    assert items[0] == others[0] and isinstance(items[1], Unreadable) and items[1].game == "rec"
    assert "ends in the middle of an entry" in items[1].error
    write_all([others[0]], path)
    first = path.read_bytes()
    path.write_bytes(first + b"\xc1" + data)  # junk between whole records is nobody's record
    assert list(read_each(path)) == [
        others[0],
        Unreadable(None, f"{path} byte offset {len(first)}: not valid msgpack (FormatError)"),
        others[0],
        finished,
    ]


def test_bytes_that_are_not_msgpack_inside_a_record_fail_it_and_not_the_next(
    finished: Record, others: list[Record], tmp_path: Path
) -> None:
    path = tmp_path / "many.msgpack"
    write_all([finished, others[1]], path)
    data = path.read_bytes()
    write_all([finished], path)
    cut = len(path.read_bytes()) // 2  # the middle of the first record
    path.write_bytes(data[:cut] + b"\xc1" + data[cut:])
    items = list(read_each(path))
    assert isinstance(items[0], Unreadable) and items[0].game == "rec"
    assert items[0].error.startswith(f"{path} byte offset ")
    assert items[1:] == [others[1]]


def test_a_header_line_that_is_not_json_fails_its_own_record_not_the_one_before(
    finished: Record, others: list[Record], tmp_path: Path
) -> None:
    path, lines, headers = _several([others[0], finished, others[1]], tmp_path)
    lines[headers[1]] = lines[headers[1]][:40]  # the middle record's header, cut
    path.write_text("\n".join(lines))
    assert list(read_each(path)) == [
        others[0],
        Unreadable(None, f"{path} line {headers[1] + 1}: not JSON (Unterminated string starting at)"),
        others[1],
    ]


@pytest.mark.parametrize(
    ("junk", "error"),
    [
        ("42", "expected an object, found int"),
        ('{"x": 1}', "neither a header, a command nor an event"),
        ("HEADER", "neither a header, a command nor an event"),  # the header with its "record" key misspelt
    ],
)
def test_a_readable_line_that_is_no_entry_after_a_whole_record_is_not_that_records_fault(
    finished: Record, others: list[Record], tmp_path: Path, junk: str, error: str
) -> None:
    path, lines, headers = _several([others[0], finished, others[1]], tmp_path)
    if junk == "HEADER":
        lines[headers[1]] = lines[headers[1]].replace('"record"', '"recxrd"', 1)
        expected = [others[0], Unreadable(None, f"{path} line {headers[1] + 1}: {error}"), others[1]]
    else:
        lines.insert(headers[1], junk)
        expected = [others[0], Unreadable(None, f"{path} line {headers[1] + 1}: {error}"), finished, others[1]]
    path.write_text("\n".join(lines))
    assert list(read_each(path)) == expected


def test_an_empty_file_holds_no_record(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    assert list(read_each(path)) == []
    with pytest.raises(RecordError, match="holds no game, not one"):
        read(path)


def test_an_unreadable_record_fails_its_audit() -> None:
    report = audit_record(Unreadable(None, "x.jsonl line 1: not JSON"))
    assert report.result == FAIL and not report.passed
    assert report.divergence is not None and report.divergence.check == "unreadable"
    assert report.line() == (
        "FAIL (game unknown): record: unreadable: x.jsonl line 1: not JSON; "
        "expected a record as docs/records.md specifies, found one that cannot be read"
    )
    assert report.to_dict()["game"] is None
    assert audit_record(Unreadable("g1", "x.jsonl line 9: oops")).line().startswith("FAIL g1: record: unreadable:")


# ---------------------------------------------------------------------------- export and import


def test_import_then_show_replay_audit_and_export_again(
    finished: Record, tmp_path: Path, other_redis: fakeredis.FakeRedis
) -> None:
    for suffix in (".jsonl", ".msgpack"):
        other_redis.flushall()
        path = tmp_path / f"game{suffix}"
        write(finished, path)
        report = import_record(other_redis, read(path))
        assert report.passed
        service = GameService(other_redis)
        assert export(service, "rec") == finished  # byte for byte, stream ids included
        assert audit_game(service, "rec").passed
        view = service.view("rec")
        assert view["status"] == "over" and view["seed"] == finished.seed
        assert view == Replay(service.log("rec")).view()
        assert service.view("rec", 1)["hand"] == Replay(service.log("rec")).view(seat=1)["hand"]
        assert "rec" in [g.game_id for g in service.games()]


def test_an_imported_game_stores_peoples_command_ids_not_bots(others: list[Record]) -> None:
    """Resubmitting an imported person's command stays a no-op; bots' turns are never
    submitted, and their ids are not stored (as a worker stores none: issue #23)."""
    record = others[0]
    connection = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    assert import_record(connection, record).passed
    ids = {i.decode() for i in connection.hkeys(f"red7:{{{record.game_id}}}:cmdids")}
    assert ids and not any(i.startswith("bot-") for i in ids)  # the create's id stays
    assert connection.xlen(f"red7:{{{record.game_id}}}:commands") == len(record.commands) > len(ids)


def test_import_refuses_an_existing_game(finished: Record, other_redis: fakeredis.FakeRedis) -> None:
    import_record(other_redis, finished)
    with pytest.raises(RecordError, match="a game 'rec' already exists"):
        import_record(other_redis, finished)


def test_import_refuses_a_tampered_record(finished: Record, other_redis: fakeredis.FakeRedis) -> None:
    k = len(finished.events) // 2
    with pytest.raises(ImportRefused) as info:
        import_record(other_redis, flip_byte(finished, k, 10))
    assert str(info.value).startswith(f"refusing to import game rec: FAIL rec: event {k}")
    assert info.value.report.divergence is not None
    assert not other_redis.keys("*")


def test_import_refuses_a_rechained_forgery(finished: Record, other_redis: fakeredis.FakeRedis) -> None:
    from red7es.facts import GameOver

    from .tamper import find

    g = find(finished, lambda e: isinstance(e, GameOver))
    forged = edit_event(finished, g, lambda e: GameOver(dataclasses.replace(e.outcome, winners=(2,))))
    with pytest.raises(ImportRefused, match="outcome"):
        import_record(other_redis, forged)
    assert not other_redis.keys("*")


def test_import_refuses_a_game_not_over(games: Games, other_redis: fakeredis.FakeRedis) -> None:
    games.people("running", Variant(2, rounds=9), ("alice", "bob"), stop_after=3, mischief=0)
    record = games.record("running")
    assert not record.over
    with pytest.raises(ImportRefused, match="INCOMPLETE running"):
        import_record(other_redis, record)


def test_export_of_unknown_and_uncreated_games(games: Games) -> None:
    from red7es.service.events import SeatSpec
    from red7es.service.store import NoSuchGame

    with pytest.raises(NoSuchGame):
        export(games.service, "nothing")
    games.service.create(Variant(2), [SeatSpec("a"), SeatSpec("b")], game_id="new", wait=None)
    with pytest.raises(RecordError, match="game new has no log yet"):
        export(games.service, "new")


@pytest.mark.parametrize("suffix", [".jsonl", ".msgpack"])
def test_a_command_holding_a_msgpack_timestamp_is_written_and_read_back(
    games: Games, tmp_path: Path, suffix: str
) -> None:
    """msgpack decodes extension -1 as a Timestamp, which JSON cannot hold: writing the
    readable copy of such a command (any client can put one on the stream) raised a
    TypeError. It is shown like every other extension, as its code and bytes in hex."""
    from red7es.service.events import SeatSpec
    from red7es.service.store import now_ms

    svc = games.service
    svc.create(Variant(2), [SeatSpec("ann"), SeatSpec("bob")], seed="stamp", game_id="g", wait=None)
    games.settle("g")
    raw = msgpack.packb({"type": "Turn", "version": 1, "at": now_ms(), "data": msgpack.Timestamp(1, 2)})
    svc.store.submit("g", "stamp", raw)
    games.settle("g")
    record = games.record("g")
    path = tmp_path / f"g{suffix}"
    write(record, path)
    assert read(path) == record
    if suffix == ".jsonl":
        shown = [json.loads(line) for line in path.read_text().splitlines()]
        expected = f"ext -1: {msgpack.Timestamp(1, 2).to_bytes().hex()}"
        assert [line["data"] for line in shown if line.get("data") == expected] == [expected]
