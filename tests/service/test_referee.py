"""The referee and the folding worker on fakeredis: what each command does to a game."""

from __future__ import annotations

import hashlib
import itertools
import logging
import re
from typing import Any

import msgpack
import pytest

from red7es.cards import ALL_CARDS
from red7es.deal import commitment
from red7es.facts import CardDrawn, GameOver, RoundDealt, RoundWon, StepApplied
from red7es.game import IllegalStep
from red7es.service.audit import INCOMPLETE, audit_record
from red7es.service.client import BrokenGame, GameService, Rejected, ServiceError
from red7es.service.codec import GENESIS, decode_command, decode_event, encode_command, encode_event, event_hash
from red7es.service.events import (
    CommandApplied,
    CommandRejected,
    CreateCommand,
    GameCreated,
    JoinCommand,
    SeatJoined,
    SeedRevealed,
    TurnCommand,
)
from red7es.service.folding import Folder, GameBroken
from red7es.service.records import export
from red7es.service.store import GameStore, Keys, NoSuchGame, ReservedId
from red7es.service.table import CreateRejected, Table, validate_seats
from red7es.service.tokens import new_token, public_key, sign_turn, verify_turn
from red7es.steps import Step
from red7es.variant import Variant
from red7es.workers.context import WorkerContext

from .helpers import (
    all_bot_game,
    bot,
    check_chain,
    check_game,
    decoded_log,
    events_of,
    fold,
    offline_service,
    person,
    public_changes,
)

CARD = re.compile(r"\b[ROYGBIV][1-7]\b")


@pytest.fixture
def svc(fake_redis: Any) -> GameService:
    return offline_service(fake_redis)


@pytest.fixture
def folder(svc: GameService) -> Folder:
    return Folder(svc.store)


def _new(svc: GameService, folder: Folder, gid: str = "g1", seats: Any = None, join: Any = ("ann",), **kw: Any):
    seats = seats if seats is not None else [person("ann"), person("bob")]
    created = svc.create(Variant(len(seats)), seats, seed=kw.pop("seed", "referee"), game_id=gid, join=join, wait=None)
    fold(folder, gid)
    return created


def _last_answer(svc: GameService, gid: str) -> Any:
    return [r.event for r in decoded_log(svc.store, gid) if isinstance(r.event, CommandApplied | CommandRejected)][-1]


def _names(view: dict[str, Any]) -> list[str]:
    return [s["name"] for s in view["seats"]]


def _mover(svc: GameService, gid: str) -> tuple[str, str]:
    """(name of the seat to move, name of another seat)."""
    view = svc.view(gid)
    names = _names(view)
    return names[view["to_move"]], names[(view["to_move"] + 1) % len(names)]


# ---------------------------------------------------------------------- creation


def test_create_writes_created_joins_and_deal(svc: GameService, folder: Folder) -> None:
    created = _new(svc, folder, seats=[person("ann"), person("bob"), bot("cy")], join=("ann", "bob"))
    log = check_game(svc.store, "g1")
    assert [r.type for r in log[:4]] == ["GameCreated", "SeatJoined", "SeatJoined", "RoundDealt"]
    assert all(r.type not in ("GameCreated", "SeatJoined") for r in log[4:])  # then the bot may have moved
    g = log[0].event
    assert isinstance(g, GameCreated)
    assert (g.game, g.variant, g.commitment) == ("g1", Variant(3), created.commitment)
    assert [s.name for s in g.seats] == ["ann", "bob", "cy"] and g.seats[2].is_bot
    assert log[1].event == SeatJoined(0, "ann", public_key(created.tokens["ann"]))
    assert log[2].event == SeatJoined(1, "bob", public_key(created.tokens["bob"]))
    deal = log[3].event
    assert isinstance(deal, RoundDealt) and deal.round == 1 and [len(h) for h in deal.hands] == [7, 7, 7]
    meta = svc.store.meta("g1")
    assert meta["status"] in ("playing", "over") and int(meta["version"]) >= 4
    # the tokens are never stored, only their public keys: look in every key of every type
    stored = b"".join(_all_values(svc.redis))
    for token in created.tokens.values():
        assert token.encode() not in stored and bytes.fromhex(token) not in stored
    assert all(created.tokens["ann"] not in str(r.event) for r in log)


