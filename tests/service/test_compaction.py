"""A finished game's footprint: changes trimmed to its end, bots' command ids dropped,
streams repacked; what every reader of a finished game sees is unchanged."""

from __future__ import annotations

import msgpack
import redis

from red7es.service.audit import audit_game
from red7es.service.codec import decode_log
from red7es.service.compaction import COMPACTIONS, compact_due, compact_finished, game_over_change
from red7es.service.folding import Folder
from red7es.service.records import export
from red7es.service.replay import Replay
from red7es.service.store import Keys
from red7es.variant import Variant

from .helpers import bot, fold, offline_service, person


def _memory(connection: redis.Redis, game_id: str) -> int:
    return sum(int(connection.memory_usage(k, samples=0) or 0) for k in connection.scan_iter(f"red7:{{{game_id}}}:*"))


def _person_game(connection: redis.Redis, keep_ms: int | None = None) -> tuple[str, str, str]:
    """A person against a bot played to its end, one fold per turn; (game, the first change id,
    the person's first command id).  ``keep_ms``: its changes kept that long after the end."""
    svc = offline_service(connection)
    if keep_ms is not None:
        svc.store.keep_changes_ms = keep_ms
    folder = Folder(svc.store)
    created = svc.create(
        Variant(2, rounds=2), [person("ann"), bot("bob")], seed="compact", game_id="g1", join=["ann"], wait=None
    )
    fold(folder, "g1")
    first_change = svc.store.changes("g1")[0][0]
    first_command = ""
    for _ in range(500):
        view = svc.view("g1", 0)
        if view["status"] == "over":
            break
        command_id, _dup = svc.submit("g1", "ann", created.tokens["ann"], view["legal"][0])
        first_command = first_command or command_id
        fold(folder, "g1")
    assert svc.view("g1")["status"] == "over"
    return "g1", first_change, first_command


def _now_ms(connection: redis.Redis) -> int:
    seconds, micros = connection.time()
    return int(seconds) * 1000 + int(micros) // 1000


def test_a_finished_game_is_compacted_once_its_watchers_had_their_time(real_redis: redis.Redis) -> None:
    game, _first, _cmd = _person_game(real_redis)
    svc = offline_service(real_redis)
    every = svc.store.changes(game)
    assert len(every) > 5  # nothing dropped yet: a watcher resuming now is told every move
    when = real_redis.zscore(COMPACTIONS, game)
    assert when is not None and abs(when - (_now_ms(real_redis) + 10 * 60 * 1000)) < 60_000
    assert compact_due(real_redis) == 0 and svc.store.changes(game) == every  # not yet due
    svc.store.finish(game)  # finished again (the sweep after a worker died): not put off
    assert real_redis.zscore(COMPACTIONS, game) == when
    real_redis.zadd(COMPACTIONS, {game: 0})  # its time has come
    assert compact_due(real_redis) == 1
    assert len(svc.store.changes(game)) == 1 and real_redis.zscore(COMPACTIONS, game) is None
    assert compact_due(real_redis) == 0


def test_a_reader_resuming_before_compaction_is_told_every_change(real_redis: redis.Redis) -> None:
    game, first_change, _cmd = _person_game(real_redis)
    svc = offline_service(real_redis)
    later = svc.store.changes(game, first_change)
    change = svc.wait_change(game, first_change, 1.0)
    assert change is not None and len(later) > 5
    assert change[0] == later[-1][0]
    assert change[1] == [e for _i, _v, p in later for e in msgpack.unpackb(p, raw=False)["events"]]


def test_a_finished_game_keeps_its_changes_from_game_over_and_only_peoples_command_ids(real_redis: redis.Redis) -> None:
    game, _first, first_command = _person_game(real_redis, keep_ms=0)
    svc = offline_service(real_redis)
    changes = svc.store.changes(game)
    assert len(changes) == 1  # a worker told to keep nothing compacted it as the game ended
    events = msgpack.unpackb(changes[0][2], raw=False)["events"]
    assert "GameOver" in [e["type"] for e in events]
    assert game_over_change(real_redis, game) == changes[0][0]
    ids = [k.decode() for k in real_redis.hkeys(f"red7:{{{game}}}:cmdids")]
    assert ids and not any(i.startswith("bot-") for i in ids)  # people's (and the create) stay
    assert first_command in ids
    # a client retrying a command of the finished game is still told it was taken
    assert svc.store.submit(game, first_command, b"\x80")[1] is True


