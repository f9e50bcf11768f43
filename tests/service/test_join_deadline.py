"""The join deadline (RULES.md, Time, Join deadline; variant ``join_time``): a person's seat
nobody has taken within it of the game's creation forfeits ("no-show"); with nobody come at
all the game ends with no winner.  Refereed on Redis's time like any clock.

The referee, then a worker's folding code on a real Redis and a real worker sweeping, then
the audit and its tampering checks."""

from __future__ import annotations

import time

import pytest
import redis
from support import WorkerPool

from red7es.deal import commitment
from red7es.facts import Forfeited, GameOver
from red7es.service.audit import audit_game
from red7es.service.client import GameService
from red7es.service.events import (
    ClockStarted,
    CommandRejected,
    CreateCommand,
    JoinClosed,
    JoinCommand,
    JoinDeadline,
    SeatJoined,
    SeatSpec,
    SeedRevealed,
    Withdrawn,
)
from red7es.service.folding import Folder
from red7es.service.table import Table
from red7es.service.tokens import new_token, public_key
from red7es.variant import Variant, VariantError

from .helpers import bot, decoded_log, events_of, fold, offline_service, person

SEED = b"\x0b" * 32
CLOCK = Variant(3, clock=(60_000, 0), join_time=10_000)


def _start(variant: Variant, seats: tuple[SeatSpec, ...], joined: tuple[int, ...] = ()) -> tuple[Table, list]:  # type: ignore[type-arg]
    joins = tuple((i, public_key(new_token())) for i in joined)
    command = CreateCommand("create-g", variant, seats, commitment(SEED), joins)
    return Table.start("g", command, SEED, 0, stream_at=1_000)


PEOPLE = (SeatSpec("ann"), SeatSpec("bob"), SeatSpec("cy"))


def test_a_join_deadline_needs_a_time_control_and_is_shown() -> None:
    with pytest.raises(VariantError, match="needs a clock or a turn time"):
        Variant(2, join_time=1_000)
    assert CLOCK.describe_time() == "clock 1m, join within 10s"
    assert CLOCK.to_dict()["join_time"] == 10_000 and "join_time" not in Variant(2, clock=(1, 0)).to_dict()


def test_the_deadline_is_recorded_at_creation_and_due_until_every_seat_is_taken() -> None:
    table, events = _start(CLOCK, PEOPLE, joined=(0,))
    assert JoinDeadline(1_000, 11_000) in events and table.deadline == 11_000 and table.clock is None
    assert table.public_view()["join_deadline"] == 11_000
    table.handle(JoinCommand("j1", 1, "ab" * 32), from_client=True, at=5_000)
    started = table.handle(JoinCommand("j2", 2, "cd" * 32), from_client=True, at=6_000)
    assert isinstance(started[-1], ClockStarted) and table.deadline == 6_000 + 60_000
    assert table.public_view()["join_deadline"] is None


def test_a_game_all_seated_at_creation_has_no_join_deadline() -> None:
    _table, events = _start(CLOCK, PEOPLE, joined=(0, 1, 2))
    assert not any(isinstance(e, JoinDeadline) for e in events)


def test_seats_not_taken_forfeit_and_the_others_play_on_with_the_clocks_started() -> None:
    table, _events = _start(CLOCK, (SeatSpec("ann"), SeatSpec("bob"), bot("g")), joined=(0,))
    with pytest.raises(ValueError, match="not passed"):
        table.time_out(11_000)
    events = table.time_out(11_001)
    assert events[0] == JoinClosed(11_000, 11_001)
    assert Forfeited(1, "no-show") in events and not table.over
    assert isinstance(events[-1], ClockStarted) and events[-1].at == 11_001
    late = table.handle(JoinCommand("late", 1, "ab" * 32), from_client=True, at=11_002)
    assert isinstance(late[0], CommandRejected) and late[0].reason == "seat bob is out of the game"


def test_with_one_seat_left_it_wins_and_with_nobody_come_there_is_no_winner() -> None:
    table, _events = _start(Variant(2, turn_time=5_000, join_time=10_000), PEOPLE[:2], joined=(1,))
    events = table.time_out(12_000)
    over = next(e for e in events if isinstance(e, GameOver))
    assert over.outcome.winners == (1,) and over.outcome.reason == "no-show" and over.outcome.forfeited == (0,)
    assert isinstance(events[-1], SeedRevealed)
    table, _events = _start(CLOCK, PEOPLE)
    events = table.time_out(12_000)
    over = next(e for e in events if isinstance(e, GameOver))
    assert over.outcome.winners == () and over.outcome.reason == "no-show" and over.outcome.forfeited == ()
    assert not any(isinstance(e, Forfeited) for e in events)


def test_a_table_rebuilt_from_the_log_is_the_same() -> None:
    for joined in ((0,), ()):
        table, first = _start(CLOCK, PEOPLE, joined=joined)
        events = [*first, *table.time_out(20_000)]
        for seed in (SEED, None):
            rebuilt = Table.rebuild(events, seed)
            assert rebuilt.game.forfeited == table.game.forfeited and rebuilt.over == table.over
            assert rebuilt.deadline == table.deadline and rebuilt.clock == table.clock


def _game(svc: GameService, game_id: str, variant: Variant, join: list[str]) -> dict[str, str]:
    seats = [person("ann"), person("bob"), bot("g")]
    return svc.create(variant, seats, join=join, seed=game_id, game_id=game_id, wait=None).tokens


