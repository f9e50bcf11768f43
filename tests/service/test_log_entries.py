"""A log entry per append (issue #23): each event keeps a stream id of its own, every
reader sees one event per id, and a log of one event per entry (an older red7es's) is
read and extended the same."""

from __future__ import annotations

import pytest
import redis
from support import one_event_per_entry

from red7es.service.audit import audit_game
from red7es.service.client import GameService
from red7es.service.folding import Folder, GameBroken
from red7es.service.records import export
from red7es.service.store import Keys, stream_order
from red7es.service.stream_entries import events_through, log_events
from red7es.variant import Variant

from .helpers import all_bot_game, bot, check_chain, fold, offline_service, person


def _entries(connection: redis.Redis, game_id: str) -> list[tuple[str, dict[bytes, bytes]]]:
    return [(i.decode(), f) for i, f in connection.xrange(Keys(game_id).log)]


def test_log_events_of_an_entry() -> None:
    assert log_events(b"5-0", {b"e": b"one"}) == [("5-0", b"one")]  # an older red7es's entry
    fields = {b"v": b"9", b"e": b"a", b"e1": b"b", b"e2": b"c"}
    assert log_events("7-4", fields) == [("7-2", b"a"), ("7-3", b"b"), ("7-4", b"c")]
    assert log_events("7-4", [b"v", b"9", b"e", b"a", b"e1", b"b"]) == [("7-3", b"a"), ("7-4", b"b")]  # a cluster's
    assert events_through(fields) == 9 and events_through({b"e": b"a"}) is None
    assert events_through({b"v": b"x"}) is None
    assert log_events("1-0", {b"x": b"?"}) == [("1-0", b"")]  # written by hand: no event a decoder takes
    assert log_events("7-1", fields) == [("7-1", b"")]  # written by hand: ids below 7-0 for 3 events


@pytest.mark.parametrize("players", [2, 4])
def test_each_append_is_one_entry_and_every_event_keeps_an_id(real_redis: redis.Redis, players: int) -> None:
    svc = offline_service(real_redis)
    all_bot_game(svc, "one", players=players, bots=("greedy", "random"), rounds=3)
    fold(Folder(svc.store), "one")
    entries = _entries(real_redis, "one")
    meta = svc.store.meta("one")
    version = int(meta["version"])
    assert int(meta["entries"]) == len(entries) < version
    count, last = 0, (0, 0)
    for entry_id, fields in entries:
        events = log_events(entry_id, fields)
        count += len(events)
        assert events_through(fields) == count and events[-1][0] == entry_id
        for event_id, _raw in events:  # ids strictly increase, across entries too
            assert stream_order(event_id) > last
            last = stream_order(event_id)
    assert count == version
    logged = svc.store.log_entries("one")
    check_chain([raw for _id, raw in logged])
    record = export(svc, "one")
    assert [(e.stream_id, e.raw) for e in record.events] == logged
    assert audit_game(svc, "one").passed
    # the same log, one event per entry: read alike
    assert [(i.decode(), f[b"e"]) for i, f in one_event_per_entry(real_redis, "one")] == logged
    assert svc.store.log_entries("one") == logged and audit_game(svc, "one").passed


