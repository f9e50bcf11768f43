"""A command carried by its post (issue #23): ``submit.lua`` copies a person's command into
the inbox post, and a worker whose table is at the version the command was stored at
answers it without the lease and without reading the game (``Folder.answer_carried``,
``append.lua``'s Posted). Everything the lease and the read guaranteed is checked by the
append itself; these tests hold each check, against a real Redis (the path is a
standalone Redis's: a cluster's submit posts nothing)."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from red7es.service.client import GameService
from red7es.service.events import CommandApplied, CommandRejected
from red7es.service.folding import Folder, GameBroken
from red7es.service.inbox import Carried, Inbox, Post
from red7es.service.store import GameStore, Keys
from red7es.service.work_index import WORK
from red7es.variant import Variant
from red7es.workers.context import WorkerContext

from .helpers import bot, check_game, events_of, person


@pytest.fixture
def svc(real_redis: redis.Redis) -> GameService:
    """A client whose submits post to the inbox (nobody reads it but the test)."""
    return GameService(real_redis)


def _person_game(svc: GameService, game_id: str, folder: Folder) -> str:
    """A person against greedy, folded by ``folder`` up to the person's first turn; her token."""
    created = svc.create(
        Variant(2), [person("me"), bot("b")], seed=f"posted-{game_id}", game_id=game_id, join=["me"], wait=None
    )
    ctx = WorkerContext(svc.redis, owner="setup")
    ctx.folder = folder
    for _ in range(100):  # (a loaded machine's slice may end before the bot's first move)
        ctx.advance(game_id)
        if "legal" in svc.view(game_id, 0):
            break
    _drain(svc.redis)
    return created.tokens["me"]


def _drain(connection: redis.Redis) -> list[Post]:
    return Inbox(connection).take_posts("test", count=1000, block_ms=None)


def _turn(svc: GameService, game_id: str) -> str:
    legal = svc.view(game_id, 0)["legal"]
    return str(legal[0] if legal[0] != "fold" or len(legal) == 1 else legal[-1])


def _submit(svc: GameService, game_id: str, token: str) -> Post:
    """The person's first legal turn, submitted; the one post it made."""
    svc.submit(game_id, "me", token, _turn(svc, game_id))
    [post] = _drain(svc.redis)
    return post


def _applied(connection: redis.Redis, game_id: str) -> int:
    return sum(isinstance(e, CommandApplied) for e in events_of(check_game(GameStore(connection), game_id)))


def test_a_post_carries_the_command_and_the_version_it_was_stored_at(svc: GameService) -> None:
    folder = Folder(svc.store)
    token = _person_game(svc, "p1", folder)
    meta = svc.store.meta("p1")
    post = _submit(svc, "p1", token)
    assert post.game_id == "p1" and post.indexed
    assert post.carried is not None
    stream_id, raw = svc.store.redis.xrange(Keys("p1").commands, "-", "+")[-1]
    assert post.carried == Carried(stream_id.decode(), int(meta["version"]), raw[b"c"], meta["cursor"])


