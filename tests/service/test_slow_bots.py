"""Slow bots: the operator's cap on a bot's decision, and people's moves never queued behind a search.

Issue 24, point 7: two ``ismcts:time=20`` games on two workers held an unrelated person's
move for 18.9 s, and ``time=3600`` was accepted.  Now a worker's decisions end by its
``--max-bot-time`` (new games asking more are refused), and bots that think long are played
from a slow-bot inbox that only ``--slow-bots`` workers read (docs/architecture.md, *Slow bots*).
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from support import WorkerPool, new_id, wait_for

from red7es.cli.main import cli
from red7es.cli.session import live_workers
from red7es.service import folding
from red7es.service.client import GameService, ServiceError
from red7es.service.events import BOT, TimedOut
from red7es.service.inbox import INBOX_KEY, SLOW_INBOX_KEY
from red7es.service.redis_server import RedisServer
from red7es.service.store import DEFAULT_MAX_BOT_TIME, GameStore
from red7es.tournament.ids import TournamentError
from red7es.tournament.lifecycle import create_tournament
from red7es.variant import Variant
from red7es.workers import context as context_module
from red7es.workers.context import WorkerContext

from .helpers import all_bot_game, bot, check_game, decoded_log, events_of, offline_service, person

THINK = 5.0  # seconds per decision of the slow bots below: far above any answer to a person


def _posts(r: redis.Redis, key: str) -> list[str]:
    return [fields[b"g"].decode() for _, fields in r.xrange(key)]


def _log(svc: GameService, game_id: str) -> list[Any]:
    return events_of(decoded_log(svc.store, game_id))


def _bot_moves(svc: GameService, game_id: str) -> int:
    return sum(1 for r in decoded_log(svc.store, game_id) if getattr(r.event, "by", None) == BOT)


# ---------------------------------------------------------------------- in-process


def test_a_quick_fold_hands_a_slow_bot_to_the_slow_inbox_without_thinking(fake_redis: Any) -> None:
    svc = offline_service(fake_redis)
    all_bot_game(svc, "slow", players=2, bots=("ismcts:time=9",))
    ctx = WorkerContext(fake_redis, owner="me", slow_bots=False)
    started = time.monotonic()
    result = ctx.advance("slow", quick=True)
    assert time.monotonic() - started < 5  # it did not think for 9 s
    assert result["slow"] and result["commands"] == 1 and result["bot_moves"] == 0  # created, no turn
    assert svc.store.meta("slow")["bot_to_move"] == "1"
    assert _posts(fake_redis, SLOW_INBOX_KEY) == ["slow"] and _posts(fake_redis, INBOX_KEY) == []
    assert svc.store.waits_for_slow_bots("slow")  # clients' posts wait for the slow worker
    assert not svc.store.set_nudge("slow", 10_000)
    assert svc.store.lease_holder("slow") is None


def test_between_a_slow_bots_thoughts_the_inbox_is_served_but_not_near_a_timed_decisions_end(
    fake_redis: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A timed game's bot must move within its share of its clock: a look at the inbox, which
    may fold a game for a slice and a quick bot's decision, starts no closer than
    TIMED_MARGIN_SECONDS to the end of that decision. Posts of the thinking game are dropped."""
    ctx = WorkerContext(fake_redis, owner="me")
    ctx.inbox.recheck_group()
    folded: list[list[str]] = []
    monkeypatch.setattr(ctx, "_fold", lambda taken, *_a, **_k: folded.append([post.game_id for post in taken]) or 0)

    def look(ends_in: float | None) -> list[str]:
        folded.clear()
        ctx.inbox.post("other")
        ctx.inbox.post("thinking")
        ctx._looked_between = -math.inf
        ctx.folder.decision_ends = None if ends_in is None else time.monotonic() + ends_in
        assert ctx._between_thoughts() is False
        return folded[0] if folded else []

    with ctx._thinking_about("thinking"):
        assert look(None) == ["other"]  # an untimed game's bot: served
        assert look(context_module.TIMED_MARGIN_SECONDS + 5) == ["other"]  # a timed one far from its end
        assert look(context_module.TIMED_MARGIN_SECONDS - 0.2) == []  # too near its end: nothing
    assert ctx._between_thoughts() is False and folded == []  # no slow fold under way: nothing either


