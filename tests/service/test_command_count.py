"""What a person's turn asks of Redis, command by command (issue #23: at most 12 Redis
commands per move is the target; benchmarks measure it, these tests keep each cut made).

Counted with ``INFO commandstats`` on a private Redis (a script's own commands are counted
as well as the script's call), so each count is exact, not a timing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st
from support import new_id

from red7es.service.client import NUDGE_TTL_MS, GameService
from red7es.service.command_reads import CommandReader, Oversized
from red7es.service.folding import Folder
from red7es.service.inbox import INBOX_KEY, Inbox
from red7es.service.redis_server import RedisServer, free_port, redis_binary
from red7es.service.store import GameIsBroken, GameIsOver, GameStore, Keys, NoSuchGame, text
from red7es.service.work_index import WORK
from red7es.variant import Variant

from .helpers import bot, fold, offline_service, person


@pytest.fixture(scope="module")
def counted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[redis.Redis]:
    """A Redis of this module's own: nothing but these tests' commands are counted on it
    (no worker or thread left by another test can add to a count)."""
    server = RedisServer(
        Path(tmp_path_factory.mktemp("counted")), port=free_port(), binary=redis_binary(prefer_system=True)
    ).start()
    connection = redis.Redis.from_url(server.url)
    yield connection
    connection.close()
    server.stop()


def _calls(connection: redis.Redis) -> Counter[str]:
    return Counter(
        {name.removeprefix("cmdstat_"): int(stats["calls"]) for name, stats in connection.info("commandstats").items()}
    )


def _counted(connection: redis.Redis, action: object) -> Counter[str]:
    """The commands ``action()`` ran, by name (this function's own INFO call left out)."""
    before = _calls(connection)
    action()  # type: ignore[operator]
    after = _calls(connection)
    spent = after - before
    spent["info"] -= 1
    return +spent


def test_reading_the_one_command_a_turn_leaves_is_one_xrange(counted: redis.Redis) -> None:
    """A worker woken for a person's turn finds one command: the read that returns it also
    tells it that nothing follows (it was an XRANGE for the command and one that came back
    empty)."""
    game = new_id("count")
    key = Keys(game).commands
    first = text(counted.xadd(key, {"c": b"\x90"}))
    turn = text(counted.xadd(key, {"c": b"\x91"}))
    reader = CommandReader(counted)
    rows: list[object] = []
    spent = _counted(counted, lambda: rows.extend(reader.commands(game, first, 16384)))
    assert rows == [(turn, b"\x91")]
    assert spent["xrange"] == 1
    counted.delete(key)


def _one_at_a_time(entries: list[tuple[str, bytes]], count: int, limit: int, budget: int) -> list[object]:
    """What read_commands.lua returned when it read one entry at a time (its first version)."""
    rows: list[object] = []
    held = 0
    for stream_id, command in entries:
        if count == 0 or held >= budget:
            break
        rows.append((stream_id, Oversized(len(command)) if len(command) > limit else command))
        held += 0 if len(command) > limit else len(command)
        count -= 1
    return rows


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 40), max_size=9),
    start=st.integers(0, 9),
    count=st.integers(1, 6),
    limit=st.integers(0, 40),
    budget=st.integers(1, 90),
)
def test_reading_two_at_a_time_returns_what_one_at_a_time_did(
    counted: redis.Redis, sizes: list[int], start: int, count: int, limit: int, budget: int
) -> None:
    """The same rows for any stream, start, count, size limit and byte budget: reading two
    entries per XRANGE changes how many XRANGEs a read takes, nothing of what it returns."""
    game = new_id("two")
    key = Keys(game).commands
    entries = [(text(counted.xadd(key, {"c": bytes([n % 251]) * n})), bytes([n % 251]) * n) for n in sizes]
    after = entries[start - 1][0] if 0 < start <= len(entries) else "0-0"
    later = entries[start:] if 0 < start <= len(entries) else entries
    script = CommandReader(counted)._read  # (the budget is a module constant: given here as the script's)
    reply = script(keys=[key], args=[f"({after}" if after != "0-0" else "-", count, limit, budget])
    rows = CommandReader._parse([[], reply[1]])[1]
    assert rows == _one_at_a_time(later, count, limit, budget)
    counted.delete(key)


def test_the_largest_stream_id_ends_a_read(counted: redis.Redis) -> None:
    """Nothing can follow the largest stream id (XRANGE refuses to look past it): the read
    stops there whichever of the two entries it is."""
    game = new_id("max")
    key = Keys(game).commands
    counted.xadd(key, {"c": b"a"}, id="5-0")
    counted.xadd(key, {"c": b"b"}, id="18446744073709551615-18446744073709551615")
    rows = CommandReader(counted).commands(game, "0-0", 16384)
    assert rows == [("5-0", b"a"), ("18446744073709551615-18446744073709551615", b"b")]
    counted.delete(key)


