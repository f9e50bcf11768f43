"""Adjudication (RULES.md, Adjudication): an operator ends a game not over with the winners it
decides, appended compare-and-append like a worker's answer, so a race with a turn is
resolved by the log's version and every command is still answered once.

The referee (:class:`~red7es.service.table.Table`), then the service's folding code on a
real Redis (with folders the test drives, to place the race), then real workers, audited.
"""

from __future__ import annotations

from typing import Any

import pytest
import redis
from support import WorkerPool

from red7es.facts import GameOver
from red7es.game import IllegalStep
from red7es.service.audit import audit_game
from red7es.service.client import GameService, Rejected, ServiceError
from red7es.service.events import Adjudicated, CommandApplied, CommandRejected, SeedRevealed
from red7es.service.folding import Folder
from red7es.service.store import Appended, GameStore
from red7es.service.table import Table
from red7es.variant import Variant

from .helpers import decoded_log, events_of, fold, offline_service, person, seated_table, signed

SEED = b"\x07" * 32


def test_an_adjudication_ends_the_game_with_its_winners_and_reveals_the_seed() -> None:
    table, _tokens = seated_table(Variant(3, clock=(60_000, 0)), SEED)
    events = table.adjudicate((1,), "cy left for good")
    assert events[0] == Adjudicated((1,), "cy left for good")
    over = events[1]
    assert isinstance(over, GameOver) and over.outcome.winners == (1,) and over.outcome.reason == "adjudicated"
    assert isinstance(events[2], SeedRevealed) and len(events) == 3
    assert table.over and table.deadline is None
    outcome = table.public_view()["outcome"]
    assert outcome["reason"] == "adjudicated" and outcome["adjudication"] == "cy left for good"


@pytest.mark.parametrize(
    ("winners", "reason", "why"),
    [
        ((5,), "x", "there is no seat 5"),
        ((0,), "  ", "needs a reason"),
        ((0, 0), "x", "named twice"),
        ((0,), "x" * 1001, "at most 1000 characters, not 1,001"),
    ],
)
def test_an_adjudication_naming_no_seat_or_without_a_reason_is_refused(
    winners: tuple[int, ...], reason: str, why: str
) -> None:
    table, _tokens = seated_table(Variant(2), SEED)
    with pytest.raises(IllegalStep, match=why):
        table.adjudicate(winners, reason)
    assert not table.over and table.adjudication is None


def test_a_finished_game_cannot_be_adjudicated() -> None:
    table, tokens = seated_table(Variant(2), SEED)
    table.handle(signed(tokens, 0, "abort", "a1"), from_client=True, at=11_000)
    with pytest.raises(IllegalStep, match="the game is over"):
        table.adjudicate((0,), "too late")


def test_a_table_rebuilt_from_an_adjudicated_log_shows_why() -> None:
    table, _tokens = seated_table(Variant(2), SEED)
    _t, first = Table.start("g", _create(table), SEED, 0)
    answer = table.adjudicate((), "a broken deck")
    for seed in (SEED, None):
        rebuilt = Table.rebuild([*first, *answer], seed)
        assert rebuilt.over and rebuilt.adjudication == "a broken deck"
        assert rebuilt.public_view()["outcome"]["winners"] == []


def _create(table: Table) -> Any:
    from red7es.deal import commitment
    from red7es.service.events import CreateCommand

    joins = tuple((i, key) for i, key in enumerate(table.keys) if key is not None)
    return CreateCommand("create-g", table.variant, table.seats, commitment(SEED), joins)


def _two_people(svc: GameService, game_id: str) -> dict[str, str]:
    made = svc.create(
        Variant(2), [person("ann"), person("bob")], join=["ann", "bob"], seed=game_id, game_id=game_id, wait=None
    )
    return made.tokens