def test_the_game_s_created_time_is_one_clock_reading(
    svc: GameService, folder: Folder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """meta.created and GameCreated.created (the create command's at) were two readings of
    the clock, a millisecond apart now and then; docs/events.md says they are one."""
    from red7es.service import client

    monkeypatch.setattr(client, "now_ms", itertools.count(1_000).__next__)  # every reading a ms later
    _new(svc, folder)
    created = check_game(svc.store, "g1")[0].event
    assert isinstance(created, GameCreated)
    assert int(svc.store.meta("g1")["created"]) == created.created


def _all_values(connection: Any) -> list[bytes]:
    """Every byte string stored in Redis: strings, hashes, sets, sorted sets, lists, streams."""
    out: list[bytes] = []
    for key in connection.keys("*"):
        kind = connection.type(key)
        if kind == b"string":
            out.append(connection.get(key))
        elif kind == b"hash":
            out.extend(b for pair in connection.hgetall(key).items() for b in pair)
        elif kind == b"set":
            out.extend(connection.smembers(key))
        elif kind == b"zset":
            out.extend(connection.zrange(key, 0, -1))
        elif kind == b"list":
            out.extend(connection.lrange(key, 0, -1))
        elif kind == b"stream":
            out.extend(b for _id, fields in connection.xrange(key) for pair in fields.items() for b in pair)
    return out


def test_create_is_refused_client_side_for_bad_seats(svc: GameService) -> None:
    with pytest.raises(ServiceError, match="seat names must be different"):
        svc.create(Variant(2), [person("a"), person("a")], wait=None)
    with pytest.raises(ServiceError, match="2 players need 2 seats"):
        svc.create(Variant(2), [person("a")], wait=None)
    with pytest.raises(ServiceError, match="unknown bot"):
        svc.create(Variant(2), [person("a"), bot("b", "nobody")], wait=None)
    with pytest.raises(ServiceError, match="seat b is a bot"):
        svc.create(Variant(2), [person("a"), bot("b")], join=["b"], wait=None)
    with pytest.raises(ServiceError, match="not a valid game id"):
        svc.create(Variant(2), [person("a"), person("b")], game_id="Bad Id", wait=None)
    svc.create(Variant(2), [person("a"), person("b")], game_id="same", wait=None)
    with pytest.raises(ServiceError, match="already exists"):
        svc.create(Variant(2), [person("a"), person("b")], game_id="same", wait=None)


def test_names_a_terminal_would_act_on_are_refused_for_new_games_only() -> None:
    """Another client may send '\x1b[2J' (clear screen) as a name; games created before the
    rule keep their names, so an audit re-executing their create still passes it."""
    seats = (person("ann"), person("\x1b[2J"))
    with pytest.raises(CreateRejected, match=r"must not hold control or format characters"):
        validate_seats(Variant(2), seats)
    validate_seats(Variant(2), seats, new_game=False)


def test_a_game_without_its_seed_is_broken_not_stuck(svc: GameService, folder: Folder) -> None:
    svc.create(Variant(2), [person("a"), person("b")], game_id="noseed", wait=None)
    svc.redis.delete(Keys("noseed").secret)
    with pytest.raises(GameBroken, match="the game's seed is missing"):
        folder.advance("noseed")
    assert "seed is missing" in svc.store.meta("noseed")["broken"]
    assert not folder.pending("noseed")
    with pytest.raises(GameBroken):
        folder.advance("noseed")


def _broken_at_creation(svc: GameService, folder: Folder, gid: str) -> str:
    """A game whose create command names one seat twice: the worker cannot start it. Returns the reason."""
    command = CreateCommand(f"create-{gid}", Variant(2), (person("a"), person("a")), commitment(b"seed"), ())
    assert svc.store.create(gid, command.id, encode_command(command, 1), b"seed", 1, GENESIS)
    with pytest.raises(GameBroken):
        folder.advance(gid)
    return "cannot create the game: seat names must be different (a appears twice)"


def test_a_game_whose_seed_was_swapped_is_broken_not_dealt_from_it(svc: GameService, folder: Folder) -> None:
    """The gateway's Redis user may write a new game's seed (it creates games) but never
    read one: had it swapped a running game's seed for one it knows, a worker rebuilding
    the game would have dealt the rounds to come from it. It breaks the game instead."""
    created = _new(svc, folder, "swapped", seats=[person("ann"), bot("b", "greedy")], join=("ann",))
    assert svc.view("swapped")["status"] == "playing"
    svc.redis.hset(Keys("swapped").secret, "seed", b"a seed the intruder knows".hex())
    fresh = Folder(svc.store)  # a worker that has not this game in memory: it rebuilds it
    svc.submit("swapped", "ann", created.tokens["ann"], "fold")
    with pytest.raises(GameBroken, match="the stored seed does not match the published commitment"):
        fresh.advance("swapped")
    assert "does not match the published commitment" in svc.store.meta("swapped")["broken"]


def test_a_create_the_worker_cannot_start_writes_one_change_that_says_so(svc: GameService, folder: Folder) -> None:
    """No log, no view, status new: the one thing written is the entry that wakes whoever waits."""
    reason = _broken_at_creation(svc, folder, "bad")
    meta = svc.store.meta("bad")
    assert (meta["broken"], meta["status"], meta["version"]) == (reason, "new", "0")
    assert svc.store.log("bad") == [] and svc.store.view("bad") is None and "bad" not in svc.store.active_games()
    rows = svc.store.changes("bad")
    assert [(v, msgpack.unpackb(p, raw=False)) for _id, v, p in rows] == [
        (0, {"from": 0, "to": 0, "events": [], "broken": reason})
    ]
    message = f"game bad is broken: {reason}"
    with pytest.raises(BrokenGame, match=re.escape(message)):
        svc.wait_change("bad", "0-0", 1)
    with pytest.raises(BrokenGame, match=re.escape(message)):
        svc.wait_change("bad", rows[0][0], 0.01)  # after the entry: the game will never change again
    with pytest.raises(BrokenGame, match=re.escape(message)):
        svc.view("bad")
    with pytest.raises(BrokenGame, match=re.escape(message)):
        svc.join("bad", "a", wait=5)  # at once, not after 5 s of 'no view yet'


def test_a_game_broken_in_play_wakes_waiters_after_the_changes_before_it(svc: GameService, folder: Folder) -> None:
    tokens = _both_joined(svc, folder)
    mover, _other = _mover(svc, "g1")
    before = svc.store.last_change_id("g1")
    svc.submit("g1", mover, tokens[mover], "fold", command_id="last")
    fold(folder, "g1")
    svc.redis.xadd(Keys("g1").log, {"e": b"\xc1 not an event"})  # a rogue writer
    svc.redis.hincrby(Keys("g1").meta, "version", 1)
    svc.redis.xadd(Keys("g1").commands, {"c": b"junk"})  # (submit.lua takes none: the game is over)
    with pytest.raises(GameBroken):
        folder.advance("g1")
    change, events = svc.wait_change("g1", before, 1) or ("", [])
    assert events[0]["id"] == "last" and change != svc.store.last_change_id("g1")
    with pytest.raises(BrokenGame, match=r"^game g1 is broken: event \d+ is not valid msgpack"):
        svc.wait_change("g1", change, 1)
    with pytest.raises(BrokenGame):  # the answer to x will never come
        svc.answer("g1", "x", after=change, wait=5)
    with pytest.raises(BrokenGame):  # nor to a command submitted now: said when the wait is over
        svc.answer("g1", "x", after=svc.store.last_change_id("g1"), wait=0.2)


def test_a_second_create_command_is_rejected(svc: GameService, folder: Folder) -> None:
    _new(svc, folder)
    cmd = CreateCommand("create-again", Variant(2), (person("x"), person("y")), "00" * 32, ())
    svc.store.submit("g1", cmd.id, encode_command(cmd, 1))
    fold(folder, "g1")
    assert _last_answer(svc, "g1") == CommandRejected("create-again", -1, "create", "", "the game already exists")
    check_game(svc.store, "g1")


# ---------------------------------------------------------------------- joining


def test_join_twice_second_is_rejected(svc: GameService, folder: Folder) -> None:
    _new(svc, folder, join=())
    first = new_token()
    svc.store.submit("g1", "j1", encode_command(JoinCommand("j1", 1, public_key(first)), 1))
    svc.store.submit("g1", "j2", encode_command(JoinCommand("j2", 1, public_key(new_token())), 2))
    fold(folder, "g1")
    log = check_game(svc.store, "g1")
    assert SeatJoined(1, "bob", public_key(first)) in [r.event for r in log]
    assert log[-1].event == CommandRejected("j2", 1, "join", "bob", "seat bob has already been taken")
    assert [s["joined"] for s in svc.view("g1")["seats"]] == [False, True]


def test_join_refusals(svc: GameService, folder: Folder) -> None:
    _new(svc, folder, seats=[person("ann"), bot("cy")], join=())
    key = public_key(new_token())
    for cid, seat, k in [("j-bot", 1, key), ("j-none", 5, key), ("j-key", 0, "abc")]:
        svc.store.submit("g1", cid, encode_command(JoinCommand(cid, seat, k), 1))
    fold(folder, "g1")
    reasons = {r.event.id: r.event.reason for r in decoded_log(svc.store, "g1") if isinstance(r.event, CommandRejected)}
    assert reasons == {
        "j-bot": "seat cy is played by a bot",
        "j-none": "there is no seat 5",
        "j-key": "a seat key is 64 lower-case hex digits",
    }
    check_game(svc.store, "g1")


def test_join_through_the_service(fake_redis: Any) -> None:
    """GameService.join submits, wakes a worker and waits for the answer (here: fold when woken)."""
    folder = Folder(GameStore(fake_redis))
    svc = GameService(fake_redis, wake=lambda gid: (folder.advance(gid), svc.store.clear_nudge(gid)))
    svc.create(Variant(2), [person("ann"), person("bob")], game_id="g1", wait=1)
    token = svc.join("g1", "bob")
    assert svc.view("g1")["seats"][1]["joined"]
    with pytest.raises(Rejected, match="seat bob has already been taken"):
        svc.join("g1", "bob")
    with pytest.raises(ServiceError, match=r"no seat 'zed' in game g1 \(seats: ann, bob\)"):
        svc.join("g1", "zed")
    assert len(token) == 64
    check_game(svc.store, "g1")


# ---------------------------------------------------------------------- turns


def _both_joined(svc: GameService, folder: Folder, **kw: Any) -> dict[str, str]:
    created = _new(svc, folder, join=("ann", "bob"), **kw)
    return created.tokens


def test_a_legal_turn_is_applied(svc: GameService, folder: Folder) -> None:
    tokens = _both_joined(svc, folder)
    mover, _other = _mover(svc, "g1")
    seat = svc.seat_of("g1", mover)
    turn = svc.view("g1", seat)["legal"][0]
    cid, dup = svc.submit("g1", mover, tokens[mover], turn, command_id="t1")
    assert (cid, dup) == ("t1", False)
    fold(folder, "g1")
    answer = svc.answer("g1", "t1", wait=1)
    assert answer.applied and answer.reason is None
    assert answer.events[0] == {"type": "CommandApplied", "id": "t1", "seat": seat, "turn": turn, "by": "person"}
    assert any(e["type"] == "StepApplied" for e in answer.events[1:])
    log = check_game(svc.store, "g1")
    i = next(i for i, r in enumerate(log) if r.event == CommandApplied("t1", seat, turn, "person"))
    assert log[i + 1].event == StepApplied(seat, Step.parse(turn.split()[0]))


def test_wrong_token_is_rejected(svc: GameService, folder: Folder) -> None:
    tokens = _both_joined(svc, folder)
    mover, other = _mover(svc, "g1")
    turn = svc.view("g1", svc.seat_of("g1", mover))["legal"][0]
    svc.submit("g1", mover, tokens[other], turn, command_id="stolen")  # the other player's token
    svc.submit("g1", mover, new_token(), turn, command_id="made-up")
    fold(folder, "g1")
    answers = {r.event.id: r.event for r in decoded_log(svc.store, "g1") if isinstance(r.event, CommandRejected)}
    assert answers["stolen"].reason == f"wrong token for seat {mover}"
    assert answers["made-up"].reason == f"wrong token for seat {mover}"
    assert answers["stolen"].kind == "turn" and answers["stolen"].text == turn
    assert svc.view("g1")["version"] == int(svc.store.meta("g1")["version"])
    check_game(svc.store, "g1")


def test_a_signature_for_another_turn_or_game_is_rejected(svc: GameService, folder: Folder) -> None:
    tokens = _both_joined(svc, folder)
    mover, _ = _mover(svc, "g1")
    seat = svc.seat_of("g1", mover)
    legal = svc.view("g1", seat)["legal"]
    replayed = TurnCommand(
        "t9", seat, legal[0], "person", sign_turn(tokens[mover], "g1", "t9", seat, legal[-1], svc.signed_over("g1"))
    )
    other_game = TurnCommand("t8", seat, legal[0], "person", sign_turn(tokens[mover], "g2", "t8", seat, legal[0]))
    other_id = TurnCommand(
        "t7", seat, legal[0], "person", sign_turn(tokens[mover], "g1", "t6", seat, legal[0], svc.signed_over("g1"))
    )
    # turn/v1 (no commitment), and turn/v2 over another game's commitment (a game made before
    # under the same id): neither is good for this game, created under batch rules 6
    unbound = TurnCommand("t5", seat, legal[0], "person", sign_turn(tokens[mover], "g1", "t5", seat, legal[0]))
    earlier = TurnCommand(
        "t4", seat, legal[0], "person", sign_turn(tokens[mover], "g1", "t4", seat, legal[0], "ab" * 32)
    )
    assert svc.signed_over("g1") == svc.view("g1")["commitment"]
    for c in (other_game, other_id, unbound, earlier) + ((replayed,) if legal[0] != legal[-1] else ()):
        svc.store.submit("g1", c.id, encode_command(c, 1))
    fold(folder, "g1")
    log = decoded_log(svc.store, "g1")
    sent = {c.id for c in (other_game, other_id, unbound, earlier, replayed)}
    if legal[0] == legal[-1]:
        sent.discard("t9")
    rejected = {r.event.id: r.event.reason for r in log if isinstance(r.event, CommandRejected)}
    assert rejected == dict.fromkeys(sent, f"wrong token for seat {mover}")
    assert not any(isinstance(r.event, CommandApplied) and r.event.id in sent for r in log)
    assert verify_turn(public_key(tokens[mover]), other_id.signature, "g1", "t6", seat, legal[0], svc.signed_over("g1"))
    assert verify_turn(public_key(tokens[mover]), unbound.signature, "g1", "t5", seat, legal[0])  # good as turn/v1 only


def test_out_of_turn_is_rejected(svc: GameService, folder: Folder) -> None:
    tokens = _both_joined(svc, folder)
    mover, other = _mover(svc, "g1")
    svc.submit("g1", other, tokens[other], "fold", command_id="early")
    fold(folder, "g1")
    assert _last_answer(svc, "g1") == CommandRejected(
        "early", svc.seat_of("g1", other), "turn", "fold", f"it is not {other}'s turn (it is {mover}'s)"
    )


def test_a_turn_for_a_seat_the_game_does_not_have_keeps_its_reason_in_public(svc: GameService, folder: Folder) -> None:
    """No seat 7 means no view:7 to read the reason from: the change notice carries it (and
    the text, which no hand is behind); a real seat's refused turn still shows neither."""
    tokens = _both_joined(svc, folder)
    mover, other = _mover(svc, "g1")
    svc.store.submit("g1", "t7", encode_command(TurnCommand("t7", 7, "p:R7", "person", "00" * 64), 1))
    svc.submit("g1", other, tokens[other], "fold", command_id="early")
    fold(folder, "g1")
    notices = {e["id"]: e for e in public_changes(svc.store, "g1") if e["type"] == "CommandRejected"}
    assert notices["t7"] == {
        "type": "CommandRejected",
        "id": "t7",
        "seat": 7,
        "kind": "turn",
        "text": "p:R7",
        "reason": "there is no seat 7",
    }
    assert notices["early"] == {
        "type": "CommandRejected",
        "id": "early",
        "seat": svc.seat_of("g1", other),
        "kind": "turn",
    }
    answer = svc.answer("g1", "t7", wait=1)
    assert not answer.applied and answer.reason == "there is no seat 7"
    assert svc.answer("g1", "early", wait=1).reason == f"it is not {other}'s turn (it is {mover}'s)"


def test_illegal_turn_gives_the_engines_reason(svc: GameService, folder: Folder) -> None:
    tokens = _both_joined(svc, folder)
    mover, _ = _mover(svc, "g1")
    seat = svc.seat_of("g1", mover)
    hand = svc.view("g1", seat)["hand"]
    missing = next(str(c) for c in ALL_CARDS if str(c) not in hand)
    with pytest.raises(IllegalStep) as engine:  # what the rules engine itself says
        folder.tables["g1"].game.copy().apply(f"p:{missing}")
    assert missing in str(engine.value)
    svc.submit("g1", mover, tokens[mover], f"p:{missing}", command_id="bad")
    fold(folder, "g1")
    assert _last_answer(svc, "g1") == CommandRejected("bad", seat, "turn", f"p:{missing}", str(engine.value))
    # the rejected turn changed nothing: the same seat is still to move, with the same hand
    assert svc.view("g1", seat)["hand"] == hand and svc.view("g1")["to_move"] == seat
    answer = svc.answer("g1", "bad", wait=1)
    assert not answer.applied and answer.reason == str(engine.value)


def test_unparsable_turn_text_is_rejected_by_the_referee(svc: GameService, folder: Folder) -> None:
    tokens = _both_joined(svc, folder)
    mover, _ = _mover(svc, "g1")
    seat = svc.seat_of("g1", mover)
    cmd = TurnCommand(
        "garbled",
        seat,
        "p:Z9",
        "person",
        sign_turn(tokens[mover], "g1", "garbled", seat, "p:Z9", svc.signed_over("g1")),
    )
    svc.store.submit("g1", cmd.id, encode_command(cmd, 1))
    fold(folder, "g1")
    answer = _last_answer(svc, "g1")
    assert isinstance(answer, CommandRejected) and answer.id == "garbled"
    assert answer.reason.startswith("in step 'p:Z9': not a card")  # the engine's own reason
    with pytest.raises(Rejected, match="not a card"):
        svc.submit("g1", mover, tokens[mover], "p:Z9")  # the client refuses it before sending


def test_people_cannot_drive_bot_seats(svc: GameService, folder: Folder) -> None:
    created = _new(svc, folder, seats=[person("ann"), bot("cy", "random")], join=("ann",))
    token = created.tokens["ann"]
    # a turn for the bot's seat, signed with a person's token
    cmd = TurnCommand("hijack", 1, "fold", "person", sign_turn(token, "g1", "hijack", 1, "fold", svc.signed_over("g1")))
    svc.store.submit("g1", cmd.id, encode_command(cmd, 1))
    fold(folder, "g1")
    rejected = {r.event.id: r.event for r in decoded_log(svc.store, "g1") if isinstance(r.event, CommandRejected)}
    assert rejected["hijack"].reason == "seat cy is played by a bot"
    check_game(svc.store, "g1")


@pytest.mark.parametrize("seat", [0, 1])
def test_clients_cannot_claim_to_be_a_bot(svc: GameService, folder: Folder, seat: int) -> None:
    _new(svc, folder, seats=[person("ann"), bot("cy", "random")], join=("ann",))
    svc.store.submit("g1", "claim", encode_command(TurnCommand("claim", seat, "fold", "bot", ""), 1))
    fold(folder, "g1")
    rejected = {r.event.id: r.event for r in decoded_log(svc.store, "g1") if isinstance(r.event, CommandRejected)}
    assert rejected["claim"] == CommandRejected("claim", seat, "turn", "fold", "only workers play for bots")
    assert not any(isinstance(r.event, CommandApplied) and r.event.id == "claim" for r in decoded_log(svc.store, "g1"))


def test_bot_turn_ids_are_refused_by_the_submit_script_and_by_the_referee(svc: GameService, folder: Folder) -> None:
    created = _new(svc, folder, seats=[person("ann"), bot("cy", "random")], join=("ann",))
    token = created.tokens["ann"]
    cmd = TurnCommand(
        "bot-999", 0, "fold", "person", sign_turn(token, "g1", "bot-999", 0, "fold", svc.signed_over("g1"))
    )
    length = len(svc.store.commands("g1"))
    with pytest.raises(ReservedId):
        svc.store.submit("g1", cmd.id, encode_command(cmd, 1))
    assert len(svc.store.commands("g1")) == length
    # written past the script (a raw XADD): the referee still refuses it
    svc.redis.xadd(Keys("g1").commands, {"c": encode_command(cmd, 1)})
    fold(folder, "g1")
    rejected = {r.event.id: r.event for r in decoded_log(svc.store, "g1") if isinstance(r.event, CommandRejected)}
    assert rejected["bot-999"].reason == "command ids starting with bot- are reserved for bots' turns"
    assert not any(
        isinstance(r.event, CommandApplied) and r.event.id == "bot-999" for r in decoded_log(svc.store, "g1")
    )


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\xc1\xc1", r"command \S+ is not valid msgpack \(\w+\)"),
        (msgpack.packb([1, 2]), r"command \S+ is not a msgpack map"),
        (
            msgpack.packb({"type": "Resign", "version": 1, "at": 1, "data": {"id": "r"}}),
            r"command \S+ has unknown type 'Resign'",
        ),
        (
            msgpack.packb(
                {
                    "type": "Turn",
                    "version": 1,
                    "at": 1,
                    "data": {"id": "x", "seat": "0", "turn": "fold", "by": "person", "sig": ""},
                }
            ),
            r"command \S+ \(Turn\) is malformed: seat must be int, not str",
        ),
        (
            msgpack.packb(
                {
                    "type": "Turn",
                    "version": 1,
                    "at": 1,
                    "data": {"id": "x", "seat": 0, "turn": "fold", "by": "person", "sig": 7},
                }
            ),
            r"command \S+ \(Turn\) is malformed: sig must be str, not int",
        ),
        (
            msgpack.packb({"type": "Join", "version": 1, "at": 1, "data": {"id": "x", "seat": 1, "key": None}}),
            r"command \S+ \(Join\) is malformed: key must be str, not NoneType",
        ),
    ],
    ids=["not-msgpack", "not-a-map", "unknown-type", "seat-text", "sig-number", "key-none"],
)
def test_corrupt_commands_are_rejected_and_the_game_goes_on(
    svc: GameService, folder: Folder, raw: bytes, reason: str
) -> None:
    rejected = _answered_as_corrupt(svc, folder, lambda: svc.store.submit("g1", "junk", raw)[0])
    assert re.fullmatch(reason, rejected.reason), rejected.reason
    assert rejected.id in rejected.reason


