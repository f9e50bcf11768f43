"""The workers' inbox: a stream of game ids that have work, shared by all workers.

A client that appended a command posts the game id here (once per burst, guarded by
the game's nudge key); workers read it as one consumer group, so each post reaches
one worker, within a millisecond, without a queue job per command.  Entries are read
without acknowledgement: a post lost with a crashed worker is recovered by the
workers' sweep, which re-posts every unfinished game that has work but no worker.

A second inbox, ``red7:inbox:slow``, holds the games whose bot to move thinks long:
only workers that take slow bots read it (docs/architecture.md, *Slow bots*), so the
first inbox, where people's moves arrive, is never queued behind a long search.
"""

from __future__ import annotations

from typing import NamedTuple

import redis

from .store import stream_order, whole_number

__all__ = ["Carried", "Inbox", "INBOX_KEY", "GROUP", "Post", "SLOW_INBOX_KEY"]

INBOX_KEY = "red7:inbox"
SLOW_INBOX_KEY = "red7:inbox:slow"
GROUP = "workers"
MAXLEN = 100_000


class Carried(NamedTuple):
    """A command a post carries (``submit.lua``): its stream id, the game's version and
    cursor as it was stored, its bytes. A copy of what the commands stream holds, for a
    worker whose table is at that version (or catches up to it) to answer without reading
    the game (issue #23)."""

    stream_id: str
    version: int
    command: bytes
    cursor: str


class Post(NamedTuple):
    """A game taken from the inbox: whether every post of it said the game is on the work
    index (``i``), and the command it carries when it was posted once, with one."""

    game_id: str
    indexed: bool
    carried: Carried | None = None


def _carried(fields: dict[bytes, bytes]) -> Carried | None:
    """The command a post's fields carry (c, v, k, b), or None for none, or for fields that
    are not what ``submit.lua`` writes (written by hand: the game is folded as usual)."""
    stream_id, version, command, cursor = (fields.get(key) for key in (b"c", b"v", b"b", b"k"))
    if stream_id is None or version is None or command is None or cursor is None:
        return None
    number = whole_number(version)
    ids = [raw.decode("ascii", "replace") for raw in (stream_id, cursor)]
    if number is None or any(stream_order(i) == (-1, -1) for i in ids):
        return None
    return Carried(ids[0], number, command, ids[1])


class Inbox:
    def __init__(self, connection: redis.Redis, key: str = INBOX_KEY) -> None:
        self.redis = connection
        self.key = key
        self._group_ready = False

    def ready_key(self) -> str:
        """The inbox's key, the workers' group made sure of first (once, until
        :meth:`recheck_group`): so a post made before any worker started is not missed."""
        if not self._group_ready:
            self.ensure_group()
        return self.key

    def post(self, game_id: str) -> None:
        self.redis.xadd(self.ready_key(), {"g": game_id}, maxlen=MAXLEN, approximate=True)

    def post_once(self, game_id: str) -> None:
        """Post the game unless it already waits here, not yet taken by any worker.

        For the slow-bot inbox, which a game may wait on for minutes: a second entry
        would have it played twice as often as the games queued behind it.
        """
        if not self.waiting(game_id):
            self.post(game_id)

    def waiting(self, game_id: str) -> bool:
        """Whether a post of the game is in the inbox and no worker has taken it yet."""
        try:
            groups = self.redis.xinfo_groups(self.key)
        except redis.exceptions.ResponseError:
            return False  # no inbox yet
        taken = next((g["last-delivered-id"] for g in groups if g["name"] == GROUP.encode()), None)
        if taken is None:
            return False
        rows = self.redis.xrange(self.key, min=b"(" + taken)  # the entries after the last one taken
        assert isinstance(rows, list)  # RESP2 bytes, as in take()
        return any(fields and fields.get(b"g") == game_id.encode() for _id, fields in rows)

    def ensure_group(self) -> None:
        """Create the workers' group (reading from the start of the inbox) if it is missing."""
        try:
            self.redis.xgroup_create(self.key, GROUP, id="0", mkstream=True)
        except redis.exceptions.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._group_ready = True

    def recheck_group(self) -> None:
        """Have the next post or take make sure of the group again (a restarted Redis may have lost it)."""
        self._group_ready = False

    def take(self, consumer: str, count: int = 32, block_ms: int | None = 500) -> list[str]:
        """Game ids posted since this group last read, waiting up to ``block_ms`` (None: not at all)."""
        return [post.game_id for post in self.take_posts(consumer, count, block_ms)]

    def take_posts(self, consumer: str, count: int = 32, block_ms: int | None = 500) -> list[Post]:
        """:meth:`take`, each game as a :class:`Post`: with whether every post of it said
        the game is on the work index (``i``: posted by ``submit.lua`` in the step that
        added it there), so the worker need not add it again as it takes the game, and the
        command a game posted once carries (issue #23)."""
        reply = self.redis.xreadgroup(GROUP, consumer, {self.ready_key(): ">"}, count=count, block=block_ms, noack=True)
        if not reply:
            return []
        assert isinstance(reply, list)  # RESP2, this connection's protocol: [[stream, entries]]
        games: dict[str, Post] = {}  # each game once, first-posted first
        for _stream, entries in reply:
            for _id, fields in entries:
                value = fields.get(b"g")
                if value and value.isascii():  # game ids are a-z 0-9 -: bytes written by hand are no game
                    game_id = value.decode()
                    indexed = fields.get(b"i") == b"1"
                    earlier = games.get(game_id)
                    if earlier is None:
                        games[game_id] = Post(game_id, indexed, _carried(fields))
                    else:  # posted again: its commands are read from the game
                        games[game_id] = Post(game_id, earlier.indexed and indexed)
        return list(games.values())
