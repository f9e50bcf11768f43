"""A turn too large for any referee, and answers keyed by stream id (issue 24, point 11).

A turn of 20 KB was stored, answered as corrupt under its stream id (the worker cannot read
the command id of a command it cannot read), and the client, looking only for its command
id, waited 11 s and said "no answer yet ... do not play another".  Now the client refuses
such a turn before sending it, and a wait for an answer recognises one under the stream id.
"""

from __future__ import annotations

import re

import pytest
import redis
from support import WorkerPool, new_id

from red7es.service.client import GameService, Rejected, TurnTooLarge
from red7es.service.envelope import MAX_COMMAND_SIZE
from red7es.service.folding import Folder
from red7es.service.store import Keys
from red7es.variant import Variant

from .helpers import fold, offline_service, person


def _turn_of(size: int) -> str:
    """A turn whose text is exactly ``size`` bytes (4- and 5-character steps, spaces between)."""
    for fives in range(5):
        fours, rest = divmod(size + 1 - 6 * fives, 5)
        if rest == 0 and fours >= 0:
            return " ".join(["p:R7"] * fours + ["7c:G2"] * fives)
    raise AssertionError(size)


def test_a_turn_too_large_is_refused_before_it_is_sent(real_redis: redis.Redis) -> None:
    svc = offline_service(real_redis)
    game = new_id("huge")
    created = svc.create(Variant(2), [person("ann"), person("bob")], seed="huge", game_id=game, join=["ann"], wait=None)
    fold(Folder(svc.store), game)  # its first view
    token = created.tokens["ann"]
    with pytest.raises(TurnTooLarge) as refused:
        svc.submit(game, "ann", token, "p:R7 " * 4000)
    assert isinstance(refused.value, Rejected)  # what a caller already catches for a turn it cannot send
    room = refused.value.room
    assert str(refused.value) == f"a turn is at most {room:,} bytes; this one is 19,999"
    assert MAX_COMMAND_SIZE - 400 < room < MAX_COMMAND_SIZE
    assert real_redis.xlen(Keys(game).commands) == 1  # only the create: nothing was sent
    with pytest.raises(TurnTooLarge):
        svc.submit(game, "ann", token, _turn_of(room + 1), command_id="c" * 32)
    # the room is exact: a turn of that many bytes makes a command of at most the limit, and is sent
    svc.submit(game, "ann", token, _turn_of(room), command_id="c" * 32)
    assert real_redis.xlen(Keys(game).commands) == 2


def test_an_answer_under_the_stream_id_is_the_answer(real_redis: redis.Redis, workers: WorkerPool) -> None:
    """A command the worker cannot read is answered under its stream id: ``answer`` waited
    for its command id in vain, until NoAnswer."""
    workers.start(1, wait=True)
    svc = GameService(real_redis)
    game = new_id("sid")
    svc.create(Variant(2), [person("ann"), person("bob")], seed="sid", game_id=game, join=["ann", "bob"], wait=30)
    stream_id, _duplicate = svc.store.submit(game, "unreadable", b"\xc1 not msgpack")
    svc.schedule(game)
    answer = svc.answer(game, "unreadable", wait=60)
    assert (answer.command_id, answer.applied) == ("unreadable", False)
    assert answer.reason is not None
    assert re.fullmatch(rf"command {stream_id} is not valid msgpack \(\w+\)", answer.reason), answer.reason
    assert answer.events[0]["id"] == stream_id and answer.events[0]["kind"] == "corrupt"