def test_a_command_entry_without_its_field_is_answered_as_corrupt(svc: GameService, folder: Folder) -> None:
    """An entry written by hand without the ``c`` field used to raise KeyError in every
    worker, for ever, leaving every later command unanswered (and export crashed)."""
    rejected = _answered_as_corrupt(svc, folder, lambda: svc.redis.xadd(Keys("g1").commands, {"x": "no c"}).decode())
    assert rejected.reason == f"command {rejected.id} is not valid msgpack (ValueError)"
    assert audit_record(export(svc, "g1")).result == INCOMPLETE  # re-executes the same answer


def _answered_as_corrupt(svc: GameService, folder: Folder, add_entry: Any) -> CommandRejected:
    """Add an unreadable entry (``add_entry`` returns its stream id), then a legal turn:
    the entry's rejection, after checking that the turn was applied all the same."""
    tokens = _both_joined(svc, folder)
    stream_id = add_entry()
    mover, _ = _mover(svc, "g1")
    turn = svc.view("g1", svc.seat_of("g1", mover))["legal"][0]
    svc.submit("g1", mover, tokens[mover], turn, command_id="after")
    fold(folder, "g1")
    log = check_game(svc.store, "g1")
    rejected = [r.event for r in log if isinstance(r.event, CommandRejected)]
    assert len(rejected) == 1
    assert (rejected[0].id, rejected[0].seat, rejected[0].kind, rejected[0].text) == (stream_id, -1, "corrupt", "")
    assert any(isinstance(r.event, CommandApplied) and r.event.id == "after" for r in log)
    assert "broken" not in svc.store.meta("g1")
    return rejected[0]


