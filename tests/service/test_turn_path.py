"""A person's turn on the client side (issue #23): the submit, the nudge and the wake-up in
one round trip, the answer waited for with the seat's view read in the same round trip."""

from __future__ import annotations

import time

import pytest
import redis
from support import WorkerPool

from red7es.service.client import NUDGE_TTL_MS, GameService, Rejected, UnreadableChange
from red7es.service.codec import encode_command
from red7es.service.events import TurnCommand
from red7es.service.folding import Folder
from red7es.service.inbox import INBOX_KEY
from red7es.service.store import Keys
from red7es.service.tokens import new_token, public_key
from red7es.service.work_index import WORK
from red7es.variant import Variant

from .helpers import Wakes, bot, fold, offline_service, person

SIGNATURE = "00" * 64  # (a finished game refuses the turn before anyone checks it)


def _posts(connection: redis.Redis, game_id: str) -> int:
    """How many times the game was posted to the workers' inbox."""
    return sum(fields.get(b"g") == game_id.encode() for _id, fields in connection.xrange(INBOX_KEY))


def test_a_submit_sets_the_nudge_and_posts_the_game_once_per_burst(any_redis: redis.Redis) -> None:
    """Whoever sets the nudge posts the game (submit.lua itself on one Redis, plain commands
    on a cluster); a submit that finds the nudge set posts nothing."""
    svc = GameService(any_redis)
    svc.create(Variant(2), [person("ann"), person("bob")], game_id="tp", wait=None)
    any_redis.delete(Keys("tp").nudge)  # as a worker done with the game leaves it
    before = _posts(any_redis, "tp")
    svc.submit_join("tp", 0, public_key(new_token()))
    assert _posts(any_redis, "tp") == before + 1
    assert int(any_redis.pttl(Keys("tp").nudge)) > 0
    svc.submit_join("tp", 1, public_key(new_token()))
    assert _posts(any_redis, "tp") == before + 1
    assert any_redis.xlen(Keys("tp").commands) == 3  # the create and both joins, each once


def test_a_refused_submit_that_set_the_nudge_still_wakes_a_worker(fake_redis: redis.Redis) -> None:
    """Where the nudge is set beside the script (a wake of the caller's own, a cluster, the
    gateway), it is set whatever the script answers: a refused command wakes a worker all
    the same, or later commands would not (the nudge held)."""
    wakes = Wakes()
    svc = GameService(fake_redis, wake=wakes)
    svc.create(Variant(2), [person("ann"), person("bob")], game_id="tr", wait=None)
    fake_redis.delete(Keys("tr").nudge)
    fake_redis.hset(Keys("tr").meta, "status", "over")
    with pytest.raises(Rejected, match="is over"):
        svc.submit_signed("tr", TurnCommand("t-1", 0, "fold", "person", SIGNATURE))
    assert wakes.games == ["tr", "tr"]  # the create's, then the refused turn's


@pytest.mark.integration
def test_an_answer_comes_with_the_seat_view_it_left(real_redis: redis.Redis, workers: WorkerPool) -> None:
    """The view read with the answer is the one the answer (and the bot's reply with it)
    left: the same as a read after it, with no second read needed."""
    svc = GameService(real_redis)
    workers.start(1, wait=True)
    made = svc.create(
        Variant(2, rounds=3), [person("ann"), bot("gus")], join=["ann"], seed="turn-path", game_id="tv", wait=30
    )
    token = made.tokens["ann"]
    played = 0
    for _ in range(6):
        view = svc.view("tv", 0)
        if view["status"] == "over":
            break
        if view.get("to_move") != 0:
            svc.wait_change("tv", svc.last_change_id("tv"), 10)
            continue
        answer = svc.play("tv", "ann", token, view["legal"][0], wait=30)
        assert answer.applied, answer.reason
        assert answer.view is not None and answer.view == svc.view("tv", 0)
        assert answer.view["seat"] == 0 and "hand" in answer.view
        played += 1
    assert played >= 1  # (the loop above asserted nothing unless ann played)


def test_a_changes_stream_that_cannot_be_read_does_not_stop_the_submit_only_the_wait(real_redis: redis.Redis) -> None:
    """The mark is the meta's change_id, read by the submit script: a changes stream
    written by hand as another type is not read to store the command (stored, and a worker
    woken), and the wait for its answer says what is wrong in Redis's words."""
    wakes = Wakes()
    svc = GameService(real_redis, wake=wakes)
    svc.create(Variant(2), [person("ann"), person("bob")], game_id="tc", wait=None)
    real_redis.delete(Keys("tc").nudge)
    real_redis.set(Keys("tc").changes, "x")
    assert svc.submit_signed("tc", TurnCommand("t-1", 0, "fold", "person", SIGNATURE)) == ("t-1", False)
    assert wakes.games == ["tc", "tc"]
    with pytest.raises(redis.exceptions.ResponseError, match="WRONGTYPE"):
        svc.answer("tc", "t-1", wait=1)
    assert real_redis.xlen(Keys("tc").commands) == 2  # stored: sent again under its id, a no-op