def test_a_join_in_time_counts_and_one_after_the_deadline_is_refused_after_the_forfeit(
    real_redis: redis.Redis,
) -> None:
    svc = offline_service(real_redis)
    _game(svc, "jd-late", Variant(3, clock=(600_000, 0), join_time=1_500), ["ann"])
    folder = Folder(svc.store)
    folder.advance("jd-late", max_seconds=1.0)
    time.sleep(1.6)
    svc.submit_join("jd-late", 1, public_key(new_token()))  # stored after the deadline
    fold(folder, "jd-late")
    log = events_of(decoded_log(svc.store, "jd-late"))
    closed = next(i for i, e in enumerate(log) if isinstance(e, JoinClosed))
    refused = next(i for i, e in enumerate(log) if isinstance(e, CommandRejected) and e.kind == "join")
    assert closed < refused and log[closed + 1] == Forfeited(1, "no-show")
    assert "out of the game" in log[refused].reason  # type: ignore[attr-defined]
    report = audit_game(svc, "jd-late")
    assert report.divergence is None, report.line()


@pytest.mark.integration
def test_a_worker_forfeits_the_no_show_on_its_own_and_the_game_audits(
    real_redis: redis.Redis, workers: WorkerPool
) -> None:
    svc = GameService(real_redis)
    workers.start(1, wait=True)
    made = svc.create(Variant(2, clock=(600_000, 0), join_time=1_000), [person("ann"), bot("g")], seed="jd-w", wait=30)
    game = made.game_id
    deadline = time.monotonic() + 30
    while svc.view(game)["status"] != "over" and time.monotonic() < deadline:
        time.sleep(0.1)
    view = svc.view(game)
    assert view["status"] == "over" and view["outcome"]["reason"] == "no-show" and view["outcome"]["winners"] == [1]
    report = audit_game(svc, game)
    assert report.passed, report.line()


def test_a_bot_to_move_first_waits_for_every_seat_to_be_taken_in_a_timed_game(real_redis: redis.Redis) -> None:
    """The clocks start once every person's seat is taken (RULES.md, Time), and so does play:
    a bot to move first in a timed game waits, and the worker does not spin on it."""
    svc = offline_service(real_redis)
    for i in range(12):  # games until a bot is the first to move
        game = f"jd-bot-{i}"
        _game(svc, game, Variant(3, clock=(600_000, 0)), ["ann"])
        folder = Folder(svc.store)
        fold(folder, game)
        view = svc.view(game)
        if view["seats"][view["to_move"]]["kind"] == "bot":
            break
    else:
        pytest.fail("no game had a bot to move first")
    assert not folder.pending(game) and view["clock"] is None and view["round"] == 1
    assert all(not isinstance(e, ClockStarted) for e in events_of(decoded_log(svc.store, game)))
    # a meta an older worker wrote (a bot to move) is corrected, not rescheduled for ever
    real_redis.hset(f"red7:{{{game}}}:meta", "bot_to_move", 1)
    assert folder.pending(game)
    folder.advance(game, max_seconds=1.0)
    assert not folder.pending(game)
    svc.submit_join(game, 1, public_key(new_token()))
    fold(folder, game)
    log = events_of(decoded_log(svc.store, game))
    assert any(isinstance(e, ClockStarted) for e in log)
    assert svc.view(game)["to_move"] != view["to_move"] or svc.view(game)["status"] == "over"  # the bot moved
    assert audit_game(svc, game).divergence is None


def test_a_clocked_append_sends_no_script_check_and_survives_a_script_flush(real_redis: redis.Redis) -> None:
    """The append and its deadline index entry go in one transaction of EVALSHAs: no SCRIPT
    EXISTS round trip before each (red7es.service.deadlines.append_indexed), and a server
    that lost its scripts has them loaded again, the append written once."""
    svc = offline_service(real_redis)
    tokens = _game(svc, "jd-sha", Variant(3, clock=(600_000, 0)), ["ann", "bob"])
    folder = Folder(svc.store)
    fold(folder, "jd-sha")
    real_redis.config_resetstat()
    real_redis.script_flush()
    view = svc.view("jd-sha")
    mover = view["to_move"]
    name = ("ann", "bob", "g")[mover]
    svc.submit("jd-sha", name, tokens[name], svc.view("jd-sha", mover)["legal"][0])
    fold(folder, "jd-sha")
    stats = real_redis.info("commandstats")
    assert "cmdstat_script|exists" not in stats and stats["cmdstat_script|load"]["calls"] >= 2
    assert audit_game(svc, "jd-sha").divergence is None
    assert svc.view("jd-sha")["version"] > view["version"]


def test_a_withdrawal_after_the_deadline_answers_a_join_that_came_in_time_first(real_redis: redis.Redis) -> None:
    """The operator's act comes after every command stored before it: cy's join, sent before
    the deadline but not yet answered, takes her seat; no JoinClosed overtakes it."""
    svc = offline_service(real_redis)
    seats = [person("ann"), person("bob"), person("cy")]
    variant = Variant(3, clock=(600_000, 0), join_time=1_500)
    svc.create(variant, seats, join=["ann", "bob"], seed="jd-in", game_id="jd-in", wait=None)
    Folder(svc.store).advance("jd-in", max_seconds=1.0)
    svc.submit_join("jd-in", 2, public_key(new_token()))  # in time; no worker answers it yet
    time.sleep(1.6)
    svc.withdraw("jd-in", "bob", "bob left")
    log = events_of(decoded_log(svc.store, "jd-in"))
    assert not any(isinstance(e, JoinClosed) for e in log)
    joined = next(i for i, e in enumerate(log) if isinstance(e, SeatJoined) and e.name == "cy")
    withdrawn = next(i for i, e in enumerate(log) if isinstance(e, Withdrawn))
    assert joined < withdrawn
    assert audit_game(svc, "jd-in").divergence is None