def test_duplicate_command_id_has_one_effect(svc: GameService, folder: Folder) -> None:
    tokens = _both_joined(svc, folder)
    mover, _ = _mover(svc, "g1")
    turn = svc.view("g1", svc.seat_of("g1", mover))["legal"][0]
    length = len(svc.store.commands("g1"))
    assert svc.submit("g1", mover, tokens[mover], turn, command_id="once") == ("once", False)
    assert svc.submit("g1", mover, tokens[mover], turn, command_id="once") == ("once", True)
    fold(folder, "g1")
    assert svc.submit("g1", mover, tokens[mover], turn, command_id="once") == ("once", True)
    fold(folder, "g1")
    assert len(svc.store.commands("g1")) == length + 1
    log = check_game(svc.store, "g1")
    assert [r.event.id for r in log if isinstance(r.event, CommandApplied | CommandRejected)] == ["once"]
    # a retried play finds the answer written long ago
    answer = svc.play("g1", mover, tokens[mover], turn, command_id="once", wait=1)
    assert answer.applied and answer.events[0]["id"] == "once"


def test_a_copy_of_an_answered_turn_has_no_effect(svc: GameService, folder: Folder) -> None:
    """Whoever can write to Redis can copy a signed turn and add it to the stream again,
    behind submit.lua's back: the signature binds the game, seat and id, not the moment,
    so the referee must know the id was answered, also after rebuilding from the log."""
    tokens = _both_joined(svc, folder)
    mover, other = _mover(svc, "g1")
    for name, cid in ((mover, "first"), (other, "reply")):
        turn = svc.view("g1", svc.seat_of("g1", name))["legal"][0]
        svc.submit("g1", name, tokens[name], turn, command_id=cid)
        fold(folder, "g1")
    assert svc.view("g1")["to_move"] == svc.seat_of("g1", mover)  # the copy would be in turn
    raw = next(raw for _, raw in svc.store.commands("g1") if b"first" in raw)
    svc.redis.xadd(Keys("g1").commands, {"c": raw})
    version = int(svc.store.meta("g1")["version"])
    fold(Folder(svc.store), "g1")  # a worker that rebuilds the game from its log
    log = decoded_log(svc.store, "g1")  # (check_game would refuse a second answer to one id)
    assert len(log) == version + 1
    answer = log[-1].event
    assert isinstance(answer, CommandRejected)
    assert (answer.id, answer.kind) == ("first", "repeat")
    assert answer.reason == "turn first was answered before: a turn takes effect once"
    assert svc.view("g1")["to_move"] == svc.seat_of("g1", mover)  # still to move, nothing played
    assert svc.view("g1", svc.seat_of("g1", mover))["rejected"] is None  # not the seat's own refusal
    public = {"type": "CommandRejected", "id": "first", "seat": answer.seat, "kind": "repeat"}
    assert public_changes(svc.store, "g1")[-1] == public  # the turn's text stays in the log


