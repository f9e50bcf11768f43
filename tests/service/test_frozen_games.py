"""Games one write by hand used to freeze for ever, silently (issue 24, points 6 and 13).

Each is damaged under a real worker process on a real Redis: the worker's sweep must mark
the game broken with a reason (keeping its seed) or repair it, and a client must be told in
one line, never with Redis's raw error.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
import redis
from support import Red7, one_line_error, wait_for

from red7es.facts import GameOver
from red7es.service.client import BrokenGame, GameService
from red7es.service.events import CommandRejected, SeedRevealed
from red7es.service.folding import Folder
from red7es.service.redis_server import RedisServer
from red7es.service.store import ACTIVE, LAST_STREAM_ID, Keys
from red7es.variant import Variant
from red7es.workers.context import LEASE_MS, WorkerContext

from .helpers import check_chain, fold, offline_service, person

pytestmark = pytest.mark.integration


def _two_people(svc: GameService, game_id: str) -> dict[str, str]:
    """ann and bob, both joined, dealt by the worker; their tokens."""
    created = svc.create(
        Variant(2), [person("ann"), person("bob")], seed=game_id, game_id=game_id, join=["ann", "bob"], wait=30
    )
    return created.tokens


def _mover(svc: GameService, game_id: str) -> tuple[str, str]:
    """The seat to move and its first legal turn."""
    view = svc.view(game_id)
    name = view["seats"][view["to_move"]]["name"]
    return name, svc.view(game_id, view["to_move"])["legal"][0]


def _broken(svc: GameService, game_id: str, workers: Any) -> str:
    try:
        return wait_for(lambda: svc.store.broken(game_id), f"game {game_id} to be marked broken", timeout=20)
    except AssertionError:
        raise AssertionError(f"{svc.store.meta(game_id)}\n{workers.logs()[-3000:]}") from None


def test_a_status_of_over_written_by_hand_breaks_the_game_and_keeps_its_seed(
    workers: Any, real_redis: redis.Redis
) -> None:
    """``HSET meta status over`` on a running game: the sweep deleted its seed within 2 s (the
    game could never deal again), never marked it broken, and every submit was refused for
    ever as "game is over"."""
    workers.start(1, wait=True)
    svc = GameService(real_redis)
    tokens = _two_people(svc, "hand-over")
    seed = svc.store.seed("hand-over")
    assert seed is not None
    version = int(svc.store.meta("hand-over")["version"])
    real_redis.hset(Keys("hand-over").meta, "status", "over")
    reason = _broken(svc, "hand-over", workers)
    last = check_chain(svc.store.log("hand-over"))[-1]
    assert last.seq == version - 1
    assert reason == (
        f"meta.status is 'over' but its log shows the game going on: event {last.seq} is a {last.type}, "
        "and no GameOver follows it"
    )
    assert svc.store.seed("hand-over") == seed and not real_redis.sismember(ACTIVE, "hand-over")
    with pytest.raises(BrokenGame, match=re.escape(f"game hand-over is broken: {reason}")):
        svc.play("hand-over", "ann", tokens["ann"], "fold", wait=10)
    assert workers.logs().count(f"game hand-over is broken: {reason}") == 1


@pytest.mark.parametrize("expiry", [None, 3_600_000], ids=["no-expiry", "an-hour"])
def test_a_lease_written_by_hand_is_removed_and_the_game_goes_on(
    workers: Any, real_redis: redis.Redis, expiry: int | None
) -> None:
    """``SET lease x`` with no TTL (or one no worker sets) kept every worker off the game for
    ever: its turns were stored and never answered ("all 1 worker(s) are busy"). (The worker
    that dealt the game is replaced by one that never saw it: a warm worker answers a turn
    its post carries without the lease, docs/architecture.md, *Posted commands*.)"""
    workers.start(1, wait=True)
    svc = GameService(real_redis)
    tokens = _two_people(svc, "held")
    workers.stop()
    real_redis.set(Keys("held").lease, "x", px=expiry)
    workers.start(1, wait=True)
    name, turn = _mover(svc, "held")
    answer = svc.play("held", name, tokens[name], turn, wait=20)
    assert answer.applied, answer.reason
    assert svc.store.lease_holder("held") != "x" and svc.store.broken("held") is None
    had = "no expiry" if expiry is None else r"3,\d{3},\d{3} ms left"
    said = [line for line in workers.logs().splitlines() if "red7es.workers.context" in line]
    assert len(said) == 1, said
    assert re.search(
        f"game held: removed its lease, held by 'x' with {had}, where a worker's lasts {LEASE_MS} ms$", said[0]
    )


def test_the_largest_stream_id_on_the_commands_breaks_the_game_and_a_move_says_so(
    workers: Any, real_redis: redis.Redis, redis_server: RedisServer, tmp_path: Path
) -> None:
    """An entry added by hand with the largest id: the worker answered it as corrupt and the
    game stayed "playing" while every later move failed with Redis's raw error."""
    workers.start(1, wait=True)
    red7 = Red7(redis_server.url, tmp_path / "home")
    red7.ok("new", "-p", "ann", "-p", "bob", "--id", "maxed", "--join-all")
    wait_for(lambda: red7("show", "maxed").exit_code == 0, "the game to be dealt")
    real_redis.xadd(Keys("maxed").commands, {"c": b"junk"}, id=LAST_STREAM_ID)
    svc = GameService(real_redis)
    reason = _broken(svc, "maxed", workers)  # the sweep finds it unanswered; its worker answers, then breaks it
    assert reason == f"red7:{{maxed}}:commands has no stream ids left after {LAST_STREAM_ID}: no command can follow it"
    answered = check_chain(svc.store.log("maxed"))[-1].event
    assert isinstance(answered, CommandRejected) and answered.id == LAST_STREAM_ID
    assert one_line_error(red7("move", "maxed", "fold", "--as", "ann")) == f"Error: game maxed is broken: {reason}"


