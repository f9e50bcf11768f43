"""A game whose keys were damaged by hand, on a real Redis (its Lua is what counts).

A Redis script that fails half-way keeps the writes it made before the error, so
append.lua checks every key before writing anything; the folder then marks the game
broken with the reason, once, instead of retrying it for ever.
"""

from __future__ import annotations

import re
from typing import Any

import msgpack
import pytest
import redis
from support import one_event_per_entry

from red7es.service.client import GameService
from red7es.service.events import CommandRejected
from red7es.service.folding import Folder, GameBroken
from red7es.service.store import ACTIVE, DamagedGame, Keys
from red7es.variant import Variant

from .helpers import bot, check_chain, fold, offline_service, person

GID = "pa"
K = Keys(GID)


@pytest.fixture
def svc(real_redis: redis.Redis) -> GameService:
    return offline_service(real_redis)


def _alice_moved(svc: GameService, folder: Folder) -> None:
    """alice (a person) against greedy, started and folded; alice's turn submitted, not folded."""
    created = svc.create(
        Variant(2), [person("alice"), bot("greedy", "greedy")], seed="pa3", game_id=GID, join=["alice"], wait=None
    )
    fold(folder, GID)
    turn = svc.view(GID, 0)["legal"][0]
    svc.submit(GID, "alice", created.tokens["alice"], turn)
    assert folder.pending(GID)


def _last_change(svc: GameService) -> dict[str, Any]:
    _id, _v, payload = svc.store.changes(GID)[-1]
    return msgpack.unpackb(payload, raw=False)  # type: ignore[no-any-return]


def test_a_command_ids_hash_made_a_string_is_refused_by_the_next_submit_and_nothing_is_written(
    svc: GameService, real_redis: redis.Redis
) -> None:
    """QA's repro: the append used to XADD the events and the bot's command, then fail on HSET
    (WRONGTYPE): meta.version 10 with 13 events in the log, and the worker contending for ever.
    The append no longer writes that key (a bot's command id is not stored: issue #23), so the
    turn and the bot's reply are written whole; the next submit, which must read the key to
    take a command exactly once, is refused naming it, and stores nothing."""
    folder = Folder(svc.store)
    _alice_moved(svc, folder)
    real_redis.delete(K.cmdids)
    real_redis.set(K.cmdids, "x")
    fold(folder, GID)
    log = check_chain(svc.store.log(GID))
    assert len(log) == int(svc.store.meta(GID)["version"]) and not folder.pending(GID)
    commands = real_redis.xlen(K.commands)
    with pytest.raises(DamagedGame, match=re.escape(f"{K.cmdids}")):
        svc.store.submit(GID, "next", b"\x80")
    assert real_redis.xlen(K.commands) == commands and real_redis.get(K.cmdids) == b"x"


def test_a_changes_stream_that_cannot_take_the_broken_notice_still_breaks_the_game(
    svc: GameService, real_redis: redis.Redis
) -> None:
    """The broken game's notice goes on its changes stream: when that is the damaged key,
    meta.broken is set and the game taken off the sweep all the same."""
    folder = Folder(svc.store)
    _alice_moved(svc, folder)
    real_redis.delete(K.changes)
    real_redis.set(K.changes, "x")
    log = svc.store.log(GID)
    reason = "cannot append: red7:{pa}:changes is a string, not a stream"
    with pytest.raises(GameBroken, match=f"^game pa: {reason}$"):
        folder.advance(GID)
    assert svc.store.log(GID) == log and svc.store.broken(GID) == reason
    assert not real_redis.sismember(ACTIVE, GID) and real_redis.get(K.changes) == b"x"


FOLDED = ("version", "head", "cursor", "status", "to_move", "bot_to_move")


def _forget_last_append(svc: GameService, real_redis: redis.Redis, meta: dict[str, str]) -> None:
    """Put back the meta of before the last append, its events and commands kept: what an
    append that stopped before its HSET (red7es before the checks) left behind."""
    real_redis.hset(K.meta, mapping={name: meta[name] for name in FOLDED})
    for name in ("entries", "log_id"):  # (the log's entries and last id, absent before a first append)
        if name in meta:
            real_redis.hset(K.meta, name, meta[name])
        else:
            real_redis.hdel(K.meta, name)


def test_a_log_longer_than_its_version_breaks_the_game_when_rebuilt(svc: GameService, real_redis: redis.Redis) -> None:
    """The events are sound and chained, but no append counted them: rebuilding the game from
    them put the table at another version than meta's, and every append conflicted (Contended)."""
    folder = Folder(svc.store)
    _alice_moved(svc, folder)
    before = svc.store.meta(GID)
    fold(folder, GID)  # alice's turn answered and greedy's written: more events, one more command
    log = svc.store.log(GID)
    assert len(log) > int(before["version"])
    _forget_last_append(svc, real_redis, before)
    reason = (
        f"the log holds {len(log)} events but meta.version is {before['version']}: events from "
        f"{before['version']} on were written by an append that did not finish, and no append counted them"
    )
    for cold in (Folder(svc.store), folder):  # a worker that never saw the game, and the one that wrote it
        with pytest.raises(GameBroken, match=f"^game pa: {reason}$"):
            cold.advance(GID)
    assert svc.store.broken(GID) == reason and svc.store.log(GID) == log
    assert not real_redis.sismember(ACTIVE, GID)


