"""A finished game's log sealed into one value: the same entries byte for byte for every
reader, and never sealed while the log could still grow."""

from __future__ import annotations

import zlib
from pathlib import Path

import msgpack
import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st

from red7es.service.archive import archive_game, archived_record
from red7es.service.audit import audit_game
from red7es.service.codec import GENESIS, decode_log, event_hash
from red7es.service.compaction import COMPACTIONS, compact_due, compact_finished
from red7es.service.folding import Folder, GameBroken
from red7es.service.records import RecordError, export
from red7es.service.replay import Replay
from red7es.service.sealing import LATER, SEAL_MAGIC, SEALED, UNSEALABLE, SealError, seal, seal_finished, unseal
from red7es.service.store import Keys, registered_script
from red7es.service.stream_entries import log_events
from red7es.service.witness import live_divergence
from red7es.variant import Variant
from red7es.workers.context import WorkerContext

from .helpers import bot, fold, offline_service, person


def _memory(connection: redis.Redis, game_id: str) -> int:
    return sum(int(connection.memory_usage(k, samples=0) or 0) for k in connection.scan_iter(f"red7:{{{game_id}}}:*"))


def _finished(connection: redis.Redis, game_id: str = "s1", rounds: int = 3) -> str:
    """Two bots' game played to its end by a folder in this process."""
    svc = offline_service(connection)
    svc.create(Variant(2, rounds=rounds), [bot("a"), bot("b", "random")], seed="seal", game_id=game_id, wait=None)
    fold(Folder(svc.store), game_id)
    assert svc.view(game_id)["status"] == "over"
    return game_id


def _chain(raws: list[bytes]) -> list[tuple[str, bytes]]:
    """Entries whose events carry a real ``prev`` chain, as a log's do."""
    out, head = [], GENESIS
    for i, body in enumerate(raws):
        raw = msgpack.packb({"type": "X", "version": 1, "seq": i, "prev": head, "at": i, "data": body})
        out.append((f"{1000 + i * 7}-{i % 3}", raw))
        head = event_hash(raw)
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=80), max_size=30), st.data())
def test_a_seal_gives_back_the_very_entries_it_was_made_of(bodies: list[bytes], data: st.DataObject) -> None:
    entries = _chain(bodies)
    if entries:  # one event whose prev is not the chain's (a damaged log): kept as it is
        i = data.draw(st.integers(0, len(entries) - 1))
        stream_id, raw = entries[i]
        at = raw.index(b"\xa4prev\xc4\x20") + 7
        entries[i] = (stream_id, raw[:at] + b"\x01" * 32 + raw[at + 32 :])
    assert unseal(seal(entries)) == entries


def test_a_seal_stores_no_hash_the_chain_gives_back() -> None:
    entries = _chain([b"x" * 10] * 200)
    blob = seal(entries)
    assert len(blob) < 200 * 32 // 4  # 200 hashes would not compress
    assert unseal(blob) == entries


@pytest.mark.parametrize(
    ("blob", "words"),
    [
        (b"not a seal", "not a sealed log"),
        (SEAL_MAGIC + zlib.compress(msgpack.packb([[], [], []]))[:-3], "cut short"),
        (SEAL_MAGIC + zlib.compress(b"\x00" * (65 << 20)), "larger than any log"),
        (SEAL_MAGIC + zlib.compress(msgpack.packb([[[1, 0]], [], []])), "do not match in number"),
        (SEAL_MAGIC + zlib.compress(msgpack.packb([[[1, 0]], ["text"], [False]])), "not one"),
        (SEAL_MAGIC + zlib.compress(msgpack.packb([[[1, 0]], [b"no prev"], [True]])), "no prev"),
        (SEAL_MAGIC + b"garbage", "cannot be read"),
    ],
)
def test_a_damaged_seal_is_said_in_one_line(blob: bytes, words: str) -> None:
    with pytest.raises(SealError, match=words) as caught:
        unseal(blob)
    assert "\n" not in str(caught.value)


