"""Genuine games pass their audit: hundreds of random bot games, people's games, every variant."""

from __future__ import annotations

import dataclasses
import itertools
import random
from typing import Any

import pytest
from support import one_event_per_entry

from red7es.facts import StepApplied
from red7es.service.audit import FAIL, INCOMPLETE, PASS, audit_game, audit_record
from red7es.service.client import Rejected
from red7es.service.codec import decode_command, encode_command
from red7es.service.events import BOT, PERSON, CommandApplied, SeatSpec, TurnCommand
from red7es.service.store import Keys, now_ms
from red7es.service.tokens import sign_turn
from red7es.steps import Step
from red7es.variant import Variant

from .conftest import ADVANCED, Games
from .tamper import edit_command, edit_event, events_of, find, rewrite_envelope


def test_two_hundred_random_basic_bot_games_pass(module_games: Games) -> None:
    rng = random.Random(2024)
    for i in range(200):
        players = rng.choice((2, 3, 4))
        rounds = rng.choice((1, 1, 2))
        game_id = module_games.bots(f"basic-{i}", Variant(players, rounds=rounds), ("random",))
        report = audit_record(module_games.record(game_id))
        assert report.result == PASS, report.line()
        assert report.checked["deals"] >= rounds


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_variant_passes(module_games: Games, players: int) -> None:
    for n, (scoring, draw, actions) in enumerate(itertools.product((False, True), repeat=3)):
        variant = Variant(players, scoring, draw, actions)
        bots = ("greedy", "random") if n % 2 else ("random",)
        game_id = module_games.bots(f"v{players}-{n}", variant, bots)
        report = audit_game(module_games.service, game_id)
        assert report.result == PASS, report.line()


@pytest.mark.parametrize(
    "variant",
    [
        Variant(2),
        Variant(2, rounds=3),
        Variant(3, **ADVANCED),
        Variant(4, scoring=True, draw=True),
        Variant(4, actions=True),
    ],
    ids=str,
)
def test_games_with_people_and_rejected_commands_pass(module_games: Games, variant: Variant) -> None:
    people = ("alice", "bob") if variant.players > 2 else ("alice",)
    rejected = 0
    for i in range(3):
        game_id = f"people-{variant.players}-{variant.rounds}-{int(variant.scoring)}{int(variant.actions)}-{i}"
        module_games.people(game_id, variant, people, rng=random.Random(game_id), mischief=0.5)
        report = audit_record(module_games.record(game_id))
        assert report.result == PASS, report.line()
        assert report.checked["signatures"] > 0
        rejected += report.checked.get("rejected", 0)
    assert rejected > 0, "mischief should have been rejected"


def test_a_game_in_progress_is_incomplete_but_its_chain_and_signatures_are_checked(games: Games) -> None:
    games.people("running", Variant(3, **ADVANCED), ("alice", "bob"), stop_after=12, mischief=0)
    report = audit_game(games.service, "running")
    assert report.result == INCOMPLETE
    assert not report.passed
    assert report.checked["signatures"] == 12
    line = report.line()
    assert line.startswith("INCOMPLETE running: the game is not over")
    assert "hash chain" in line and "12 signatures" in line


def test_a_game_in_progress_with_a_forged_signature_fails(games: Games) -> None:
    games.people("running", Variant(2, rounds=9), ("alice", "bob"), stop_after=6, mischief=0)
    record = games.record("running")
    a = find(record, lambda e: isinstance(e, CommandApplied) and e.by == "person", start=3)
    answer = events_of(record)[a]
    k = next(k for k, entry in enumerate(record.commands) if k and _command_id(entry.raw) == answer.id)
    forged = edit_command(record, k, lambda c: dataclasses.replace(c, signature="00" * 64))
    report = audit_record(forged)
    assert report.divergence is not None
    assert (report.divergence.check, report.divergence.event) == ("signature", a)


def test_a_game_in_progress_with_an_illegal_step_fails(games: Games) -> None:
    games.people("running", Variant(2, rounds=9), ("alice", "bob"), stop_after=6, mischief=0)
    record = games.record("running")
    s = find(record, lambda e: isinstance(e, StepApplied) and e.step.kind == 0)
    other = "p:V1" if str(events_of(record)[s].step) == "p:R7" else "p:R7"
    forged = edit_event(record, s, lambda e: dataclasses.replace(e, step=Step.parse(other)))
    report = audit_record(forged)
    assert report.divergence is not None
    assert report.divergence.event == s
    assert report.divergence.check in ("illegal-step", "applied")


def test_a_byte_flipped_in_redis_is_found(games: Games) -> None:
    games.bots("stored", Variant(3, scoring=True), ("random",))
    assert audit_game(games.service, "stored").passed
    keys = Keys("stored")
    rows = one_event_per_entry(games.connection, "stored")
    k = len(rows) // 2
    _entry_id, fields = rows[k]
    raw = bytearray(fields[b"e"])
    raw[-3] ^= 0x20
    games.connection.delete(keys.log)
    for i, (stream_id, f) in enumerate(rows):
        games.connection.xadd(keys.log, {"e": bytes(raw) if i == k else f[b"e"]}, id=stream_id)
    report = audit_game(games.service, "stored")
    assert report.divergence is not None and report.divergence.event == k, report.line()


