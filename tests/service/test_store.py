"""Contract tests of the event store's Lua scripts, on fakeredis and on a real Redis."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import msgpack
import pytest
import redis
from support import wait_for

from red7es.service.client import ServiceError
from red7es.service.codec import GENESIS
from red7es.service.store import (
    ACTIVE,
    ARCHIVED,
    INDEX,
    AppendConflict,
    Appended,
    Batch,
    DamagedGame,
    GameIsBroken,
    GameRemade,
    GameStore,
    Keys,
    MismatchedId,
    NoSuchGame,
    OverLimit,
    RateGuard,
    stream_order,
    text,
    valid_game_id,
    whole_number,
)
from red7es.variant import Variant

from .helpers import offline_service, person

GID = "g-1"
MAX_ID = "18446744073709551615-18446744073709551615"  # the largest stream id there is


def _snapshot(r: redis.Redis, game_id: str) -> dict[str, Any]:
    """Everything stored for a game (to check that a refused write changed nothing)."""
    out: dict[str, Any] = {}
    for key in sorted(r.keys(f"red7:{{{game_id}}}:*")):
        kind = r.type(key)
        if kind == b"stream":
            out[key] = r.xrange(key)
        elif kind == b"hash":
            out[key] = r.hgetall(key)
        elif kind == b"string":
            out[key] = r.get(key)
        else:
            out[key] = r.dump(key)
    return out


def _created(r: redis.Redis, game_id: str = GID) -> GameStore:
    store = GameStore(r)
    assert store.create(game_id, "create-1", b"create-bytes", b"seed-bytes", 1000, GENESIS)
    return store


def _batch(
    store: GameStore, *, events: int = 2, bots: int = 0, cursor: str | None = None, game_id: str = GID, **kw: Any
) -> Batch:
    meta = store.meta(game_id)
    k = Keys(game_id)
    values: dict[str, Any] = {
        "expected_version": int(meta["version"]),
        "expected_cursor": meta["cursor"],
        "cursor": cursor if cursor is not None else store.last_command_id(game_id),
        "events": [f"event-{int(meta['version']) + i}".encode() for i in range(events)],
        "bot_commands": [(f"bot-{i}", f"bot-command-{i}".encode()) for i in range(bots)],
        "head": b"\x01" * 32,
        "status": "playing",
        "to_move": 1,
        "bot_to_move": False,
        "changes": b"change",
        "views": {k.public_view: b"public", k.view(0): b"seat0", k.view(1): b"seat1"},
    }
    values.update(kw)
    return Batch(**values)


def test_game_ids() -> None:
    assert valid_game_id("abc-123")
    for bad in ("", "-a", "A", "a b", "a}b", "x" * 41, "a{b"):
        assert not valid_game_id(bad)
        with pytest.raises(NoSuchGame):
            Keys(bad)


def test_keys_share_one_hash_tag() -> None:
    k = Keys("g7")
    keys = [k.commands, k.log, k.changes, k.meta, k.secret, k.cmdids, k.lease, k.nudge, k.public_view, k.view(3)]
    assert all(key.startswith("red7:{g7}:") for key in keys)
    assert len(set(keys)) == len(keys)


def test_create_once(any_redis: redis.Redis) -> None:
    store = _created(any_redis)
    meta = store.meta(GID)
    assert meta["version"] == "0" and meta["cursor"] == "0-0" and meta["status"] == "new"
    assert meta["head"] == GENESIS.hex() and meta["created"] == "1000"
    assert store.seed(GID) == b"seed-bytes"
    rows = store.commands(GID)
    assert [raw for _, raw in rows] == [b"create-bytes"]
    assert store.command_stream_id(GID, "create-1") == rows[0][0]
    assert store.games() == [GID] and store.active_games() == [GID]
    before = _snapshot(any_redis, GID)
    assert not store.create(GID, "create-2", b"other", b"other-seed", 2000, GENESIS)
    assert _snapshot(any_redis, GID) == before
    assert any_redis.zcard(INDEX) == 1 and any_redis.scard(ACTIVE) == 1
    assert store.exists(GID) and not store.exists("nope") and not store.exists("Not Valid")


@pytest.mark.parametrize("name", ["secret", "cmdids"])
def test_create_writes_nothing_over_a_key_of_another_type(real_redis: redis.Redis, name: str) -> None:
    """A key left under the id that HSET cannot write: with cmdids, create.lua used to store the
    seed and the command, then fail, leaving an id taken by no game (commands but no meta)."""
    store = GameStore(real_redis)
    key = f"red7:{{{GID}}}:{name}"
    real_redis.set(key, "left over")
    with pytest.raises(
        redis.ResponseError, match=re.escape(f"{key} is a string, not a hash: the game was not created")
    ):
        store.create(GID, "create-1", b"create-bytes", b"seed-bytes", 1000, GENESIS)
    assert _snapshot(real_redis, GID) == {key.encode(): b"left over"}
    assert store.games() == [] and store.active_games() == []
    real_redis.delete(key)  # once it is gone, the id can be used
    assert store.create(GID, "create-1", b"create-bytes", b"seed-bytes", 1000, GENESIS)


def test_no_such_game(any_redis: redis.Redis) -> None:
    store = GameStore(any_redis)
    with pytest.raises(NoSuchGame):
        store.submit("ghost", "c1", b"x")
    with pytest.raises(NoSuchGame):
        store.meta("ghost")
    assert store.commands("ghost") == [] and store.log("ghost") == [] and store.view("ghost") is None
    assert not any_redis.exists(Keys("ghost").commands)  # a submit to no game writes nothing


def test_submit_exactly_once(any_redis: redis.Redis) -> None:
    store = _created(any_redis)
    first, dup = store.submit(GID, "c1", b"one")
    assert not dup
    again, dup = store.submit(GID, "c1", b"one, retried with other bytes")
    assert dup and again == first
    assert len(store.commands(GID)) == 2
    second, dup = store.submit(GID, "c2", b"two")
    assert not dup and second != first
    assert [raw for _, raw in store.commands(GID)] == [b"create-bytes", b"one", b"two"]
    assert store.command_stream_id(GID, "c1") == first
    assert store.command_stream_id(GID, "c3") is None
    # the create command's id is taken too
    assert store.submit(GID, "create-1", b"x")[1]


@pytest.mark.parametrize("server", ["real", "cluster"])
def test_submit_refuses_a_command_whose_data_id_is_not_the_id_it_is_submitted_as(
    request: pytest.FixtureRequest, server: str
) -> None:
    """cmdids would hold the submitted id and the answer data.id: a client waiting on the one
    it submitted would never see its answer. (Redis's cmsgpack reads data.id; fakeredis has none.)"""
    r: redis.Redis = request.getfixturevalue(f"{server}_redis")
    store = _created(r)

    def command(data: Any) -> bytes:
        return msgpack.packb({"type": "Turn", "version": 1, "at": 1, "data": data})  # type: ignore[no-any-return]

    before = _snapshot(r, GID)
    with pytest.raises(MismatchedId, match=r"'c1' names another id in its data\.id"):
        store.submit(GID, "c1", command({"id": "c2", "seat": 0, "turn": "fold", "by": "person", "sig": ""}))
    assert _snapshot(r, GID) == before
    # its own id, or bytes the worker will answer as corrupt, are appended as before
    for cid, raw in [
        ("c1", command({"id": "c1", "seat": 0, "turn": "fold", "by": "person", "sig": ""})),
        ("c3", b"\xc1 not msgpack"),
        ("c4", command({"seat": 0})),
        ("c5", command({"id": 5})),
        ("c6", command("data is text")),
        ("c7", msgpack.packb([1, 2])),
    ]:
        assert store.submit(GID, cid, raw) == (store.command_stream_id(GID, cid), False)


def test_commands_after_is_exclusive(any_redis: redis.Redis) -> None:
    store = _created(any_redis)
    ids = [store.submit(GID, f"c{i}", f"{i}".encode())[0] for i in range(5)]
    create_id = store.commands(GID)[0][0]
    assert [i for i, _ in store.commands(GID, after=create_id)] == ids
    assert [i for i, _ in store.commands(GID, after=ids[1])] == ids[2:]
    assert store.commands(GID, after=ids[-1]) == []
    assert [i for i, _ in store.commands(GID, after=ids[0], count=2)] == ids[1:3]
    assert store.last_command_id(GID) == ids[-1]


def test_nothing_follows_the_largest_stream_id(real_redis: redis.Redis) -> None:
    """A command added by hand with the largest id made every later read after it fail
    ("invalid start ID for the interval": Redis takes no "(" before it), so the game stalled."""
    store = _created(real_redis)
    k = Keys(GID)
    real_redis.xadd(k.commands, {"c": b"junk"}, id=MAX_ID)
    real_redis.xadd(k.changes, {"v": 0, "p": b"junk"}, id=MAX_ID)
    assert store.commands(GID)[-1] == (MAX_ID, b"junk") and store.last_command_id(GID) == MAX_ID
    assert store.commands(GID, after=MAX_ID) == [] and store.commands(GID, after=MAX_ID, count=5) == []
    meta, rows = store.meta_and_commands(GID, MAX_ID)
    assert meta["version"] == "0" and rows == []
    assert store.changes(GID, after=MAX_ID) == [] and store.changes(GID, after=MAX_ID, block_ms=1) == []


def test_append_writes_everything(any_redis: redis.Redis) -> None:
    store = _created(any_redis)
    k = Keys(GID)
    cursor = store.last_command_id(GID)
    appended = store.append(GID, _batch(store, events=3, cursor=cursor))
    assert appended == Appended(version=3, cursor=cursor, last_command=cursor)
    assert store.log(GID) == [b"event-0", b"event-1", b"event-2"]
    assert [e for _, e in store.log_entries(GID)] == store.log(GID)
    assert store.log(GID, 1, 2) == [b"event-1"]
    meta = store.meta(GID)
    assert meta["version"] == "3" and meta["cursor"] == cursor and meta["head"] == "01" * 32
    assert meta["status"] == "playing" and meta["to_move"] == "1" and meta["bot_to_move"] == "0"
    assert "updated" in meta
    assert store.view(GID) == b"public" and store.view(GID, 0) == b"seat0" and store.view(GID, 1) == b"seat1"
    assert any_redis.get(k.view(1)) == b"seat1"
    changes = store.changes(GID)
    assert [(v, p) for _, v, p in changes] == [(3, b"change")]
    assert store.last_change_id(GID) == changes[0][0]
    # an append without a change notice adds none; to_move None is stored as ''
    store.append(GID, _batch(store, events=1, changes=b"", to_move=None, status="over"))
    assert len(store.changes(GID)) == 1
    assert store.meta(GID)["to_move"] == "" and store.meta(GID)["status"] == "over"


def test_append_refuses_a_stale_version(any_redis: redis.Redis) -> None:
    store = _created(any_redis)
    stale = _batch(store)
    store.append(GID, _batch(store))
    before = _snapshot(any_redis, GID)
    with pytest.raises(AppendConflict, match="moved on to version 2"):
        store.append(GID, stale)
    assert _snapshot(any_redis, GID) == before


def test_append_refuses_a_stale_cursor(any_redis: redis.Redis) -> None:
    store = _created(any_redis)
    store.append(GID, _batch(store))
    store.submit(GID, "c1", b"turn")
    store.append(GID, _batch(store))  # consumes c1: the cursor moves, and so does the version
    meta = store.meta(GID)
    wrong = _batch(store, expected_cursor="0-0")  # right version, stale cursor
    assert wrong.expected_version == int(meta["version"])
    before = _snapshot(any_redis, GID)
    with pytest.raises(AppendConflict):
        store.append(GID, wrong)
    assert _snapshot(any_redis, GID) == before


@pytest.mark.parametrize(
    ("name", "damage", "found"),
    [
        ("commands", lambda r, key: r.hset(key, "c", "x"), "red7:{g-1}:commands is a hash, not a stream"),
        ("log", lambda r, key: r.set(key, "x"), "red7:{g-1}:log is a string, not a stream"),
        ("changes", lambda r, key: r.rpush(key, "x"), "red7:{g-1}:changes is a list, not a stream"),
        ("meta", lambda r, key: r.set(key, "x"), "red7:{g-1}:meta is a string, not a hash"),
    ],
)
def test_append_writes_nothing_when_a_key_holds_another_type(
    real_redis: redis.Redis, name: str, damage: Any, found: str
) -> None:
    """A Redis script that fails half-way keeps what it wrote before the error: append.lua
    looks at every key it writes first.  (With cmdids a string it used to XADD the events
    and the bot's command, then fail on HSET: a log longer than meta.version, for ever; it
    no longer writes cmdids at all.)"""
    store = _created(real_redis)
    store.append(GID, _batch(store))
    batch = _batch(store, events=3, bots=1)
    key = f"red7:{{{GID}}}:{name}"
    real_redis.delete(key)
    damage(real_redis, key)
    before = _snapshot(real_redis, GID)
    with pytest.raises(DamagedGame, match=re.escape(f"cannot append: {found}")):
        store.append(GID, batch)
    assert _snapshot(real_redis, GID) == before


def test_append_writes_nothing_to_a_stream_without_ids_left(real_redis: redis.Redis) -> None:
    """XADD fails once a stream's last id is the largest there is: an id written by hand
    (``XADD key 18446744073709551615-18446744073709551615``) would fail the append half-way."""
    store = _created(real_redis)
    k = Keys(GID)
    store.append(GID, _batch(store))
    # a command with the last id: it can be answered, but no bot's command can follow it
    real_redis.xadd(k.commands, {"c": b"junk"}, id=MAX_ID)
    store.append(GID, _batch(store, cursor=MAX_ID))
    before = _snapshot(real_redis, GID)
    with pytest.raises(DamagedGame, match=re.escape(f"{k.commands} has room for 0 more entries after {MAX_ID}, not 1")):
        store.append(GID, _batch(store, bots=1))
    assert _snapshot(real_redis, GID) == before
    # exactly: a log with one id left takes one event, not two
    store = _created(real_redis, "g-2")
    k2 = Keys("g-2")
    real_redis.xadd(k2.log, {"e": b"by hand"}, id="18446744073709551615-18446744073709551614")
    real_redis.hset(k2.meta, "version", 1)
    before = _snapshot(real_redis, "g-2")
    with pytest.raises(
        DamagedGame, match=r"has room for 1 more entries after 18446744073709551615-18446744073709551614, not 2$"
    ):
        store.append("g-2", _batch(store, events=2, game_id="g-2"))
    assert _snapshot(real_redis, "g-2") == before
    assert store.append("g-2", _batch(store, events=1, game_id="g-2"))[0] == 2
    assert store.log_entries("g-2")[-1][0] == MAX_ID
    # and a changes stream out of ids refuses the append too (its XADD comes last of all)
    real_redis.xadd(k2.changes, {"v": 2, "p": b"x"}, id=MAX_ID)
    before = _snapshot(real_redis, "g-2")
    with pytest.raises(DamagedGame, match=re.escape(f"{k2.changes} has room for 0 more entries after {MAX_ID}, not 1")):
        store.append("g-2", _batch(store, events=0, game_id="g-2"))
    assert _snapshot(real_redis, "g-2") == before


@pytest.mark.parametrize(
    ("edit", "found"),
    [
        ("longer", "the log holds 3 events but meta.version is 2: events from 2 on were written by an append"),
        # (the append's two events are one entry: removing it removes both)
        ("shorter", "the log holds 0 events but meta.version is 2: events from 0 on are missing"),
    ],
)
def test_append_refuses_a_log_whose_length_is_not_the_version(any_redis: redis.Redis, edit: str, found: str) -> None:
    """meta.version counts the log's events: extending a log that holds others (left by an
    append that failed half-way) or lost some would only bury the damage."""
    store = _created(any_redis)
    store.append(GID, _batch(store))
    k = Keys(GID)
    if edit == "longer":
        any_redis.xadd(k.log, {"e": b"an event no append counted"})
    else:
        any_redis.xdel(k.log, store.log_entries(GID)[-1][0])
    before = _snapshot(any_redis, GID)
    with pytest.raises(DamagedGame, match=re.escape(found)):
        store.append(GID, _batch(store))
    assert _snapshot(any_redis, GID) == before


def test_a_log_out_of_ids_behind_meta_log_id_takes_back_the_change(real_redis: redis.Redis) -> None:
    """The log's room is found by its own XADD (meta.log_id gives the next id, no XINFO):
    refused there, the change written just before is deleted again and nothing is left."""
    store = _created(real_redis)
    k = Keys(GID)
    store.append(GID, _batch(store))
    assert store.meta(GID)["log_id"] == text(real_redis.xrevrange(k.log, count=1)[0][0])
    real_redis.execute_command("XSETID", k.log, "18446744073709551615-18446744073709551614")
    changes = real_redis.xrange(k.changes)
    before = _snapshot(real_redis, GID)
    with pytest.raises(
        DamagedGame, match=r"has room for 1 more entries after 18446744073709551615-18446744073709551614, not 2$"
    ):
        store.append(GID, _batch(store, events=2))
    assert _snapshot(real_redis, GID) == before and real_redis.xrange(k.changes) == changes
    assert store.append(GID, _batch(store, events=1))[0] == 3  # one id left: one event
    assert store.log_entries(GID)[-1][0] == MAX_ID and store.meta(GID)["log_id"] == MAX_ID


def test_an_append_of_thousands_of_events_is_entries_of_at_most_a_thousand(real_redis: redis.Redis) -> None:
    """A Lua unpack holds at most 8,000 values: an entry of 4,000 events failed after the
    change was written. Larger appends take several entries, their ids following on."""
    store = _created(real_redis)
    store.append(GID, _batch(store))
    entries = real_redis.xlen(Keys(GID).log)
    assert store.append(GID, _batch(store, events=2_500))[0] == 2_502
    assert real_redis.xlen(Keys(GID).log) == entries + 3 == int(store.meta(GID)["entries"])
    logged = store.log_entries(GID)
    assert [raw for _id, raw in logged] == [f"event-{i}".encode() for i in range(2_502)]
    orders = [stream_order(i) for i, _raw in logged]
    assert orders == sorted(set(orders))
    assert store.meta(GID)["log_id"] == logged[-1][0]


def test_append_to_no_game_is_refused(any_redis: redis.Redis) -> None:
    store = GameStore(any_redis)
    batch = Batch(0, "0-0", "0-0", [b"e"], [], GENESIS, "playing", None, False, b"c", {})
    with pytest.raises(AppendConflict):
        store.append("ghost", batch)
    assert any_redis.keys("*") == []


def test_bot_commands_are_written_with_their_events(any_redis: redis.Redis) -> None:
    store = _created(any_redis)
    store.append(GID, _batch(store))
    appended = store.append(GID, _batch(store, events=4, bots=2))
    assert appended.version == 6
    rows = store.commands(GID)
    assert [raw for _, raw in rows[-2:]] == [b"bot-command-0", b"bot-command-1"]
    assert appended.cursor == rows[-1][0] == store.meta(GID)["cursor"] == store.last_command_id(GID)
    assert appended.last_command == appended.cursor  # the bot commands are the last
    # a bot's command id is not stored (issue #23): bots' turns are never submitted or retried
    assert store.command_stream_id(GID, "bot-0") is None and store.command_stream_id(GID, "bot-1") is None


def test_bot_commands_wait_for_unanswered_commands(any_redis: redis.Redis) -> None:
    """A bot may not move while a command submitted before it is unanswered."""
    store = _created(any_redis)
    store.append(GID, _batch(store))
    folded = _batch(store, bots=1)  # folded from the stream before c1 arrived
    store.submit(GID, "c1", b"a person's turn")
    before = _snapshot(any_redis, GID)
    with pytest.raises(AppendConflict):
        store.append(GID, folded)
    assert _snapshot(any_redis, GID) == before
    # once c1 is answered (the cursor covers it), the bot may move
    assert store.append(GID, _batch(store, bots=1)).version == 4
    assert store.meta(GID)["cursor"] == store.last_command_id(GID)


def test_client_commands_may_arrive_after_the_fold(any_redis: redis.Redis) -> None:
    """Without bot commands, an append only answers what it read: later commands wait."""
    store = _created(any_redis)
    folded_up_to = store.last_command_id(GID)
    batch = _batch(store, cursor=folded_up_to)
    late, _ = store.submit(GID, "late", b"x")
    appended = store.append(GID, batch)
    assert appended == Appended(version=2, cursor=folded_up_to, last_command=late)  # late waits: the folder knows
    assert store.commands(GID, after=appended.cursor) == [(late, b"x")]


def test_changes_nonblocking_and_exclusive(any_redis: redis.Redis) -> None:
    store = _created(any_redis)
    assert store.changes(GID) == [] and store.last_change_id(GID) == "0-0"
    store.append(GID, _batch(store, changes=b"a"))
    first = store.last_change_id(GID)
    store.append(GID, _batch(store, changes=b"b"))
    assert [p for _, _, p in store.changes(GID)] == [b"a", b"b"]
    assert [p for _, _, p in store.changes(GID, after=first)] == [b"b"]
    assert [p for _, _, p in store.changes(GID, after=first, block_ms=1)] == [b"b"]
    assert store.changes(GID, after=store.last_change_id(GID), block_ms=1) == []
    # many games' last ids in one round trip, "0-0" for a game without changes or never created
    assert store.create("g-2", "create-2", b"create-bytes", b"seed-bytes", 1000, GENESIS)
    assert store.last_change_ids([GID, "g-2", "g-none"]) == [store.last_change_id(GID), "0-0", "0-0"]
    assert store.last_change_ids([]) == []


def test_changes_blocking_read_wakes_on_append(real_redis: redis.Redis) -> None:
    store = _created(real_redis)
    mark = store.last_change_id(GID)
    got: list[Any] = []
    reader = GameStore(redis.Redis(connection_pool=real_redis.connection_pool))

    def read() -> None:
        got.extend(reader.changes(GID, after=mark, block_ms=30_000))

    thread = threading.Thread(target=read)
    started = time.monotonic()
    thread.start()
    # make sure the reader is blocked before appending (no sleep: ask Redis)
    wait_for(lambda: int(real_redis.info("clients")["blocked_clients"]) >= 1, "the reader to block", every=0.01)
    store.append(GID, _batch(store, changes=b"woken"))
    thread.join(30)
    assert not thread.is_alive()
    assert [p for _, _, p in got] == [b"woken"]
    assert time.monotonic() - started < 29  # it returned on the append, not on the timeout


def test_leases_and_nudges(any_redis: redis.Redis) -> None:
    store = _created(any_redis)
    assert store.acquire_lease(GID, "w1", 10_000)
    assert not store.acquire_lease(GID, "w2", 10_000)
    assert store.lease_holder(GID) == "w1"
    assert not store.renew_lease(GID, "w2", 10_000) and store.renew_lease(GID, "w1", 10_000)
    store.release_lease(GID, "w2")  # not ours: no effect
    assert store.lease_holder(GID) == "w1"
    store.release_lease(GID, "w1")
    assert store.lease_holder(GID) is None
    assert store.acquire_lease(GID, "w2", 10_000)
    assert store.set_nudge(GID, 10_000) and not store.set_nudge(GID, 10_000)
    store.clear_nudge(GID)
    assert store.set_nudge(GID, 10_000)


def test_finish_forgets_the_secret(any_redis: redis.Redis) -> None:
    store = _created(any_redis)
    store.finish(GID)
    assert store.seed(GID) is None and store.active_games() == [] and store.games() == [GID]


def test_metas_and_game_index(any_redis: redis.Redis) -> None:
    store = GameStore(any_redis)
    for i, gid in enumerate(["a", "b", "c"]):
        assert store.create(gid, f"create-{gid}", b"x", b"s", 1000 + i, GENESIS)
    assert store.games() == ["c", "b", "a"] and store.all_games() == ["a", "b", "c"]
    assert store.games(limit=2) == ["c", "b"]
    assert [m["created"] for m in store.metas(["a", "c"])] == ["1000", "1002"]


def test_long_blocking_waits_survive_the_socket_timeout(redis_server: Any, real_redis: redis.Redis) -> None:
    """A wait longer than the connection's socket timeout (redis-py's default is 5 s) is not cut short.

    One XREAD BLOCK longer than the socket timeout raised redis TimeoutError ("Timeout
    reading from socket") from GameService.play/answer/wait_change instead of waiting.
    """
    connection = redis.Redis.from_url(redis_server.url, socket_timeout=1)
    svc = offline_service(connection)
    svc.create(Variant(2), [person("a"), person("b")], game_id="idle", wait=None)
    started = time.monotonic()
    assert svc.wait_change("idle", "0-0", timeout=2.5) is None
    assert time.monotonic() - started >= 2.4
    with pytest.raises(ServiceError, match="no answer from a worker for game idle"):
        svc.answer("idle", "c1", wait=2.5)
    # and a change arriving in the middle of a long wait is still seen at once
    store = GameStore(connection)
    got: list[Any] = []
    reader = threading.Thread(target=lambda: got.extend(store.changes("idle", after="0-0", block_ms=20_000)))
    reader.start()
    wait_for(lambda: int(real_redis.info("clients")["blocked_clients"]) >= 1, "the reader to block", every=0.01)
    real_redis.xadd(Keys("idle").changes, {"v": 1, "p": b"x"})
    reader.join(20)
    assert [p for _, _, p in got] == [b"x"]


@pytest.mark.parametrize(
    ("text", "number"),
    [
        *[("0", 0), ("12", 12), (b"7", 7), ("", None), ("-1", None), (" 7", None), ("1.0", None)],
        *[("²", None), ("٣", None), ("18446744073709551615", 2**64 - 1), ("1" * 21, None), ("9" * 5000, None)],
    ],
)
def test_a_whole_number_is_ascii_digits_only(text: str | bytes, number: int | None) -> None:
    """As red7es writes numbers and Lua reads them: isdigit alone takes "²" (no number to int())
    and "٣" (a number to int(), none to Lua's tonumber); and no longer than 64 bits need
    (int() raises ValueError for 5,000 digits)."""
    assert whole_number(text) == number


# ------------------------------------------------------------ create by transaction (the gateway's user)


def _without_times(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A game's keys with the stream ids of its command left out (create.lua's come from
    Redis's clock; a transaction's from the create's ``created``)."""
    out = dict(snapshot)
    out[b"red7:{g-1}:commands"] = [fields for _id, fields in out[b"red7:{g-1}:commands"]]
    out[b"red7:{g-1}:cmdids"] = sorted(out[b"red7:{g-1}:cmdids"])
    return out


def test_a_create_by_transaction_writes_what_create_lua_writes(real_redis: redis.Redis) -> None:
    scripted = GameStore(real_redis)
    assert scripted.create(GID, "create-1", b"create-bytes", b"seed-bytes", 1000, GENESIS)
    by_script = _snapshot(real_redis, GID)
    real_redis.flushall()
    watched = GameStore(real_redis, scripted_create=False)
    assert watched.create(GID, "create-1", b"create-bytes", b"seed-bytes", 1000, GENESIS)
    by_transaction = _snapshot(real_redis, GID)
    assert _without_times(by_transaction) == _without_times(by_script)
    ((command_id, _fields),) = real_redis.xrange(Keys(GID).commands)
    assert real_redis.hget(Keys(GID).cmdids, "create-1") == command_id == b"1000-0"
    assert watched.games() == [GID] and watched.active_games() == [GID]
    assert not watched.create(GID, "create-2", b"other", b"other seed", 2000, GENESIS)  # the id is taken
    assert _snapshot(real_redis, GID) == by_transaction


@pytest.mark.parametrize("name", ["secret", "cmdids"])
def test_a_create_by_transaction_writes_nothing_over_a_key_of_another_type(real_redis: redis.Redis, name: str) -> None:
    store = GameStore(real_redis, scripted_create=False)
    key = f"red7:{{{GID}}}:{name}"
    real_redis.set(key, "left over")
    with pytest.raises(
        redis.ResponseError, match=re.escape(f"{key} is a string, not a hash: the game was not created")
    ):
        store.create(GID, "create-1", b"create-bytes", b"seed-bytes", 1000, GENESIS)
    assert _snapshot(real_redis, GID) == {key.encode(): b"left over"}
    assert store.games() == [] and store.active_games() == []


def test_a_create_by_transaction_that_loses_a_race_creates_nothing(real_redis: redis.Redis) -> None:
    """Another client creates the game between the transaction's last check and its EXEC:
    the WATCH fails the EXEC, the transaction looks again, and finds the id taken."""
    store = GameStore(real_redis, scripted_create=False)
    other = GameStore(redis.Redis(connection_pool=real_redis.connection_pool))
    pipeline_class = real_redis.pipeline(transaction=True).__class__
    type_of = pipeline_class.type
    raced: list[bool] = []

    def type_then_race(pipe: Any, key: Any) -> Any:
        answer = type_of(pipe, key)
        if key == Keys(GID).cmdids and not raced:  # the last check before MULTI
            raced.append(other.create(GID, "create-other", b"other-bytes", b"other seed", 999, GENESIS))
        return answer

    pipeline_class.type = type_then_race  # type: ignore[method-assign]
    try:
        assert not store.create(GID, "create-1", b"create-bytes", b"seed-bytes", 1000, GENESIS)
    finally:
        pipeline_class.type = type_of  # type: ignore[method-assign]
    assert raced == [True]
    assert real_redis.hget(Keys(GID).secret, "seed") == b"other seed".hex().encode()
    assert [f[b"c"] for _i, f in real_redis.xrange(Keys(GID).commands)] == [b"other-bytes"]
    assert real_redis.hgetall(Keys(GID).cmdids).keys() == {b"create-other"}


def test_view_and_broken_reads_what_the_two_reads_would_in_one(any_redis: redis.Redis) -> None:
    # The gateway's turn path reads both in one round trip (issue #23): each part must be
    # exactly what its own read answers, before and after changes, and when broken.
    store = _created(any_redis)
    assert store.view_and_broken(GID) == (None, None)
    store.append(GID, _batch(store, changes=b"a", views={Keys(GID).public_view: b"public-1"}))
    assert store.view_and_broken(GID) == (store.view(GID), store.broken(GID)) == (b"public-1", None)
    store.mark_broken(GID, "a key written by hand")
    assert store.view_and_broken(GID) == (store.view(GID), store.broken(GID)) == (b"public-1", "a key written by hand")
    assert store.view_and_broken("g-none") == (None, None)


def test_a_submit_after_redis_lost_its_scripts_loads_submit_lua_again_and_stores_once(any_redis: redis.Redis) -> None:
    # submit.lua goes by its sha in the same pipeline as the work-index add; a Redis that
    # lost its scripts (restarted, SCRIPT FLUSH) answers NOSCRIPT, and the submit must
    # still store the command exactly once.
    store = _created(any_redis)
    any_redis.script_flush()
    stream_id, duplicate = store.submit(GID, "cmd-after-flush", b"x")
    assert not duplicate
    assert store.submit(GID, "cmd-after-flush", b"x") == (stream_id, True)
    assert [c for c in store.commands(GID) if c[1] == b"x"] == [(stream_id, b"x")]


def test_a_broken_game_takes_no_new_command_and_a_stored_one_is_still_found(any_redis: redis.Redis) -> None:
    # submit.lua refuses a command for a broken game (no worker folds it again), so the
    # HTTP gateway learns it from the submit without reading the game first (issue #17);
    # a command stored before the game broke is still answered as a duplicate.
    store = _created(any_redis)
    stream_id, _ = store.submit(GID, "cmd-before", b"x")
    store.mark_broken(GID, "a key written by hand")
    with pytest.raises(GameIsBroken, match="a key written by hand") as refused:
        store.submit(GID, "cmd-after", b"y")
    assert refused.value.reason == "a key written by hand"
    assert store.submit(GID, "cmd-before", b"x") == (stream_id, True)
    assert [c[1] for c in store.commands(GID)] == [b"create-bytes", b"x"]


def test_a_rate_guard_is_counted_by_the_append_and_refuses_past_its_limit(any_redis: redis.Redis) -> None:
    # The gateway's per-seat count rides in submit.lua (issue #17: one round trip for the
    # count and the append): counted first, in its window; past the limit nothing is stored.
    store = _created(any_redis)
    guard = RateGuard(f"red7:gateway:rate:seat:{{{GID}}}:0", 2, 60_000)
    for n in range(2):
        submitted = store.submit_and_nudge(GID, f"cmd-{n}", b"x", 1000, None, guard)
        assert submitted.refused is None and not submitted.duplicate
    refused = store.submit_and_nudge(GID, "cmd-2", b"x", 1000, None, guard).refused
    assert isinstance(refused, OverLimit) and 0 < refused.left_ms <= 60_000
    assert [c[1] for c in store.commands(GID)] == [b"create-bytes", b"x", b"x"]
    assert int(any_redis.get(guard.key) or 0) == 3 and 0 < any_redis.pttl(guard.key) <= 60_000
    other = RateGuard(f"red7:gateway:rate:seat:{{{GID}}}:1", 2, 60_000)  # another seat's allowance is its own
    assert store.submit_and_nudge(GID, "cmd-3", b"x", 1000, None, other).refused is None


def test_a_command_checked_against_a_game_since_made_again_is_neither_counted_nor_stored(
    any_redis: redis.Redis,
) -> None:
    # The gateway passes the game's created (from the view it checked the signature
    # against): a game made again under the id since has another, and submit.lua refuses
    # before the seat's count and the append, with a guard or without one.
    store = _created(any_redis)
    created = int(store.meta(GID)["created"])
    guard = RateGuard(f"red7:gateway:rate:seat:{{{GID}}}:0", 5, 60_000)
    for with_guard in (guard, None):
        refused = store.submit_and_nudge(GID, "cmd-stale", b"x", 1000, None, with_guard, created - 1).refused
        assert (
            isinstance(refused, GameRemade)
            and str(refused) == f"game {GID} was made again since its command was checked"
        )
    assert any_redis.get(guard.key) is None and [c[1] for c in store.commands(GID)] == [b"create-bytes"]
    assert store.submit_and_nudge(GID, "cmd-now", b"x", 1000, None, guard, created).refused is None
    assert store.submit_and_nudge(GID, "cmd-plain", b"x", 1000, None, None, created).refused is None
    assert [c[1] for c in store.commands(GID)] == [b"create-bytes", b"x", b"x"]


def test_an_archived_id_is_refused_by_every_way_of_creating(any_redis: redis.Redis) -> None:
    # create.lua and the transaction on a standalone Redis (atomically), the index
    # pipeline's check on a cluster: an id in red7:archived is never taken again.
    any_redis.hset(ARCHIVED, GID, b"stub")
    for scripted in (True, False):
        store = GameStore(any_redis, scripted_create=scripted)
        assert not store.create(GID, "create-1", b"create-bytes", b"seed-bytes", 1000, GENESIS)
    assert not any_redis.exists(Keys(GID).meta, Keys(GID).commands)
    any_redis.hdel(ARCHIVED, GID)
    assert GameStore(any_redis, scripted_create=False).create(GID, "create-1", b"c", b"s", 1000, GENESIS)