def test_everything_is_answered_in_order(svc: GameService, folder: Folder) -> None:
    """Many commands of every kind in one batch: each answered once, in stream order."""
    tokens = _both_joined(svc, folder)
    mover, other = _mover(svc, "g1")
    svc.store.submit("g1", "x1", b"junk")
    svc.submit("g1", other, tokens[other], "fold", command_id="x2")
    svc.store.submit("g1", "x3", encode_command(JoinCommand("x3", 0, "ab" * 32), 1))
    svc.submit("g1", mover, tokens[mover], svc.view("g1", svc.seat_of("g1", mover))["legal"][0], command_id="x4")
    svc.submit("g1", mover, tokens[mover], "fold", command_id="x5")  # no longer its turn
    fold(folder, "g1")
    check_game(svc.store, "g1")


# ---------------------------------------------------------------------- what each may see


def _cards_in(obj: Any) -> set[str]:
    if isinstance(obj, str):
        return set(CARD.findall(obj))
    if isinstance(obj, dict):
        return set().union(*(_cards_in(v) for v in obj.values())) if obj else set()
    if isinstance(obj, list | tuple):
        return set().union(*(_cards_in(v) for v in obj)) if obj else set()
    return set()


def _hidden(table: Table, seat: int | None) -> set[str]:
    """Cards ``seat`` may not see (None: the public)."""
    game = table.game
    hidden = {str(c) for s in range(game.players) if s != seat for c in game.hand(s)}
    known = {str(c) for _, c in game.observation(0).deck_known}
    return hidden | ({str(c) for c in game.deck_cards} - known)