def test_a_quick_fold_gives_up_a_decision_longer_than_its_budget_said(
    fake_redis: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An iteration budget is quick on a fast machine and may not be on a loaded one: a quick
    fold gives the decision up after QUICK_TIME and hands the game on, as for a slow bot."""
    monkeypatch.setattr(folding, "QUICK_TIME", 0.0)
    svc = offline_service(fake_redis)
    all_bot_game(svc, "loaded", players=2, bots=("ismcts:iterations=1500",))  # not thinks_long
    ctx = WorkerContext(fake_redis, owner="me")
    result = ctx.advance("loaded", quick=True)
    assert result["slow"] and result["bot_moves"] == 0
    assert _posts(fake_redis, SLOW_INBOX_KEY) == ["loaded"]


def test_a_slow_bot_worker_plays_the_slow_inbox_and_a_quick_one_does_not(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    all_bot_game(svc, "slow", players=2, bots=("ismcts:time=0.6",))  # thinks_long: over QUICK_TIME
    quick = WorkerContext(real_redis, owner="quick", slow_bots=False)
    slow = WorkerContext(real_redis, owner="slow")
    for ctx in (quick, slow):
        ctx.inbox.ensure_group()
        ctx.slow_inbox.ensure_group()
    quick.inbox.post("slow")
    quick.shift(1.0, "quick")  # created, then handed to the slow inbox
    assert _bot_moves(svc, "slow") == 0 and svc.store.waits_for_slow_bots("slow")
    quick.shift(1.0, "quick")  # a quick worker never reads the slow inbox
    assert _bot_moves(svc, "slow") == 0
    slow.shift(1.0, "slow")
    assert _bot_moves(svc, "slow") >= 1
    check_game(svc.store, "slow")


def test_the_sweep_reposts_a_stalled_slow_game_to_the_slow_inbox_once(
    fake_redis: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game queued on the slow-bot inbox is not lost, however long it waits: the sweep posts
    it again (there, not to the inbox) only when no post of it waits there."""
    svc = offline_service(fake_redis)
    all_bot_game(svc, "slow", players=2, bots=("ismcts:time=9",))
    ctx = WorkerContext(fake_redis, owner="me", slow_bots=False)
    ctx.advance("slow", quick=True)
    monkeypatch.setattr(context_module, "STALL_SECONDS", 0.0)
    for _ in range(3):
        ctx.sweep()
    assert _posts(fake_redis, SLOW_INBOX_KEY) == ["slow"] and _posts(fake_redis, INBOX_KEY) == []
    assert ctx.slow_inbox.take("crashed", count=1, block_ms=None) == ["slow"]  # taken, then its worker died
    ctx.sweep()
    assert _posts(fake_redis, SLOW_INBOX_KEY) == ["slow", "slow"] and _posts(fake_redis, INBOX_KEY) == []
    ctx.advance("slow", quick=True)  # a quick fold hands it on again: it waits there already
    assert _posts(fake_redis, SLOW_INBOX_KEY) == ["slow", "slow"]


def test_a_new_game_is_held_to_the_published_cap(fake_redis: Any) -> None:
    svc = offline_service(fake_redis)
    assert svc.store.max_bot_time() == DEFAULT_MAX_BOT_TIME  # no worker said: the default
    seats = [person("ann"), bot("deep", "ismcts:time=20")]
    with pytest.raises(ServiceError) as refused:
        svc.create(Variant(2), seats, wait=None)
    assert str(refused.value) == (
        "bad options for bot 'ismcts': time must be above 0 and at most 10 seconds on this service"
        " (red7 worker --max-bot-time), not 20.0"
    )
    assert svc.store.all_games() == []
    WorkerContext(fake_redis, max_bot_time=30).shift(0.01, "me")  # a worker publishes its cap
    assert svc.store.max_bot_time() == 30
    svc.create(Variant(2), seats, wait=None)
    fake_redis.set("red7:max-bot-time", "junk")  # written by hand: the default
    assert svc.store.max_bot_time() == DEFAULT_MAX_BOT_TIME


def test_a_tournament_is_held_to_the_published_cap(fake_redis: Any) -> None:
    """Its games would each be refused at creation: the tournament is refused at once."""
    entrants = [bot("deep", "ismcts:time=20"), bot("quick", "greedy")]
    with pytest.raises(TournamentError, match=r"^entrant deep: .*at most 10 seconds on this service"):
        create_tournament(fake_redis, "cup", entrants, Variant(2), "round-robin", seed="cap")
    GameStore(fake_redis).publish_max_bot_time(30)
    create_tournament(fake_redis, "cup", entrants, Variant(2), "round-robin", seed="cap")


# ---------------------------------------------------------------------- real workers


@pytest.mark.integration
@pytest.mark.parametrize(
    "kept_for_people", [True, False], ids=["a-worker-kept-for-people", "every-worker-takes-slow-bots"]
)
def test_a_persons_move_is_answered_while_every_slow_bot_thinks(
    workers: WorkerPool, real_redis: redis.Redis, kept_for_people: bool
) -> None:
    """Two games of bots thinking THINK seconds a turn, two workers: every turn of a person
    in a third game (created meanwhile) is answered in well under THINK. Before, each
    worker sat in one search and the person waited for one of them to end; and with no
    worker kept for people (``red7 worker`` as it starts by default: anyone may create such
    games through an open gateway), until a search ended: now a worker in a slow search
    folds what the inbox holds between the search's steps."""
    if kept_for_people:
        workers.start(1, args=["--no-slow-bots"])
        workers.start(1, wait=True)
    else:
        workers.start(2, wait=True)
    svc = GameService(real_redis)
    slow_games = [
        svc.create(Variant(2), [bot("x", f"ismcts:time={THINK}"), bot("y", f"ismcts:time={THINK}")], wait=60).game_id
        for _ in range(2)
    ]
    # a bot of each slow game thinks, one on each worker (kept for people: one at a time)
    thinking = any if kept_for_people else all
    wait_for(lambda: thinking(svc.store.lease_holder(g) for g in slow_games), "the slow bots to think", timeout=30)
    started = time.monotonic()
    created = svc.create(Variant(2), [person("ann"), bot("gus", "greedy")], join=["ann"], wait=60)
    latencies = [time.monotonic() - started]  # the game is dealt meanwhile too
    game, token = created.game_id, created.tokens["ann"]
    hand = svc.view(game, 0)["hand"]
    missing = next(f"{c}{n}" for c in "ROYGBIV" for n in range(1, 8) if f"{c}{n}" not in hand)
    for _ in range(8):
        started = time.monotonic()
        answer = svc.play(game, "ann", token, f"p:{missing}", wait=60)  # refused: the game stays as it is
        latencies.append(time.monotonic() - started)
        assert not answer.applied
    assert max(latencies) < THINK / 3, (latencies, workers.logs()[-3000:])
    if not kept_for_people:
        # and a seat's time-out is written within a second or so of its deadline (the
        # referee's own times, in the event), not when a search ends
        timed = svc.create(Variant(2, turn_time=1_000), [person("cy"), person("di")], join=["cy", "di"], wait=60)
        late = wait_for(
            lambda: next((e.at - e.deadline for e in _log(svc, timed.game_id) if isinstance(e, TimedOut)), None),
            "the time-out",
            timeout=60,
        )
        assert late < THINK * 1000 / 3, late
    # and the slow games are played, one search at a time, by the workers that take slow bots
    wait_for(lambda: all(_bot_moves(svc, g) >= 1 for g in slow_games), "both slow games to move", timeout=90)


@pytest.mark.integration
def test_a_worker_ends_an_older_games_search_by_its_cap(
    private_redis: Callable[..., RedisServer], tmp_path: Path
) -> None:
    """A game created under a higher cap (or before there was one) asks 60 s a turn: a worker
    started with --max-bot-time 1 plays it a turn a second or so."""
    server = private_redis()
    connection = redis.Redis.from_url(server.url)
    svc = GameService(connection)
    svc.store.publish_max_bot_time(60)  # as a worker with --max-bot-time 60 said
    game = new_id()
    svc.create(Variant(2), [bot("x", "ismcts:time=60"), bot("y", "ismcts:time=60")], game_id=game, wait=None)
    pool = WorkerPool(server.url, tmp_path)
    try:
        pool.start(1, args=["--max-bot-time", "1"])
        wait_for(lambda: _bot_moves(svc, game) >= 1, "the first bot turn", timeout=30)
        started = time.monotonic()
        wait_for(lambda: _bot_moves(svc, game) >= 4, "three more bot turns", timeout=60)
        assert time.monotonic() - started < 30, pool.logs()[-3000:]  # not 3 x 60 s
        assert connection.get("red7:max-bot-time") == b"1.0"  # and new games are held to it
        with pytest.raises(ServiceError, match="at most 1 seconds on this service"):
            svc.create(Variant(2), [person("ann"), bot("deep", "ismcts:time=2")], wait=None)
    finally:
        pool.stop()
        connection.close()


def _children(pid: int) -> dict[int, list[str]]:
    """The command lines of ``pid``'s child processes (Linux /proc)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found[int(stat.parent.name)] = (stat.parent / "cmdline").read_bytes().decode().split("\0")
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return found


@pytest.mark.integration
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads child processes from /proc")
def test_serve_keeps_its_first_worker_for_people(private_redis: Callable[..., RedisServer], tmp_path: Path) -> None:
    server = private_redis()
    connection = redis.Redis.from_url(server.url)
    serve = subprocess.Popen(
        [sys.executable, "-m", "red7es.cli", "serve", "--workers", "2", "--url", server.url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, RED7_HOME=str(tmp_path)),
    )
    children: dict[int, list[str]] = {}
    try:
        wait_for(lambda: len(live_workers(connection)) == 2, "serve's two workers", timeout=60)
        children = _children(serve.pid)
        flags = sorted("--no-slow-bots" in argv for argv in children.values())
        assert flags == [False, True], children
    finally:
        serve.terminate()
        try:
            serve.wait(60)
        finally:
            for pid in children:  # only if serve could not stop them
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            connection.close()


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1", "3601", "ten"])
def test_a_cap_that_is_no_number_of_seconds_is_a_usage_error(value: str) -> None:
    result = CliRunner().invoke(cli, ["worker", "--url", "redis://127.0.0.1:1/0", "--max-bot-time", value])
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--max-bot-time'" in result.stderr