def test_handing_a_game_back_deletes_the_lease_and_the_nudge_at_once(counted: redis.Redis) -> None:
    """release_look.lua: one DEL for both keys when the lease is the worker's, one for the
    nudge alone when it is not (the lease stays)."""
    store = GameStore(counted)
    game = new_id("release")
    k = Keys(game)
    counted.hset(k.meta, mapping={"status": "playing", "cursor": "0-0", "bot_to_move": 0})
    counted.set(k.lease, "me")
    counted.set(k.nudge, 1)
    spent = _counted(counted, lambda: store.release_and_look(game, "me", may_leave=True))
    assert spent["del"] == 1
    assert counted.exists(k.lease, k.nudge) == 0
    counted.set(k.lease, "another")
    counted.set(k.nudge, 1)
    spent = _counted(counted, lambda: store.release_and_look(game, "me", may_leave=True))
    assert spent["del"] == 1
    assert counted.get(k.lease) == b"another" and counted.exists(k.nudge) == 0
    counted.delete(k.meta, k.lease)


def test_a_person_turn_and_the_bot_reply_run_no_check_twice(counted: redis.Redis) -> None:
    """A person's turn submitted, then folded with the bot's reply: the submit reads the
    meta once (no EXISTS, no second HMGET) and claims the command id with one HSETNX (no
    HGET first), and each append reads the log's length alone
    (XLEN: its last id is meta.log_id, so no XINFO answering an append's events) and, with
    the bot's command to add, the commands' last entry in one XINFO (no XREVRANGE), and
    writes its views with one MSET.  (A client on one Redis submits with one script: the
    test below.)"""
    svc = offline_service(counted)
    folder = Folder(svc.store)
    game = new_id("turn")
    created = svc.create(Variant(2), [person("me"), bot("b")], seed="counted", game_id=game, join=["me"], wait=None)
    fold(folder, game)
    view = svc.view(game, 0)
    assert view.get("to_move") == 0  # (had the bot moved first, the fold above made its turn)
    turn = view["legal"][0] if view["legal"][0] != "fold" else view["legal"][-1]
    command = svc._signed(game, "me", created.tokens["me"], turn, None)
    spent = _counted(counted, lambda: svc._submit_signed(game, command))
    assert spent["exists"] == 0 and spent["hmget"] == 1 and spent["hget"] == 0 and spent["hsetnx"] == 1, spent
    assert spent["xrevrange"] == 0, spent  # the mark is the meta's change_id, read with the rest
    spent = _counted(counted, lambda: fold(folder, game))
    assert spent["mset"] == 1, spent  # one append: her answer and the bot's reply, every view in one MSET
    # the append's reads: the log's XLEN and the commands' XINFO (the fold helper's own
    # look at what is pending afterwards is an HGETALL and an XREVRANGE)
    assert spent["xinfo|stream"] == 1 and spent["xlen"] == 1 and spent["type"] == 0 and spent["xrevrange"] == 1, spent
    assert spent["set"] == 0 and spent["hset"] == 1, spent  # the meta; no bot command id
    # the log's events in one entry, the change, the bot's command; the entry's millisecond
    # is the change's (Redis's), not a TIME of its own
    assert spent["xadd"] == 3 and spent["time"] == 0, spent
    assert svc.store.meta(game)["cursor"] == svc.store.last_command_id(game)  # both answered
    assert svc.view(game, 0)["version"] > view["version"]


def test_a_meta_holding_only_why_the_game_broke_is_still_a_broken_game(counted: redis.Redis) -> None:
    """The submit reads the meta once: a meta with any of its fields is a game's (one left
    with only ``broken``, its other fields deleted by hand, is refused as broken, not as
    no such game)."""
    game = new_id("broken")
    counted.hset(Keys(game).meta, "broken", "a key was damaged")
    with pytest.raises(GameIsBroken):
        GameStore(counted).submit(game, "c1", b"\x80")
    with pytest.raises(NoSuchGame):
        GameStore(counted).submit(new_id("none"), "c1", b"\x80")
    counted.delete(Keys(game).meta)


