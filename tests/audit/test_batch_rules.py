"""Records written before GameCreated carried ``batch_rules`` still audit as they were played.

Batch rules 2 (from 4c24a14) refuse a step after a 3's unseen draw in the same command;
rules 1, before, applied it when legal; rules 3, today's, apply it judged without the
card.  GameCreated version 1 (no ``batch_rules``) was written under 1 and 2, so the codec
reads it as 2 (the rules of the last red7es that wrote it: a game running across the
upgrade keeps them) and the audit accepts a version-1 record that re-executes exactly
under either.  Version 2 names its rules: no fallback.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import msgpack
import pytest

from red7es.deal import commitment
from red7es.game import BATCH_RULES, Game, IllegalStep
from red7es.service import folding
from red7es.service.audit import FAIL, PASS, audit_record
from red7es.service.codec import EVENT_TYPES, decode_command
from red7es.service.envelope import GENESIS, MAX_COMMAND_SIZE, EventType
from red7es.service.events import (
    CommandApplied,
    CommandRejected,
    CreateCommand,
    GameCreated,
    JoinCommand,
    SeatJoined,
    SeatSpec,
    TurnCommand,
)
from red7es.service.records import Record
from red7es.service.store import Keys, now_ms
from red7es.service.table import Table
from red7es.service.tokens import WEAK_KEY, is_weak_key, new_token, public_key, sign_turn, verify_turn
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


def _old_red7es(monkeypatch: pytest.MonkeyPatch, rules: int) -> None:
    """Make the worker write GameCreated version 1 (no batch_rules) and referee under ``rules``."""
    today = EVENT_TYPES["GameCreated"]
    monkeypatch.setitem(
        EVENT_TYPES,
        "GameCreated",
        EventType(
            GameCreated,
            1,
            lambda e: {k: v for k, v in today.to_data(e).items() if k != "batch_rules"},
            lambda d: dataclasses.replace(today.from_data({**d, "batch_rules": 2}), batch_rules=rules),
        ),
    )
    start = Table.start.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(Table, "start", classmethod(lambda cls, *args, **kw: start(cls, *args[:4], rules, **kw)))
    # and it read every command as its referee did, the create included (no rules 3 then)
    monkeypatch.setattr(folding, "decode_command", lambda raw, what="command", _rules=3: decode_command(raw, what, 2))


def _play_old_game(games: Games, monkeypatch: pytest.MonkeyPatch, rules: int, game_id: str = "old") -> str:
    """A game created and played to its end by an old red7es refereeing under ``rules``; returns the batch."""
    seed, mover, batch = _batch_across_an_unseen_draw()
    with monkeypatch.context() as old:
        _old_red7es(old, rules)
        created = games.service.create(
            ACTIONS, (SeatSpec("alice"), SeatSpec("bob")), seed=seed, join=["alice", "bob"], game_id=game_id, wait=None
        )
        games.settle(game_id)
        games.service.submit(game_id, mover, created.tokens[mover], batch)
        games.settle(game_id)
        while games.service.view(game_id)["status"] != "over":
            name = ("alice", "bob")[games.service.view(game_id)["to_move"]]
            games.service.submit(game_id, name, created.tokens[name], "fold")
            games.settle(game_id)
    return batch


def _answers(record: Record) -> list[Any]:
    return [e for e in events_of(record) if isinstance(e, CommandApplied | CommandRejected)]


def test_batch_rules_two_refuse_what_rules_one_and_three_apply() -> None:
    seed, _mover, batch = _batch_across_an_unseen_draw()
    assert BATCH_RULES == 7
    with pytest.raises(IllegalStep, match="draws a card nobody has seen"):
        Game.new(ACTIONS, seed=seed).apply(batch, batch_rules=2)
    for rules in (1, 3, 4, 5, 6, 7):
        game = Game.new(ACTIONS, seed=seed)
        game.apply(batch, batch_rules=rules)
        assert game.turn != -1 and not game.current_turn_steps
    with pytest.raises(ValueError, match="batch rules are one of versions"):
        game.apply("fold", batch_rules=8)


def test_a_game_created_today_is_refereed_under_batch_rules_7_and_says_so(games: Games) -> None:
    """The batch that older games refused is applied, the record names rules 7, and it audits."""
    seed, mover, batch = _batch_across_an_unseen_draw()
    created = games.service.create(
        ACTIONS, (SeatSpec("alice"), SeatSpec("bob")), seed=seed, join=["alice", "bob"], game_id="new", wait=None
    )
    games.settle("new")
    games.service.submit("new", mover, created.tokens[mover], batch)
    games.settle("new")
    record = games.record("new")
    first: dict[str, Any] = msgpack.unpackb(record.events[0].raw)
    assert first["version"] == 2 and first["data"]["batch_rules"] == 7
    answer = _answers(record)[-1]
    assert isinstance(answer, CommandApplied) and answer.turn == batch
    while games.service.view("new")["status"] != "over":
        name = ("alice", "bob")[games.service.view("new")["to_move"]]
        games.service.submit("new", name, created.tokens[name], "fold")
        games.settle("new")
    assert audit_record(games.record("new")).result == PASS
    forged = edit_event(games.record("new"), 0, lambda created: dataclasses.replace(created, batch_rules=2))
    report = audit_record(forged)  # its people's turns were signed over the commitment (turn/v2): 2 reads v1
    assert report.result == FAIL and "signature does not verify" in report.line(), report.line()
    assert report.divergence is not None and report.divergence.event == 4  # alice's batch, the first signed turn


@pytest.mark.parametrize("rules", [1, 2])
def test_a_version_1_record_passes_its_audit_under_the_rules_it_was_played_by(
    games: Games, monkeypatch: pytest.MonkeyPatch, rules: int
) -> None:
    batch = _play_old_game(games, monkeypatch, rules)
    record = games.record("old")
    first: dict[str, Any] = msgpack.unpackb(record.events[0].raw)
    assert first["version"] == 1 and "batch_rules" not in first["data"]
    answer = _answers(record)[0]
    if rules == 1:  # accepted then, refused by today's rules
        assert isinstance(answer, CommandApplied) and answer.turn == batch
    else:
        assert isinstance(answer, CommandRejected) and "draws a card nobody has seen" in answer.reason
    report = audit_record(record)
    assert report.result == PASS, report.line()


def test_a_game_running_across_the_upgrade_keeps_batch_rules_2(games: Games, monkeypatch: pytest.MonkeyPatch) -> None:
    """Created by the last red7es that wrote version 1 (rules 2); today's worker must not loosen them."""
    seed, mover, batch = _batch_across_an_unseen_draw()
    with monkeypatch.context() as old:
        _old_red7es(old, 2)
        created = games.service.create(
            ACTIONS, (SeatSpec("alice"), SeatSpec("bob")), seed=seed, join=["alice", "bob"], game_id="live", wait=None
        )
        games.settle("live")
    today = Games(games.connection)  # a fresh worker: it rebuilds the table from the log
    today.service.submit("live", mover, created.tokens[mover], batch)
    today.settle("live")
    answer = _answers(today.record("live"))[-1]
    assert isinstance(answer, CommandRejected) and "draws a card nobody has seen" in answer.reason