def _pending_turn(connection: redis.Redis, game: str) -> tuple[GameService, Folder, TurnCommand]:
    """A game of ann against greedy, folded up to ann's turn; the service and her first legal turn."""
    svc = offline_service(connection)
    folder = Folder(svc.store)
    created = svc.create(Variant(2), [person("ann"), bot("g")], game_id=game, join=["ann"], wait=None)
    fold(folder, game)
    view = svc.view(game, 0)
    assert view["to_move"] == 0
    return svc, folder, svc._signed(game, "ann", created.tokens["ann"], view["legal"][0], None)


def test_a_change_written_by_hand_before_a_turn_does_not_hide_its_answer(real_redis: redis.Redis) -> None:
    """The mark a submit answers is the change the last append wrote (meta.change_id): an
    entry written by hand after it, and before the turn is stored, is read by the wait for
    the answer, and passed over, since it cannot hold an answer written after the turn."""
    svc, folder, command = _pending_turn(real_redis, "th")
    real_redis.xadd(Keys("th").changes, {"x": b"junk"})
    time.sleep(0.005)  # (in a millisecond before the turn's: entries of one are not told apart)
    submitted = svc._submit_signed("th", command)
    assert submitted.mark == real_redis.hget(Keys("th").meta, "change_id").decode()
    fold(folder, "th")
    answer = svc.answer("th", command.id, after=submitted.mark, wait=5, stream_id=submitted.stream_id)
    assert answer.applied


def test_a_change_written_by_hand_after_a_turn_is_still_refused(real_redis: redis.Redis) -> None:
    """Past the turn's own stream id an entry that cannot be read may be where its answer
    should be: the wait says so in one line, as before."""
    svc, folder, command = _pending_turn(real_redis, "ta")
    submitted = svc._submit_signed("ta", command)
    real_redis.xadd(Keys("ta").changes, {"x": b"junk"})
    fold(folder, "ta")
    with pytest.raises(UnreadableChange, match="cannot be read"):
        svc.answer("ta", command.id, after=submitted.mark, wait=5, stream_id=submitted.stream_id)


def test_submit_lua_wakes_a_worker_with_argv_7_to_9_whatever_argv_6(real_redis: redis.Redis) -> None:
    """ARGV 7-9 (wake a worker here) are an option of their own: given without ARGV 6, the
    command is still indexed and posted (no nudge: the index add put the game there, and
    that decides the post), and the reply carries the mark (review of 00dc289, finding 2:
    the wake was skipped, a lost wake-up)."""
    svc, _folder, command = _pending_turn(real_redis, "w6")
    k = Keys("w6")
    real_redis.delete(k.nudge)
    real_redis.zrem(WORK, "w6")
    posts = _posts(real_redis, "w6")
    reply = svc.store._submit(
        keys=[k.commands, k.cmdids, k.meta, k.nudge, INBOX_KEY, WORK],
        args=[command.id, encode_command(command, 1), "", "", "", "", NUDGE_TTL_MS, "w6", 1000],
    )
    assert reply[0] == 1 and reply[2] == real_redis.hget(k.meta, "change_id") and reply[3] == 1
    assert not real_redis.exists(k.nudge) and real_redis.zscore(WORK, "w6") is not None
    assert _posts(real_redis, "w6") == posts + 1


def test_a_meta_change_id_written_by_hand_reads_the_changes_from_the_start(real_redis: redis.Redis) -> None:
    """A meta.change_id that is no stream id (written by hand) is no mark: the submit
    answers "0-0", and the answer is found (review of 00dc289, finding 3: Redis's bare
    "Invalid stream ID" naming neither the key nor the field)."""
    svc, folder, command = _pending_turn(real_redis, "cj")
    real_redis.hset(Keys("cj").meta, "change_id", "junk")
    submitted = svc._submit_signed("cj", command)
    assert submitted.mark == "0-0"
    fold(folder, "cj")
    answer = svc.answer("cj", command.id, after=submitted.mark, wait=5, stream_id=submitted.stream_id, seat=0)
    assert answer.applied and answer.view is not None
