"""A command id is claimed after its command is stored (issue #23: ``submit.lua`` stores
the command, then ``HSETNX`` claims its id; a duplicate's entry is deleted again in the
same atomic step). What that must keep: exactly once, the first one's stream id answered,
nothing left on the commands stream, and a deleted entry's id never reused by a timed
bot's command (``append.lua`` checks its ids against the stream's last id)."""

from __future__ import annotations

import pytest
import redis

from red7es.service.codec import encode_command
from red7es.service.folding import Contended, Folder
from red7es.service.store import GameIsOver, GameStore, Keys
from red7es.variant import Variant

from .helpers import bot, fold, offline_service, person


def _turn_pending(connection: redis.Redis, game_id: str, variant: Variant) -> tuple[GameStore, Folder, bytes, str]:
    """A person against greedy folded to her turn: the store, the folder, her signed turn
    (encoded) and its command id."""
    svc = offline_service(connection)
    created = svc.create(variant, [person("me"), bot("b")], seed=game_id, game_id=game_id, join=["me"], wait=None)
    folder = Folder(svc.store)
    fold(folder, game_id)
    view = svc.view(game_id, 0)
    assert view["to_move"] == 0
    command = svc._signed(game_id, "me", created.tokens["me"], view["legal"][0], None)
    return svc.store, folder, encode_command(command, 1), command.id


def test_a_duplicate_is_answered_with_the_first_id_and_leaves_no_entry(real_redis: redis.Redis) -> None:
    store, _folder, raw, command_id = _turn_pending(real_redis, "dup1", Variant(2))
    k = Keys("dup1")
    first = store.submit("dup1", command_id, raw)
    entries = real_redis.xrange(k.commands)
    again = store.submit("dup1", command_id, raw)
    assert again == (first[0], True) and first[1] is False
    assert real_redis.xrange(k.commands) == entries  # the duplicate's entry deleted again
    assert real_redis.hget(k.cmdids, command_id) == first[0].encode()
    info = real_redis.xinfo_stream(k.commands)
    assert info["entries-added"] == len(entries) + 1  # it was written, in the same atomic step


def test_a_duplicate_of_a_games_last_turn_is_still_answered(real_redis: redis.Redis) -> None:
    """Over (or broken), the game refuses a new command but answers a duplicate, whose
    client may have lost the answer to the game's last turn."""
    store, _folder, raw, command_id = _turn_pending(real_redis, "dup2", Variant(2))
    first = store.submit("dup2", command_id, raw)
    real_redis.hset(Keys("dup2").meta, "status", "over")
    assert store.submit("dup2", command_id, raw) == (first[0], True)
    with pytest.raises(GameIsOver):
        store.submit("dup2", "another", b"\x80")  # (no data.id to compare)


def test_a_command_ids_hash_of_the_wrong_type_writes_nothing(real_redis: redis.Redis) -> None:
    store, _folder, raw, command_id = _turn_pending(real_redis, "dup3", Variant(2))
    k = Keys("dup3")
    real_redis.delete(k.cmdids)
    real_redis.set(k.cmdids, "by hand")
    entries = real_redis.xrange(k.commands)
    with pytest.raises(Exception, match="cmdids"):
        store.submit("dup3", command_id, raw)
    assert real_redis.xrange(k.commands) == entries


def test_a_timed_bots_command_never_takes_a_deleted_entrys_id(real_redis: redis.Redis) -> None:
    """A bot's command in a timed game takes an explicit id (its referee time) after the
    cursor; an entry deleted after it (a duplicate's, or by hand) leaves a later id used,
    which XADD would refuse half-way through the append. The append refuses the id first:
    nothing is written, and the worker tries again (here for ever, the deleted id being
    in the future: it gives up, the game unharmed)."""
    store, folder, raw, command_id = _turn_pending(real_redis, "dup4", Variant(2, turn_time=60_000))
    k = Keys("dup4")
    fold(folder, "dup4")  # (nothing pending)
    store.submit("dup4", command_id, raw)
    seconds, _micro = real_redis.time()
    ahead = f"{seconds * 1000 + 3_600_000}-0"  # an hour ahead of Redis's clock
    real_redis.xadd(k.commands, {"c": b"x"}, id=ahead)
    real_redis.xdel(k.commands, ahead)
    # her turn answered (its own append: a timed game's bot moves in an append of its own)
    with pytest.raises(Contended):
        fold(folder, "dup4")
    meta = store.meta("dup4")
    assert meta["cursor"] == real_redis.hget(k.cmdids, command_id).decode() and meta["bot_to_move"] == "1"
    assert "broken" not in meta
    assert real_redis.xrange(k.commands, min=f"({meta['cursor']}") == []  # no bot command written


def test_a_user_without_hsetnx_or_xdel_asks_first_and_stores_once(real_redis: redis.Redis) -> None:
    """The HTTP gateway's user has neither (docs/gateway.md): submit.lua asks whether the id
    is taken before it stores the command (Redis's ACL check, in the script), so nothing is
    stored for a duplicate and nothing is refused half-way."""
    store, _folder, raw, command_id = _turn_pending(real_redis, "dup5", Variant(2))
    k = Keys("dup5")
    port = real_redis.connection_pool.connection_kwargs["port"]
    real_redis.acl_setuser(
        "no-xdel", enabled=True, passwords=["+pw"], commands=["+@all", "-xdel", "-hsetnx"], keys=["*"]
    )
    try:
        with redis.Redis(port=port, username="no-xdel", password="pw") as limited:
            as_gateway = GameStore(limited)
            first = as_gateway.submit("dup5", command_id, raw)
            added = real_redis.xinfo_stream(k.commands)["entries-added"]
            assert as_gateway.submit("dup5", command_id, raw) == (first[0], True)
            assert real_redis.xinfo_stream(k.commands)["entries-added"] == added  # nothing stored
        assert store.submit("dup5", command_id, raw) == (first[0], True)  # (the default user: stored, deleted)
    finally:
        real_redis.acl_deluser("no-xdel")