def test_a_record_claiming_other_batch_rules_than_it_was_played_under_fails(
    games: Games, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Version 2 names its rules: a forger who re-chains a rules-1 game as version 2 gets an illegal turn."""
    _play_old_game(games, monkeypatch, 1)
    forged = edit_event(games.record("old"), 0, lambda created: dataclasses.replace(created, batch_rules=2))
    report = audit_record(forged)
    assert report.result == FAIL, report.line()
    assert "nobody has seen" in report.line(), report.line()


SCORING = Variant(2, scoring=True, draw=True)


def _fold_mid_turn(games: Games, game_id: str, rules: int, monkeypatch: pytest.MonkeyPatch) -> Record:
    """A game created under batch rules ``rules`` whose first turn discards then folds, played to its end."""
    with monkeypatch.context() as then:
        start = Table.start.__func__  # type: ignore[attr-defined]
        then.setattr(Table, "start", classmethod(lambda cls, *args, **kw: start(cls, *args[:4], rules, **kw)))
        created = games.service.create(
            SCORING,
            (SeatSpec("alice"), SeatSpec("bob")),
            seed="fold",
            join=["alice", "bob"],
            game_id=game_id,
            wait=None,
        )
        games.settle(game_id)
        view = games.service.view(game_id)
        mover = ("alice", "bob")[view["to_move"]]
        hand = Game.new(SCORING, seed="fold").hand(view["to_move"])
        games.service.submit(game_id, mover, created.tokens[mover], f"c:{hand[0]} fold")
        games.settle(game_id)
        while games.service.view(game_id)["status"] != "over":
            name = ("alice", "bob")[games.service.view(game_id)["to_move"]]
            games.service.submit(game_id, name, created.tokens[name], "fold")
            games.settle(game_id)
    return games.record(game_id)


@pytest.mark.parametrize(("rules", "other"), [(3, 4), (4, 3)])
def test_a_mid_turn_fold_audits_under_the_rules_it_was_played_by_and_no_other(
    games: Games, monkeypatch: pytest.MonkeyPatch, rules: int, other: int
) -> None:
    """Batch rules 4 take a folded turn back (TurnTakenBack, the round scored under Red);
    3 let it stand.  Each record passes as played, and fails re-labelled to the other."""
    record = _fold_mid_turn(games, f"fold{rules}", rules, monkeypatch)
    assert msgpack.unpackb(record.events[0].raw)["data"]["batch_rules"] == rules
    taken_back = [e for e in events_of(record) if type(e).__name__ == "TurnTakenBack"]
    assert len(taken_back) == (1 if rules == 4 else 0)
    assert audit_record(record).result == PASS, audit_record(record).line()
    forged = edit_event(record, 0, lambda created: dataclasses.replace(created, batch_rules=other))
    report = audit_record(forged)
    assert report.result == FAIL, report.line()


def _sent_by_hand(games: Games, game_id: str, data: dict[str, Any], kind: str = "Create") -> str:
    """Put a command on the game's stream as another client might have; returns its stream id."""
    raw = msgpack.packb({"type": kind, "version": 1, "at": now_ms(), "data": data})
    if kind == "Create":
        seed = b"\x05" * 32
        data["commitment"] = hashlib.sha256(seed).hexdigest()
        raw = msgpack.packb({"type": kind, "version": 1, "at": now_ms(), "data": data})
        assert games.service.store.create(game_id, data["id"], raw, seed, now_ms(), GENESIS)
        games.service.schedule(game_id)
        return str(games.service.store.commands(game_id)[0][0])
    if len(raw) > MAX_COMMAND_SIZE:  # an older submit.lua took a command of any size; today's refuses it
        stream_id = games.connection.xadd(Keys(game_id).commands, {"c": raw}).decode()
        games.connection.hset(Keys(game_id).cmdids, data.get("id", "x"), stream_id)
        return stream_id
    return str(games.service.store.submit(game_id, data.get("id", "x"), raw)[0])


def test_a_record_an_older_referee_answered_as_it_read_commands_then_still_passes(
    games: Games, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batch rules 3 read commands strictly (a Create's types, 16 KiB, a type quoted to 40
    characters, a Create's id ``create-<game>``); a game refereed under 2 is re-executed
    reading them as its referee did."""
    variant = {"players": 2, "scoring": 0, "draw": 0, "actions": 0}  # ints for booleans, no rounds or target
    seats = [{"name": "ann", "kind": "person"}, {"name": "bob", "kind": "person"}]
    with monkeypatch.context() as old:
        _old_red7es(old, 2)
        tokens = [new_token(), new_token()]
        joins = [[seat, public_key(token)] for seat, token in enumerate(tokens)]  # both seats taken at creation
        create = {"id": "made-by-an-older-client", "variant": variant, "seats": seats, "joins": joins}
        _sent_by_hand(games, "loose", create)
        games.settle("loose")
        junk = _sent_by_hand(games, "loose", {}, kind="T" * 60)
        big = _sent_by_hand(games, "loose", {"id": "big", "seat": 0, "key": "ab" * 32, "pad": "x" * 20_000}, "Join")
        games.settle("loose")
        mover = games.service.view("loose")["to_move"]
        games.service.submit("loose", ("ann", "bob")[mover], tokens[mover], "fold")
        games.settle("loose")
    answers = {a.id: a for a in _answers(games.record("loose"))}
    assert answers[junk].reason.endswith("unknown type '" + "T" * 60 + "'")  # quoted whole, as then
    assert answers["big"].kind == "join" and big  # a 20 KB Join was read (and refused: taken), as then
    assert games.over("loose")
    report = audit_record(games.record("loose"))
    assert report.result == PASS, report.line()


@pytest.mark.parametrize("word", ["resign", "abort"])
@pytest.mark.parametrize("rules", [4, 5])
def test_resign_and_abort_are_commands_from_batch_rules_5_and_turns_refused_before(word: str, rules: int) -> None:
    """A game created before the words were commands (batch rules 1 to 4) is refereed as it
    was then: the word is no turn, so it is refused; from 5 it resigns or aborts."""
    token = new_token()
    seats = (SeatSpec("alice"), SeatSpec("bob"))
    command = CreateCommand(
        "create-g", Variant(2), seats, commitment(b"s" * 32), ((0, public_key(token)), (1, "ab" * 32))
    )
    table, _events = Table.start("g", command, b"s" * 32, 1, batch_rules=rules)
    turn = TurnCommand("word-1", 0, word, "person", sign_turn(token, "g", "word-1", 0, word))
    answer = folding.decide_command(table, turn, 2)[0]
    if rules >= 5:
        assert isinstance(answer, CommandApplied) and answer.turn == word
    else:
        assert isinstance(answer, CommandRejected), answer


# A key of each kind anyone can sign for: the identity (for which OpenSSL verifies "01" and
# 63 zero bytes over any message), the points of order 2, 4 and 8, and y written as p + 1.
WEAK_KEYS = [
    "01" + "00" * 31,
    "ec" + "ff" * 30 + "7f",
    "00" * 32,
    "00" * 31 + "80",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
    "ee" + "ff" * 30 + "7f",
]


def test_the_identity_key_takes_a_signature_made_with_no_secret() -> None:
    """Why weak keys are refused: a seat holding one could have had its turns signed by anyone."""
    forged = "01" + "00" * 63
    assert verify_turn(WEAK_KEYS[0], forged, "g", "turn-id-0000000001", 0, "fold", commitment(b"s" * 32))
    assert all(is_weak_key(key) for key in WEAK_KEYS)
    assert not is_weak_key(public_key(new_token())) and not is_weak_key("ab" * 32)


@pytest.mark.parametrize("key", WEAK_KEYS)
@pytest.mark.parametrize("rules", [6, 7])
def test_a_weak_seat_key_is_refused_from_batch_rules_7_and_taken_before(key: str, rules: int) -> None:
    """Given at creation and in a join alike; a game created before batch rules 7 took it
    (as it was refereed then: its record re-executes the same)."""
    seats = (SeatSpec("alice"), SeatSpec("bob"), SeatSpec("cy"))
    command = CreateCommand("create-g", Variant(3), seats, commitment(b"s" * 32), ((0, key),))
    table, events = Table.start("g", command, b"s" * 32, 1, batch_rules=rules)
    join = folding.decide_command(table, JoinCommand("join-00000000000001", 1, key), 2)[0]
    if rules >= 7:
        refusals = [(e.seat, e.reason) for e in events if isinstance(e, CommandRejected)]
        assert refusals == [(0, f"a seat key alice would hold is refused: {WEAK_KEY}")]
        assert isinstance(join, CommandRejected) and join.reason == f"a seat key bob would hold is refused: {WEAK_KEY}"
        assert table.keys == [None, None, None]
    else:
        assert SeatJoined(0, "alice", key) in events and join == SeatJoined(1, "bob", key)
        assert table.keys == [key, key, None]
