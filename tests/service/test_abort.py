"""Aborting refereed (RULES.md, Aborting): a signed ``abort`` command from any seat, while
nobody has moved, ends the game with reason ``aborted`` and no winners.

The referee (:class:`~red7es.service.table.Table`) with chosen stream times, then real
worker processes on a real Redis, audited.
"""

from __future__ import annotations

import pytest
import redis
from support import WorkerPool, wait_for

from red7es.deal import commitment
from red7es.facts import GameOver
from red7es.service.audit import audit_game
from red7es.service.client import CreatedGame, GameService, Rejected
from red7es.service.events import (
    BOT,
    CommandApplied,
    CommandRejected,
    CreateCommand,
    SeatSpec,
    SeedRevealed,
    TurnCommand,
)
from red7es.service.table import Table
from red7es.service.tokens import public_key
from red7es.variant import Variant

from .helpers import SeatTokens, bot, decoded_log, events_of, person, seated_table, signed

SEED = b"\x06" * 32


def _table(variant: Variant, at: int = 10_000, joined: int | None = None) -> tuple[Table, SeatTokens]:
    return seated_table(variant, SEED, at, joined)


def _abort(tokens: SeatTokens, seat: int, name: str = "a1", token: str | None = None) -> TurnCommand:
    return signed(tokens, seat, "abort", name, token)


def test_a_seat_not_to_move_aborts_a_fresh_game_with_no_winners() -> None:
    table, tokens = _table(Variant(3))
    waiting = next(s for s in range(3) if s != table.to_move)
    events = table.handle(_abort(tokens, waiting), from_client=True, at=11_000)
    assert events[0] == CommandApplied("a1", waiting, "abort", "person")
    over = events[1]
    assert isinstance(over, GameOver) and over.outcome.reason == "aborted" and over.outcome.winners == ()
    assert isinstance(events[2], SeedRevealed) and len(events) == 3
    assert table.over and table.to_move is None


def test_an_abort_before_every_seat_joined_is_allowed() -> None:
    table, tokens = _table(Variant(2), joined=1)
    events = table.handle(_abort(tokens, 0), from_client=True, at=11_000)
    assert isinstance(events[0], CommandApplied) and table.over


def test_an_abort_after_a_turn_was_played_is_refused_in_one_line() -> None:
    table, tokens = _table(Variant(2))
    mover = table.to_move
    assert mover is not None
    turn = str(table.game.legal_turns()[0])
    applied = table.handle(signed(tokens, mover, turn, "t1"), from_client=True, at=10_500)
    assert isinstance(applied[0], CommandApplied)
    events = table.handle(_abort(tokens, 1 - mover), from_client=True, at=11_000)
    assert isinstance(events[0], CommandRejected)
    assert events[0].reason == "a turn has been played: only a game nobody has moved in can be aborted"
    assert not table.over


def test_an_abort_signed_with_another_seats_token_or_by_a_bot_is_refused() -> None:
    table, tokens = _table(Variant(2))
    forged = table.handle(_abort(tokens, 0, token=tokens[1]), from_client=True, at=11_000)
    assert isinstance(forged[0], CommandRejected) and "wrong token" in forged[0].reason
    by_bot = table.handle(TurnCommand("a2", 0, "abort", BOT, ""), from_client=False, at=11_001)
    assert isinstance(by_bot[0], CommandRejected)
    assert not table.over


def test_an_aborted_game_refuses_everything_after() -> None:
    table, tokens = _table(Variant(2))
    table.handle(_abort(tokens, 0), from_client=True, at=11_000)
    again = table.handle(_abort(tokens, 1, "a2"), from_client=True, at=11_001)
    assert isinstance(again[0], CommandRejected) and again[0].reason == "the game is over"


def test_in_a_timed_game_an_abort_stops_the_clock() -> None:
    table, tokens = _table(Variant(2, clock=(60_000, 1_000)), at=10_000)
    assert table.deadline is not None
    events = table.handle(_abort(tokens, 0), from_client=True, at=12_000)
    assert [type(e).__name__ for e in events] == ["CommandApplied", "GameOver", "SeedRevealed"]
    assert table.deadline is None and table.clock is None


def test_a_table_rebuilt_from_an_aborted_log_is_over_with_no_winners() -> None:
    table, tokens = _table(Variant(2))
    command = CreateCommand(
        "create-g",
        Variant(2),
        table.seats,
        commitment(SEED),
        tuple((i, public_key(t)) for i, t in enumerate(tokens)),
    )
    _t, first = Table.start("g", command, SEED, 0)
    answer = table.handle(_abort(tokens, 1), from_client=True, at=11_000)
    for seed in (SEED, None):
        rebuilt = Table.rebuild([*first, *answer], seed)
        assert rebuilt.over and rebuilt.game.outcome is not None
        assert rebuilt.game.outcome.reason == "aborted" and rebuilt.game.outcome.winners == ()


@pytest.fixture
def svc(real_redis: redis.Redis, workers: WorkerPool) -> GameService:
    """A service on a real Redis, answered by a real worker process."""
    workers.start(1, wait=True)
    return GameService(real_redis)


def _created(svc: GameService, game_id: str, seats: list[SeatSpec]) -> CreatedGame:
    """A game of ``seats`` (ann and bob joined) created and answered by the workers."""
    return svc.create(
        Variant(len(seats)), seats, join=["ann", "bob"], seed=f"abort-{game_id}", game_id=game_id, wait=30
    )


@pytest.mark.integration
def test_abort_with_real_workers_ends_the_game_and_the_record_audits(svc: GameService) -> None:
    made = _created(svc, "aw", [person("ann"), person("bob"), bot("gus", "random")])
    answer = svc.play("aw", "bob", made.tokens["bob"], "abort", wait=30)
    assert answer.applied, answer.reason
    assert [e["type"] for e in answer.events][:2] == ["CommandApplied", "GameOver"]
    wait_for(lambda: svc.store.meta("aw").get("status") == "over", "the game to end", timeout=30)
    log = events_of(decoded_log(svc.store, "aw"))
    over = next(e for e in log if isinstance(e, GameOver))
    assert over.outcome.reason == "aborted" and over.outcome.winners == ()
    summary = next(s for s in svc.games() if s.game_id == "aw")
    assert summary.status == "over" and summary.winners == []
    with pytest.raises(Rejected, match="game aw is over"):  # refused before it is stored
        svc.play("aw", "ann", made.tokens["ann"], "abort", wait=30)
    report = audit_game(svc, "aw")
    assert report.passed, report.line()


@pytest.mark.integration
def test_abort_with_real_workers_is_refused_once_a_turn_was_played(svc: GameService) -> None:
    made = _created(svc, "al", [person("ann"), person("bob")])
    mover = "ann" if svc.seat_view("al", "ann", made.tokens["ann"]).get("legal") else "bob"
    view = svc.seat_view("al", mover, made.tokens[mover])
    played = svc.play("al", mover, made.tokens[mover], view["legal"][0], wait=30)
    assert played.applied, played.reason
    other = "bob" if mover == "ann" else "ann"
    answer = svc.play("al", other, made.tokens[other], "abort", wait=30)
    assert not answer.applied
    assert answer.reason == "a turn has been played: only a game nobody has moved in can be aborted"
