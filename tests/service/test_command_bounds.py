"""Commands are bounded in bytes: submitting, and what a worker reads at once (issue 24, point 10).

200 commands of 4 MB on one game's stream (submit.lua took them) grew workers from 52 MB
to 1.5 GB: a worker read 200 commands at a time whatever their size, and only then
checked each.  submit.lua and create.lua now refuse a command larger than a referee
reads; one put on the stream behind their backs is measured inside Redis and only its
size reaches the worker, which answers it as corrupt.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import redis
from support import WorkerPool, new_id, wait_for

from red7es.deal import commitment
from red7es.service import folding
from red7es.service.client import GameService, ServiceError
from red7es.service.codec import GENESIS, command_limit, encode_command
from red7es.service.command_reads import READ_BYTES, CommandReader, Oversized
from red7es.service.envelope import MAX_COMMAND_SIZE, MAX_SIZE
from red7es.service.events import CommandRejected, CreateCommand
from red7es.service.folding import Folder, decide
from red7es.service.store import CommandTooLarge, Keys, now_ms, text
from red7es.service.table import Table
from red7es.variant import Variant

from .helpers import decoded_log, fold, offline_service, person

SERVICE = Path(folding.__file__).parent


def _flood(connection: redis.Redis, game_id: str, count: int, size: int) -> list[str]:
    """``count`` commands of ``size`` bytes added to the game's stream behind submit.lua's back,
    as anyone who can write to Redis could; their stream ids."""
    key = Keys(game_id).commands
    return [text(connection.xadd(key, {"c": bytes([0xC1]) * size})) for _ in range(count)]


def _peak_rss_kib(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM): what it held at its worst, with no polling."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmHWM:\s+(\d+) kB$", status, re.M)
    assert match, status
    return int(match.group(1))


def test_both_scripts_refuse_what_the_referee_refuses() -> None:
    """The scripts spell the limit out (a client in any language runs them, docs/events.md)."""
    assert MAX_COMMAND_SIZE == command_limit() == 16384
    for name in ("submit.lua", "create.lua"):
        assert f"if #ARGV[2] > {MAX_COMMAND_SIZE} then" in (SERVICE / name).read_text(), name


def test_submit_refuses_a_command_too_large_before_it_is_stored(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    game = new_id("big")
    svc.create(Variant(2), [person("ann"), person("bob")], seed="big", game_id=game, wait=None)
    largest = b"\xc1" * MAX_COMMAND_SIZE
    with pytest.raises(CommandTooLarge, match=r"^a command is at most 16,384 bytes; this one is 16,385$"):
        svc.store.submit(game, "one-more", largest + b"\xc1")
    # the script itself, as a client that skips GameStore's check runs it: {6, size}, nothing stored
    keys = [Keys(game).commands, Keys(game).cmdids, Keys(game).meta]
    assert svc.store._submit(keys=keys, args=["huge", b"\xc1" * 5_000_000]) == [6, 5_000_000]
    assert real_redis.xlen(Keys(game).commands) == 1 and not real_redis.hexists(Keys(game).cmdids, "huge")
    assert svc.store.submit(game, "largest", largest)[1] is False  # the limit itself is taken


def test_create_refuses_a_command_too_large(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    game = new_id("bigc")
    command = CreateCommand(f"create-{game}", Variant(2), (person("a" * 20_000), person("b")), "00" * 32, ())
    raw = encode_command(command, now_ms())
    with pytest.raises(CommandTooLarge):
        svc.store.create(game, command.id, raw, b"\x01" * 32, now_ms(), GENESIS)
    k = Keys(game)
    with pytest.raises(redis.ResponseError, match=f"a command is at most 16384 bytes; this one is {len(raw)}"):
        svc.store._create(keys=[k.commands, k.meta, k.secret, k.cmdids], args=[command.id, raw, "01", 1, "00"])
    assert not real_redis.exists(k.commands, k.meta, k.secret, k.cmdids)


def test_a_read_returns_a_bounded_number_of_bytes(real_redis: redis.Redis) -> None:
    """Under the rules of games before batch rules 3 a command may be up to 1 MiB: a read
    stops once it holds READ_BYTES; one larger than the limit comes as its size only."""
    game = new_id("read")
    reader = CommandReader(real_redis)
    ids = _flood(real_redis, game, 5, 600_000)
    ids += _flood(real_redis, game, 1, MAX_SIZE + 1)
    real_redis.xadd(Keys(game).commands, {"x": b"no c"})
    rows = reader.commands(game, "0-0", MAX_SIZE)
    assert [r[0] for r in rows] == ids[:2]  # 600 KB, then 1.2 MB held: no more
    assert sum(len(raw) for _, raw in rows if isinstance(raw, bytes)) <= READ_BYTES + MAX_SIZE
    rows = reader.commands(game, ids[3], MAX_SIZE)
    assert [(i, type(raw)) for i, raw in rows][:2] == [(ids[4], bytes), (ids[5], Oversized)]
    assert rows[1][1] == Oversized(MAX_SIZE + 1)
    rows = reader.commands(game, ids[4], MAX_COMMAND_SIZE)  # the limit of batch rules 3
    assert [raw for _, raw in rows[:2]] == [Oversized(MAX_SIZE + 1), b""]  # an entry without c: no bytes
    assert reader.commands(game, "0-0", MAX_COMMAND_SIZE, count=3) == [(i, Oversized(600_000)) for i in ids[:3]]
    real_redis.delete(Keys(game).commands)


@pytest.mark.parametrize("rules", [2, 3])
def test_a_command_read_only_by_its_size_is_answered_as_its_bytes_are(rules: int) -> None:
    """The audit re-executes a command from its bytes: the worker, which saw only the size,
    must have written the very same answer."""
    seed = b"\x01" * 32
    create = CreateCommand("create-g", Variant(2), (person("ann"), person("bob")), commitment(seed), ())
    table, _events = Table.start("g", create, seed, 1, rules)
    size = command_limit(rules) + 1
    assert decide(table, "5-0", Oversized(size)) == decide(table, "5-0", b"\xc1" * size)
    answer = decide(table, "5-0", Oversized(size))[0]
    assert isinstance(answer, CommandRejected) and answer.reason == f"command 5-0 is larger than {size - 1} bytes"


def test_a_create_read_only_by_its_size_breaks_its_game(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    game = new_id("bigc")
    k = Keys(game)
    real_redis.xadd(k.commands, {"c": b"\x80" * (MAX_COMMAND_SIZE + 1)})
    real_redis.hset(k.meta, mapping={"version": 0, "cursor": "0-0", "head": GENESIS.hex(), "status": "new"})
    with pytest.raises(folding.GameBroken, match=f"is larger than {MAX_COMMAND_SIZE} bytes"):
        fold(Folder(svc.store), game)
    assert "larger than" in svc.store.meta(game)["broken"]


def test_a_flood_of_large_commands_leaves_a_worker_small_and_is_answered(
    real_redis: redis.Redis, workers: WorkerPool
) -> None:
    """The repro, with a real worker: 60 commands of 2 MB on one game's stream.  The worker's
    peak memory (VmHWM) grows by far less than one read of them would take (it read 200 at a
    time: 120 MB), and each is answered as corrupt, so the game goes on."""
    (worker,) = workers.start(1, wait=True)
    svc = GameService(real_redis)  # wakes the worker through the inbox
    game = new_id("flood")
    svc.create(Variant(2), [person("ann"), person("bob")], seed="flood", game_id=game, join=["ann"], wait=30)
    before = _peak_rss_kib(worker.pid)
    ids = _flood(real_redis, game, 60, 2_000_000)
    try:
        svc.schedule(game)
        wait_for(lambda: svc.store.meta(game).get("cursor") == ids[-1], "the flood to be answered", timeout=120)
        grown = _peak_rss_kib(worker.pid) - before
        assert grown < 40_000, f"the worker's peak memory grew by {grown:,} KiB"
        answers = [r.event for r in decoded_log(svc.store, game) if isinstance(r.event, CommandRejected)]
        assert [(a.id, a.kind, a.reason) for a in answers] == [
            (i, "corrupt", f"command {i} is larger than {MAX_COMMAND_SIZE} bytes") for i in ids
        ]
        assert "broken" not in svc.store.meta(game) and worker.poll() is None
        assert svc.answered(game, 1.0)
    finally:
        real_redis.delete(Keys(game).commands)  # 120 MB the session's Redis need not keep


def test_a_create_too_large_is_said_in_one_line(fake_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    """No create red7es makes is near the limit (names and bots are short): were one over
    it, the client says so as a ServiceError, not a traceback."""
    monkeypatch.setattr("red7es.service.store.MAX_COMMAND_SIZE", 100)
    refused = r"^the game cannot be created: a command is at most 100 bytes; this one is "
    with pytest.raises(ServiceError, match=refused):
        offline_service(fake_redis).create(Variant(2), [person("ann"), person("bob")], game_id="g", wait=None)
    assert not fake_redis.exists(Keys("g").meta)