def test_compaction_seals_the_log_and_every_reader_reads_it_as_before(
    real_redis: redis.Redis, keep_changes: None
) -> None:
    game = _finished(real_redis)
    svc = offline_service(real_redis)
    k = Keys(game)
    before = export(svc, game)
    views = [svc.view(game), svc.view(game, 0), svc.view(game, 1)]
    tail = svc.store.log_tail_and_views(game, 5, [k.public_view])
    page = svc.store.log_before(game, before.events[-3].stream_id, 4)
    size = _memory(real_redis, game)
    compact_finished(real_redis, game)
    assert real_redis.exists(k.sealed) and not real_redis.exists(k.log)
    after = export(svc, game)
    assert (after.commands, after.events, after.version, after.head, after.status) == (
        before.commands,
        before.events,
        before.version,
        before.head,
        before.status,
    )
    assert svc.store.log(game) == [e.raw for e in before.events]
    assert svc.store.log_tail_and_views(game, 5, [k.public_view]) == tail
    assert svc.store.log_before(game, before.events[-3].stream_id, 4) == page
    assert svc.store.log_before(game, None, 2) == [(e.stream_id, e.raw) for e in reversed(before.events[-2:])]
    assert [svc.view(game), svc.view(game, 0), svc.view(game, 1)] == views
    assert audit_game(svc, game).passed
    replay = Replay(decode_log(e.raw for e in after.events), version=after.version, head=after.head)
    assert replay.problem() is None and replay.view() == views[0]
    heads = {before.version: before.head, 3: event_hash(before.events[2].raw).hex()}
    assert live_divergence(real_redis, game, heads) is None
    forged = live_divergence(real_redis, game, {before.version + 1: "00" * 32})
    assert forged is not None and forged.check == "rolled-back"
    rewritten = live_divergence(real_redis, game, {3: "00" * 32})
    assert rewritten is not None and rewritten.check == "rewritten"
    assert _memory(real_redis, game) <= size // 2
    assert seal_finished(real_redis, game) == UNSEALABLE  # sealed once: nothing left to do
    compact_finished(real_redis, game)
    assert export(svc, game).events == before.events


def test_a_sealed_game_is_folded_and_archived_as_before(real_redis: redis.Redis, tmp_path: Path) -> None:
    game = _finished(real_redis)
    svc = offline_service(real_redis)
    before = export(svc, game)
    assert seal_finished(real_redis, game) == SEALED
    assert Folder(svc.store).advance(game, max_seconds=1.0).more is False  # a worker woken for it: nothing
    assert Folder(svc.store).pending(game) is False
    assert export(svc, game).events == before.events and not real_redis.exists(Keys(game).log)
    archive_game(real_redis, game, tmp_path)
    assert not list(real_redis.scan_iter(f"red7:{{{game}}}:*"))
    archived = archived_record(real_redis, game)
    assert archived is not None and archived.events == before.events


