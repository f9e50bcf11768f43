"""Commands far larger than any client sends, put on the stream to make the log unreadable.

A worker answered a 300 KB command whose type was 300,000 control characters with a
rejection quoting the type's repr (four characters each): a 1.2 MB log event, over the
limit every reader refuses. The game then broke at its next rebuild and failed its
audit. A turn text just under 1 MiB did the same through a refused turn's ``text``.
Commands are now capped far below the log's limit, and what an answer quotes is short;
submit.lua refuses them, so they are put on the stream by hand here, as a writer to
Redis could, and the worker reads only their size.
"""

from __future__ import annotations

import msgpack
import pytest

from red7es.service.audit import PASS, audit_record
from red7es.service.envelope import MAX_COMMAND_SIZE, MAX_SIZE
from red7es.service.events import CommandRejected, SeatSpec
from red7es.service.store import CommandTooLarge, Keys, now_ms
from red7es.variant import Variant

from .conftest import Games
from .tamper import events_of

TYPE_BOMB = {"type": "\x01" * 300_000, "version": 1, "at": 1, "data": {}}
TURN_BOMB = {
    "type": "Turn",
    "version": 1,
    "at": 1,
    "data": {"id": "t-bomb", "seat": 0, "turn": "p:R7 " * 200_000, "by": "person", "sig": ""},
}


@pytest.mark.parametrize("bomb", [TYPE_BOMB, TURN_BOMB], ids=["type", "turn"])
def test_an_oversized_command_is_answered_briefly_and_the_game_stays_readable(games: Games, bomb: dict) -> None:
    svc = games.service
    created = svc.create(
        Variant(2), [SeatSpec("ann"), SeatSpec("bob")], seed="oversized", join=["ann", "bob"], game_id="g", wait=None
    )
    games.settle("g")
    raw = msgpack.packb({**bomb, "at": now_ms()})
    assert len(raw) > MAX_COMMAND_SIZE
    with pytest.raises(CommandTooLarge):  # submit.lua refuses it: only a writer to Redis can put it there
        svc.store.submit("g", "bomb", raw)
    stream_id = games.connection.xadd(Keys("g").commands, {"c": raw}).decode()
    games.settle("g")
    answer = events_of(games.record("g"))[-1]
    assert isinstance(answer, CommandRejected) and answer.kind == "corrupt" and answer.id == stream_id
    assert answer.reason == f"command {stream_id} is larger than {MAX_COMMAND_SIZE} bytes"
    assert all(len(e.raw) < MAX_SIZE // 16 for e in games.record("g").events)
    games.worker.folder.tables.clear()  # a worker that rebuilds the game reads its log again
    mover = ("ann", "bob")[svc.view("g")["to_move"]]
    svc.submit("g", mover, created.tokens[mover], "fold")
    games.settle("g")
    assert svc.view("g")["status"] == "over" and "broken" not in svc.store.meta("g")
    assert audit_record(games.record("g")).result == PASS


def test_a_long_unknown_type_is_quoted_short(games: Games) -> None:
    svc = games.service
    svc.create(Variant(2), [SeatSpec("ann"), SeatSpec("bob")], seed="long", game_id="g", wait=None)
    games.settle("g")
    name = "\x01" * 3000
    stream_id = svc.store.submit("g", "long", msgpack.packb({"type": name, "version": 1, "at": 1, "data": {}}))[0]
    games.settle("g")
    answer = events_of(games.record("g"))[-1]
    assert isinstance(answer, CommandRejected)
    assert answer.reason == f"command {stream_id} has unknown type {repr(name)[:40]}… (12,002 characters)"
