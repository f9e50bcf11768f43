"""The work index (red7es.service.work_index): a game with work always has an entry, a game
waiting for a person has none, and the sweep reads the games due plus a bounded slice."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis
from support import wait_for

from red7es.service.client import NUDGE_TTL_MS, GameService
from red7es.service.codec import encode_command
from red7es.service.deadlines import redis_now
from red7es.service.folding import Folder
from red7es.service.inbox import INBOX_KEY, Post
from red7es.service.store import GameStore, Keys
from red7es.service.table import Table
from red7es.service.work_index import WORK
from red7es.variant import Variant
from red7es.workers import context as context_module
from red7es.workers.context import WorkerContext

from .helpers import all_bot_game, bot, fold, offline_service, person


def _posts(r: redis.Redis) -> list[str]:
    return [fields[b"g"].decode() for _, fields in r.xrange(INBOX_KEY)]


def _indexed(r: redis.Redis) -> set[str]:
    return {g.decode() for g in r.zrange(WORK, 0, -1)}


@contextmanager
def _user_without_the_index(r: redis.Redis) -> Iterator[redis.Redis]:
    """A connection as a Redis user whose ACL predates the work index (a gateway's of then)."""
    r.execute_command(
        "ACL", "SETUSER", "oldgw", "reset", "on", ">pw", "+@all", "~red7:{*}:*", "~red7:inbox", "~red7:active"
    )
    try:
        port = r.connection_pool.connection_kwargs["port"]
        with redis.Redis(port=port, username="oldgw", password="pw") as old:
            yield old
    finally:
        r.execute_command("ACL", "DELUSER", "oldgw")


def _people_game(svc: Any, ctx: WorkerContext, game: str) -> dict[str, str]:
    created = svc.create(Variant(2), [person("ann"), person("bob")], game_id=game, join=["ann", "bob"], wait=None)
    ctx.advance(game)  # dealt: now it waits for ann
    return dict(created.tokens)


def _play(svc: Any, tokens: dict[str, str]) -> dict[str, Any]:
    """The seat to move of g1 plays its first legal turn; the view before it."""
    seat = svc.view("g1")["to_move"]
    view = svc.view("g1", seat)
    name = ["ann", "bob"][seat]
    svc.submit("g1", name, tokens[name], view["legal"][0])
    return dict(view)


def test_a_game_waiting_for_a_person_is_off_the_index_and_a_turn_puts_it_on(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    tokens = _people_game(svc, ctx, "g1")
    assert _indexed(real_redis) == set()  # waiting for ann: nothing for a worker to do
    _play(svc, tokens)
    assert _indexed(real_redis) == {"g1"}  # in the same round trip as the nudge
    ctx.advance("g1")
    assert _indexed(real_redis) == set()


def test_a_turn_whose_nudge_was_left_by_a_dead_worker_still_goes_on_the_index(real_redis: redis.Redis) -> None:
    """A nudge left set (its worker died, its post lost) turns the next wake-up away; the
    index entry is added all the same, so the sweep finds the game."""
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    tokens = _people_game(svc, ctx, "g1")
    svc.store.set_nudge("g1", 60_000)
    real_redis.zrem(WORK, "g1")
    _play(svc, tokens)  # its wake-up is turned away
    assert _indexed(real_redis) == {"g1"}


def test_an_index_sweep_rescues_a_game_whose_worker_died(
    real_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    tokens = _people_game(svc, ctx, "g1")
    ctx.sweep()  # a worker's first sweep reads every game; every later one, the index
    view = _play(svc, tokens)
    # (this service posts nothing: as if the worker it woke died before taking a lease)
    monkeypatch.setattr(context_module, "SCAN_SLICE", 0)  # (the index alone finds it)
    assert ctx.sweep(full=False) == 0  # due, but the nudge says a post is on its way: not yet
    assert _indexed(real_redis) == {"g1"}
    real_redis.pexpire("red7:{g1}:nudge", NUDGE_TTL_MS - 4_000)  # woken 4 s ago: its post was lost
    real_redis.zadd(WORK, {"g1": 0})  # its next look is due (any worker's: the nudge's age is in Redis)
    other = WorkerContext(real_redis, owner="another")
    other.last_sweep = 1.0  # (not its first sweep)
    assert other.sweep(full=False) == 1 and _posts(real_redis) == ["g1"]
    ctx.advance("g1")
    assert svc.view("g1")["version"] > view["version"] and _indexed(real_redis) == set()


def test_a_game_left_with_no_work_is_taken_off_and_a_busy_one_looked_at_later(
    real_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    _people_game(svc, ctx, "idle")
    all_bot_game(svc, "busy")
    real_redis.zadd(WORK, {"idle": 0, "busy": 0})
    monkeypatch.setattr(context_module, "SCAN_SLICE", 0)
    ctx.sweep(full=False)
    assert _indexed(real_redis) == {"busy"}  # the bot game has work: looked at again later
    later = real_redis.zscore(WORK, "busy")
    assert later is not None and later > 0


def test_an_index_sweep_reads_the_games_due_and_a_bounded_slice_not_every_idle_game(
    real_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    for n in range(200):
        svc.create(Variant(2), [person("ann"), person("bob")], game_id=f"idle{n}", wait=None)
        ctx.advance(f"idle{n}")  # waits for its people to join
    assert _indexed(real_redis) == set()
    read: list[int] = []
    states = svc.store.work_states
    monkeypatch.setattr(ctx.store, "work_states", lambda games: read.append(len(games)) or states(games))
    ctx.sweep()
    ctx.sweep()
    ctx.sweep()
    assert read[0] == 200  # the first: every game
    assert all(n <= 2 * context_module.SCAN_SLICE for n in read[1:])  # (SSCAN's COUNT is a hint)
    assert _indexed(real_redis) == set()


def test_the_index_survives_a_full_sweep_of_games_from_before_it(real_redis: redis.Redis) -> None:
    """A game with work and no entry (created before the index) is put on it by a worker's
    first sweep, and posted."""
    svc = offline_service(real_redis)
    all_bot_game(svc, "old")
    real_redis.delete(WORK, "red7:{old}:nudge", INBOX_KEY)
    ctx = WorkerContext(real_redis, owner="me")
    assert ctx.sweep() == 1 and _posts(real_redis) == ["old"]
    assert _indexed(real_redis) == {"old"}


def test_a_worker_killed_after_its_fold_leaves_the_game_on_the_index(
    real_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed between looking (work left: a bot to move, its slice spent) and waking a worker
    for it, the worker left the game where the sweep finds it (review of 42e47f6, F1)."""
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    all_bot_game(svc, "bots", rounds=3)

    def killed(_game: str) -> bool:
        raise SystemExit("killed")

    monkeypatch.setattr(ctx.service, "schedule", killed)
    monkeypatch.setattr(context_module, "SLICE_SECONDS", 0.0)  # one step a slice: work is left
    with pytest.raises(SystemExit):
        ctx.advance("bots")
    assert _indexed(real_redis) == {"bots"}


def test_a_game_woken_by_its_deadline_is_on_the_index_while_folded(real_redis: redis.Redis) -> None:
    """However a worker was woken (a deadline, the slow-bot inbox), taking the lease puts the
    game on the index (review of 42e47f6, F2)."""
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    _people_game(svc, ctx, "g1")
    assert _indexed(real_redis) == set()
    assert svc.store.acquire_lease("g1", "me", 5_000, index=True)
    assert _indexed(real_redis) == {"g1"}


def test_members_that_are_no_game_ids_are_removed_not_fatal(real_redis: redis.Redis) -> None:
    """One member written by hand stopped every worker's sweep for good (review, F4)."""
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    all_bot_game(svc, "real")
    real_redis.zadd(WORK, {"Not A Game": 0, "real": 0})
    real_redis.sadd("red7:active", "Not A Game")
    ctx.sweep()
    ctx.sweep(full=False)
    assert "Not A Game" not in _indexed(real_redis)
    assert not real_redis.sismember("red7:active", "Not A Game")


def test_a_user_without_the_index_key_still_wakes_workers(real_redis: redis.Redis) -> None:
    """A gateway whose Redis user predates the index (its ACL lacks red7:work) must still
    wake a worker: the index add is best effort (review, F3)."""
    with _user_without_the_index(real_redis) as old:
        store = GameStore(old)
        assert store.set_nudge("g9", 30_000) is True
        assert real_redis.exists("red7:{g9}:nudge") and _indexed(real_redis) == set()


def test_a_compaction_that_fails_is_said_and_dropped_not_fatal(
    real_redis: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """A finished game's meta rewritten by hand (WRONGTYPE) stopped every sweep (review, F5)."""
    from red7es.service.compaction import COMPACTIONS, compact_due

    real_redis.set("red7:{bad}:meta", "not a hash")
    real_redis.zadd(COMPACTIONS, {"bad": 0})
    with caplog.at_level(logging.ERROR, logger="red7es.service.compaction"):
        assert compact_due(real_redis) == 1
    assert real_redis.zscore(COMPACTIONS, "bad") is None
    [told] = [r.getMessage() for r in caplog.records]
    assert told.startswith("game 'bad': not compacted: WRONGTYPE Operation against a key holding the wrong kind")


def test_a_post_made_with_the_index_add_spares_the_worker_its_own(real_redis: redis.Redis) -> None:
    """submit.lua posts a game in the step that put it on the index, and marks the post so
    (i = 1): the worker taking it adds nothing (issue #23: a command a turn); a post without
    the mark (a sweep's, a deadline's, an older client's) is indexed as it is taken."""
    svc = GameService(real_redis)  # the default wake: submit.lua on one Redis
    ctx = WorkerContext(real_redis, owner="me")
    tokens = _people_game(svc, ctx, "g1")
    ctx.inbox.take_posts("me", block_ms=None)  # (the creation's posts)
    real_redis.delete("red7:{g1}:nudge")
    _play(svc, tokens)
    ctx.inbox.post("g2")  # a plain post
    taken = {post.game_id: post.indexed for post in ctx.inbox.take_posts("me", block_ms=None)}
    assert taken["g1"] is True and taken["g2"] is False
    real_redis.zrem(WORK, "g1")  # (to see whether the take adds it)
    assert ctx.folder.take("g1", "me", 5_000, indexed=True)
    assert _indexed(real_redis) == set()
    assert ctx.folder.take("g1", "me", 5_000)
    assert _indexed(real_redis) == {"g1"}


def test_a_game_posted_both_ways_is_indexed_as_taken(real_redis: redis.Redis) -> None:
    """The inbox reads each game once: if any of its posts lacks the mark, it is taken as unmarked."""
    ctx = WorkerContext(real_redis, owner="me")
    real_redis.xadd(INBOX_KEY, {"g": "g1", "i": "1"})
    ctx.inbox.post("g1")
    real_redis.xadd(INBOX_KEY, {"g": "g3", "i": "1"})
    assert ctx.inbox.take_posts("me", block_ms=None) == [Post("g1", False), Post("g3", True)]


def test_a_user_without_the_index_key_still_submits_and_wakes_a_worker(real_redis: redis.Redis) -> None:
    """Redis refuses submit.lua naming the index to a user whose ACL lacks it (nothing
    runs): the command is stored by the plain pipeline, the nudge set and the worker woken
    by the caller, and the script is not asked again."""
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    tokens = _people_game(svc, ctx, "g1")
    seat = svc.view("g1")["to_move"]  # (either may be first: the deal is random)
    name = ["ann", "bob"][seat]
    command = svc._signed("g1", name, tokens[name], svc.view("g1", seat)["legal"][0], None)
    with _user_without_the_index(real_redis) as old:
        store = GameStore(old)
        submitted = store.submit_and_nudge("g1", command.id, encode_command(command, 1), 30_000, (INBOX_KEY, 1000))
        assert submitted.refused is None and submitted.must_wake and not store.scripted_wake
        assert real_redis.exists("red7:{g1}:nudge") and real_redis.hget("red7:{g1}:cmdids", command.id)


class _Killed(BaseException):
    """A worker killed -9 (nothing after it runs)."""


def test_a_stale_indexed_post_still_leaves_work_on_the_index(
    real_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A post marked i = 1 says the game was put on the index when posted, not that it
    still is when taken: another worker may have folded its command and taken the game
    off since.  The worker taking the stale post times the seat out (work no client
    indexed) and is killed with a bot to move: the append that left that work put the
    game on the index first (review of 00dc289, finding 1)."""
    svc = GameService(real_redis)  # the default wake: submit.lua posts with i = 1
    monkeypatch.setattr(context_module, "SLICE_SECONDS", 30)  # w1's three appends in one slice, loaded or not
    # (everything made before ann's clock starts: her turn must be folded before her time is up)
    w1 = WorkerContext(real_redis, owner="w1")
    w2 = WorkerContext(real_redis, owner="w2")
    created = svc.create(
        Variant(3, turn_time=3_000),
        [person("ann"), bot("g1"), bot("g2")],
        game_id="tt",
        join=["ann"],
        wait=None,
        # a fixed deal, where a bot moves after her time-out (a random one may end the round
        # with her time-out and leave her to move first in the next: no bot decision then)
        seed="stale-post",
    )
    w1.inbox.take_posts("w1", block_ms=None)  # (the creation's posts)
    fold(Folder(svc.store), "tt")
    view = svc.view("tt", 0)
    assert view["to_move"] == 0
    real_redis.delete(Keys("tt").nudge)
    svc._submit_signed("tt", svc._signed("tt", "ann", created.tokens["ann"], view["legal"][0], None))
    w1.advance("tt")  # a worker on the game already folds ann's turn and the bots', and hands it back
    assert svc.view("tt", 0)["to_move"] == 0 and real_redis.zscore(WORK, "tt") is None
    deadline = int(svc.store.meta("tt")["deadline"])
    wait_for(lambda: redis_now(real_redis) > deadline, "ann's deadline", timeout=10, every=0.01)
    [stale] = w2.inbox.take_posts("w2", block_ms=None)  # the stale post
    assert (stale.game_id, stale.indexed) == ("tt", True)
    assert w2.folder.take("tt", "w2", 60_000, indexed=True)
    assert real_redis.zscore(WORK, "tt") is None  # (not added as taken)

    def killed(*_args: object, **_kwargs: object) -> None:
        raise _Killed

    monkeypatch.setattr(Table, "bot_command", killed)
    with pytest.raises(_Killed):
        w2.folder.advance("tt", max_seconds=5.0, quick=True)  # ann timed out, then killed
    meta = svc.store.meta("tt")
    assert meta["bot_to_move"] == "1" and meta["status"] != "over"  # work: a bot to move
    assert real_redis.get(Keys("tt").lease) == b"w2"  # held by a dead worker
    assert real_redis.zscore(WORK, "tt") is not None  # where the sweep looks


def test_a_turn_folded_from_an_indexed_post_adds_nothing_to_the_index(
    real_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person's turn and the bot's reply hand the game back in the append: no index add
    before it (the command a turn issue #23 saves)."""
    svc = GameService(real_redis)
    created = svc.create(Variant(2), [person("ann"), bot("g")], game_id="ti", join=["ann"], wait=None)
    ctx = WorkerContext(real_redis, owner="me")
    fold(ctx.folder, "ti")
    ctx.inbox.take_posts("me", block_ms=None)
    real_redis.delete(Keys("ti").nudge)
    view = svc.view("ti", 0)
    svc._submit_signed("ti", svc._signed("ti", "ann", created.tokens["ann"], view["legal"][0], None))
    [(game, indexed, _carried)] = ctx.inbox.take_posts("me", block_ms=None)
    added: list[str] = []
    monkeypatch.setattr(ctx.store.work, "add", lambda game_id, client=None: added.append(game_id))
    ctx.advance(game, indexed=indexed)  # (the usual fold: no carried command given)
    assert (game, indexed) == ("ti", True) and added == []
    assert real_redis.zscore(WORK, "ti") is None  # handed back: nothing left to do


def test_a_hand_back_between_the_index_add_and_the_command_leaves_the_game_indexed(
    real_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without submit.lua's wake (the gateway's user, a cluster), the submit is a pipeline:
    a worker's hand-back may run between its index add and its script, taking the add off
    (nothing to do yet).  The add made again after the script keeps the game on the index,
    where the sweep finds it should the post that follows be lost."""
    svc = offline_service(real_redis)  # a wake of its own: the pipeline
    ctx = WorkerContext(real_redis, owner="me")
    tokens = _people_game(svc, ctx, "g1")
    real_redis.script_load(svc.store._submit.script)  # (the pipeline's EVALSHA finds it)
    assert _indexed(real_redis) == set()
    real_pipeline = svc.store.redis.pipeline

    def interleaved(*args: Any, **kwargs: Any) -> Any:
        pipe = real_pipeline(*args, **kwargs)
        run = pipe.execute

        def execute(raise_on_error: bool = True) -> Any:
            stack = list(pipe.command_stack)
            if not any(queued_args[0] == "EVALSHA" for queued_args, _options in stack):
                return run(raise_on_error=raise_on_error)
            # each command on its own, a worker's hand-back (the index entry off) after the first
            replies = []
            for n, (queued_args, options) in enumerate(stack):
                try:
                    replies.append(real_redis.execute_command(*queued_args, **options))
                except redis.exceptions.ResponseError as error:  # (a script not loaded yet)
                    replies.append(error)
                if n == 0:
                    real_redis.zrem(WORK, "g1")
            pipe.reset()
            return replies

        pipe.execute = execute
        return pipe

    monkeypatch.setattr(svc.store.redis, "pipeline", interleaved)
    _play(svc, tokens)
    assert _indexed(real_redis) == {"g1"}


def test_a_submit_run_again_after_a_lost_script_wakes_a_worker_the_hand_back_left(real_redis: redis.Redis) -> None:
    """The pipeline's script not loaded (a restarted Redis), the command is stored by a second
    call, after the pipeline set (or failed to set) the nudge: a worker holding the nudge
    that hands the game back in between leaves nobody on the way, so the nudge and the index
    add are made again after the command, and the caller wakes a worker (review of 3141907)."""
    svc = offline_service(real_redis)
    ctx = WorkerContext(real_redis, owner="me")
    tokens = _people_game(svc, ctx, "g1")
    real_redis.set("red7:{g1}:nudge", 1)  # a worker on the game
    real_redis.zadd(WORK, {"g1": 0})
    original = svc.store._submit

    class LostScript:
        sha = "0" * 40  # (no such script: the pipeline's EVALSHA is refused, nothing runs)

        def __call__(self, keys: Any, args: Any) -> Any:
            real_redis.delete("red7:{g1}:nudge")  # the worker hands the game back meanwhile
            real_redis.zrem(WORK, "g1")
            return original(keys=keys, args=args)

    svc.store._submit = LostScript()  # type: ignore[assignment]
    woken = len(svc.wake.games)  # type: ignore[attr-defined]
    _play(svc, tokens)
    assert len(svc.wake.games) == woken + 1  # type: ignore[attr-defined]
    assert real_redis.exists("red7:{g1}:nudge") and _indexed(real_redis) == {"g1"}
