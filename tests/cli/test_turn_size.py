"""``red7 move`` with a turn too large for any referee (issue 24, point 11).

It waited 11 s and said "no answer yet ... the turn is stored and will be answered, so do
not play another", though the worker had answered it at once as corrupt under its stream
id.  It is a usage mistake, refused before anything is sent.
"""

from __future__ import annotations

import redis
from support import Red7, fails

from red7es.service.store import Keys

from .test_commands import create_to_move


def test_a_turn_too_large_is_a_usage_error_and_nothing_is_sent(alice: Red7) -> None:
    game, _view = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="huge-turn")
    with redis.Redis.from_url(alice.url) as connection:
        before = connection.xlen(Keys(game).commands)
        result = alice("move", game, "p:R7 " * 4000)
        err = fails(result, 2)
        assert err.splitlines()[-1].startswith("Error: a turn is at most 16,"), err
        assert err.splitlines()[-1].endswith(" bytes; this one is 19,999"), err
        assert connection.xlen(Keys(game).commands) == before
    alice.ok("move", game, "--fold")  # the game goes on: the seat is still to move