def test_a_log_that_may_still_grow_is_not_sealed(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    created = svc.create(Variant(2), [person("ann"), bot("bob")], seed="seal", game_id="s2", join=["ann"], wait=None)
    folder = Folder(svc.store)
    fold(folder, "s2")
    k = Keys("s2")
    assert seal_finished(real_redis, "s2") == UNSEALABLE  # not over
    svc.submit("s2", "ann", created.tokens["ann"], "fold")
    real_redis.hset(k.meta, "status", "over")  # (as if over: its command still waits)
    assert seal_finished(real_redis, "s2") == LATER
    real_redis.hset(k.meta, "status", "playing")
    fold(folder, "s2")
    assert svc.view("s2")["status"] == "over"
    real_redis.set(k.lease, "a worker")
    assert seal_finished(real_redis, "s2") == LATER  # a worker holds it
    real_redis.zadd(COMPACTIONS, {"s2": 0})
    assert compact_due(real_redis) == 1  # compacted, and its seal put off, not dropped
    assert (real_redis.zscore(COMPACTIONS, "s2") or 0) > 0 and real_redis.exists(k.log)
    real_redis.delete(k.lease)
    real_redis.zadd(COMPACTIONS, {"s2": 0})
    assert compact_due(real_redis) == 1
    assert real_redis.zscore(COMPACTIONS, "s2") is None and real_redis.exists(k.sealed) and not real_redis.exists(k.log)


def test_a_seal_beside_a_log_stream_is_left_alone_not_retried_for_ever(real_redis: redis.Redis) -> None:
    """A seal key next to the game's log stream (written by hand: sealing deletes the stream
    as it writes the seal) would be refused at every try: the game is not sealable, and
    compaction takes it off its schedule instead of trying again every few seconds."""
    game = _finished(real_redis, "s5", rounds=1)
    k = Keys(game)
    real_redis.set(k.sealed, b"written by hand")
    assert seal_finished(real_redis, game) == UNSEALABLE
    real_redis.zadd(COMPACTIONS, {game: 0})
    assert compact_due(real_redis) == 1
    assert real_redis.zscore(COMPACTIONS, game) is None and real_redis.exists(k.log)
    assert real_redis.get(k.sealed) == b"written by hand"


def test_a_log_changed_between_read_and_seal_is_not_sealed(real_redis: redis.Redis) -> None:
    game = _finished(real_redis, "s3", rounds=1)
    k = Keys(game)
    rows = real_redis.xrange(k.log)  # (an entry holds the events of one append)
    assert len(rows) >= 2
    entries = [event for i, f in rows for event in log_events(i, f)]
    script = registered_script(real_redis, "seal.lua")
    keys = [k.log, k.meta, k.sealed, k.commands, k.lease]
    assert script(keys=keys, args=[len(rows) - 1, rows[-1][0], seal(entries)]) == 0
    assert script(keys=keys, args=[len(rows), rows[-2][0], seal(entries)]) == 0
    assert real_redis.exists(k.log) and not real_redis.exists(k.sealed)
    assert script(keys=keys, args=[len(rows), rows[-1][0], seal(entries)]) == 1  # the log as read
    assert not real_redis.exists(k.log) and export(offline_service(real_redis), game).events


def test_a_damaged_seal_is_one_line_to_whoever_exports_the_game(real_redis: redis.Redis) -> None:
    game = _finished(real_redis, "s4", rounds=1)
    assert seal_finished(real_redis, game) == SEALED
    real_redis.set(Keys(game).sealed, SEAL_MAGIC + b"damaged")
    with pytest.raises(RecordError, match=r"^game s4: a sealed log that cannot be read \(error\)$"):
        export(offline_service(real_redis), game)
    folder = Folder(offline_service(real_redis).store)
    with pytest.raises(GameBroken, match=r"a sealed log that cannot be read"):  # a worker woken for it
        folder.advance(game, max_seconds=1.0)
    assert "sealed log" in (real_redis.hget(Keys(game).meta, "broken") or b"").decode()


def test_a_game_is_sealed_on_every_store(any_redis: redis.Redis) -> None:
    """The contract on fakeredis, a real Redis and a Redis Cluster (whose client answers
    XRANGE inside a transaction unparsed)."""
    game = _finished(any_redis, "s5", rounds=1)
    svc = offline_service(any_redis)
    before = export(svc, game)
    compact_finished(any_redis, game)
    assert any_redis.exists(Keys(game).sealed) and not any_redis.exists(Keys(game).log)
    assert export(svc, game).events == before.events


def test_a_worker_keeping_no_changes_seals_on_its_next_sweep(real_redis: redis.Redis) -> None:
    """With ``--keep-changes 0`` the changes are trimmed as the game ends, while the worker
    still holds its lease; the log is sealed by the sweep after it lets go."""
    context = WorkerContext(real_redis, keep_changes_ms=0)
    svc = offline_service(real_redis)
    svc.create(Variant(2), [bot("a"), bot("b")], seed="seal", game_id="s6", wait=None)
    for _ in range(200):
        context.advance("s6")
        if svc.view("s6")["status"] == "over":
            break
    assert len(svc.store.changes("s6")) == 1 and real_redis.exists(Keys("s6").log)
    context.sweep()
    assert real_redis.exists(Keys("s6").sealed) and not real_redis.exists(Keys("s6").log)