def test_views_show_only_what_each_seat_may_see(svc: GameService, folder: Folder) -> None:
    seats = [person("ann"), person("bob"), bot("cy")]
    _new(svc, folder, seats=seats, join=("ann", "bob"))
    table = folder.tables["g1"]
    public = svc.view("g1")
    assert "hand" not in public and "legal" not in public and "seat" not in public
    assert public["seed"] is None and public["commitment"] == table.commitment
    assert not _cards_in(public) & _hidden(table, None)
    assert [s["hand_size"] for s in public["seats"]] == [len(table.game.hand(s)) for s in range(3)]
    for seat in range(3):
        view = svc.view("g1", seat)
        assert view["seat"] == seat
        assert view["hand"] == [str(c) for c in table.game.observation(seat).hand]
        assert not _cards_in(view) & _hidden(table, seat), f"seat {seat} sees hidden cards"
        assert ("legal" in view) == (view["to_move"] == seat and not seats[seat].is_bot)
        assert view["version"] == public["version"] == table.version


@pytest.mark.usefixtures("keep_changes")
def test_changes_never_contain_hidden_cards(svc: GameService, folder: Folder) -> None:
    """Play a whole game (people and bots, actions and draws) and read every change notice."""
    seats = [person("ann"), bot("cy", "random"), bot("di", "greedy")]
    created = svc.create(
        Variant(3, scoring=True, draw=True, actions=True, target=12),
        seats,
        seed="hidden",
        game_id="g1",
        join=["ann"],
        wait=None,
    )
    fold(folder, "g1")
    for _ in range(500):
        view = svc.view("g1", 0)
        if view["status"] == "over":
            break
        assert view["to_move"] == 0
        svc.submit("g1", "ann", created.tokens["ann"], view["legal"][-1])
        fold(folder, "g1")
    log = check_game(svc.store, "g1")
    assert isinstance(log[-1].event, SeedRevealed)
    changes = public_changes(svc.store, "g1")
    # every card a change notice shows was shown by the game itself
    shown = set()
    for r in log:
        e = r.event
        if isinstance(e, RoundDealt):
            shown |= {str(c) for c in e.palettes}
        elif isinstance(e, StepApplied) and e.step.card is not None:
            shown.add(str(e.step.card))
        elif isinstance(e, CardDrawn) and e.public:
            shown.add(str(e.card))
        elif isinstance(e, CommandApplied):
            shown |= _cards_in(e.turn)
        elif isinstance(e, RoundWon):
            shown |= {str(c) for c in e.cards}
    assert _cards_in(changes) <= shown, "a change notice shows a card the game never showed"
    assert {"RoundDealt", "CardDrawn", "GameOver", "SeedRevealed"} <= {e["type"] for e in changes}
    for e in changes:
        if e["type"] == "RoundDealt":
            assert set(e) == {"type", "round", "palettes", "hand_sizes", "deck_size", "first"}
    # every draw is announced, the hidden ones without their card
    draws = [r.event for r in log if isinstance(r.event, CardDrawn)]
    notices = [e for e in changes if e["type"] == "CardDrawn"]
    assert len(notices) == len(draws) and any(not d.public for d in draws)
    for d, n in zip(draws, notices, strict=True):
        assert n == (
            {"type": "CardDrawn", "seat": d.seat, "cause": d.cause} | ({"card": str(d.card)} if d.public else {})
        )
    # the hands and the deck of every deal are in the log only
    for deal in (r.event for r in log if isinstance(r.event, RoundDealt)):
        secret = {str(c) for h in deal.hands for c in h} | {str(c) for c in deal.deck}
        assert secret - shown, "some dealt cards should never be shown"


def test_a_game_played_to_the_end(svc: GameService, folder: Folder) -> None:
    created = svc.create(
        Variant(3),
        [person("ann"), bot("cy", "greedy"), bot("di", "random")],
        seed="end",
        game_id="g1",
        join=["ann"],
        wait=None,
    )
    fold(folder, "g1")
    assert svc.store.active_games() == ["g1"]
    for _ in range(200):
        view = svc.view("g1", 0)
        if view["status"] == "over":
            break
        svc.submit("g1", "ann", created.tokens["ann"], view["legal"][0])
        fold(folder, "g1")
    log = check_game(svc.store, "g1")
    assert isinstance(log[-2].event, GameOver) and isinstance(log[-1].event, SeedRevealed)
    seed = bytes.fromhex(log[-1].event.seed)
    assert hashlib.sha256(seed).hexdigest() == created.commitment == log[0].event.commitment
    assert svc.store.active_games() == [] and svc.store.seed("g1") is None
    meta = svc.store.meta("g1")
    assert meta["status"] == "over" and meta["to_move"] == "" and meta["bot_to_move"] == "0"
    view = svc.view("g1")
    assert view["status"] == "over" and view["seed"] == seed.hex() and view["outcome"]["winners"]
    assert not folder.pending("g1")
    # a turn after the end is refused before it is stored: the record stays as it ended
    commands = len(svc.store.commands("g1"))
    with pytest.raises(Rejected, match=r"^game g1 is over$"):
        svc.submit("g1", "ann", created.tokens["ann"], "fold", command_id="late")
    assert len(svc.store.commands("g1")) == commands and len(svc.store.log("g1")) == len(log)
    # one stored just before the end (or added by hand) is answered, not applied
    late = TurnCommand(
        "late", 0, "fold", "person", sign_turn(created.tokens["ann"], "g1", "late", 0, "fold", svc.signed_over("g1"))
    )
    svc.redis.xadd(Keys("g1").commands, {"c": encode_command(late, 1)})
    fold(folder, "g1")
    assert _last_answer(svc, "g1") == CommandRejected("late", 0, "turn", "fold", "the game is over")
    summary = svc.games()[0]
    assert (summary.game_id, summary.status, summary.winners) == ("g1", "over", view["outcome"]["winners"])