def test_a_log_shorter_than_its_version_breaks_the_game_when_rebuilt(svc: GameService, real_redis: redis.Redis) -> None:
    folder = Folder(svc.store)
    _alice_moved(svc, folder)
    entries = one_event_per_entry(real_redis, GID)  # (an entry holds an append's events: two are cut here)
    real_redis.xdel(K.log, *(stream_id for stream_id, _ in entries[-2:]))  # still a chain: its start
    with pytest.raises(GameBroken, match="events from"):
        Folder(svc.store).advance(GID)
    assert svc.store.broken(GID) == (
        f"the log holds {len(entries) - 2} events but meta.version is {len(entries)}: "
        f"events from {len(entries) - 2} on are missing"
    )


def test_a_game_whose_first_append_was_not_counted_is_broken_not_started_again(
    svc: GameService, real_redis: redis.Redis
) -> None:
    """meta.version 0 and events in the log: starting the game again used to append a second
    GameCreated after them."""
    svc.create(Variant(2), [person("alice"), bot("greedy", "greedy")], seed="pa3", game_id=GID, wait=None)
    before = svc.store.meta(GID)
    fold(Folder(svc.store), GID)
    log = svc.store.log(GID)
    _forget_last_append(svc, real_redis, before)
    with pytest.raises(GameBroken, match=f"^game pa: the log holds {len(log)} events but meta.version is 0: "):
        Folder(svc.store).advance(GID)
    assert svc.store.log(GID) == log and svc.store.broken(GID) is not None


MAX_ID = "18446744073709551615-18446744073709551615"


NO_IDS_LEFT = f"red7:{{pa}}:commands has no stream ids left after {MAX_ID}: no command can follow it"


def test_a_command_with_the_largest_stream_id_is_answered_then_the_game_breaks(
    svc: GameService, real_redis: redis.Redis
) -> None:
    """QA's other repro: a commands entry added by hand with the largest id.  Reading after it
    failed ("invalid start ID for the interval") and the game stalled unmarked; now it is
    answered like any corrupt command, and as no command (nor bot's turn) can follow it, the
    game is marked broken at once."""
    folder = Folder(svc.store)
    _alice_moved(svc, folder)
    real_redis.xadd(K.commands, {"c": b"junk"}, id=MAX_ID)
    with pytest.raises(GameBroken, match=re.escape(f"game pa: {NO_IDS_LEFT}")):
        fold(folder, GID)
    meta = svc.store.meta(GID)
    assert meta["broken"] == NO_IDS_LEFT and meta["cursor"] == MAX_ID
    answered = check_chain(svc.store.log(GID))[-1].event
    assert isinstance(answered, CommandRejected) and (answered.id, answered.kind) == (MAX_ID, "corrupt")
    assert int(meta["version"]) == len(svc.store.log(GID))


def test_a_person_only_game_is_broken_once_it_answered_the_largest_stream_id(
    svc: GameService, real_redis: redis.Redis
) -> None:
    """With no bot to move, the game was answered up to the entry and then had nothing pending,
    left "playing" while every later submit failed with Redis's raw error (QA, issue 24)."""
    folder = Folder(svc.store)
    svc.create(Variant(2), [person("ann"), person("bob")], seed="max", game_id=GID, wait=None)
    fold(folder, GID)
    real_redis.xadd(K.commands, {"c": b"junk"}, id=MAX_ID)
    with pytest.raises(GameBroken, match=re.escape(f"game pa: {NO_IDS_LEFT}")):
        fold(folder, GID)
    assert svc.store.meta(GID)["cursor"] == MAX_ID and svc.store.broken(GID) == NO_IDS_LEFT
    assert not folder.pending(GID) and not real_redis.sismember(ACTIVE, GID)


@pytest.mark.parametrize("version", ["abc", "²", "٢"])  # "²" is a digit to isdigit, "٢" a number to int()
@pytest.mark.parametrize("folded_first", [False, True], ids=["new", "playing"])
def test_a_meta_version_that_is_no_number_breaks_the_game_once(
    svc: GameService, real_redis: redis.Redis, folded_first: bool, version: str
) -> None:
    """``HSET meta version abc`` made every worker rebuild and contend for the game for ever;
    "²" raised ValueError and "٢" (a number to Python, none to Lua) was contended for ever."""
    svc.create(Variant(2, rounds=3), [bot("a"), bot("b")], seed="abc", game_id=GID, wait=None)
    folder = Folder(svc.store)
    if folded_first:
        folder.advance(GID, max_seconds=0.0)
    real_redis.hset(K.meta, "version", version)
    reason = f"meta.version is {version!r}, not a number of events"
    with pytest.raises(GameBroken) as broken:
        Folder(svc.store).advance(GID)
    assert str(broken.value).endswith(reason)
    assert svc.store.meta(GID)["broken"] == reason
    assert not real_redis.sismember(ACTIVE, GID)