def test_a_commands_stream_out_of_ids_refuses_a_move_in_one_line_and_breaks_the_game(
    workers: Any, real_redis: redis.Redis, redis_server: RedisServer, tmp_path: Path
) -> None:
    """The largest id added and deleted again: no entry the worker could answer, but the stream
    takes no more (XADD * fails).  Each move failed with "Redis refused a command: The stream has
    exhausted the last possible ID …" and the game stayed "playing"."""
    workers.start(1, wait=True)
    red7 = Red7(redis_server.url, tmp_path / "home")
    red7.ok("new", "-p", "ann", "-p", "bob", "--id", "spent", "--join-all")
    wait_for(lambda: red7("show", "spent").exit_code == 0, "the game to be dealt")
    commands = Keys("spent").commands
    pipe = real_redis.pipeline(transaction=True)  # at once: a worker must never see the junk entry
    pipe.xadd(commands, {"c": b"junk"}, id=LAST_STREAM_ID)
    pipe.xdel(commands, LAST_STREAM_ID)
    pipe.execute()
    before = real_redis.xlen(commands)
    reason = (
        "red7:{spent}:commands cannot take a command: "
        "The stream has exhausted the last possible ID, unable to add more items"
    )
    assert one_line_error(red7("move", "spent", "fold", "--as", "ann")) == f"Error: game spent is broken: {reason}"
    svc = GameService(real_redis)
    assert svc.store.broken("spent") == reason and real_redis.xlen(commands) == before
    assert not real_redis.sismember(ACTIVE, "spent") and svc.store.seed("spent") is not None


# ---------------------------------------------------------------------- the sweep, in-process


def _ended_with_a_rejection_after(svc: GameService, game_id: str) -> None:
    """ann folds (which ends a 2-player game of one round) and plays again before the worker
    folds either: the log ends GameOver, SeedRevealed, CommandRejected."""
    tokens = svc.create(
        Variant(2), [person("ann"), person("bob")], seed="end", game_id=game_id, join=["ann", "bob"], wait=None
    ).tokens
    folder = Folder(svc.store)
    fold(folder, game_id)
    name, turn = _mover(svc, game_id)
    svc.submit(game_id, name, tokens[name], "fold")
    svc.submit(game_id, name, tokens[name], turn)
    fold(folder, game_id)
    events = [r.event for r in check_chain(svc.store.log(game_id))[-3:]]
    assert [type(e) for e in events] == [GameOver, SeedRevealed, CommandRejected], events


def test_the_sweep_forgets_the_seed_of_a_game_its_log_shows_ended(real_redis: redis.Redis) -> None:
    """A worker that died between a game's last append and tidying up left it on the sweep
    list with its seed: the sweep finishes it, reading past the refusals that follow its end."""
    svc = offline_service(real_redis)
    _ended_with_a_rejection_after(svc, "done")
    assert svc.store.seed("done") is None
    real_redis.sadd(ACTIVE, "done")
    real_redis.hset(Keys("done").secret, "seed", "00")  # as the worker left it
    WorkerContext(real_redis, owner="me").sweep()
    assert svc.store.seed("done") is None and not real_redis.sismember(ACTIVE, "done")
    assert svc.store.broken("done") is None


def test_the_sweep_keeps_the_seed_of_a_game_that_lost_its_meta(
    real_redis: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """``DEL meta`` of a running game: the sweep deleted its seed too."""
    svc = offline_service(real_redis)
    svc.create(Variant(2), [person("ann"), person("bob")], seed="nometa", game_id="nometa", wait=None)
    fold(Folder(svc.store), "nometa")
    seed = svc.store.seed("nometa")
    real_redis.delete(Keys("nometa").meta)
    context = WorkerContext(real_redis, owner="me")
    with caplog.at_level(logging.ERROR, logger="red7es.workers.context"):
        context.sweep()
        context.sweep()
    assert svc.store.seed("nometa") == seed and not real_redis.sismember(ACTIVE, "nometa")
    told = [r.getMessage() for r in caplog.records if r.name == "red7es.workers.context"]
    assert told == [
        "game nometa has no meta and its log shows the game going on: event 1 is a RoundDealt, "
        "and no GameOver follows it: no longer swept, its seed kept"
    ], told


def test_a_status_of_over_on_a_log_that_cannot_be_read_breaks_that_game_alone(real_redis: redis.Redis) -> None:
    """Reading the log to confirm the end must not fail the sweep of every other game."""
    svc = offline_service(real_redis)
    for game in ("unread", "stalled"):
        svc.create(Variant(2), [person("ann"), person("bob")], seed=game, game_id=game, wait=None)
    real_redis.hset(Keys("unread").meta, "status", "over")
    real_redis.set(Keys("unread").log, "x")
    svc.store.clear_nudge("stalled")
    assert WorkerContext(real_redis, owner="me").sweep() == 1  # "stalled" is woken all the same
    assert svc.store.broken("unread") == (
        "meta.status is 'over' but its log cannot be read: "
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    )
    assert svc.store.seed("unread") is not None
