"""A game key that holds what no worker writes (a view that is not msgpack, a meta field
that is not a number) is said in one line naming the game, the key and why: never a
msgpack or ``int()`` traceback, and never a reason to hide the other games."""

from __future__ import annotations

import re
from typing import Any

import msgpack
import pytest
import redis
from support import damaged_key

from red7es.service.audit import FAIL, audit_game
from red7es.service.client import GameService, UnreadableKey, meta_int
from red7es.service.records import export
from red7es.service.store import Keys
from red7es.workers.context import WorkerContext

from .helpers import all_bot_game, offline_service

# (key suffix, field or None for a string key, value, the problem said)
DAMAGE = {
    "view-not-msgpack": ("view:public", None, b"\xc1", r"not valid msgpack \(\w+\)"),
    "view-not-a-map": ("view:public", None, msgpack.packb(7), "an int, not a map"),
    "view-seats-not-maps": ("view:public", None, msgpack.packb({"seats": [1]}), "its seats are not a list of maps"),
    "version-not-a-number": ("meta", "version", b"abc", "its version is 'abc', not a whole number"),
    "to-move-not-a-number": ("meta", "to_move", b"-1", "its to_move is '-1', not a whole number"),
    "created-not-a-number": ("meta", "created", b"1.5e12", "its created is '1.5e12', not a whole number"),
}


def _played(connection: redis.Redis, *games: str) -> GameService:
    """Two-bot games played to the end in-process (no worker processes)."""
    service = offline_service(connection)
    context = WorkerContext(connection, owner="test")
    for game in games:
        all_bot_game(service, game, players=2)
        context.advance(game)
    return service


@pytest.mark.parametrize("case", list(DAMAGE))
def test_games_lists_a_damaged_game_as_unreadable_and_every_other_as_before(fake_redis: Any, case: str) -> None:
    """Was a FormatError/ValueError traceback: one bad key broke the listing of every game."""
    service = _played(fake_redis, "before", "damaged", "after")
    intact = {s.game_id: s for s in service.games()}
    suffix, field, value, problem = DAMAGE[case]
    key = f"red7:{{damaged}}:{suffix}"
    with damaged_key(fake_redis, key, value, field):
        listed = {s.game_id: s for s in service.games()}
    assert set(listed) == {"before", "damaged", "after"}
    assert listed["before"] == intact["before"] and listed["after"] == intact["after"]
    damaged = listed["damaged"]
    assert damaged.status == "unreadable"
    assert damaged.unreadable is not None
    assert re.fullmatch(rf"game damaged: {re.escape(key)} cannot be read: {problem}.*", damaged.unreadable)
    assert intact["damaged"].unreadable is None


@pytest.mark.parametrize("suffix", ["meta", "view:public"])
def test_games_lists_a_game_whose_key_is_of_another_type_as_unreadable(real_redis: redis.Redis, suffix: str) -> None:
    """Was a WRONGTYPE ResponseError for the whole listing (the gateway's GET /api/games
    answered 500): a key of another type, written by hand, must hide no other game."""
    service = _played(real_redis, "before", "damaged", "after")
    intact = {s.game_id: s for s in service.games()}
    key = f"red7:{{damaged}}:{suffix}"
    real_redis.delete(key)
    real_redis.rpush(key, "not what a worker writes")
    listed = {s.game_id: s for s in service.games()}
    assert set(listed) == {"before", "damaged", "after"}
    assert listed["before"] == intact["before"] and listed["after"] == intact["after"]
    assert listed["damaged"].status == "unreadable"
    assert listed["damaged"].unreadable is not None and key in listed["damaged"].unreadable
    assert "WRONGTYPE" in listed["damaged"].unreadable


@pytest.mark.parametrize("seat", [None, 0])
def test_view_of_a_damaged_view_names_the_key(fake_redis: Any, seat: int | None) -> None:
    service = _played(fake_redis, "g")
    key = Keys("g").public_view if seat is None else Keys("g").view(seat)
    with damaged_key(fake_redis, key, b"\xc1"), pytest.raises(UnreadableKey) as caught:
        service.view("g", seat)
    assert re.fullmatch(rf"game g: {re.escape(key)} cannot be read: not valid msgpack \(\w+\)", str(caught.value))
    assert (caught.value.game_id, caught.value.key) == ("g", key)


def test_export_and_audit_of_a_meta_version_that_is_no_number(real_redis: redis.Redis) -> None:
    """export was a ValueError traceback; the audit of the game fails `unreadable` and
    the other games are audited as before (what `red7 audit --all` relies on)."""
    service = _played(real_redis, "good", "bad")
    line = "game bad: red7:{bad}:meta cannot be read: its version is 'abc', not a whole number"
    with damaged_key(real_redis, Keys("bad").meta, b"abc", field="version"):
        with pytest.raises(UnreadableKey, match=re.escape(line)):
            export(service, "bad")
        report = audit_game(service, "bad")
        assert report.result == FAIL and report.game == "bad"
        assert report.divergence is not None and report.divergence.check == "unreadable"
        assert report.divergence.reason == line
        assert line in report.line()
        assert audit_game(service, "good").passed


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", 5), ("0", 0), ("12", 12), ("abc", None), ("-1", None), (" 7", None), ("1.0", None), ("\u0663", None)],
)
def test_meta_int_takes_only_what_a_worker_writes(value: str, expected: int | None) -> None:
    meta = {"version": value}
    if expected is not None:
        assert meta_int("g", meta, "version", 5) == expected
        return
    with pytest.raises(UnreadableKey, match=r"^game g: red7:\{g\}:meta cannot be read: its version is .*"):
        meta_int("g", meta, "version", 5)