def test_readers_by_count_and_position(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    all_bot_game(svc, "rd", players=3, bots=("greedy",))
    fold(Folder(svc.store), "rd")
    logged = svc.store.log_entries("rd")
    assert len(_entries(real_redis, "rd")) < len(logged)
    for count in (1, 2, 5, len(logged), len(logged) + 3):
        tail, _views = svc.store.log_tail_and_views("rd", count, [])
        assert tail == [raw for _id, raw in logged[-count:]]
    newest_first = logged[::-1]
    for count in (1, 3, 8):
        assert svc.store.log_before("rd", None, count) == newest_first[:count]
        for k in range(len(logged)):  # before every event's id, wherever it sits in its entry
            assert svc.store.log_before("rd", logged[k][0], count) == newest_first[len(logged) - k :][:count]
    assert svc.store.log("rd", 3, 7) == [raw for _id, raw in logged[3:7]]


def test_a_game_of_an_older_red7es_is_played_on(real_redis: redis.Redis) -> None:
    """A log written one event per entry, with no meta.entries (a game in play when red7es
    is upgraded): the worker appends on, an entry per append, and the game audits."""
    svc = offline_service(real_redis)
    folder = Folder(svc.store)
    created = svc.create(
        Variant(2), [person("ann"), bot("g", "greedy")], seed="up", game_id="up", join=["ann"], wait=None
    )
    fold(folder, "up")
    old = one_event_per_entry(real_redis, "up")
    assert "entries" not in svc.store.meta("up")
    while svc.view("up")["status"] != "over":
        svc.submit("up", "ann", created.tokens["ann"], svc.view("up", 0)["legal"][0])
        fold(folder, "up")
    entries = _entries(real_redis, "up")
    assert entries[: len(old)] == [(i.decode(), f) for i, f in old] and len(entries) > len(old)
    assert int(svc.store.meta("up")["entries"]) == len(entries)
    assert any(events_through(f) is not None and len(log_events(i, f)) > 1 for i, f in entries[len(old) :])
    check_chain([raw for _id, raw in svc.store.log_entries("up")])
    assert audit_game(svc, "up").passed


def _person_game(svc: GameService, game_id: str) -> tuple[Folder, str]:
    folder = Folder(svc.store)
    created = svc.create(
        Variant(2), [person("ann"), bot("g", "greedy")], seed="pa3", game_id=game_id, join=["ann"], wait=None
    )
    fold(folder, game_id)
    svc.submit(game_id, "ann", created.tokens["ann"], svc.view(game_id, 0)["legal"][0])
    fold(folder, game_id)  # an entry for the create, one for each turn of ann's and greedy's reply
    assert svc.view(game_id)["status"] != "over"
    svc.submit(game_id, "ann", created.tokens["ann"], svc.view(game_id, 0)["legal"][0])
    return folder, created.tokens["ann"]


def test_the_last_entry_removed_breaks_the_game_naming_the_events(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    folder, _token = _person_game(svc, "cut")
    entries = _entries(real_redis, "cut")
    version, through = int(svc.store.meta("cut")["version"]), events_through(entries[-2][1])
    real_redis.xdel(Keys("cut").log, entries[-1][0])
    with pytest.raises(GameBroken):
        fold(folder, "cut")
    assert svc.store.broken("cut") == (
        f"the log holds {through} events but meta.version is {version}: events from {through} on are missing"
    )


def test_an_entry_removed_from_the_middle_breaks_the_game_naming_the_events(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    folder, _token = _person_game(svc, "mid")
    entries = _entries(real_redis, "mid")
    assert len(entries) >= 3
    version, left = int(svc.store.meta("mid")["version"]), len(log_events(*entries[1]))
    real_redis.xdel(Keys("mid").log, entries[1][0])
    with pytest.raises(GameBroken):
        fold(folder, "mid")
    held = version - left
    assert svc.store.broken("mid") == (
        f"the log holds {held} events but meta.version is {version}: events from {held} on are missing"
    )


def test_entries_split_by_hand_are_caught_by_their_count(real_redis: redis.Redis) -> None:
    """Every event still there, each an entry of its own, but meta.entries counting fewer."""
    svc = offline_service(real_redis)
    folder, _token = _person_game(svc, "split")
    counted = int(svc.store.meta("split")["entries"])
    held = len(one_event_per_entry(real_redis, "split"))
    real_redis.hset(Keys("split").meta, "entries", counted)
    with pytest.raises(GameBroken):
        fold(folder, "split")
    assert svc.store.broken("split") == (
        f"the log holds {held} entries but meta.entries is {counted}: entries were removed or added"
    )


def test_a_log_id_set_by_hand_past_meta_log_id_is_read_and_passed(real_redis: redis.Redis) -> None:
    """meta.log_id is the last id the last append wrote: an XSETID by hand moves the log's
    past it, the entry's XADD is refused, and the append reads the stream and writes after it."""
    svc = offline_service(real_redis)
    folder, _token = _person_game(svc, "moved")
    before = _entries(real_redis, "moved")
    ms = int(before[-1][0].split("-")[0])
    real_redis.execute_command("XSETID", Keys("moved").log, f"{ms}-900")
    fold(folder, "moved")
    added = _entries(real_redis, "moved")[len(before) :]
    assert added and stream_order(added[0][0]) > (ms, 900)
    assert svc.store.meta("moved")["log_id"] == added[-1][0]
    check_chain([raw for _id, raw in svc.store.log_entries("moved")])


def test_a_log_id_past_the_clock_takes_an_entry_per_event(real_redis: redis.Redis) -> None:
    """A last id above Redis's clock (set by hand, or a clock gone back) leaves no room
    below an id of Redis's for an entry's events: each is an entry of its own, with its v."""
    svc = offline_service(real_redis)
    folder, _token = _person_game(svc, "ahead")
    before = _entries(real_redis, "ahead")
    future = int(before[-1][0].split("-")[0]) + 3_600_000
    real_redis.execute_command("XSETID", Keys("ahead").log, f"{future}-0")
    fold(folder, "ahead")
    added = _entries(real_redis, "ahead")[len(before) :]
    assert len(added) >= 2 and all(len(log_events(i, f)) == 1 for i, f in added)
    assert all(stream_order(i) > (future, 0) for i, _f in added)
    assert events_through(added[-1][1]) == int(svc.store.meta("ahead")["version"])
    assert int(svc.store.meta("ahead")["entries"]) == len(before) + len(added)
    check_chain([raw for _id, raw in svc.store.log_entries("ahead")])


def test_an_entry_by_hand_whose_id_cannot_hold_its_events_breaks_that_game_alone(real_redis: redis.Redis) -> None:
    """``XADD log * e a e1 b`` (seq 0, two events): a log that cannot be read, met where
    every reader meets one, not an error of its own (which stopped the sweep and every
    compaction after it)."""
    svc = offline_service(real_redis)
    _person_game(svc, "odd")
    version = int(svc.store.meta("odd")["version"])
    real_redis.xadd(Keys("odd").log, {"e": b"a", "e1": b"b"}, id="99999999999999-0")
    real_redis.hset(Keys("odd").meta, "entries", int(svc.store.meta("odd")["entries"]) + 1)
    assert svc.store.log_entries("odd")[-1] == ("99999999999999-0", b"")
    with pytest.raises(GameBroken):
        fold(Folder(svc.store), "odd")
    assert svc.store.broken("odd") == f"event {version} is not valid msgpack (ValueError)"
