"""The workers' inbox: a stream of game ids that have work, shared by all workers.

A client that appended a command posts the game id here (once per burst, guarded by
the game's nudge key); workers read it as one consumer group, so each post reaches
one worker, within a millisecond, without a queue job per command.  Entries are read
without acknowledgement: a post lost with a crashed worker is recovered by the
workers' sweep, which re-posts every unfinished game that has work but no worker.
"""

from __future__ import annotations

import redis

__all__ = ["Inbox", "INBOX_KEY", "GROUP"]

INBOX_KEY = "red7:inbox"
GROUP = "workers"
MAXLEN = 100_000


class Inbox:
    def __init__(self, connection: redis.Redis) -> None:
        self.redis = connection
        self._group_ready = False

    def post(self, game_id: str) -> None:
        if not self._group_ready:
            self.ensure_group()  # so a post made before any worker started is not missed
        self.redis.xadd(INBOX_KEY, {"g": game_id}, maxlen=MAXLEN, approximate=True)

    def ensure_group(self) -> None:
        """Create the workers' group (reading from the start of the inbox) if it is missing."""
        try:
            self.redis.xgroup_create(INBOX_KEY, GROUP, id="0", mkstream=True)
        except redis.exceptions.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._group_ready = True

    def recheck_group(self) -> None:
        """Have the next post or take make sure of the group again (a restarted Redis may have lost it)."""
        self._group_ready = False

    def take(self, consumer: str, count: int = 32, block_ms: int = 500) -> list[str]:
        """Game ids posted since this group last read, waiting up to ``block_ms``."""
        if not self._group_ready:
            self.ensure_group()
        reply = self.redis.xreadgroup(GROUP, consumer, {INBOX_KEY: ">"}, count=count, block=block_ms, noack=True)
        if not reply:
            return []
        assert isinstance(reply, list)  # RESP2, this connection's protocol: [[stream, entries]]
        games = []
        for _stream, entries in reply:
            for _id, fields in entries:
                value = fields.get(b"g")
                if value and value.isascii():  # game ids are a-z 0-9 -: bytes written by hand are no game
                    games.append(value.decode())
        return list(dict.fromkeys(games))  # each game once, first-posted first
