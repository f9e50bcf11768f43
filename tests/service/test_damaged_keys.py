"""A game whose keys were damaged by hand, on a real Redis (its Lua is what counts).

A Redis script that fails half-way keeps the writes it made before the error, so
append.lua checks every key before writing anything; the folder then marks the game
broken with the reason, once, instead of retrying it for ever.
"""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
import redis

from red7es.service.client import GameService
from red7es.service.folding import Folder, GameBroken
from red7es.service.store import ACTIVE, Keys
from red7es.variant import Variant
from red7es.workers.context import WorkerContext

from .helpers import bot, fold, offline_service, person

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


def test_a_command_ids_hash_made_a_string_breaks_the_game_and_writes_nothing(
    svc: GameService, real_redis: redis.Redis
) -> None:
    """QA's repro: the append used to XADD the events and the bot's command, then fail on HSET
    (WRONGTYPE): meta.version 10 with 13 events in the log, and the worker contending for ever."""
    folder = Folder(svc.store)
    _alice_moved(svc, folder)
    real_redis.delete(K.cmdids)
    real_redis.set(K.cmdids, "x")
    log, meta = svc.store.log(GID), svc.store.meta(GID)
    reason = "cannot append: red7:{pa}:cmdids is a string, not a hash"
    with pytest.raises(GameBroken, match=f"^game pa: {reason}$"):
        folder.advance(GID)
    assert svc.store.log(GID) == log and len(log) == int(meta["version"])  # nothing was written
    assert svc.store.meta(GID) == {**meta, "broken": reason}
    assert _last_change(svc) == {"from": len(log), "to": len(log), "events": [], "broken": reason}
    assert not real_redis.sismember(ACTIVE, GID) and not folder.pending(GID)
    # the key repaired, the game stays broken (a human decides): a worker reports it and moves on
    real_redis.delete(K.cmdids)
    assert WorkerContext(real_redis, owner="w").advance(GID)["error"] == f"game pa: {reason}"
    assert svc.store.log(GID) == log


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
