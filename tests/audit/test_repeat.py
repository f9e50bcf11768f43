"""A copy of a signed turn, put on the commands stream again behind submit.lua's back.

The signature binds a turn to its game, seat and id, not to its moment, so the copy is
validly signed: only knowing that its id was answered tells it apart. Before the
referee knew, a copy of a player's ``fold`` lost them a later round, and the audit,
re-executing with the same referee, passed the record.
"""

from __future__ import annotations

import pytest

from red7es.service.audit import FAIL, PASS, audit_record
from red7es.service.codec import encode_command
from red7es.service.events import BOT, PERSON, CommandApplied, CommandRejected, SeatSpec, SeedRevealed, TurnCommand
from red7es.service.store import Keys, now_ms
from red7es.service.table import Table
from red7es.variant import Variant

from .conftest import Games
from .tamper import events_of


def _play_with_a_copied_fold(games: Games, game_id: str, stop_at_round: int | None = None) -> None:
    """ann and bob fold in turn; in round 2, ann's first fold is put on the stream again."""
    svc = games.service
    created = svc.create(
        Variant(2, rounds=3),
        [SeatSpec("ann"), SeatSpec("bob")],
        seed="repeat",
        join=["ann", "bob"],
        game_id=game_id,
        wait=None,
    )
    tokens = created.tokens
    copied = False
    n = 0
    while True:
        games.settle(game_id)
        view = svc.view(game_id)
        if view["status"] == "over" or view["round"] == stop_at_round:
            return
        name = view["seats"][view["to_move"]]["name"]
        if name == "ann" and view["round"] == 2 and not copied:
            raw = next(raw for _, raw in svc.store.commands(game_id) if b"fold-0" in raw)
            svc.redis.xadd(Keys(game_id).commands, {"c": raw})
            copied = True
            continue
        svc.submit(game_id, name, tokens[name], "fold", command_id=f"fold-{n}")
        n += 1


def test_the_copy_is_refused_and_the_record_passes(games: Games) -> None:
    _play_with_a_copied_fold(games, "honest")
    record = games.record("honest")
    answers = [e for e in events_of(record) if isinstance(e, CommandApplied | CommandRejected) and e.id == "fold-0"]
    assert [type(e).__name__ for e in answers] == ["CommandApplied", "CommandRejected"]
    assert isinstance(answers[1], CommandRejected) and answers[1].kind == "repeat"
    report = audit_record(record)
    assert report.result == PASS, report.line()


def test_a_copy_applied_by_an_older_worker_fails_the_audit(games: Games, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as old_worker:
        old_worker.setattr(Table, "_repeat", lambda self, command: None)
        _play_with_a_copied_fold(games, "exploited")
    record = games.record("exploited")
    applied = [i for i, e in enumerate(events_of(record)) if isinstance(e, CommandApplied) and e.id == "fold-0"]
    assert len(applied) == 2  # the copy took effect: ann lost a round she never gave up
    report = audit_record(record)
    assert report.result == FAIL
    assert report.divergence is not None
    assert (report.divergence.check, report.divergence.event) == ("repeat", applied[1])


def test_the_seedless_audit_of_an_unfinished_game_finds_the_copy(games: Games, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the seed (a game still running) the audit folds the log: a second answer
    applying the same id is found there too."""
    with monkeypatch.context() as old_worker:
        old_worker.setattr(Table, "_repeat", lambda self, command: None)
        _play_with_a_copied_fold(games, "running", stop_at_round=3)
    record = games.record("running")
    assert games.service.view("running")["status"] != "over"  # the seed is still secret
    assert not any(isinstance(e, SeedRevealed) for e in events_of(record))
    applied = [i for i, e in enumerate(events_of(record)) if isinstance(e, CommandApplied) and e.id == "fold-0"]
    assert len(applied) == 2
    report = audit_record(record)
    assert report.result == FAIL
    assert report.divergence is not None
    assert (report.divergence.check, report.divergence.event) == ("repeat", applied[1])


@pytest.mark.parametrize("when", ["out of turn", "after the end"])
def test_a_copy_an_older_worker_refused_anyway_still_passes(
    games: Games, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """Only a copy that would take effect is a repeat: one refused for another reason gets
    that refusal, as older workers wrote it, so their records audit as before."""
    svc = games.service
    with monkeypatch.context() as old_worker:
        old_worker.setattr(Table, "_repeat", lambda self, command: None)
        created = svc.create(
            Variant(2, rounds=3), [SeatSpec("ann"), SeatSpec("bob")], seed="r", join=["ann", "bob"], wait=None
        )
        tokens, n, copied = created.tokens, 0, False
        while not copied:
            games.settle(created.game_id)
            view = svc.view(created.game_id)
            name = view["seats"][view["to_move"]]["name"] if view["status"] != "over" else None
            if (when == "out of turn" and n > 0 and name == "bob") or view["status"] == "over":
                raw = next(raw for _, raw in svc.store.commands(created.game_id) if b"fold-0" in raw)
                svc.redis.xadd(Keys(created.game_id).commands, {"c": raw})
                svc.schedule(created.game_id)
                copied = True
            else:
                assert name is not None
                svc.submit(created.game_id, name, tokens[name], "fold", command_id=f"fold-{n}")
                n += 1
        while not games.over(created.game_id) or games.worker.folder.pending(created.game_id):
            games.settle(created.game_id)
            view = svc.view(created.game_id)
            if view["status"] != "over":
                name = view["seats"][view["to_move"]]["name"]
                svc.submit(created.game_id, name, tokens[name], "fold", command_id=f"fold-{n}")
                n += 1
    record = games.record(created.game_id)
    answers = [e for e in events_of(record) if isinstance(e, CommandRejected) and e.id == "fold-0"]
    assert [e.kind for e in answers] == ["turn"]
    report = audit_record(record)
    assert report.result == PASS, report.line()


@pytest.mark.parametrize(
    ("by", "reason"),
    [(BOT, "only workers play for bots"), (PERSON, "command ids starting with bot- are reserved for bots' turns")],
)
def test_a_client_command_under_a_bots_future_id_does_not_stop_the_bot(games: Games, by: str, reason: str) -> None:
    """Refused, its id must not count as answered: the bot whose turn later falls at that
    log position is named so, and was refused for ever."""
    svc = games.service
    created = svc.create(Variant(2), [SeatSpec("ann"), SeatSpec("b", BOT, "random")], seed="x", join=["ann"], wait=None)
    game = created.game_id
    games.settle(game)
    version = int(svc.store.meta(game)["version"])
    forged = {f"bot-{version + 150 + i}" for i in range(150)}  # each refused in the log: bot turns come after
    for command_id in sorted(forged):
        command = TurnCommand(command_id, 0, "fold", by, "")
        svc.redis.xadd(Keys(game).commands, {"c": encode_command(command, now_ms())})
    svc.schedule(game)
    for _ in range(100):
        games.settle(game)
        view = svc.view(game)
        if view["status"] == "over":
            break
        if view["to_move"] == 0:
            svc.submit(game, "ann", created.tokens["ann"], svc.view(game, 0)["legal"][0])
    assert games.over(game)
    record = games.record(game)
    events = events_of(record)
    refused = [e for e in events if isinstance(e, CommandRejected) and e.id in forged]
    assert len(refused) == 150 and {e.reason for e in refused} == {reason}
    assert any(isinstance(e, CommandApplied) and e.id in forged for e in events), "a bot moved under a forged id"
    assert audit_record(record).result == PASS