def test_an_event_removed_in_redis_is_found(games: Games) -> None:
    games.bots("stored", Variant(2), ("random",))
    keys = Keys("stored")
    rows = one_event_per_entry(games.connection, "stored")
    games.connection.xdel(keys.log, rows[5][0])
    report = audit_game(games.service, "stored")
    assert report.divergence is not None
    assert (report.divergence.check, report.divergence.event) == ("seq", 5), report.line()


def _command_id(raw: bytes) -> str | None:
    try:
        command, _at = decode_command(raw)
    except ValueError:
        return None
    return str(command.id)


def test_commands_after_the_end_are_rightly_rejected(games: Games) -> None:
    """A turn stored just before the end (or put on the stream by hand after it) is answered
    "the game is over", and audited too; the submit script stores none once the game is over."""
    tokens = games.people("ended", Variant(2), ("alice", "bob"), mischief=0)
    version = len(events_of(games.record("ended")))
    with pytest.raises(Rejected, match=r"^game ended is over$"):
        games.service.submit("ended", "alice", tokens["alice"], "fold")
    assert len(events_of(games.record("ended"))) == version  # the record stays as it ended
    _stored_as_the_game_ended(games, "ended", tokens["alice"], 0)
    games.settle("ended")
    record = games.record("ended")
    events = events_of(record)
    assert events[-1].reason == "the game is over"  # type: ignore[attr-defined]
    report = audit_record(record)
    assert report.result == PASS, report.line()


def _stored_as_the_game_ended(games: Games, game_id: str, token: str, seat: int) -> None:
    """A signed fold on the commands stream of a finished game, as if stored just before
    the last turn was answered (the submit script refuses one after the end)."""
    over = games.service.signed_over(game_id)
    late = TurnCommand("late", seat, "fold", PERSON, sign_turn(token, game_id, "late", seat, "fold", over))
    games.connection.xadd(Keys(game_id).commands, {"c": encode_command(late, now_ms())})
    games.service.schedule(game_id)


def test_commands_not_yet_folded_are_pending(games: Games) -> None:
    tokens = games.people("ended", Variant(2), ("alice", "bob"), mischief=0)
    _stored_as_the_game_ended(games, "ended", tokens["bob"], 1)  # no worker runs after this
    report = audit_record(games.record("ended"))
    assert report.result == PASS, report.line()
    assert report.checked["pending_commands"] == 1


def test_a_game_in_progress_with_an_undecodable_step_fails(games: Games) -> None:
    """Without the seed the audit still decodes every event: a step that is not one is named."""
    games.people("running", Variant(2, rounds=9), ("alice", "bob"), stop_after=6, mischief=0)
    record = games.record("running")
    s = find(record, lambda e: isinstance(e, StepApplied), start=3)

    def garble(obj: dict[str, Any]) -> None:
        obj["data"]["step"] = "zzz"

    report = audit_record(rewrite_envelope(record, s, garble))
    assert report.result == FAIL and report.divergence is not None, report.line()
    assert (report.divergence.check, report.divergence.event) == ("decode", s)
    assert "zzz" in report.divergence.reason


def test_an_empty_seed_revealed_does_not_pass_a_running_game(games: Games) -> None:
    """A forged SeedRevealed whose data is missing is refused, not taken as a revealed seed."""
    games.people("running", Variant(2, rounds=9), ("alice", "bob"), stop_after=6, mischief=0)
    record = games.record("running")
    last = len(record.events) - 1

    def empty_seed(obj: dict[str, Any]) -> None:
        obj["type"], obj["data"] = "SeedRevealed", {}

    report = audit_record(rewrite_envelope(record, last, empty_seed))
    assert report.result == FAIL and report.divergence is not None, report.line()
    assert (report.divergence.check, report.divergence.event) == ("decode", last)


def test_a_game_whose_bot_spec_predates_the_budget_limits_still_plays_and_audits(
    games: Games, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ismcts budgets were capped later: a game created with a bigger one is refused now, not broken."""
    from red7es.bots.ismcts import IsmctsBot
    from red7es.service.client import ServiceError

    spec = "ismcts:time=4000,iterations=1"
    with pytest.raises(
        ServiceError, match=r"time must be above 0 and at most 10 seconds on this service .*, not 4000\.0"
    ):
        games.bots("new-big", Variant(2), (spec, "random"))
    with monkeypatch.context() as before_the_limits:  # created, and its create folded, by an older red7es
        before_the_limits.setattr(IsmctsBot, "check_limits", lambda self: None)
        seats = [SeatSpec("ann"), SeatSpec("big", BOT, spec)]
        ann = games.service.create(Variant(2), seats, seed="big", join=["ann"], game_id="big", wait=None).tokens["ann"]
        games.settle("big")
    turns = 0
    while not games.over("big"):  # ann moves, then today's worker plays the bot
        games.service.submit("big", "ann", ann, games.service.view("big", 0)["legal"][0])
        games.settle("big")
        turns += 1
    assert turns > 1
    report = audit_game(games.service, "big")
    assert report.result == PASS, report.line()
