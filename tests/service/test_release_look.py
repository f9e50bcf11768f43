"""release_look.lua decides in Lua what :func:`red7es.service.folding.has_work` decides in
Python (whether a game has unanswered commands or a bot to move): the script takes a game
with no work off the work index, the worker then asks ``has_work`` whether to wake anyone.
Should the two differ, a game with work could leave the index (and be lost to the sweep if
its worker died) or a game without could stay on it.  These tests hold them alike on every
combination of the meta fields and command streams that either reads."""

from __future__ import annotations

import itertools

import redis

from red7es.service.folding import has_work
from red7es.service.store import GameStore, Keys
from red7es.service.work_index import WORK

ABSENT = None  # the meta field is not set at all

# Each meta field's values that either side tells apart, with ones it must not (an empty
# ``broken``, a ``bot_to_move`` of "0"): together they make the states no commands,
# commands after the cursor, cursor at the last command, cursor past it, bot to move,
# person to move, game over, broken, and a meta never written.
BROKEN = (ABSENT, "", "bad log")
BOT_TO_MOVE = (ABSENT, "0", "1")
STATUS = (ABSENT, "playing", "over")
CURSOR = (ABSENT, "0-0", "1-0", "2-0")
COMMANDS: tuple[tuple[str, ...], ...] = ((), ("1-0",), ("1-0", "2-0"))

State = tuple[dict[str, str], tuple[str, ...]]


def _states() -> list[State]:
    states = []
    for broken, bot, status, cursor, commands in itertools.product(BROKEN, BOT_TO_MOVE, STATUS, CURSOR, COMMANDS):
        fields = {"broken": broken, "bot_to_move": bot, "status": status, "cursor": cursor}
        states.append(({k: v for k, v in fields.items() if v is not ABSENT}, commands))
    return states


def _write(r: redis.Redis, game_id: str, state: State) -> None:
    """Store the state as a game's meta and commands, the game on the work index."""
    meta, commands = state
    k = Keys(game_id)
    if meta:
        r.hset(k.meta, mapping=meta)  # type: ignore[arg-type]
    for stream_id in commands:
        r.xadd(k.commands, {"c": b"x"}, id=stream_id)
    r.zadd(WORK, {game_id: 0})


def _last_id(commands: tuple[str, ...]) -> str:
    return commands[-1] if commands else "0-0"


def test_release_look_takes_off_the_index_exactly_the_games_has_work_says_have_none(real_redis: redis.Redis) -> None:
    store = GameStore(real_redis)
    states = _states()
    disagree = []
    for n, state in enumerate(states):
        game_id, (written, commands) = f"s{n}", state
        _write(real_redis, game_id, state)
        meta, last, off = store.release_and_look(game_id, "me", may_leave=True)
        assert (meta, last) == (written, _last_id(commands))  # the script read the state written
        assert off == (real_redis.zscore(WORK, game_id) is None)
        if off == has_work(written, _last_id(commands)):  # off the index although work is left, or not
            disagree.append(state)
    assert disagree == []
    answers = {has_work(meta, _last_id(commands)) for meta, commands in states}
    assert answers == {True, False}  # both answers were asked for


def test_release_look_leaves_a_game_with_work_left_on_the_index(real_redis: redis.Redis) -> None:
    """``may_leave=False`` (the worker stopped with work left): no state takes the game off."""
    store = GameStore(real_redis)
    for n, state in enumerate(_states()):
        _write(real_redis, f"s{n}", state)
        assert store.release_and_look(f"s{n}", "me", may_leave=False)[2] is False
        assert real_redis.zscore(WORK, f"s{n}") == 0