def test_all_bot_game_and_rebuild_matches(svc: GameService, folder: Folder) -> None:
    all_bot_game(svc, "g1", players=3, bots=("greedy", "random"), rounds=2)
    progress = fold(folder, "g1")
    assert not progress.more
    log = check_game(svc.store, "g1")
    assert isinstance(log[-1].event, SeedRevealed)
    assert all(e.by == "bot" for e in (r.event for r in log) if isinstance(e, CommandApplied))
    # the folded table equals one rebuilt from the log, and the views equal its views
    table = Table.rebuild([r.event for r in log], None)
    assert table.public_view(len(log)) == msgpack.unpackb(svc.store.view("g1"), raw=False)


def test_the_log_is_a_hash_chain(svc: GameService, folder: Folder) -> None:
    all_bot_game(svc, "g1")
    fold(folder, "g1")
    raws = svc.store.log("g1")
    recorded = check_chain(raws)
    assert recorded[0].prev == GENESIS
    assert svc.store.meta("g1")["head"] == event_hash(raws[-1]).hex()


def test_warm_and_cold_folders_agree(svc: GameService) -> None:
    """A worker restarted between every bot move plays a game exactly as a warm one."""
    seats = [bot("a", "greedy"), bot("b", "random"), bot("c", "ismcts:iterations=20")]
    svc.create(Variant(3, rounds=2), seats, seed="same", game_id="warm", wait=None)
    svc.create(Variant(3, rounds=2), seats, seed="same", game_id="cold", wait=None)
    fold(Folder(svc.store), "warm")
    cold = Folder(svc.store, bot_batch=1)
    for _ in range(1000):
        cold.tables.clear()  # forget everything between batches
        if not cold.advance("cold", max_seconds=5).more and not cold.pending("cold"):
            break
    warm_log, cold_log = check_game(svc.store, "warm"), check_game(svc.store, "cold")
    assert isinstance(warm_log[-1].event, SeedRevealed)
    assert events_of(warm_log) == events_of(cold_log)


# ---------------------------------------------------------------------- a broken log


def _rewrite_log(store: GameStore, gid: str, raws: list[bytes]) -> None:
    key = Keys(gid).log
    store.redis.delete(key)
    for raw in raws:
        store.redis.xadd(key, {"e": raw})


def test_corrupt_log_event_breaks_the_game_not_the_worker(fake_redis: Any, caplog: pytest.LogCaptureFixture) -> None:
    svc = offline_service(fake_redis)
    svc.create(Variant(2), [person("ann"), person("bob")], seed="a", game_id="bad", join=["ann", "bob"], wait=None)
    svc.create(Variant(2), [person("ann"), person("bob")], seed="b", game_id="good", join=["ann"], wait=None)
    context = WorkerContext(fake_redis, owner="test-worker")
    assert "error" not in context.advance("bad")
    raws = svc.store.log("bad")
    raws[2] = b"\xc1 not an event"
    _rewrite_log(svc.store, "bad", raws)
    context.folder.tables.clear()  # a worker that never saw the game
    svc.store.submit("bad", "j", encode_command(JoinCommand("j", 1, "ab" * 32), 1))
    with caplog.at_level(logging.ERROR):
        result = context.advance("bad")
    assert result["error"] == "game bad: event 2 is not valid msgpack (FormatError)"
    meta = svc.store.meta("bad")
    assert meta["broken"] == "event 2 is not valid msgpack (FormatError)"
    assert "bad" in caplog.text and "broken" in caplog.text
    assert svc.store.lease_holder("bad") is None  # the lease is released
    assert not context.folder.pending("bad")
    # the same worker goes on serving the other game
    result = context.advance("good")
    assert "error" not in result and result["commands"] == 1
    svc.store.submit("good", "j2", encode_command(JoinCommand("j2", 1, "cd" * 32), 1))
    assert context.advance("good")["commands"] == 1
    check_game(svc.store, "good")
    assert {s.game_id: s.status for s in svc.games()} == {"bad": "broken", "good": "playing"}
    with pytest.raises(GameBroken, match="event 2 is not valid msgpack"):
        context.folder.advance("bad")


def test_tampered_log_breaks_the_game(svc: GameService, folder: Folder) -> None:
    """An event that decodes but does not chain (edited, reordered, dropped) is corruption too."""
    all_bot_game(svc, "g1", players=2, bots=("random",), rounds=3)
    fold(folder, "g1")
    raws = svc.store.log("g1")
    forged = decode_event(raws[2])
    assert isinstance(forged.event, CommandApplied)
    raws[2] = encode_event(CommandApplied(forged.event.id, forged.event.seat, "fold", "bot"), 2, forged.prev, forged.at)
    _rewrite_log(svc.store, "g1", raws)
    svc.redis.xadd(Keys("g1").commands, {"c": b"junk"})  # something to fold
    folder.tables.clear()
    with pytest.raises(
        GameBroken, match=r"^game g1: event 3 does not follow event 2 \(its prev is not that event's hash\)$"
    ):
        folder.advance("g1")
    assert svc.store.meta("g1")["broken"] == "event 3 does not follow event 2 (its prev is not that event's hash)"
    assert not folder.pending("g1")


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda raws: raws[:1] + raws[2:], "event 0 is followed by event 2"),
        (lambda raws: [raws[0], raws[2], raws[1], *raws[3:]], "event 0 is followed by event 2"),
        (lambda raws: [raws[0], raws[0], *raws[1:]], "event 0 is followed by event 0"),
    ],
    ids=["dropped", "reordered", "duplicated"],
)
def test_gaps_and_reorderings_break_the_game(svc: GameService, folder: Folder, edit: Any, reason: str) -> None:
    all_bot_game(svc, "g1", players=2)
    fold(folder, "g1")
    _rewrite_log(svc.store, "g1", edit(svc.store.log("g1")))
    svc.redis.xadd(Keys("g1").commands, {"c": b"junk"})
    folder.tables.clear()
    with pytest.raises(GameBroken, match=reason):
        folder.advance("g1")
    assert svc.store.meta("g1")["broken"] == reason


def test_log_the_rules_cannot_replay_breaks_the_game(svc: GameService, folder: Folder) -> None:
    """A log whose steps are illegal (written by a buggy or rogue writer) marks the game broken."""
    svc.create(Variant(2), [person("ann"), person("bob")], seed="r", game_id="g1", wait=None)
    fold(folder, "g1")
    log = decoded_log(svc.store, "g1")
    raws = [r.raw for r in log]
    deal = log[-1].event
    assert isinstance(deal, RoundDealt)
    wrong_seat = 1 - deal.first
    raws.append(encode_event(StepApplied(wrong_seat, Step.parse("fold")), len(raws), log[-1].hash, 1))
    _rewrite_log(svc.store, "g1", raws)
    svc.redis.hset(Keys("g1").meta, mapping={"version": len(raws), "head": event_hash(raws[-1]).hex()})
    svc.redis.xadd(Keys("g1").commands, {"c": b"junk"})
    folder.tables.clear()
    with pytest.raises(GameBroken, match="cannot be replayed"):
        folder.advance("g1")
    assert "cannot be replayed" in svc.store.meta("g1")["broken"]


