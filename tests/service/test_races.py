"""Two workers folding the same game at once, on a real Redis: never both extend it."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

import msgpack
import pytest
import redis

from red7es.service.codec import encode_command
from red7es.service.events import JoinCommand
from red7es.service.folding import Contended, Folder
from red7es.service.redis_server import RedisServer
from red7es.service.store import AppendConflict, Appended, Batch, GameStore
from red7es.variant import Variant

from .helpers import bot, check_game, events_of, fold, offline_service, person

SEATS = [bot("a", "greedy"), bot("b", "random"), bot("c", "greedy")]


def _run_threads(targets: list[Callable[[], None]], timeout: float = 120) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(len(targets))

    def wrap(target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                start.wait()
                target()
            except BaseException as exc:  # reported below
                errors.append(exc)

        return run

    threads = [threading.Thread(target=wrap(t), daemon=True) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a folding thread hung"
    if errors:
        raise errors[0]


def _fold_until_over(url: str, game_ids: list[str], stats: dict[str, int], bot_batch: int) -> Callable[[], None]:
    """A 'worker': its own connection and Folder, advancing games until they are over."""

    def run() -> None:
        folder = Folder(GameStore(redis.Redis.from_url(url)), bot_batch=bot_batch)
        deadline = time.monotonic() + 90
        left = list(game_ids)
        while left:
            assert time.monotonic() < deadline, f"games {left} never finished"
            for gid in list(left):
                if folder.store.meta(gid)["status"] == "over":
                    left.remove(gid)
                    continue
                try:
                    progress = folder.advance(gid, max_seconds=0.05)
                except Contended:  # lost 20 races in a row: a designed give-up, try again
                    stats["give_ups"] = stats.get("give_ups", 0) + 1
                    continue
                stats["conflicts"] += progress.conflicts
                stats["appends"] += progress.appends

    return run


@pytest.mark.usefixtures("keep_changes")
def test_two_folders_race_on_the_same_games(real_redis: redis.Redis, redis_server: RedisServer) -> None:
    svc = offline_service(real_redis)
    games = [f"race{i}" for i in range(4)]
    variants = [Variant(3, rounds=2), Variant(3, scoring=True, actions=True, draw=True, target=10)]
    for i, gid in enumerate(games):
        svc.create(variants[i % 2], SEATS, seed=f"race-seed-{i}", game_id=gid, wait=None)
        svc.create(variants[i % 2], SEATS, seed=f"race-seed-{i}", game_id=f"ref{i}", wait=None)
    # the reference: one worker alone
    single = Folder(svc.store)
    for i in range(len(games)):
        fold(single, f"ref{i}")
    stats = {"conflicts": 0, "appends": 0}
    # two workers at once, many small batches so that they collide often
    _run_threads([_fold_until_over(redis_server.url, games, stats, bot_batch=1) for _ in range(2)])
    for i, gid in enumerate(games):
        ref = check_game(svc.store, f"ref{i}")
        raced = check_game(svc.store, gid)  # gapless, chained, every command answered once, in order
        assert events_of(raced) == events_of(ref), f"{gid} differs from a single-worker run"
        meta = svc.store.meta(gid)
        assert meta["status"] == "over" and int(meta["version"]) == len(raced)
        # versions are contiguous in the change notices too: each append starts where the last ended
        spans = [msgpack.unpackb(p, raw=False) for _, _, p in svc.store.changes(gid)]
        assert spans[0]["from"] == 0 and spans[-1]["to"] == len(raced)
        assert all(a["to"] == b["from"] for a, b in itertools.pairwise(spans))
    assert stats["appends"] > 0
    print(f"race stats: {stats}")


def test_racing_folders_with_commands_arriving(real_redis: redis.Redis, redis_server: RedisServer) -> None:
    """While two workers fold a bot game, a client keeps submitting commands: each answered once, in order."""
    svc = offline_service(real_redis)
    gid = "busy"
    svc.create(Variant(3, rounds=3), [person("p"), *SEATS[1:]], seed="busy", game_id=gid, wait=None)
    stats = {"conflicts": 0, "appends": 0, "give_ups": 0}
    submitted: list[str] = []

    def client() -> None:
        store = GameStore(redis.Redis.from_url(redis_server.url))
        for i in range(60):
            if store.meta(gid).get("status") == "over":
                break
            cid = f"c{i}"
            if i % 3 == 0:
                store.submit(gid, cid, b"\xc1junk")
            else:
                # seat 0 is the person's (the first join takes it), seat 1 a bot's
                store.submit(gid, cid, encode_command(JoinCommand(cid, i % 3 - 1, f"{i:064x}"), 1))
            submitted.append(cid)
            time.sleep(0.002)  # spread the commands over the game (pacing, not synchronisation)

    def folders() -> None:
        # fold until the client is done and nothing is pending
        folder = Folder(GameStore(redis.Redis.from_url(redis_server.url)), bot_batch=1)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                progress = folder.advance(gid, max_seconds=0.05)
            except Contended:
                # Starved by the other folder (likelier on a loaded machine): a worker
                # would have the game re-posted; here, simply go again.
                stats["give_ups"] += 1
                continue
            stats["conflicts"] += progress.conflicts
            if not worker_client.is_alive() and not folder.pending(gid) and not progress.more:
                return
        raise AssertionError("never settled")

    worker_client = threading.Thread(target=client, daemon=True)
    worker_client.start()
    _run_threads([folders, folders])
    worker_client.join(30)
    log = check_game(svc.store, gid)
    assert submitted
    # the person's seat was joined by exactly one join command, the first one for seat 0
    joined = [r.event for r in log if r.type == "SeatJoined"]
    assert [(e.seat, e.key) for e in joined] == [(0, f"{1:064x}")]


@pytest.mark.parametrize("holder_first", [True, False])
def test_a_stale_table_cannot_overwrite(real_redis: redis.Redis, holder_first: bool) -> None:
    """A worker whose warm table fell behind is refused, rebuilds and redoes the work."""
    svc = offline_service(real_redis)
    svc.create(Variant(2), [person("p"), person("q")], seed="stale", game_id="g", join=["p"], wait=None)
    a, b = Folder(GameStore(real_redis)), Folder(GameStore(real_redis))
    a.advance("g")
    b.advance("g")  # both warm at the same version
    svc.store.submit("g", "j1", encode_command(JoinCommand("j1", 1, "ab" * 32), 1))
    first, second = (a, b) if holder_first else (b, a)
    assert first.advance("g").appends == 1
    svc.store.submit("g", "j2", encode_command(JoinCommand("j2", 1, "cd" * 32), 1))
    # the second folder's warm table is stale: it notices from meta and rebuilds, no conflict needed
    progress: Any = second.advance("g")
    assert progress.appends == 1
    log = check_game(svc.store, "g")
    assert [r.type for r in log[-2:]] == ["SeatJoined", "CommandRejected"]


class _HookedStore(GameStore):
    """A store that runs ``hook`` once, right after a log read: another worker acting in between."""

    def __init__(self, connection: Any, hook: Callable[[], None]) -> None:
        super().__init__(connection)
        self.hook: Callable[[], None] | None = hook

    def log(self, game_id: str, start: int = 0, end: int | None = None) -> list[bytes]:
        events = super().log(game_id, start, end)
        if self.hook is not None:
            hook, self.hook = self.hook, None
            hook()
        return events


def test_game_finished_by_another_worker_while_rebuilding(any_redis: redis.Redis) -> None:
    """The other worker ends the game (and deletes its seed) between our log read and seed read.

    Our rebuilt table is then a running game without its seed; the commands the other
    worker wrote make our append conflict before any bot of ours would need the seed.
    """
    svc = offline_service(any_redis)
    svc.create(Variant(3), SEATS, seed="late", game_id="g", wait=None)
    other = Folder(GameStore(any_redis), bot_batch=1)
    assert other.advance("g", max_seconds=0).more  # started, bots still to move
    ours = Folder(_HookedStore(any_redis, lambda: fold(other, "g")))
    ours.advance("g")
    log = check_game(svc.store, "g")
    assert svc.store.meta("g")["status"] == "over" and log[-1].type == "SeedRevealed"


class _OvertakenStore(GameStore):
    """A store that runs ``hook`` once, right before a log read: another worker appends
    after our meta read, so the log we read is longer than the version we read."""

    def __init__(self, connection: Any, hook: Callable[[], None]) -> None:
        super().__init__(connection)
        self.hook: Callable[[], None] | None = hook

    def log(self, game_id: str, start: int = 0, end: int | None = None) -> list[bytes]:
        if self.hook is not None:
            hook, self.hook = self.hook, None
            hook()
        return super().log(game_id, start, end)


def test_a_log_that_grew_while_a_game_was_rebuilt_is_a_race_not_damage(real_redis: redis.Redis) -> None:
    """A log longer than meta.version breaks the game (an append that stopped half-way), but
    only if meta still says so once the log is read: otherwise another worker just appended."""
    svc = offline_service(real_redis)
    svc.create(Variant(3), SEATS, seed="overtaken", game_id="g", wait=None)
    other = Folder(GameStore(real_redis), bot_batch=1)
    assert other.advance("g", max_seconds=0).more  # started, bots still to move
    ours = Folder(_OvertakenStore(real_redis, lambda: other.advance("g", max_seconds=0)))
    progress = ours.advance("g", max_seconds=0)
    assert progress.conflicts == 1 and progress.appends == 1
    assert "broken" not in svc.store.meta("g")
    fold(ours, "g")
    check_game(svc.store, "g")


class _AlwaysBeaten(GameStore):
    """A store on which every compare-and-append loses, as if another worker always wrote first."""

    appends = 0

    def append(self, game_id: str, batch: Batch) -> Appended:
        self.appends += 1
        raise AppendConflict(f"game {game_id} moved on (test)")


def test_a_folder_that_keeps_losing_gives_up_with_nothing_written(any_redis: redis.Redis) -> None:
    """After 20 lost appends in a row Folder.advance raises Contended; the game is intact and goes on later."""
    svc = offline_service(any_redis)
    svc.create(Variant(2), SEATS[1:3], seed="beaten", game_id="g", wait=None)
    before = svc.store.log("g")
    beaten = _AlwaysBeaten(any_redis)
    with pytest.raises(Contended, match="gave up after 20 conflicting appends"):
        Folder(beaten).advance("g")
    assert beaten.appends == 20 and svc.store.log("g") == before
    fold(Folder(GameStore(any_redis)), "g")  # tried again later: the game is played out
    assert svc.store.meta("g")["status"] == "over"
    check_game(svc.store, "g")