def test_compaction_changes_no_record_no_view_and_at_least_a_quarter_of_the_bytes(
    real_redis: redis.Redis, keep_changes: None
) -> None:
    game, _first, _cmd = _person_game(real_redis)  # kept whole: the fixture stops compaction
    svc = offline_service(real_redis)
    before = export(svc, game)
    views = [svc.view(game), svc.view(game, 0), svc.view(game, 1)]
    size = _memory(real_redis, game)
    removed, dropped = compact_finished(real_redis, game)  # this module's name: the real one
    assert removed > 5 and dropped == 0  # (no bot's command id is stored since issue #23's cut)
    after = export(svc, game)
    assert (after.commands, after.events, after.version, after.head, after.cursor, after.status) == (
        before.commands,
        before.events,
        before.version,
        before.head,
        before.cursor,
        before.status,
    )
    assert [svc.view(game), svc.view(game, 0), svc.view(game, 1)] == views
    assert audit_game(svc, game).passed
    replay = Replay(decode_log(e.raw for e in after.events), version=after.version, head=after.head)
    assert replay.problem() is None and replay.view() == views[0]
    assert _memory(real_redis, game) <= size * 3 // 4
    assert compact_finished(real_redis, game) == (0, 0)  # again: nothing left to do


def test_a_late_reader_resuming_from_a_trimmed_change_gets_the_end_and_the_final_view(
    real_redis: redis.Redis,
) -> None:
    game, first_change, _cmd = _person_game(real_redis, keep_ms=0)
    svc = offline_service(real_redis)
    change = svc.wait_change(game, first_change, 1.0)  # an id the stream no longer holds
    assert change is not None
    last_id, events = change
    assert last_id == svc.store.last_change_id(game)
    assert events[-2]["type"] == "GameOver" and events[-1]["type"] == "SeedRevealed"
    assert svc.view(game)["status"] == "over"
    assert svc.wait_change(game, last_id, 0.05) is None  # and nothing after it


def test_compacting_a_game_that_is_not_over_keeps_its_changes(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    folder = Folder(svc.store)
    svc.create(Variant(2), [person("ann"), bot("bob")], seed="open", game_id="g2", join=["ann"], wait=None)
    fold(folder, "g2")
    changes = svc.store.changes("g2")
    assert compact_finished(real_redis, "g2") == (0, 0)
    assert svc.store.changes("g2") == changes


def test_a_workers_sweep_compacts_the_games_due(real_redis: redis.Redis) -> None:
    from red7es.workers.context import WorkerContext

    game, _first, _cmd = _person_game(real_redis)
    context = WorkerContext(real_redis)
    context.sweep()
    assert len(offline_service(real_redis).store.changes(game)) > 5  # not due for 10 minutes
    real_redis.zadd(COMPACTIONS, {game: 0})
    context.sweep()
    assert len(offline_service(real_redis).store.changes(game)) == 1
    assert real_redis.zscore(COMPACTIONS, game) is None


def test_bots_command_ids_an_older_red7es_stored_are_dropped(real_redis: redis.Redis, keep_changes: None) -> None:
    """Before issue #23's cut a worker stored each bot's command id in cmdids; a game it
    finished still has them, and compaction drops them (people's stay)."""
    game, _first, first_command = _person_game(real_redis)
    k = Keys(game)
    bot_ids = {f"bot-{n}": f"{n + 1}-0" for n in range(3)}
    real_redis.hset(k.cmdids, mapping=bot_ids)  # as an older worker wrote them
    _removed, dropped = compact_finished(real_redis, game)
    assert dropped == 3
    ids = {i.decode() for i in real_redis.hkeys(k.cmdids)}
    assert first_command in ids and not ids & bot_ids.keys()