def test_a_submit_on_one_redis_is_one_script_of_six_commands(counted: redis.Redis) -> None:
    """On a standalone Redis a person's submit is one call of submit.lua, which reads the
    meta, stores the command and claims its id, puts the game on the work index and, as
    that add put it there, posts the game (marked as indexed: the worker taking it adds
    nothing; carrying the command), no nudge set; and answers the mark (meta.change_id): no
    XREVRANGE, no wake script, no pipeline. A game already on the index is posted only by
    the submit that sets its nudge (a seventh command)."""
    svc = GameService(counted)
    folder = Folder(svc.store)
    game = new_id("one")
    created = svc.create(Variant(2), [person("me"), bot("b")], seed="counted", game_id=game, join=["me"], wait=None)
    fold(folder, game)
    counted.delete(Keys(game).nudge)
    counted.zrem(WORK, game)  # (handed back, as a worker's append leaves it)
    view = svc.view(game, 0)
    assert view.get("to_move") == 0
    last_change = svc.store.last_change_id(game)

    def submit(turn: str) -> Counter[str]:
        command = svc._signed(game, "me", created.tokens["me"], turn, None)
        submitted: list[Any] = []
        spent = _counted(counted, lambda: submitted.append(svc._submit_signed(game, command)))
        assert submitted[0].refused is None and not submitted[0].must_wake and submitted[0].mark == last_change
        return spent

    before = counted.xrevrange(INBOX_KEY, count=1)
    spent = submit(view["legal"][0])
    assert spent == Counter(evalsha=1, hmget=1, xadd=2, hsetnx=1, zadd=1), spent
    [(post_id, post)] = counted.xrevrange(INBOX_KEY, count=1)
    assert post_id not in [row[0] for row in before]
    assert {k: post[k] for k in (b"g", b"i", b"v")} == {b"g": game.encode(), b"i": b"1", b"v": view_version(view)}
    assert post[b"c"] == text(counted.xrevrange(Keys(game).commands, count=1)[0][0]).encode()
    assert counted.zscore(WORK, game) is not None and not counted.exists(Keys(game).nudge)
    # on the index now: the next submit sets the nudge and posts; the one after, neither
    spent = submit(view["legal"][-1])
    assert spent == Counter(evalsha=1, hmget=1, xadd=2, hsetnx=1, zadd=1, set=1), spent
    assert counted.exists(Keys(game).nudge)
    spent = submit(view["legal"][-1])
    assert spent == Counter(evalsha=1, hmget=1, xadd=1, hsetnx=1, zadd=1, set=1), spent


def view_version(view: dict[str, object]) -> bytes:
    return str(view["version"]).encode()


def test_a_turn_answered_from_its_post_is_one_append_of_ten_commands(counted: redis.Redis) -> None:
    """A worker with the game's table at the posted version answers the carried command and
    the bot's reply in one append, and hands the game back in it: no lease taken, nothing
    read first, no nudge cleared (append.lua, Posted). The append's own commands: the
    meta's HMGET, the log's XLEN, one XRANGE for the commands after the cursor, the bot's
    command, the change and the log entry, the meta's HSET, one MSET, the index's ZREM."""
    svc = GameService(counted)
    folder = Folder(svc.store)
    game = new_id("posted")
    created = svc.create(Variant(2), [person("me"), bot("b")], seed="counted", game_id=game, join=["me"], wait=None)
    fold(folder, game)
    counted.zrem(WORK, game)
    Inbox(counted).take_posts("count", count=1000, block_ms=None)  # (the creation's post)
    view = svc.view(game, 0)
    turn = view["legal"][0] if view["legal"][0] != "fold" else view["legal"][-1]
    svc._submit_signed(game, svc._signed(game, "me", created.tokens["me"], turn, None))
    [post] = [p for p in Inbox(counted).take_posts("count", count=1000, block_ms=None) if p.game_id == game]
    assert post.carried is not None
    answered: list[object] = []
    spent = _counted(counted, lambda: answered.append(folder.answer_carried(game, post.carried)))
    assert answered[0] is not None
    assert spent == Counter(evalsha=1, hmget=1, xlen=1, xrange=1, xadd=3, hset=1, mset=1, zrem=1), spent
    assert svc.store.meta(game)["cursor"] == svc.store.last_command_id(game)


def test_a_refused_command_wakes_no_worker_from_the_script(counted: redis.Redis) -> None:
    """submit.lua sets the nudge only for a command it stored (or a duplicate): a game over
    refuses the command, and nothing is posted or indexed for it."""
    svc = GameService(counted)
    game = new_id("over")
    svc.create(Variant(2), [person("me"), bot("b")], seed="counted", game_id=game, join=["me"], wait=None)
    counted.hset(Keys(game).meta, "status", "over")
    counted.delete(Keys(game).nudge)
    counted.zrem(WORK, game)
    submitted = svc.store.submit_and_nudge(game, "late", b"x", NUDGE_TTL_MS, inbox=(INBOX_KEY, 100_000))
    assert isinstance(submitted.refused, GameIsOver) and not submitted.must_wake
    assert not counted.exists(Keys(game).nudge) and counted.zscore(WORK, game) is None