def test_a_warm_table_answers_the_carried_command_without_lease_or_read(
    svc: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn and the bot's reply in one append that hands the game back: off the index,
    no lease ever taken, the commands read by no one, the answer the usual fold's."""
    folder = Folder(svc.store)
    token = _person_game(svc, "p2", folder)
    before = _applied(svc.redis, "p2")
    post = _submit(svc, "p2", token)

    def not_called(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the posted path read the game")

    monkeypatch.setattr(folder.reader, "meta_and_commands", not_called)
    monkeypatch.setattr(folder.reader, "commands", not_called)
    monkeypatch.setattr(svc.store, "acquire_lease", not_called)
    assert post.carried is not None
    progress = folder.answer_carried("p2", post.carried)
    assert progress is not None and progress.commands == 1 and progress.bot_moves == 1
    assert _applied(svc.redis, "p2") == before + 2
    assert svc.redis.zscore(WORK, "p2") is None
    assert not svc.redis.exists(Keys("p2").lease)
    meta = svc.store.meta("p2")
    assert meta["cursor"] == svc.store.last_command_id("p2")  # the bot's command, answered
    assert svc.view("p2", 0)["to_move"] == 0


def test_the_next_submit_posts_again_since_the_game_left_the_index(svc: GameService) -> None:
    """No nudge was set for a game the submit put on the index, none cleared by the posted
    hand-back: the next command finds the game off the index and posts it again."""
    folder = Folder(svc.store)
    token = _person_game(svc, "p3", folder)
    for _ in range(3):
        post = _submit(svc, "p3", token)
        assert not svc.redis.exists(Keys("p3").nudge)
        assert post.carried is not None and folder.answer_carried("p3", post.carried) is not None


def test_a_table_at_another_version_folds_the_usual_way(svc: GameService) -> None:
    folder = Folder(svc.store)
    token = _person_game(svc, "p4", folder)
    post = _submit(svc, "p4", token)
    assert post.carried is not None
    stale = post.carried._replace(version=post.carried.version - 1)
    assert folder.answer_carried("p4", stale) is None
    assert Folder(svc.store).answer_carried("p4", post.carried) is None  # a cold worker: no table
    assert svc.redis.zscore(WORK, "p4") is not None  # the game still has work, on the index


def test_a_table_another_worker_left_behind_catches_up_and_answers(svc: GameService) -> None:
    """With two workers a person's turns go to either: a table a turn behind catches up from
    the log's tail (checked against the stored views) and answers the next carried command,
    still without the lease."""
    mine, other = Folder(svc.store), Folder(svc.store)
    token = _person_game(svc, "p12", mine)
    first = _submit(svc, "p12", token)
    assert first.carried is not None
    ctx = WorkerContext(svc.redis, owner="other")
    ctx.folder = other
    ctx.advance("p12")  # another worker answers the first turn (rebuilding the game)
    behind = mine.tables["p12"].version
    second = _submit(svc, "p12", token)
    assert second.carried is not None and second.carried.version > behind
    progress = mine.answer_carried("p12", second.carried)
    assert progress is not None and progress.commands == 1
    assert mine.tables["p12"].version == int(svc.store.meta("p12")["version"])
    assert svc.redis.zscore(WORK, "p12") is None


def test_a_table_that_cannot_catch_up_is_dropped(svc: GameService) -> None:
    folder = Folder(svc.store)
    token = _person_game(svc, "p13", folder)
    post = _submit(svc, "p13", token)
    assert post.carried is not None
    ahead = post.carried._replace(version=post.carried.version + 1)  # no such version in the log
    assert folder.answer_carried("p13", ahead) is None
    assert "p13" not in folder.tables


def test_a_command_before_the_carried_one_is_answered_first(svc: GameService) -> None:
    """The append refuses a carried command that is not the first after the table's cursor
    (a post for a later command, the earlier one's lost): nothing written, the table
    dropped, and the usual fold answers both in order."""
    folder = Folder(svc.store)
    token = _person_game(svc, "p5", folder)
    first = _submit(svc, "p5", token)
    svc.store.redis.xadd(Keys("p5").commands, {"c": b"\x80"})  # a second (corrupt) command
    assert first.carried is not None
    later = first.carried._replace(stream_id=svc.store.last_command_id("p5"))
    version = svc.store.meta("p5")["version"]
    assert folder.answer_carried("p5", later) is None
    assert svc.store.meta("p5")["version"] == version
    assert "p5" not in folder.tables
    ctx = WorkerContext(svc.redis, owner="w")
    ctx.folder = folder
    ctx.advance("p5")
    meta = svc.store.meta("p5")
    assert meta["cursor"] == svc.store.last_command_id("p5")


def test_a_second_command_waiting_after_the_carried_one_keeps_the_game(svc: GameService) -> None:
    """The carried command is answered, alone (no bot moves while a command waits), and the
    game is not handed back: the worker then folds it as usual."""
    folder = Folder(svc.store)
    token = _person_game(svc, "p6", folder)
    post = _submit(svc, "p6", token)
    svc.store.redis.xadd(Keys("p6").commands, {"c": b"\x80"})
    assert post.carried is not None
    assert folder.answer_carried("p6", post.carried) is None
    assert svc.redis.zscore(WORK, "p6") is not None


def test_a_broken_game_is_not_extended_by_a_carried_command(svc: GameService) -> None:
    folder = Folder(svc.store)
    token = _person_game(svc, "p7", folder)
    post = _submit(svc, "p7", token)
    svc.redis.hset(Keys("p7").meta, "broken", "by hand")
    version = svc.store.meta("p7")["version"]
    assert post.carried is not None
    assert folder.answer_carried("p7", post.carried) is None
    assert svc.store.meta("p7")["version"] == version


def test_a_commands_stream_with_no_ids_left_for_the_bot_writes_nothing(svc: GameService) -> None:
    """The bots' commands are a posted append's first write: a stream that cannot take them
    refuses it before the changes or the log are touched, and the game is marked broken."""
    folder = Folder(svc.store)
    token = _person_game(svc, "p8", folder)
    post = _submit(svc, "p8", token)
    k = Keys("p8")
    svc.redis.execute_command("XSETID", k.commands, "18446744073709551615-18446744073709551615")
    log, changes = svc.redis.xlen(k.log), svc.redis.xlen(k.changes)
    assert post.carried is not None
    with pytest.raises(GameBroken, match=r"commands has room for 0 more entries"):
        folder.answer_carried("p8", post.carried)
    assert svc.redis.xlen(k.log) == log
    assert svc.redis.xlen(k.changes) == changes + 1  # the broken notice only
    assert svc.redis.xlen(k.commands) == len(svc.redis.xrange(k.commands))


def test_a_duplicate_and_a_large_command_carry_nothing(svc: GameService) -> None:
    folder = Folder(svc.store)
    token = _person_game(svc, "p9", folder)
    turn = _turn(svc, "p9")
    svc.submit("p9", "me", token, turn, command_id="c-1")
    assert _drain(svc.redis)[0].carried is not None
    svc.redis.zrem(WORK, "p9")  # (so that the duplicate posts)
    svc.submit("p9", "me", token, turn, command_id="c-1")
    [again] = _drain(svc.redis)
    assert again.carried is None


def test_a_game_posted_twice_in_one_read_carries_nothing(svc: GameService) -> None:
    folder = Folder(svc.store)
    token = _person_game(svc, "p10", folder)
    svc.submit("p10", "me", token, _turn(svc, "p10"))
    Inbox(svc.redis).post("p10")
    assert _drain(svc.redis) == [Post("p10", False)]


def test_a_worker_answers_a_person_turn_through_its_post(svc: GameService) -> None:
    """The worker's inbox loop end to end: the post taken, the turn answered by the posted
    path (no lease taken), the game handed back."""
    ctx = WorkerContext(svc.redis, owner="w")
    token = _person_game(svc, "p11", ctx.folder)
    svc.submit("p11", "me", token, _turn(svc, "p11"))
    taken: list[str] = []
    real_take = ctx.folder.take
    ctx.folder.take = lambda *a, **k: taken.append(a[0]) or real_take(*a, **k)  # type: ignore[method-assign]
    posts = ctx.inbox.take_posts("w", block_ms=None)
    assert [p.game_id for p in posts] == ["p11"]
    assert ctx._fold(posts, float("inf"), ctx.inbox, quick=True) == 1
    assert taken == []
    assert svc.redis.zscore(WORK, "p11") is None
    assert svc.view("p11", 0)["to_move"] == 0


def test_a_post_whose_worker_died_is_found_by_the_sweep(svc: GameService) -> None:
    """A worker killed -9 after taking a post (read without acknowledgement: the post is
    gone) and before its append has no lease to leave: the game stays on the work index,
    where the submit put it, and the sweep posts it again for another worker."""
    folder = Folder(svc.store)
    token = _person_game(svc, "p14", folder)
    before = _applied(svc.redis, "p14")
    _submit(svc, "p14", token)  # taken, and its worker killed: nothing else happens
    assert svc.redis.zscore(WORK, "p14") is not None and not svc.redis.exists(Keys("p14").lease)
    rescuer = WorkerContext(svc.redis, owner="rescuer")
    assert rescuer.sweep(full=False) >= 1
    posts = [p for p in rescuer.inbox.take_posts("rescuer", count=1000, block_ms=None) if p.game_id == "p14"]
    assert posts and rescuer._fold(posts, float("inf"), rescuer.inbox, quick=True) == 1
    assert _applied(svc.redis, "p14") == before + 2  # her turn and the bot's reply, once
    assert svc.redis.zscore(WORK, "p14") is None


def test_a_forged_post_cannot_answer_a_stored_command_with_other_bytes(svc: GameService) -> None:
    """Whoever may write the inbox (the gateway's Redis user) can post other bytes under a
    stored command's id: the append compares them with the stored command and refuses, and
    the worker answers the command the usual way, from the commands stream."""
    ctx = WorkerContext(svc.redis, owner="w")
    token = _person_game(svc, "p15", ctx.folder)
    before = _applied(svc.redis, "p15")
    meta = svc.store.meta("p15")
    svc.submit("p15", "me", token, _turn(svc, "p15"))
    _drain(svc.redis)  # (the real post, taken by another)
    stream_id, _fields = svc.redis.xrange(Keys("p15").commands, "-", "+")[-1]
    forged = Carried(stream_id.decode(), int(meta["version"]), b"\x80", meta["cursor"])
    assert ctx.folder.answer_carried("p15", forged) is None  # refused: nothing written
    assert svc.store.meta("p15")["version"] == meta["version"]
    svc.redis.xadd(
        "red7:inbox",
        {"g": "p15", "i": 1, "c": forged.stream_id, "v": meta["version"], "k": meta["cursor"], "b": b"\x80"},
    )
    posts = ctx.inbox.take_posts("w", block_ms=None)
    assert posts == [Post("p15", True, forged)]
    ctx._fold(posts, float("inf"), ctx.inbox, quick=True)
    assert _applied(svc.redis, "p15") == before + 2  # the stored, valid turn and the bot's reply
    events = events_of(check_game(svc.store, "p15"))
    assert not any(isinstance(e, CommandRejected) for e in events)


def test_a_post_whose_carried_fields_are_not_submit_luas_carries_nothing(svc: GameService) -> None:
    """Written by hand: a stream id or cursor that is none, a version that is no number, a
    field missing. The game is folded as usual."""
    good = {"g": "p16", "c": "5-0", "v": "3", "k": "4-0", "b": b"\x80"}
    bad = [
        {**good, "c": "junk"},
        {**good, "k": "4-0-1"},
        {**good, "v": "-3"},
        {k: v for k, v in good.items() if k != "b"},
    ]
    for fields in bad:
        svc.redis.xadd("red7:inbox", fields)  # type: ignore[arg-type]
        assert _drain(svc.redis) == [Post("p16", False)], fields
    svc.redis.xadd("red7:inbox", good)  # type: ignore[arg-type]
    assert _drain(svc.redis) == [Post("p16", False, Carried("5-0", 3, b"\x80", "4-0"))]