def test_no_such_game(svc: GameService, folder: Folder) -> None:
    with pytest.raises(NoSuchGame):
        folder.advance("ghost")
    with pytest.raises(NoSuchGame):
        svc.view("ghost")
    with pytest.raises(NoSuchGame):
        svc.log("ghost")
    context = WorkerContext(svc.redis, owner="w")
    assert "no game 'ghost'" in context.advance("ghost")["error"]


@pytest.mark.parametrize("taken", ["bot", "create"])
def test_clients_cannot_take_the_ids_of_bot_turns(svc: GameService, folder: Folder, taken: str) -> None:
    """A person's turn under a bot's command id was a 'duplicate': dropped, and answered with the bot's move."""
    seats = [person("ann"), bot("cy", "greedy")]
    for i in range(20):  # a seed where the bot moves first
        created = svc.create(Variant(2), seats, seed=f"s{i}", game_id=f"g{i}", join=["ann"], wait=None)
        fold(folder, f"g{i}")
        bot_ids = [r.event.id for r in decoded_log(svc.store, f"g{i}") if isinstance(r.event, CommandApplied)]
        if bot_ids:
            break
    gid = f"g{i}"
    cid = bot_ids[0] if taken == "bot" else f"create-{gid}"
    length = len(svc.store.commands(gid))
    # bot- ids are refused by the submit script itself (for clients in any language);
    # the create id is taken, and a different command under it is said to be so
    expected = "is reserved" if taken == "bot" else "is already in use"
    with pytest.raises(ServiceError, match=expected):
        svc.play(gid, "ann", created.tokens["ann"], "fold", command_id=cid, wait=1)
    assert len(svc.store.commands(gid)) == length


def test_seat_key_comes_from_the_view_or_for_older_views_from_the_log(svc: GameService, folder: Folder) -> None:
    """Views written before they carried ``key`` (finished games are never re-folded) fall back to SeatJoined."""
    created = _new(svc, folder, "keys")
    ann = public_key(created.tokens["ann"])
    assert [svc.seat_key("keys", seat) for seat in (0, 1)] == [ann, None]
    view = svc.view("keys")
    for seat in view["seats"]:
        del seat["key"]
    svc.store.redis.set(Keys("keys").public_view, msgpack.packb(view, use_bin_type=True))
    assert "key" not in svc.view("keys")["seats"][0]
    assert [svc.seat_key("keys", seat) for seat in (0, 1)] == [ann, None]


def test_a_fold_after_other_steps_shows_the_turn_taken_back_in_views_and_changes(
    svc: GameService, folder: Folder
) -> None:
    """Batch rules 4: the seat view, the public view and the changes stream all show the
    cards back where they were when the turn began (a spectator reads TurnTakenBack)."""
    created = _new(svc, folder, seats=[person("ann"), person("bob"), person("cy")], join=("ann", "bob", "cy"))
    mover, _other = _mover(svc, "g1")
    seat = _names(svc.view("g1")).index(mover)
    before = svc.view("g1", seat)
    card = before["hand"][0]
    svc.submit("g1", mover, created.tokens[mover], f"c:{card} fold")
    fold(folder, "g1")
    after = svc.view("g1", seat)
    assert isinstance(_last_answer(svc, "g1"), CommandApplied)
    assert after["hand"] == before["hand"] and after["canvas"] == before["canvas"] == []
    assert after["rule"] == before["rule"] and after["deck_size"] == before["deck_size"]
    assert svc.view("g1")["canvas"] == [] and svc.view("g1")["seats"][seat]["hand_size"] == 7
    taken = [e for e in public_changes(svc.store, "g1") if e["type"] == "TurnTakenBack"]
    assert taken == [{"type": "TurnTakenBack", "seat": seat, "steps": [f"c:{card}"]}]


def test_a_game_made_again_under_its_id_takes_none_of_the_first_games_signed_turns(
    svc: GameService, folder: Folder
) -> None:
    """The first game's turns are public in its record and name its id. Someone with write
    access deletes its keys and creates the id again with the same seat key (public too)
    and another seed: under batch rules 6 the old signatures name the old commitment, so
    the referee refuses them (under turn/v1 they verified)."""
    first = svc.create(Variant(2), [person("ann"), bot("bob")], seed="first", game_id="again", join=["ann"], wait=None)
    fold(folder, "again")  # (bob moves first if it is his turn)
    assert svc.view("again")["to_move"] == 0
    turn = svc.view("again", 0)["legal"][0]
    command_id, _dup = svc.submit("again", "ann", first.tokens["ann"], turn)
    fold(folder, "again")
    applied = [r.event.id for r in decoded_log(svc.store, "again") if isinstance(r.event, CommandApplied)]
    assert command_id in applied
    [old] = [raw for _i, raw in svc.store.commands("again") if command_id.encode() in raw]
    old_command = decode_command(old)[0]
    assert isinstance(old_command, TurnCommand) and old_command.id == command_id and old_command.signature
    for key in svc.redis.scan_iter("red7:{again}:*"):  # by hand: what red7es itself never does
        svc.redis.delete(key)
    again = svc.create(
        Variant(2),
        [person("ann"), bot("bob")],
        seed="second",
        game_id="again",
        keys={"ann": public_key(first.tokens["ann"])},
        wait=None,
    )
    assert again.commitment != first.commitment
    fold(folder, "again")
    svc.store.submit("again", old_command.id, old)
    fold(folder, "again")
    rejected = [r.event for r in decoded_log(svc.store, "again") if isinstance(r.event, CommandRejected)]
    assert [(r.id, r.reason) for r in rejected] == [(old_command.id, "wrong token for seat ann")]
    # this client remembered what the first game's turns were signed over; the view it reads
    # now (another created) makes it sign ann's next turn for the game as it is
    legal = svc.view("again", 0)["legal"]
    new_id, _dup = svc.submit("again", "ann", first.tokens["ann"], legal[0])
    fold(folder, "again")
    assert new_id in [r.event.id for r in decoded_log(svc.store, "again") if isinstance(r.event, CommandApplied)]
