"""Resigning refereed (RULES.md, Resigning): a signed ``resign`` command, any time the seat
is still in the game, answered by a forfeit with reason ``resigned``.

The referee (:class:`~red7es.service.table.Table`) with chosen stream times, then real
worker processes on a real Redis, audited.
"""

from __future__ import annotations

import pytest
import redis
from support import WorkerPool, wait_for

from red7es.facts import Forfeited, GameOver
from red7es.service.audit import audit_game
from red7es.service.client import GameService
from red7es.service.events import (
    BOT,
    ClockStarted,
    CommandApplied,
    CommandRejected,
    SeedRevealed,
    TurnCommand,
)
from red7es.service.table import Table
from red7es.variant import Variant

from .helpers import SeatTokens, bot, decoded_log, events_of, person, seated_table, signed

SEED = b"\x05" * 32


def _table(variant: Variant, at: int = 10_000) -> tuple[Table, SeatTokens]:
    return seated_table(variant, SEED, at)


def _resign(tokens: SeatTokens, seat: int, name: str = "r1", token: str | None = None) -> TurnCommand:
    return signed(tokens, seat, "resign", name, token)


def test_a_signed_resign_out_of_turn_ends_a_two_player_game() -> None:
    table, tokens = _table(Variant(2))
    waiting = 1 - table.to_move  # type: ignore[operator]
    events = table.handle(_resign(tokens, waiting), from_client=True, at=11_000)
    assert events[0] == CommandApplied("r1", waiting, "resign", "person")
    assert events[1] == Forfeited(waiting, "resigned")
    over = events[2]
    assert isinstance(over, GameOver) and over.outcome.reason == "resigned"
    assert over.outcome.winners == (1 - waiting,)
    assert isinstance(events[3], SeedRevealed)


def test_a_resign_signed_with_another_seats_token_is_refused() -> None:
    table, tokens = _table(Variant(2))
    seat = table.to_move
    assert seat is not None
    events = table.handle(_resign(tokens, seat, token=tokens[1 - seat]), from_client=True, at=11_000)
    assert isinstance(events[0], CommandRejected) and "wrong token" in events[0].reason
    assert not table.game.forfeited


def test_a_resign_after_the_game_is_over_or_out_of_the_game_is_refused() -> None:
    table, tokens = _table(Variant(3))
    seat = table.to_move
    assert seat is not None
    table.handle(_resign(tokens, seat, "r1"), from_client=True, at=11_000)
    again = table.handle(_resign(tokens, seat, "r2"), from_client=True, at=11_001)
    assert isinstance(again[0], CommandRejected) and "already out of the game" in again[0].reason
    table.handle(_resign(tokens, table.to_move, "r3"), from_client=True, at=11_002)  # type: ignore[arg-type]
    assert table.over
    winner = table.game.outcome.winners[0]  # type: ignore[union-attr]
    late = table.handle(_resign(tokens, winner, "r4"), from_client=True, at=11_003)
    assert isinstance(late[0], CommandRejected) and late[0].reason == "the game is over"


def test_a_bot_never_resigns() -> None:
    table, _tokens = _table(Variant(2))
    events = table.handle(TurnCommand("r1", 0, "resign", BOT, ""), from_client=False, at=11_000)
    assert isinstance(events[0], CommandRejected)


def test_in_a_timed_game_a_resign_out_of_turn_leaves_the_movers_clock_running() -> None:
    table, tokens = _table(Variant(3, clock=(60_000, 1_000)), at=10_000)
    clock = table.clock
    mover = table.to_move
    other = next(s for s in range(3) if s != mover)
    events = table.handle(_resign(tokens, other), from_client=True, at=12_000)
    assert not any(isinstance(e, ClockStarted) for e in events)
    assert table.clock == clock and table.to_move == mover


def test_in_a_timed_game_the_movers_resign_starts_the_next_seats_clock() -> None:
    table, tokens = _table(Variant(3, clock=(60_000, 1_000)), at=10_000)
    mover = table.to_move
    assert mover is not None
    events = table.handle(_resign(tokens, mover), from_client=True, at=12_000)
    started = events[-1]
    assert isinstance(started, ClockStarted) and started.seat == table.to_move != mover
    assert started.at == 12_000


@pytest.mark.integration
def test_resigns_with_real_workers_others_play_on_and_the_record_audits(
    real_redis: redis.Redis, workers: WorkerPool
) -> None:
    svc = GameService(real_redis)
    workers.start(2, wait=True)
    made = svc.create(
        Variant(3, rounds=1),
        [person("ann"), person("bob"), bot("gus", "random")],
        join=["ann", "bob"],
        seed="resign-workers",
        game_id="rw",
        wait=30,
    )
    answer = svc.play("rw", "ann", made.tokens["ann"], "resign", wait=30)
    assert answer.applied, answer.reason
    assert [e["type"] for e in answer.events][:2] == ["CommandApplied", "Forfeited"]
    again = svc.play("rw", "ann", made.tokens["ann"], "resign", wait=30)
    assert not again.applied and again.reason is not None and "already out" in again.reason
    answer = svc.play("rw", "bob", made.tokens["bob"], "resign", wait=30)
    assert answer.applied, answer.reason
    wait_for(lambda: svc.store.meta("rw").get("status") == "over", "the game to end", timeout=30)
    log = events_of(decoded_log(svc.store, "rw"))
    over = next(e for e in log if isinstance(e, GameOver))
    assert over.outcome.reason == "resigned" and over.outcome.winners == (2,)
    assert over.outcome.forfeited == (0, 1)
    report = audit_game(svc, "rw")
    assert report.passed, report.line()
