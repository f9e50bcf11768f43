"""Faults with real processes: a worker SIGKILLed mid-tournament, Redis going away mid-run.

Either way the tournament completes with every game played once and counted once.
"""

from __future__ import annotations

import json
import re
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from click.testing import Result
from support import TournamentRed7, WorkerPool, damaged_key, wait_for

from red7es.service.client import GameService, UnreadableKey
from red7es.service.folding import Folder, GameBroken
from red7es.service.redis_server import RedisServer
from red7es.tournament import RoundPaired, TournamentError, TournamentRunner, create_tournament, load
from red7es.tournament.audit import audit_tournament
from red7es.variant import Variant

from .conftest import bots, people, tournament_games

pytestmark = pytest.mark.integration


class Watch:
    """A reporter that lets the test act once ``n`` games are recorded."""

    def __init__(self, n: int, action: Callable[[], None]) -> None:
        self.n, self.action, self.fired = n, action, False

    def paired(self, paired: RoundPaired) -> None:
        pass

    def progress(self, done: int, total: int, round_number: int) -> None:
        if done >= self.n and not self.fired:
            self.fired = True
            self.action()

    def needs_people(self, game: str, people: list[str], joined: dict[str, str | None]) -> None:
        pass


def test_a_worker_killed_mid_tournament(redis_server: RedisServer, tmp_path: Path) -> None:
    connection = redis.Redis.from_url(redis_server.url)
    connection.flushall()
    pool = WorkerPool(redis_server.url, tmp_path)
    try:
        victim, _ = pool.start(2, wait=True)
        create_tournament(connection, "kill", bots(6), Variant(2), "round-robin", seed="kill")

        def holds_a_lease() -> bool:
            owners = [connection.get(key) for key in connection.scan_iter(match="red7:{t-kill-*}:lease")]
            return any(o is not None and o.decode().endswith(f":{victim.pid}") for o in owners)

        def kill_one() -> None:
            # Kill it while it is folding a game if we can catch it at it (its lease then
            # has to expire before another worker takes the game over).
            deadline = time.monotonic() + 2
            while not holds_a_lease() and time.monotonic() < deadline:
                time.sleep(0.002)
            victim.send_signal(signal.SIGKILL)
            pool.start(1)

        service = GameService(connection)
        report = TournamentRunner(service, "kill", parallel=6, reporter=Watch(2, kill_one)).run()
        assert victim.wait(5) == -signal.SIGKILL
        assert report.finished and report.done == report.total == 15
        state = load(connection, "kill")  # the fold refuses any game recorded twice
        assert len(state.results) == 15
        assert sorted(tournament_games(connection, "kill")) == sorted(t.game for _r, t in state.paired_games)
        audit = audit_tournament(service, "kill")  # every game re-executed: each played exactly once
        assert audit.ok, audit.line()
    finally:
        pool.stop()
        connection.close()


def test_redis_lost_mid_run_then_the_run_resumes(private_redis: Callable[..., RedisServer], tmp_path: Path) -> None:
    server = private_redis(appendonly=True, appendfsync="always")  # every write on disk before the crash
    url, home = server.url, tmp_path / "home"
    organiser = TournamentRed7(url, home)
    assert organiser("create", "lost", "-b", "greedy", "-b", "random", "-b", "greedy", "-b", "random").exit_code == 0
    connection = redis.Redis.from_url(url)
    outcome: dict[str, Result] = {}
    runner = threading.Thread(target=lambda: outcome.setdefault("run", organiser("run", "lost")))
    runner.start()  # no worker yet: it creates the games and waits for them
    wait_for(lambda: len(tournament_games(connection, "lost")) == 6, "the run to create the games", timeout=30)
    server.kill()  # Redis crashes under the waiting run
    runner.join(60)
    result = outcome["run"]
    assert result.exit_code == 1, (result.output, result.exception)
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith(f"Error: lost the connection to Redis at {url}")
    assert lines[-1].endswith("nothing is lost, resume with: red7 tournament run lost")

    server.start()  # the same data (append-only file) on the same port
    pool = WorkerPool(url, tmp_path)
    try:
        pool.start(2, wait=True)
        resumed = organiser("run", "lost", "--json")
        assert resumed.exit_code == 0, resumed.output
        assert json.loads(resumed.stdout) == {
            "tournament": "lost",
            "finished": True,
            "done": 6,
            "total": 6,
            "waiting_for_people": {},
        }
        assert len(tournament_games(connection, "lost")) == 6
        audit = organiser("audit", "lost")
        assert audit.exit_code == 0 and audit.stdout.startswith("PASS lost:")
    finally:
        pool.stop()
        connection.close()
        server.kill()  # nothing to keep: skip the slow clean shutdown


def test_a_game_that_breaks_wakes_the_waiting_run_which_stops_saying_why(real_redis: redis.Redis) -> None:
    """The run blocks on its games' changes streams: the entry a broken game gets wakes it at once."""
    service = GameService(real_redis, wake=lambda game: None)  # no worker: the test folds
    create_tournament(real_redis, "brk", [*people("alice"), *bots(1)], Variant(2), "round-robin", seed="b")
    failed: list[BaseException] = []

    def run() -> None:
        try:
            TournamentRunner(service, "brk", poll=5).run()
        except BaseException as exc:
            failed.append(exc)

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    [game] = wait_for(lambda: tournament_games(real_redis, "brk"), "the run to create its game")
    wait_for(lambda: real_redis.info("clients")["blocked_clients"] >= 1, "the run to wait on its game")
    real_redis.delete(f"red7:{{{game}}}:secret")  # its create command can no longer start it
    with pytest.raises(GameBroken):
        Folder(service.store).advance(game)
    runner.join(timeout=3)  # not the 5 s of its poll
    assert not runner.is_alive(), "the run was not woken"
    assert len(failed) == 1 and isinstance(failed[0], TournamentError)
    assert str(failed[0]) == (
        f"game {game} is broken (cannot create the game: the game's seed is missing): the tournament cannot finish"
    )


@pytest.mark.parametrize(
    ("suffix", "field", "value", "problem"),
    [
        ("view:public", None, b"\xc1", r"not valid msgpack \(\w+\)"),
        ("meta", "version", b"abc", "its version is 'abc', not a whole number"),
    ],
    ids=["view-not-msgpack", "version-not-a-number"],
)
def test_a_finished_game_with_a_key_no_worker_wrote_stops_the_run_in_one_line(
    real_redis: redis.Redis, suffix: str, field: str | None, value: bytes, problem: str
) -> None:
    """Recording a finished game read its view with a bare msgpack.unpackb and its version
    with int(): a FormatError or ValueError traceback. Now the shared readers' one line."""
    service = GameService(real_redis, wake=lambda game: None)  # no worker: the test folds
    create_tournament(real_redis, "unr", bots(2), Variant(2), "round-robin", seed="u")
    TournamentRunner(service, "unr").run(wait=False)  # creates the game, which no worker folds
    [game] = tournament_games(real_redis, "unr")
    folder = Folder(service.store)
    wait_for(lambda: folder.advance(game) and not folder.pending(game), "the bots to finish")
    key = f"red7:{{{game}}}:{suffix}"
    with damaged_key(real_redis, key, value, field), pytest.raises(UnreadableKey) as caught:
        TournamentRunner(service, "unr").run(wait=False)
    assert re.fullmatch(rf"game {game}: {re.escape(key)} cannot be read: {problem}", str(caught.value))
