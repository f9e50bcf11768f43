"""A game rolled back behind its players' backs is told to them (issue 24, point 15).

An OS crash under ``appendfsync everysec`` can cut the last second of writes off
Redis's append-only file: acknowledged moves, seen by every client, are gone after
the restart. Here the game's keys are put back as a DUMP taken two moves earlier
(what such a restart leaves), on a real Redis with real workers; the client, which
remembers the log heads it was shown, says so on its next read, and ``audit --as``
fails the game.
"""

from __future__ import annotations

import time

import redis
from support import Red7, wait_for

GAME = "rolled"


def keys_of(connection: redis.Redis, game: str) -> list[bytes]:
    return sorted(connection.scan_iter(match=f"red7:{{{game}}}:*", count=100))


def snapshot(connection: redis.Redis, game: str) -> dict[bytes, bytes]:
    """The game's lasting keys (not its lease or nudge, which expire), dumped in one transaction."""
    keys = [k for k in keys_of(connection, game) if not k.endswith((b":lease", b":nudge"))]
    pipe = connection.pipeline(transaction=True)
    for key in keys:
        pipe.dump(key)
    return dict(zip(keys, pipe.execute(), strict=True))


def restore(connection: redis.Redis, game: str, dumped: dict[bytes, bytes]) -> None:
    """The game's keys as they were when dumped (a restart that lost the writes since)."""
    pipe = connection.pipeline(transaction=True)
    for key in keys_of(connection, game):
        pipe.delete(key)
    for key, value in dumped.items():
        pipe.restore(key, 0, value)
    pipe.execute()


def settled(alice: Red7, connection: redis.Redis) -> list[str]:
    """Alice's legal turns once it is her turn again (the bot has answered), waiting on the changes stream."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        mark = connection.xrevrange(f"red7:{{{GAME}}}:changes", count=1) or [(b"0-0", {})]
        legal: list[str] = alice.json("moves", GAME)["legal"]
        if legal:
            return legal
        connection.xread({f"red7:{{{GAME}}}:changes": mark[0][0]}, block=1000)
    raise AssertionError("the bot never answered")


def test_a_game_rolled_back_is_told_by_show_watch_and_audit_as(alice: Red7) -> None:
    alice.ok("new", "-p", "alice", "--bot", "greedy", "--id", GAME, "--seed", "rollback", "--rounds", "3")
    connection = redis.Redis.from_url(alice.url)
    try:
        alice.ok("move", GAME, settled(alice, connection)[0])
        settled(alice, connection)  # the bot's reply is in: nothing writes to the game now
        before = snapshot(connection, GAME)
        version = int(connection.hget(f"red7:{{{GAME}}}:meta", "version") or 0)
        alice.ok("move", GAME, settled(alice, connection)[0])
        shown = alice.ok("show", GAME)
        assert "warning" not in shown.stderr  # nothing lost yet: nothing said
        assert int(connection.hget(f"red7:{{{GAME}}}:meta", "version") or 0) > version

        restore(connection, GAME, before)

        warning = f"warning: game {GAME} is not what you were shown: the log was rolled back: events {version} to "
        show = alice("show", GAME)
        assert show.exit_code == 0, show.output
        assert show.stderr.startswith(warning) and show.stderr.endswith(
            ", which you were shown, are gone (red7 help trust)\n"
        ), show.stderr
        watch = alice("watch", GAME, "--timeout", "0.2")
        assert watch.exit_code == 0 and watch.stderr.startswith(warning), watch.stderr
        audit = alice("audit", GAME, "--as", "alice")
        assert audit.exit_code == 1
        assert audit.stdout.startswith(f"FAIL {GAME}: event {version}: rolled-back: the log was rolled back"), (
            audit.stdout
        )
        # played on from the rolled-back version, the game still is not what alice saw
        alice.ok("move", GAME, settled(alice, connection)[0])
        again = alice("show", GAME)
        assert again.stderr.startswith(f"warning: game {GAME} is not what you were shown: events 0 to "), again.stderr
    finally:
        connection.close()


def test_a_log_key_of_the_wrong_type_does_not_stop_show(alice: Red7) -> None:
    """The check of what was shown reads the log: a log key written by hand is the workers' to report."""
    game = "wrongtype"
    alice.ok("new", "-p", "alice", "--bot", "greedy", "--id", game, "--seed", "rollback")
    connection = redis.Redis.from_url(alice.url)
    try:
        # `new` returns once the game is created; a bot moving first is folded in an append
        # after it, which a damaged log would make the worker refuse (and break the game):
        # damage the log only once nothing is left for a worker to append.
        meta = f"red7:{{{game}}}:meta"
        wait_for(lambda: connection.hmget(meta, "to_move", "bot_to_move") == [b"0", b"0"], "alice to move")
        connection.delete(f"red7:{{{game}}}:log")
        connection.set(f"red7:{{{game}}}:log", "x")
        shown = alice("show", game)
        assert (shown.exit_code, shown.stderr) == (0, ""), shown.output
    finally:
        connection.close()