def test_a_turn_stored_before_the_adjudication_is_answered_after_it_as_the_game_is_over(
    real_redis: redis.Redis,
) -> None:
    svc = offline_service(real_redis)
    tokens = _two_people(svc, "adj-pending")
    folder = Folder(svc.store)
    fold(folder, "adj-pending")
    mover = svc.view("adj-pending")["to_move"]
    name = ("ann", "bob")[mover]
    svc.submit("adj-pending", name, tokens[name], svc.view("adj-pending", mover)["legal"][0], command_id="late-1")
    events = svc.adjudicate("adj-pending", ["ann"], "bob is gone")  # before any worker folded the turn
    assert isinstance(events[0], Adjudicated)
    assert not folder.pending("adj-pending")  # answered by the adjudication's own folder
    log = events_of(decoded_log(svc.store, "adj-pending"))
    i = log.index(Adjudicated((0,), "bob is gone"))
    answer = next(e for e in log[i:] if getattr(e, "id", None) == "late-1")
    assert isinstance(answer, CommandRejected) and answer.reason == "the game is over"
    report = audit_game(svc, "adj-pending")
    assert report.passed, report.line()
    assert report.adjudicated is not None and "NOT ENDED BY PLAY" in report.adjudicated
    assert "ann wins; reason: bob is gone" in report.line()


def test_a_race_with_a_worker_is_resolved_by_the_version_and_the_turn_kept(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    tokens = _two_people(svc, "adj-race")
    worker = Folder(GameStore(redis.Redis.from_url(_url(real_redis))))
    fold(worker, "adj-race")
    mover = svc.view("adj-race")["to_move"]
    name = ("ann", "bob")[mover]
    svc.submit("adj-race", name, tokens[name], svc.view("adj-race", mover)["legal"][0], command_id="raced-1")
    operator = Folder(svc.store)
    real_append = operator.store.append
    raced = []

    def append_after_the_worker(game_id: str, batch: Any) -> Appended:
        if not raced:  # the worker folds the turn between the operator's read and its append
            raced.append(fold(worker, game_id))
        return real_append(game_id, batch)

    operator.store.append = append_after_the_worker  # type: ignore[method-assign]
    events = operator.adjudicate("adj-race", (1,), "ann's club closed")
    assert raced and isinstance(events[0], Adjudicated)
    log = events_of(decoded_log(svc.store, "adj-race"))
    applied = [i for i, e in enumerate(log) if isinstance(e, CommandApplied) and e.id == "raced-1"]
    adjudications = [i for i, e in enumerate(log) if isinstance(e, Adjudicated)]
    assert len(applied) == 1 and len(adjudications) == 1 and applied[0] < adjudications[0]
    assert audit_game(svc, "adj-race").passed


def _url(connection: redis.Redis) -> str:
    kwargs = connection.connection_pool.connection_kwargs
    return f"redis://{kwargs['host']}:{kwargs['port']}/{kwargs.get('db', 0)}"


def test_the_service_refuses_a_name_not_seated_and_a_game_over(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    _two_people(svc, "adj-refuse")
    fold(Folder(svc.store), "adj-refuse")
    with pytest.raises(ServiceError, match="no seat 'cy'"):
        svc.adjudicate("adj-refuse", ["cy"], "x")
    svc.adjudicate("adj-refuse", [], "void")
    with pytest.raises(Rejected, match="the game is over"):
        svc.adjudicate("adj-refuse", ["ann"], "again")


@pytest.mark.integration
def test_an_adjudication_with_real_workers_is_final_and_audited(real_redis: redis.Redis, workers: WorkerPool) -> None:
    svc = GameService(real_redis)
    workers.start(1, wait=True)
    made = svc.create(Variant(2), [person("ann"), person("bob")], join=["ann", "bob"], seed="adj-w", wait=30)
    game = made.game_id
    svc.adjudicate(game, ["bob"], "ann never came back")
    summary = next(s for s in svc.games() if s.game_id == game)
    assert summary.status == "over" and summary.winners == [1] and summary.reason == "adjudicated"
    with pytest.raises(Rejected, match="is over"):
        svc.play(game, "ann", made.tokens["ann"], "abort", wait=30)
    report = audit_game(svc, game)
    assert report.passed and "bob wins; reason: ann never came back" in report.line()
