"""What docs/events.md and docs/records.md claim about commands, creation and versions, checked
against the codec and the worker: a client written from the pages must get what they say.

The pages' own tables and lists are read here (field types of each command, the reason of each
kind of corrupt command, the reasons of a create that cannot start a game), so the pages and
the code cannot drift apart unnoticed.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import msgpack
import pytest

from red7es.service.client import GameService
from red7es.service.codec import COMMAND_TYPES, EVENT_TYPES, GENESIS
from red7es.service.events import CommandRejected
from red7es.service.folding import Folder, GameBroken
from red7es.service.store import Keys
from red7es.variant import Variant

from .helpers import decoded_log, fold, offline_service, person

DOCS = Path(__file__).resolve().parents[2] / "docs"
EVENTS_MD = (DOCS / "events.md").read_text(encoding="utf-8")
RECORDS_MD = (DOCS / "records.md").read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def _table(text: str, header: str) -> list[list[str]]:
    """The rows (cells stripped) of the markdown table whose header line is ``header``."""
    rows = text[text.index(header) :].split("\n\n", 1)[0].splitlines()[2:]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]


COMMANDS = _section(EVENTS_MD, "## Commands (`red7:{G}:commands`, field `c`)")
VARIANT = {"players": 2, "scoring": False, "draw": False, "actions": False, "rounds": 1, "target": None}


def _packed(data: Any, **envelope: Any) -> bytes:
    return msgpack.packb({"type": "Turn", "version": 1, "at": 1, "data": data, **envelope})  # type: ignore[no-any-return]


def test_the_field_types_of_each_command_are_the_codec_s() -> None:
    documented = {
        row[0].strip("`"): re.findall(r"`(\w+)` (str|int|map|list)", row[1])
        for row in _table(COMMANDS, "| type | data | meaning |")
    }
    assert set(documented) == set(COMMAND_TYPES)
    for name in ("Join", "Turn"):  # flat types: every field's type is checked when read
        checked = [(f.name, f.kind.__name__) for f in COMMAND_TYPES[name].checks if f.kind is not None]
        assert documented[name] == checked, name
    create = [field for field, _kind in documented["Create"]]
    assert create == ["id", "variant", "seats", "commitment", "joins", "withdrawn"]
    checked = {f.name: f.kind for f in COMMAND_TYPES["Create"].checks}
    assert checked == {"id": str, "commitment": str}
    assert {n: k for n, k in documented["Create"] if n in checked} == {n: k.__name__ for n, k in checked.items()}


def test_each_corrupt_command_in_the_table_gets_the_reason_it_shows(fake_redis: Any) -> None:
    svc = offline_service(fake_redis)
    folder = Folder(svc.store)
    svc.create(Variant(2), [person("ann"), person("bob")], seed="doc", game_id="g1", wait=None)
    fold(folder, "g1")
    turn = {"id": "t", "seat": 0, "turn": "fold", "by": "person", "sig": ""}
    sent = [  # in the order of the table's rows
        _packed({**turn, "turn": "p:R7 " * 4000}),
        b"\xc1 not msgpack",
        msgpack.packb([1, 2]),
        msgpack.packb({"type": b"Turn", "version": 1, "at": 1, "data": turn}),
        _packed(turn, at=1.0),
        _packed(turn, version="1"),
        _packed(turn, version=2),
        _packed({k: v for k, v in turn.items() if k != "sig"}),
        _packed({**turn, "seat": "0"}),
    ]
    rows = _table(COMMANDS, "| sent | `reason` |")
    assert len(rows) == len(sent)
    # the first, too large for submit.lua, as a writer to Redis could add it behind its back
    stream_ids = [fake_redis.xadd(Keys("g1").commands, {"c": sent[0]}).decode()]
    stream_ids += [svc.store.submit("g1", f"c{i}", raw)[0] for i, raw in enumerate(sent[1:], 1)]
    fold(folder, "g1")
    reasons = {r.event.id: r.event for r in decoded_log(svc.store, "g1") if isinstance(r.event, CommandRejected)}
    for (_what, shown), stream_id in zip(rows, stream_ids, strict=True):
        answer = reasons[stream_id]
        assert (answer.kind, answer.seat, answer.text) == ("corrupt", -1, "")
        pattern = re.escape(shown.strip("`")).replace(re.escape("<stream id>"), re.escape(stream_id))
        assert re.fullmatch(pattern.replace(re.escape("<error>"), r"\w+"), answer.reason), (shown, answer.reason)


def test_a_turn_with_keys_the_worker_does_not_know_is_read_without_them(fake_redis: Any) -> None:
    svc = offline_service(fake_redis)
    folder = Folder(svc.store)
    svc.create(Variant(2), [person("ann"), person("bob")], seed="doc", game_id="g1", wait=None)
    fold(folder, "g1")
    turn = {"id": "t", "seat": 0, "turn": "fold", "by": "person", "sig": "", "note": "x"}
    svc.store.submit("g1", "t", _packed(turn, extra=1))
    fold(folder, "g1")
    answer = decoded_log(svc.store, "g1")[-1].event
    assert isinstance(answer, CommandRejected) and (answer.id, answer.kind) == ("t", "turn")  # read, then judged


def test_each_create_failure_listed_is_the_worker_s(fake_redis: Any) -> None:
    """The page's examples of a create that cannot start a game, made and folded: the same reasons."""
    listed = re.findall(r"^\* `(cannot create the game: [^`]*)`$", _section(EVENTS_MD, "### Creating a game"), re.M)
    seats = [{"name": "ann", "kind": "person", "bot": None}, {"name": "bob", "kind": "person", "bot": None}]
    creates: list[dict[str, Any]] = [  # the Create's data and whether its seed is the game's, in the list's order
        {"variant": {**VARIANT, "players": 5}},
        {"variant": {**VARIANT, "target": 30}},
        {"variant": {**VARIANT, "scoring": 1}},
        {"variant": VARIANT, "honest": False},
        {"variant": VARIANT, "id": "create-another"},
        {"variant": {**VARIANT, "players": 3}},
        {"variant": VARIANT, "seats": [seats[0], {"name": "b", "kind": "bot", "bot": "nosuch"}]},
        {"variant": VARIANT, "seats": [seats[0], seats[0]]},
        {"variant": VARIANT, "seats": [seats[0], {"name": "\x1b[31mred", "kind": "person", "bot": None}]},
    ]
    assert len(listed) == len(creates)
    svc = GameService(fake_redis, wake=lambda game: None)
    folder = Folder(svc.store)
    for i, (create, shown) in enumerate(zip(creates, listed, strict=True)):
        game, seed = f"bad{i}", bytes([i]) * 32
        commitment = hashlib.sha256(seed if create.get("honest", True) else b"another seed").hexdigest()
        data = {
            "id": create.get("id", f"create-{game}"),
            "variant": create["variant"],
            "seats": create.get("seats", seats),
            "commitment": commitment,
            "joins": [],
        }
        raw = msgpack.packb({"type": "Create", "version": 1, "at": 1, "data": data})
        assert svc.store.create(game, f"create-{game}", raw, seed, 1, GENESIS)
        with pytest.raises(GameBroken):
            folder.advance(game)
        stream_id = svc.store.commands(game)[0][0]
        expected = re.sub(r"command \d+-\d+ ", f"command {stream_id} ", shown)
        expected = expected.replace("create-3f9a2c1b", f"create-{game}")  # the id example's game
        meta = svc.store.meta(game)
        assert (meta["broken"], meta["status"], meta["version"]) == (expected, "new", "0")
        [(_id, v, payload)] = svc.store.changes(game)
        assert (v, msgpack.unpackb(payload)) == (0, {"from": 0, "to": 0, "events": [], "broken": expected})


def test_the_versions_the_pages_give_are_the_codec_s() -> None:
    """GameCreated is at version 2, every other event type and every command at 1."""
    assert {name: t.version for name, t in EVENT_TYPES.items() if t.version != 1} == {"GameCreated": 2}
    assert {t.version for t in COMMAND_TYPES.values()} == {1}
    events_md = " ".join(EVENTS_MD.split())  # the page's words, whatever the line breaks
    assert "`version` — the version of the type's `data` shape: 2 for `GameCreated`, 1 for every other" in events_md
    assert "`version` int (1 for all three today)" in events_md
    row = next(line for line in RECORDS_MD.splitlines() if line.startswith("| `version` | int |"))
    assert "`GameCreated` is 2 in records written today and 1 in older ones" in row and "every other type 1" in row
