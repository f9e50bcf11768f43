"""Games refereed under batch rules 1 (before December 2026) still audit as they were played.

Batch rules 2 refuse a step after a 3's unseen draw in the same command.  A record of a
game played before that change may hold such a batch, accepted then; its GameCreated is
version 1 (no ``batch_rules``), which the codec upcasts to batch rules 1, and the audit
re-executes the game under those rules instead of calling the batch illegal.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgpack
import pytest

from red7es.game import BATCH_RULES, Game, IllegalStep
from red7es.service.audit import FAIL, PASS, audit_record
from red7es.service.codec import EVENT_TYPES
from red7es.service.envelope import EventType
from red7es.service.events import CommandApplied, GameCreated, SeatSpec
from red7es.service.table import Table
from red7es.variant import Variant

from .conftest import Games
from .tamper import edit_event, events_of

ACTIONS = Variant(2, actions=True)


def _batch_across_an_unseen_draw() -> tuple[str, str, str]:
    """A seed, the first mover's name and a legal batch that goes on after a 3's unseen draw."""
    for i in range(500):
        seed = f"batch-{i}"
        game = Game.new(ACTIONS, seed=seed)
        for opening in game.legal_turns():
            text = str(opening)
            if not text.endswith("..."):
                continue
            after = game.copy()
            after.apply(opening)
            rest = [str(t) for t in after.legal_turns() if not t.is_fold and str(t) != "end"]
            if rest:
                batch = f"{text.removesuffix(' ...')} {rest[0]}"
                return seed, ("alice", "bob")[game.turn], batch
    raise AssertionError("no seed deals a 3 with a turn after its draw")


def _old_red7es(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the worker write and referee what red7es did before batch rules 2."""
    today = EVENT_TYPES["GameCreated"]
    monkeypatch.setitem(
        EVENT_TYPES,
        "GameCreated",
        EventType(
            GameCreated,
            1,
            lambda e: {k: v for k, v in today.to_data(e).items() if k != "batch_rules"},
            lambda d: today.from_data({**d, "batch_rules": 1}),
        ),
    )
    start = Table.start.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(Table, "start", classmethod(lambda cls, *args: start(cls, *args[:4], 1)))


def _play_old_game(games: Games, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    seed, mover, batch = _batch_across_an_unseen_draw()
    with monkeypatch.context() as old:
        _old_red7es(old)
        created = games.service.create(
            ACTIONS, (SeatSpec("alice"), SeatSpec("bob")), seed=seed, join=["alice", "bob"], game_id="old", wait=None
        )
        games.settle("old")
        games.service.submit("old", mover, created.tokens[mover], batch)
        games.settle("old")
        while games.service.view("old")["status"] != "over":
            to_move = games.service.view("old")["to_move"]
            name = ("alice", "bob")[to_move]
            games.service.submit("old", name, created.tokens[name], "fold")
            games.settle("old")
    return "old", batch


def test_batch_rules_two_refuse_what_rules_one_apply() -> None:
    seed, _mover, batch = _batch_across_an_unseen_draw()
    assert BATCH_RULES == 2
    with pytest.raises(IllegalStep, match="draws a card nobody has seen"):
        Game.new(ACTIONS, seed=seed).apply(batch)
    game = Game.new(ACTIONS, seed=seed)
    game.apply(batch, batch_rules=1)
    assert game.turn != -1 and not game.current_turn_steps
    with pytest.raises(ValueError, match="batch rules are one of versions"):
        game.apply("fold", batch_rules=3)


def test_an_old_record_with_a_batch_across_a_draw_passes_its_audit(
    games: Games, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id, batch = _play_old_game(games, monkeypatch)
    record = games.record(game_id)
    first: dict[str, Any] = msgpack.unpackb(record.events[0].raw)
    assert first["version"] == 1 and "batch_rules" not in first["data"]
    applied = [e for e in events_of(record) if isinstance(e, CommandApplied)]
    assert applied[0].turn == batch  # accepted then, refused by today's rules
    report = audit_record(record)
    assert report.result == PASS, report.line()


def test_a_record_claiming_other_batch_rules_than_it_was_played_under_fails(
    games: Games, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forger who re-chains the log under batch rules 2 makes the old batch an illegal turn."""
    game_id, _batch = _play_old_game(games, monkeypatch)
    forged = edit_event(games.record(game_id), 0, lambda created: dataclasses.replace(created, batch_rules=2))
    report = audit_record(forged)
    assert report.result == FAIL, report.line()
    assert "draws a card nobody has seen" in report.line() or any(
        "nobody has seen" in d.reason for d in report.divergences
    ), report.line()
