"""The event store: a game's commands, log, views and bookkeeping on Redis.

Every key of one game shares the Redis Cluster hash tag ``{<game id>}`` so a game
lives on one shard and its Lua scripts are atomic::

    red7:{g}:commands   stream  every command submitted (field c = msgpack)
    red7:{g}:log        stream  the log of facts, one entry per append (v, e, e1, ...: red7es.service.stream_entries)
    red7:{g}:sealed     string  a finished game's log once compacted, in place of the stream (red7es.service.sealing)
    red7:{g}:changes    stream  public summaries of each append (and one entry if the game breaks), for watchers
    red7:{g}:meta       hash    version, entries, log_id, change_id, head, cursor, status, to_move, bot_to_move
    red7:{g}:secret     hash    the seed until the game is over
    red7:{g}:cmdids     hash    a client's command id -> stream id (exactly-once submission; bots' ids are not stored)
    red7:{g}:view:public string msgpack public view
    red7:{g}:view:<n>   string  msgpack view of seat n
    red7:{g}:lease      string  which worker is folding the game right now
    red7:{g}:nudge      string  a worker has been woken for the game and not finished with it
                                ("slow": the game waits on the slow-bot inbox)

plus keys outside any game: ``red7:games`` (sorted set of game ids by creation
time), ``red7:archived`` (hash of the stubs of games ``red7 archive`` moved to record
files: red7es.service.archive), ``red7:active`` (set of games not over yet, which workers sweep) and
``red7:max-bot-time`` (the workers' cap on a bot's decision, which clients hold new
games to).
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, NamedTuple

import redis

from ..wording import counted
from .connection import is_cluster
from .deadlines import DEADLINES, SYNC, append_indexed
from .envelope import MAX_COMMAND_SIZE, CorruptEvent, pack_map
from .stream_entries import entry_field, log_rows_events
from .work_index import WORK, WorkIndex

# KEYS: meta.  ARGV: the version the caller folded.  Only at that version (no append since).
_CLEAR_BOT_TO_MOVE = """
if redis.call('HGET', KEYS[1], 'version') == ARGV[1] then redis.call('HSET', KEYS[1], 'bot_to_move', 0) end
return 1
"""

__all__ = [
    "Appended",
    "GameStore",
    "AppendConflict",
    "DamagedGame",
    "ReservedId",
    "MismatchedId",
    "NoSuchGame",
    "Keys",
    "ARCHIVED",
    "Batch",
    "valid_game_id",
    "TOURNAMENT_GAMES",
    "start_after",
    "stream_order",
    "whole_number",
    "new_game_id",
    "now_ms",
    "text",
    "entry_field",
    "GameIsBroken",
    "OverLimit",
    "RateGuard",
    "GameIsOver",
    "GameRemade",
    "CommandTooLarge",
    "log_length_problem",
    "DEFAULT_MAX_BOT_TIME",
    "MAX_BOT_TIME_KEY",
    "refused_key",
    "WorkState",
    "Submitted",
    "KEEP_CHANGES_MS",
]

_log = logging.getLogger(__name__)

KEEP_CHANGES_MS = 10 * 60 * 1000  # how long a finished game keeps every change, for watchers resuming

# The longest a bot may think on one turn unless the operator says otherwise (red7 worker
# --max-bot-time): long enough for a strong ismcts, short enough that a person waiting on
# a slow-bot worker is not kept long.  Workers publish theirs under MAX_BOT_TIME_KEY.
DEFAULT_MAX_BOT_TIME = 10.0
MAX_BOT_TIME_KEY = "red7:max-bot-time"
SLOW_NUDGE = b"slow"

_GAME_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
# Game ids starting so are kept for tournament games (red7es.tournament.ids.game_id):
# `red7 new --id` refuses them, so nobody takes the id of a game a tournament will create.
TOURNAMENT_GAMES = "t-"


def valid_game_id(game_id: str) -> bool:
    return bool(_GAME_ID.fullmatch(game_id))


def new_game_id() -> str:
    """A random game id (8 hex digits), for a game created without one.

    Public so that a caller can know the id before the game exists (``red7 play``
    names the game it leaves even when Ctrl-C comes while it is being created).
    """
    return secrets.token_hex(4)


def now_ms() -> int:
    return int(time.time() * 1000)


class Appended(NamedTuple):
    """What an append returns.  ``last_command`` is read by the same script as the append
    (append.lua), so a folder whose new cursor is that id knows no command waits without
    reading the stream again (issue #23)."""

    version: int  # the game's version (its log's length) after the append
    cursor: str  # the new cursor: the last command answered, the bot commands it wrote included
    last_command: str  # the commands stream's last id as the append left it ("0-0" for none)
    handed_back: bool = False  # the append released the lease, cleared the nudge (Batch.hand_back)


class Submitted(NamedTuple):
    """What :meth:`GameStore.submit_and_nudge` did, read in its one round trip."""

    stream_id: str  # the command's id on the commands stream ("" when refused)
    duplicate: bool  # the id was submitted before: stream_id is the first one's
    mark: str  # the game's last change id before the command was stored: its answer comes after
    must_wake: bool  # this call set the game's nudge and posted nothing: its caller must wake a worker
    refused: Exception | None = None  # why the command was not stored (to raise once a worker is woken)


class NoSuchGame(LookupError):
    def __init__(self, game_id: str) -> None:
        super().__init__(f"no game {game_id!r}")
        self.game_id = game_id


class ReservedId(ValueError):
    """A client command id that only workers may use."""


class MismatchedId(ValueError):
    """A command submitted under an id other than its own ``data.id``."""


class GameIsOver(ValueError):
    """A command for a game that has ended: its record is complete and stays so."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id} is over")
        self.game_id = game_id


class RateGuard(NamedTuple):
    """A rate counter that ``submit.lua`` bumps with the append and refuses past its limit
    (the HTTP gateway's per seat: one round trip for the count and the append)."""

    key: str  # in the game's slot: red7:gateway:rate:seat:{G}:S
    limit: int
    window_ms: int


class GameRemade(ValueError):
    """A command checked against a game that is no longer there under its id: the id was
    made again since (``submit.lua`` compares ``meta.created``); nothing was stored."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id} was made again since its command was checked")
        self.game_id = game_id


class OverLimit(ValueError):
    """A command refused by its :class:`RateGuard`: over the limit for ``left_ms`` more ms."""

    def __init__(self, left_ms: int) -> None:
        super().__init__(f"over the limit for {left_ms} ms more")
        self.left_ms = left_ms


class GameIsBroken(ValueError):
    """A command for a broken game (``meta.broken``): no worker folds it again."""

    def __init__(self, game_id: str, reason: str) -> None:
        super().__init__(reason)
        self.game_id = game_id
        self.reason = reason


class CommandTooLarge(ValueError):
    """A command larger than any referee reads (MAX_COMMAND_SIZE): refused, never stored."""

    def __init__(self, size: int) -> None:
        super().__init__(f"a command is at most {MAX_COMMAND_SIZE:,} bytes; this one is {size:,}")
        self.size = size


class AppendConflict(RuntimeError):
    """Someone else extended the game first (or a command arrived before a bot move)."""


class DamagedGame(RuntimeError):
    """The game's keys cannot take an append or a command: nothing was written, and the game needs a human.

    A key of the wrong type (``red7:{g}:cmdids`` made a string), a stream with no ids left,
    or a log whose length is not ``meta.version``.  Retrying cannot help: the folder (or the
    client whose command was refused) marks the game broken with this reason.
    """


# What submit.lua answers for a command it did not store (:meth:`GameStore._submitted` raises it)
_REFUSALS = (
    NoSuchGame,
    ReservedId,
    MismatchedId,
    GameIsOver,
    GameIsBroken,
    OverLimit,
    GameRemade,
    CommandTooLarge,
    DamagedGame,
)


def refused_key(key: str, error: str) -> str:
    """Why ``key`` refused a client's command, from Redis's error: one line naming the key."""
    return f"{key} cannot take a command: {error.removeprefix('ERR ')}"


class Keys:
    """The Redis keys of one game."""

    def __init__(self, game_id: str) -> None:
        if not valid_game_id(game_id):
            raise NoSuchGame(game_id)
        base = f"red7:{{{game_id}}}"
        self.game_id = game_id
        self.commands = f"{base}:commands"
        self.log = f"{base}:log"
        self.changes = f"{base}:changes"
        self.meta = f"{base}:meta"
        self.secret = f"{base}:secret"
        self.cmdids = f"{base}:cmdids"
        self.lease = f"{base}:lease"
        self.nudge = f"{base}:nudge"
        self.public_view = f"{base}:view:public"
        self.sealed = f"{base}:sealed"  # a finished game's log, once sealed (red7es.service.sealing)

    def view(self, seat: int) -> str:
        return f"red7:{{{self.game_id}}}:view:{seat}"


INDEX = "red7:games"
ARCHIVED = "red7:archived"  # hash: game id -> msgpack stub of a game moved out (red7es.service.archive)
ACTIVE = "red7:active"
_BLOCK_CHUNK_MS = 500  # longest single blocking read: below any sane socket timeout


class WorkState(NamedTuple):
    """What the sweep reads of one game: its meta, its lease, its last command."""

    meta: dict[str, str]
    lease: str | None  # who holds the game's lease, None for nobody
    lease_ms: int  # the lease's PTTL: -1 for one that never expires (a worker's always does), -2 for none
    last_command: str  # the id of the last command on its stream, "0-0" for none
    nudge_ms: int = -2  # the nudge's PTTL (-2: none): how long ago a worker was woken for it


@dataclass
class Batch:
    """One compare-and-append: events and views computed by a worker from a version."""

    expected_version: int
    expected_cursor: str
    cursor: str
    events: list[bytes]
    bot_commands: list[tuple[str, bytes]]
    head: bytes
    status: str
    to_move: int | None
    bot_to_move: bool
    changes: bytes
    views: dict[str, bytes]
    # A timed game only (RULES.md, Time): the seat to move's deadline (meta.deadline), the
    # time-out these events make (at, deadline) and the stream ids of the bot commands.
    timed: bool = False
    deadline: int | None = None
    time_out: tuple[int, int] | None = None
    bot_stream_ids: tuple[str, ...] = ()
    # A worker's lease token: if nothing is left to do after this append (no command waits,
    # no bot is to move), the append also hands the game back as release_and_look does
    # (release the lease, clear the nudge, off the work index): one script, not two.
    hand_back: str | None = None
    # Posted (issue #23; append.lua, Posted): the id of the one command a client's post
    # carried, answered by a worker that took no lease and read nothing: the append checks
    # it is the first after ``expected_cursor`` (else AppendConflict), and hands the game
    # back if nothing is left to do, the lease untouched. Untimed games, standalone Redis.
    posted: str = ""
    posted_command: bytes = b""  # the bytes the worker answered for it: the append checks they are the stored ones


def _script(name: str) -> str:
    return resources.files("red7es.service").joinpath(name).read_text()


def registered_script(connection: redis.Redis, name: str) -> Any:
    """The script ``name`` (a file of this package) registered on ``connection``, once per
    connection and script: for modules that run a script on a connection they are handed."""
    key = (id(connection), name)
    script = _REGISTERED.get(key)
    if script is None or script[0] is not connection:
        script = (connection, connection.register_script(_script(name)))
        _REGISTERED[key] = script
    return script[1]


_REGISTERED: dict[tuple[int, str], tuple[redis.Redis, Any]] = {}


class GameStore:
    """Reads and writes games on one Redis connection (bytes in, bytes out)."""

    def __init__(self, connection: redis.Redis, *, scripted_create: bool = True) -> None:
        """``scripted_create=False`` creates games with a WATCH/MULTI transaction instead
        of create.lua (:meth:`create`): for a user that may write a game's seed but not
        read it, which EVALSHA of a script naming the seed's key would need (the gateway's)."""
        self.redis = connection
        self.scripted_create = scripted_create
        self.keep_changes_ms = KEEP_CHANGES_MS  # a finished game's changes kept this long (compaction)
        self._create = connection.register_script(_script("create.lua"))
        self._submit = connection.register_script(_script("submit.lua"))
        self._append = connection.register_script(_script("append.lua"))
        self._release = connection.register_script(_script("release.lua"))
        self._release_look = connection.register_script(_script("release_look.lua"))
        self._renew = connection.register_script(_script("renew.lua"))
        self._drop_lease = connection.register_script(_script("drop_lease.lua"))
        self._sync_deadline = connection.register_script(SYNC)
        self._wake = connection.register_script(_script("wake.lua"))
        # False once Redis refused submit.lua naming the nudge, or wake.lua (a user whose ACL
        # may not read the nudge): the nudge is set with plain commands from then on
        self.scripted_wake = True
        self.work = WorkIndex(connection)  # games with work a worker may have dropped (the sweep's)

    # ------------------------------------------------------------------ writing

    def create(self, game_id: str, command_id: str, command: bytes, seed: bytes, created: int, genesis: bytes) -> bool:
        """Store a new game's seed and create command; False if the id is taken."""
        if len(command) > MAX_COMMAND_SIZE:  # (create.lua refuses it too)
            raise CommandTooLarge(len(command))
        k = Keys(game_id)
        # An archived game's id is never taken again (create.lua says why).  On one Redis
        # the create itself checks, atomically; a cluster keeps the archived hash in
        # another slot, so there it is asked in the round trip before.
        atomic = not is_cluster(self.redis)
        if atomic:
            self._index_first(game_id)
        elif self._indexed_with(game_id, lambda pipe: pipe.hexists(ARCHIVED, game_id))[0]:
            return False
        if self.scripted_create:
            archived_key, archived_arg = ([ARCHIVED], [game_id]) if atomic else ([], [])
            result = self._create(
                keys=[k.commands, k.meta, k.secret, k.cmdids, *archived_key],
                args=[command_id, command, seed.hex(), created, genesis.hex(), *archived_arg],
            )
        else:
            result = self._create_in_transaction(k, command_id, command, seed, created, genesis, atomic)
        if not result:
            return False
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(INDEX, {game_id: created})
        pipe.sadd(ACTIVE, game_id)
        pipe.execute()
        return True

    def _create_in_transaction(
        self, k: Keys, command_id: str, command: bytes, seed: bytes, created: int, genesis: bytes, archived: bool
    ) -> bool:
        """What create.lua does, as a WATCH/MULTI transaction: the same keys and fields,
        written at once or not at all, and only if no game holds the id.

        EVALSHA needs read and write permission on every key it names (Redis cannot tell
        what a script does with them), so a user allowed to write a game's seed but never
        to read it (docs/gateway.md, Its Redis user) cannot run create.lua.  The command's
        stream id is chosen here (``created``-0: the stream does not exist yet, so any id
        fits) because a transaction cannot hand XADD's id to the HSET after it.
        """
        stream_id = f"{created}-0"
        with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(k.commands, k.meta, k.secret, k.cmdids)  # type: ignore[no-untyped-call]
                    if pipe.exists(k.meta) or pipe.exists(k.commands):
                        return False
                    if archived:  # its own WATCH: the gateway's user may watch it under another ACL selector
                        pipe.watch(ARCHIVED)  # type: ignore[no-untyped-call]
                        if pipe.hexists(ARCHIVED, k.game_id):
                            return False
                    for key in (k.secret, k.cmdids):
                        kind = text(pipe.type(key))
                        if kind not in ("none", "hash"):
                            raise redis.ResponseError(f"{key} is a {kind}, not a hash: the game was not created")
                    pipe.multi()  # type: ignore[no-untyped-call]
                    pipe.hset(k.secret, "seed", seed.hex())
                    pipe.xadd(k.commands, {"c": command}, id=stream_id)
                    pipe.hset(k.cmdids, command_id, stream_id)
                    pipe.hset(
                        k.meta,
                        mapping={
                            "version": 0,
                            "cursor": "0-0",
                            "head": genesis.hex(),
                            "status": "new",
                            "created": created,
                            "to_move": "",
                            "bot_to_move": 0,
                        },
                    )
                    pipe.execute()
                    return True
                except redis.WatchError:
                    continue  # someone wrote one of the keys meanwhile: look again

    def _index_first(self, game_id: str) -> None:
        """Put a game on the work index before a command is stored for it, not only when a
        worker is woken after: a client killed between the two leaves work the sweep finds
        (an entry for a command refused, or a game never created, costs the sweep one look)."""
        self._indexed_with(game_id)

    def _indexed_with(
        self, game_id: str, *commands: Callable[[Any], object], kept: int = 0, index: bool = True
    ) -> list[Any]:
        """Add the game to the work index in the same round trip as ``commands`` (each
        queues one command on the pipeline it is given); their replies.  The add is best
        effort: refused (a user whose ACL predates the index), it is said once and the
        commands' work goes on; an error of theirs is raised, but for the last ``kept``
        commands', returned as replies (the caller raises it where it reads them).
        ``index=False``: the commands alone (the game is known to be on the index)."""
        pipe = self.redis.pipeline(transaction=False)  # other slots than the game's: not a transaction
        if index:
            self.work.add(game_id, client=pipe)
        for queue in commands:
            queue(pipe)
        replies = pipe.execute(raise_on_error=False)
        if index:
            indexed, *replies = replies
            if isinstance(indexed, Exception):
                self.work.refused(indexed)
        for reply in replies[: len(replies) - kept]:
            if isinstance(reply, Exception):
                raise reply
        return replies

    def submit(self, game_id: str, command_id: str, command: bytes) -> tuple[str, bool]:
        """Append a command once per id; returns (stream id, was it a duplicate)."""
        if len(command) > MAX_COMMAND_SIZE:  # (submit.lua refuses it too: this spares sending it)
            raise CommandTooLarge(len(command))
        k = Keys(game_id)
        keys = [k.commands, k.cmdids, k.meta]
        try:
            # The work index first, then the script, in one round trip: a pipeline runs in
            # order, so the game is on the index before its command is stored (issue #23).
            [reply] = self._indexed_with(
                game_id, lambda pipe: pipe.evalsha(self._submit.sha, 3, *keys, command_id, command)
            )
        except redis.exceptions.NoScriptError:  # the script not loaded yet (a restarted Redis): nothing ran
            reply = self._submit(keys=keys, args=[command_id, command])
        return self._submitted(game_id, command_id, reply)

    def submit_and_nudge(
        self,
        game_id: str,
        command_id: str,
        command: bytes,
        nudge_ttl_ms: int,
        inbox: tuple[str, int] | None = None,
        guard: RateGuard | None = None,
        checked_created: int | None = None,
    ) -> Submitted:
        """:meth:`submit`, the mark (the game's last change id as the store found it: the
        command's answer comes after it) and :meth:`set_nudge` just after, in one round trip
        (issue #23: a person's turn paid one for each).  With ``inbox`` (the workers' inbox
        key and length cap, on a standalone Redis) all of it is one call of ``submit.lua``,
        which also puts the game on the work index and posts it there: without setting the
        nudge when that add put it there, else when it sets the nudge (the post carries the
        command: docs/architecture.md, *Posted commands*).

        Without ``inbox`` (a cluster, whose scripts cannot span the game's slot and these
        keys) or for a user whose ACL refuses those keys in the script (the HTTP gateway's
        before 6 December 2026, which could only write the nudge: said once, and not asked
        again, :attr:`scripted_wake`), a pipeline runs in order: the game goes on the work
        index before its command is stored and again after it, and the nudge is set after,
        as :meth:`set_nudge` would.  A refused command is returned as ``refused`` rather
        than raised, with ``must_wake`` all the same: whoever set the nudge must wake a
        worker (or later commands would wait for the sweep); the script sets no nudge for a
        refused command.  With a ``guard``, the script counts it and refuses the command past its limit
        (:class:`OverLimit`).  With ``checked_created`` (the game's ``created`` when the
        caller checked the command), a game made again since under the id refuses it
        (:class:`GameRemade`), before counting."""
        if len(command) > MAX_COMMAND_SIZE:  # (submit.lua refuses it too: this spares sending it)
            raise CommandTooLarge(len(command))
        k = Keys(game_id)
        keys = [k.commands, k.cmdids, k.meta, *([guard.key] if guard else [])]
        args: list[str | bytes | int] = [command_id, command, *([guard.limit, guard.window_ms] if guard else ["", ""])]
        args += ["" if checked_created is None else str(checked_created), "1"]  # "1": answer the mark too
        if inbox is not None and self.scripted_wake:
            try:
                reply = self._submit(
                    keys=[*keys, k.nudge, inbox[0], WORK], args=[*args, nudge_ttl_ms, game_id, inbox[1]]
                )
            except redis.exceptions.NoPermissionError:
                self.scripted_wake = False  # nothing ran: the pipeline below, from now on
            except redis.exceptions.ResponseError as exc:
                return Submitted("", False, "0-0", False, exc)
            else:
                return self._scripted_submit(game_id, command_id, reply, nudge_ttl_ms)
        # The index add before the command (a pipeline cut short after the script still
        # leaves the game indexed) and again after it: a worker handing the game back in
        # between (append.lua, release_look.lua: nothing to do yet) takes the first add
        # off, and cannot take the second, since it sees the command from then on.  (On
        # one Redis, where a pipeline runs in order; a cluster's sends each node its own
        # commands at once, so there the adds are best effort, as before.)
        stored, indexed, nudged = self._indexed_with(
            game_id,
            lambda pipe: pipe.evalsha(self._submit.sha, len(keys), *keys, *args),
            lambda pipe: self.work.add(game_id, client=pipe),
            lambda pipe: pipe.set(k.nudge, 1, nx=True, px=nudge_ttl_ms),
            kept=3,
        )
        again = None
        if isinstance(stored, redis.exceptions.NoScriptError):  # not loaded yet (a restarted Redis): nothing ran
            stored = self._submit(keys=keys, args=args)
            # the add and the nudge again, after the command: a worker that held the nudge
            # may have handed the game back (nudge cleared, off the index) before it
            [again] = self._indexed_with(game_id, lambda pipe: pipe.set(k.nudge, 1, nx=True, px=nudge_ttl_ms))
        if isinstance(indexed, Exception):
            self.work.refused(indexed)
        if isinstance(nudged, Exception):
            raise nudged
        must_wake = bool(nudged) or bool(again)
        if isinstance(stored, Exception):
            return Submitted("", False, "0-0", must_wake, stored)
        try:
            stream_id, duplicate = self._submitted(game_id, command_id, stored)
        except _REFUSALS as exc:
            return Submitted("", False, "0-0", must_wake, exc)
        return Submitted(stream_id, duplicate, text(stored[2]), must_wake)

    def _scripted_submit(self, game_id: str, command_id: str, reply: Any, nudge_ttl_ms: int) -> Submitted:
        """submit.lua's reply when it woke a worker itself.  A wake it could not make (the
        nudge or the inbox refused it: a key of another type, written by hand, or a user
        whose ACL may not write them) is left to the caller (``must_wake``), the nudge set
        with a plain command first, as :meth:`set_nudge` would; an index add refused is
        said once (:meth:`WorkIndex.refused`)."""
        try:
            stream_id, duplicate = self._submitted(game_id, command_id, reply)
        except _REFUSALS as exc:
            return Submitted("", False, "0-0", False, exc)
        woken, indexed = reply[3], reply[4]
        if indexed:
            self.work.refused(redis.exceptions.ResponseError(text(indexed)))
        must_wake = False
        if not isinstance(woken, int):
            if text(woken).startswith("NOPERM"):
                self.scripted_wake = False  # (not asked again)
            self.set_nudge(game_id, nudge_ttl_ms)
            must_wake = True  # the nudge may have been set by the script before the post failed
        return Submitted(stream_id, duplicate, text(reply[2]), must_wake)

    def nudge_and_post(self, game_id: str, nudge_ttl_ms: int, inbox: tuple[str, int]) -> tuple[bool, bool]:
        """:meth:`set_nudge` and, when it sets the nudge, the post of the game to ``inbox``
        (its key and length cap) in the same atomic step (``wake.lua``; a standalone Redis
        only), in one round trip with the work index add.  Returns (whether this call set
        the nudge, whether its caller must still post: a user whose ACL refuses the script
        sets the nudge with plain commands, as :meth:`set_nudge` does)."""
        if not self.scripted_wake:
            nudged = self.set_nudge(game_id, nudge_ttl_ms)
            return nudged, nudged
        wake: list[str] = [Keys(game_id).nudge, inbox[0]]
        wake_args: list[str | int] = [nudge_ttl_ms, game_id, inbox[1]]
        [reply] = self._indexed_with(game_id, lambda pipe: pipe.evalsha(self._wake.sha, 2, *wake, *wake_args), kept=1)
        return self._after_wake(game_id, reply, wake, wake_args)

    def _after_wake(self, game_id: str, reply: Any, keys: list[str], args: list[str | int]) -> tuple[bool, bool]:
        """wake.lua's reply as (nudge set, caller must still post): run again if Redis lost
        the script; a user whose ACL refuses it (the gateway's: it may only write the nudge
        and the inbox) sets the nudge with plain commands, now and from then on."""
        if isinstance(reply, redis.exceptions.NoScriptError):
            try:
                reply = self._wake(keys=keys, args=args)
            except redis.exceptions.NoPermissionError as refused:
                reply = refused
        if isinstance(reply, redis.exceptions.NoPermissionError):
            self.scripted_wake = False
            nudged = self.set_nudge(game_id, int(args[0]))
            return nudged, nudged
        if isinstance(reply, Exception):
            raise reply
        return bool(reply), False

    @staticmethod
    def _submitted(game_id: str, command_id: str, reply: Any) -> tuple[str, bool]:
        """submit.lua's reply as (stream id, was it a duplicate), or its refusal raised."""
        code, stream_id, *refusal = reply
        if code == 7:
            raise DamagedGame(refused_key(text(stream_id), text(refusal[0])))
        if code == 0:
            raise NoSuchGame(game_id)
        if code == 3:
            raise ReservedId(f"command id {command_id!r} is reserved: ids starting with bot- name bots' turns")
        if code == 4:
            raise MismatchedId(f"command submitted as {command_id!r} names another id in its data.id")
        if code == 5:
            raise GameIsOver(game_id)
        if code == 8:
            raise GameIsBroken(game_id, text(stream_id))
        if code == 9:
            raise OverLimit(int(stream_id))
        if code == 10:
            raise GameRemade(game_id)
        if code == 6:
            raise CommandTooLarge(int(stream_id))
        return text(stream_id), code == 2

    def append(self, game_id: str, batch: Batch) -> Appended:
        """Compare-and-append; returns the new version and cursor with the commands stream's
        last id after it (:class:`Appended`), or raises AppendConflict."""
        k = Keys(game_id)
        view_keys = list(batch.views)
        indexed = not is_cluster(self.redis)  # the hand-back takes the game off the index here (one slot)
        args: list[Any] = [
            batch.expected_version,
            batch.expected_cursor,
            batch.cursor,
            len(batch.events),
            len(batch.bot_commands),
            batch.head.hex(),
            batch.status,
            "" if batch.to_move is None else batch.to_move,
            int(batch.bot_to_move),
            batch.changes,
            now_ms(),
            batch.hand_back or "",
            game_id if (batch.hand_back or batch.posted) and indexed else "",
            batch.posted,
            batch.posted_command,
            *batch.events,
        ]
        for command_id, command in batch.bot_commands:
            args.extend((command_id, command))
        args.extend(batch.views[key] for key in view_keys)
        if batch.timed:
            at, due = batch.time_out if batch.time_out is not None else ("", "")
            args.extend(("" if batch.deadline is None else batch.deadline, at, due, *batch.bot_stream_ids))
        keys = [k.log, k.meta, k.commands, k.changes]
        if batch.hand_back or batch.posted:
            keys += [k.lease, k.nudge, *([WORK] if indexed else [])]
        keys += view_keys
        if batch.timed:  # and its deadline index entry (red7es.service.deadlines)
            reply = append_indexed(
                self.redis, self._append, self._sync_deadline, game_id, k.meta, keys, args, batch.deadline
            )
        else:
            reply = self._append(keys=keys, args=args)
        if reply[0] == 2:
            raise DamagedGame(f"cannot append: {text(reply[1])}")
        if reply[0] == 3:
            # the script counts entries: the events are counted here (a damaged game, not a move)
            entries, meta_entries = int(reply[1]), int(reply[2])
            length, version = self._events_in_log(game_id), str(batch.expected_version)
            raise DamagedGame(
                (log_length_problem(length, version) if length >= 0 else None)
                or f"the log holds {counted(entries, 'entry', 'entries')} but meta.entries is {meta_entries}: "
                "entries were removed or added"
            )
        if not reply[0]:
            raise AppendConflict(f"game {game_id} moved on to version {reply[1]}")
        return Appended(int(reply[1]), text(reply[2]), text(reply[3]), bool(reply[4]))

    def finish(self, game_id: str) -> None:
        """Forget a finished game's secret, take it off the sweep list, and schedule the
        dropping of what it no longer needs (:mod:`red7es.service.compaction`)."""
        from . import compaction  # it reads this module's keys

        pipe = self.redis.pipeline(transaction=False)  # two slots: not a transaction
        pipe.delete(Keys(game_id).secret)
        pipe.srem(ACTIVE, game_id)
        pipe.zrem(WORK, game_id)
        pipe.execute()
        compaction.schedule(self.redis, game_id, self.keep_changes_ms)

    def clear_bot_to_move(self, game_id: str, version: int) -> None:
        """Set the meta's ``bot_to_move`` to 0 if the game is still at ``version`` (a meta an
        older worker left saying a bot is to move when none may: the folder knows better)."""
        self.redis.eval(_CLEAR_BOT_TO_MOVE, 1, Keys(game_id).meta, str(version))  # type: ignore[no-untyped-call]

    def mark_broken(self, game_id: str, reason: str) -> None:
        """Mark a game broken (its log needs a human) and stop sweeping it.

        The same transaction adds one entry to its changes stream, ``{"from": v, "to": v,
        "events": [], "broken": reason}`` at its version ``v``, so that whoever is blocked
        waiting for the game to change is woken and told, instead of waiting for ever.
        A changes stream that cannot take the entry (the key holds something else, or its
        stream ids are used up: what may have broken the game) does not stop the rest.
        """
        k = Keys(game_id)
        version = whole_number(text(self.redis.hget(k.meta, "version") or 0)) or 0
        pipe = self.redis.pipeline(transaction=True)  # one hash slot: meta and changes share the tag
        pipe.hset(k.meta, "broken", reason)
        change = pack_map({"from": version, "to": version, "events": [], "broken": reason})
        pipe.xadd(k.changes, {"v": version, "p": change})
        marked, _notice = pipe.execute(raise_on_error=False)  # a MULTI runs every command even if one fails
        if isinstance(marked, Exception):
            raise marked
        self.deactivate(game_id)

    def deactivate(self, game_id: str) -> None:
        """Stop sweeping a game (it is broken: its log needs a human), and timing it out."""
        pipe = self.redis.pipeline(transaction=False)  # three slots: not a transaction
        pipe.srem(ACTIVE, game_id)
        pipe.zrem(DEADLINES, game_id)
        pipe.zrem(WORK, game_id)
        pipe.execute()

    # ------------------------------------------------------------------ reading

    def exists(self, game_id: str) -> bool:
        return valid_game_id(game_id) and bool(self.redis.exists(Keys(game_id).meta))

    def meta(self, game_id: str) -> dict[str, str]:
        raw = self.redis.hgetall(Keys(game_id).meta)
        if not raw:
            raise NoSuchGame(game_id)
        return {text(a): text(b) for a, b in raw.items()}

    def meta_and_commands(
        self, game_id: str, after: str | None, count: int = 200
    ) -> tuple[dict[str, str], list[tuple[str, bytes]] | None]:
        """The game's meta and, if ``after`` is given, the commands after it: one round trip."""
        k = Keys(game_id)
        start = None if after is None else start_after(after)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(k.meta)
        if start is not None:
            pipe.xrange(k.commands, min=start, max="+", count=count)
        replies = pipe.execute()
        if not replies[0]:
            raise NoSuchGame(game_id)
        meta = {text(a): text(b) for a, b in replies[0].items()}
        if after is None:
            return meta, None
        rows = replies[1] if start is not None else []
        return meta, [(text(i), entry_field(fields, b"c")) for i, fields in rows or []]

    def seed(self, game_id: str) -> bytes | None:
        value = self.redis.hget(Keys(game_id).secret, "seed")
        return bytes.fromhex(text(value)) if value else None

    def first_commands(self, game_ids: list[str]) -> list[bytes | None]:
        """Each game's first command (the one that created it; None for no such game), in one round trip."""
        pipe = self.redis.pipeline(transaction=False)  # one slot per game: not one command
        for g in game_ids:
            pipe.xrange(Keys(g).commands, min="-", max="+", count=1)
        return [entry_field(rows[0][1], b"c") if rows else None for rows in pipe.execute()]

    def commands(self, game_id: str, after: str = "0-0", count: int | None = None) -> list[tuple[str, bytes]]:
        """Commands after stream id ``after`` (exclusive), oldest first."""
        start = start_after(after)
        if start is None:
            return []
        rows = self.redis.xrange(Keys(game_id).commands, min=start, max="+", count=count)
        return [(text(i), entry_field(fields, b"c")) for i, fields in rows or []]

    def last_command_id(self, game_id: str) -> str:
        rows = self.redis.xrevrange(Keys(game_id).commands, max="+", min="-", count=1)
        return text(rows[0][0]) if rows else "0-0"

    def command_stream_id(self, game_id: str, command_id: str) -> str | None:
        value = self.redis.hget(Keys(game_id).cmdids, command_id)
        return text(value) if value else None

    def log(self, game_id: str, start: int = 0, end: int | None = None) -> list[bytes]:
        """Encoded log events ``start`` .. ``end`` (exclusive), by sequence number."""
        return [raw for _id, raw in self.log_entries(game_id)][start:end]

    def log_tail_and_views(self, game_id: str, count: int, views: list[str]) -> tuple[list[bytes], list[bytes | None]]:
        """The last ``count`` encoded log events, oldest first, and the views at ``views``
        (their keys), in one round trip: what a worker whose table fell behind needs to
        catch up and check it (:meth:`~red7es.service.folding.Folder._caught_up`).  A view
        key of another type (written by hand) reads as no view, as in
        :meth:`metas_and_views_as_read`: it matches nothing, so the table is rebuilt."""
        pipe = self.redis.pipeline(transaction=True)  # one slot ({game}); the views as of the same log
        pipe.xrevrange(Keys(game_id).log, max="+", min="-", count=count)
        for key in views:
            pipe.get(key)
        rows, *replies = pipe.execute(raise_on_error=False)
        if isinstance(rows, Exception):
            raise rows
        stored = [None if isinstance(view, Exception) else view for view in replies]
        if not rows:  # a sealed game's log is in its seal (a game's log is never empty otherwise)
            return [raw for _id, raw in self._sealed(game_id)[-count:]] if count > 0 else [], stored
        # ``count`` entries hold at least ``count`` events (an entry holds one append's)
        return [raw for _id, raw in log_rows_events(reversed(rows))[-count:]] if count > 0 else [], stored

    def log_before(self, game_id: str, before: str | None, count: int) -> list[tuple[str, bytes]]:
        """Up to ``count`` log events (stream id, encoded event) before stream id ``before``
        (from the end for None), newest first.

        An entry holds the events of one append under consecutive ids (the entry's id is its
        last event's: :mod:`~red7es.service.stream_entries`), so the entry holding ``before``
        may hold events before it too: the read starts at ``before``'s millisecond."""
        key, bound, limit = Keys(game_id).log, "+", (1 << 64, 0)
        if before is not None:
            limit = stream_order(before)
            bound = f"{limit[0]}-{(1 << 64) - 1}" if limit[0] >= 0 else "-"
        found: list[tuple[str, bytes]] = []
        while len(found) < count and bound != "-":
            rows: Any = self.redis.xrevrange(key, max=bound, min="-", count=count)
            newest_first = reversed(log_rows_events(reversed(rows)))
            found += [event for event in newest_first if stream_order(event[0]) < limit]
            if len(rows) < count:
                break
            bound = f"({text(rows[-1][0])}"
        if not found and not self.redis.exists(key):  # a sealed game's log is in its seal
            found = [e for e in reversed(self._sealed(game_id)) if stream_order(e[0]) < limit]
        return found[:count]

    def _events_in_log(self, game_id: str) -> int:
        """The number of events the log holds; -1 when it cannot be read (a damaged seal too)."""
        try:
            return len(self.log_entries(game_id))
        except (redis.ResponseError, CorruptEvent):
            return -1

    def log_entries(self, game_id: str) -> list[tuple[str, bytes]]:
        """Every log event (stream id, encoded event), oldest first: the stream's, or a
        sealed game's from its seal."""
        rows = self.redis.xrange(Keys(game_id).log, min="-", max="+")
        if not rows:
            return self._sealed(game_id)
        return log_rows_events(rows)

    def _sealed(self, game_id: str) -> list[tuple[str, bytes]]:
        """A sealed game's log entries ([] for a game with no seal)."""
        from .sealing import sealed_entries  # (sealing reads this module's keys)

        return sealed_entries(self.redis, game_id) or []

    def view(self, game_id: str, seat: int | None = None) -> bytes | None:
        k = Keys(game_id)
        return _view_bytes(game_id, self.redis.get(k.public_view if seat is None else k.view(seat)))

    def broken(self, game_id: str) -> str | None:
        """Why the game is broken (``meta.broken``), or None."""
        reason = self.redis.hget(Keys(game_id).meta, "broken")
        return text(reason) if reason else None

    def view_and_broken(self, game_id: str, seat: int | None = None) -> tuple[bytes | None, str | None]:
        """A view and why the game is broken (None if it is not), in one round trip: a
        broken game's last view would show it as still being played."""
        k = Keys(game_id)
        pipe = self.redis.pipeline(transaction=False)  # one slot ({game}): fine on a cluster
        pipe.get(k.public_view if seat is None else k.view(seat))
        pipe.hget(k.meta, "broken")
        value, broken = pipe.execute()
        return _view_bytes(game_id, value), (text(broken) if broken else None)

    def changes(
        self, game_id: str, after: str = "0-0", block_ms: int | None = None
    ) -> list[tuple[str, int | None, bytes]]:
        """Change notices after ``after`` as (id, version, payload); with ``block_ms``, wait
        for one (no polling).  An entry written by hand may lack its fields: the version
        then reads as None and the payload as no bytes, which the client refuses in one line."""
        rows, _view = self._changes(game_id, after, block_ms, None)
        return rows

    def changes_and_view(
        self, game_id: str, after: str, block_ms: int, seat: int
    ) -> tuple[list[tuple[str, int | None, bytes]], bytes | None]:
        """:meth:`changes` waiting up to ``block_ms``, and the view of ``seat`` read in the
        same round trip just after the wait ends (issue #23: the view a person looks at
        after her answer).  Redis answers a connection's pipelined commands in order, the
        read only once the blocking read is done, and a worker writes a change and the views
        it makes in one script: the view is at least as new as the changes returned.  None
        for the view when there is none or its key cannot be read (a key of another type):
        a later :meth:`view_and_broken` says why."""
        return self._changes(game_id, after, block_ms, seat)

    def _changes(
        self, game_id: str, after: str, block_ms: int | None, seat: int | None
    ) -> tuple[list[tuple[str, int | None, bytes]], bytes | None]:
        """:meth:`changes`, and with a ``seat`` its view read after the last wait."""
        k = Keys(game_id)
        view: bytes | None = None
        if block_ms is None:
            start = start_after(after)
            rows = [] if start is None else self.redis.xrange(k.changes, min=start, max="+")
        else:
            # One long XREAD BLOCK would outlast the connection's socket timeout (5 s by
            # default in redis-py) and fail with TimeoutError: wait in short blocking reads.
            deadline = time.monotonic() + block_ms / 1000
            while True:
                left = int((deadline - time.monotonic()) * 1000)
                block = max(1, min(left, _BLOCK_CHUNK_MS))
                if seat is None:
                    reply = self.redis.xread({k.changes: after}, block=block)
                else:
                    pipe = self.redis.pipeline(transaction=False)  # one slot ({game}): fine on a cluster
                    pipe.xread({k.changes: after}, block=block)
                    pipe.get(k.view(seat))
                    reply, raw = pipe.execute(raise_on_error=False)
                    if isinstance(reply, Exception):
                        raise reply
                    # A key that cannot be read leaves the view unread: the caller's own read
                    # tells why.  meta.broken is not read with it (issue #23: a command a
                    # turn): a game a worker breaks says so on these changes, which the
                    # caller reads first; one marked broken by hand alone is told by the
                    # caller's next read of it.
                    view = None if isinstance(raw, Exception) else _view_bytes(game_id, raw)
                if reply or left <= _BLOCK_CHUNK_MS:
                    break
            if reply:
                assert isinstance(reply, list)  # RESP2, this connection's protocol: [[stream, entries]]
                rows = reply[0][1]
            else:
                rows = []
        return [(text(i), _version_field(fields), entry_field(fields, b"p")) for i, fields in rows or []], view

    def last_change_id(self, game_id: str) -> str:
        """The id of the game's latest change, ``"0-0"`` if it has none (or does not exist)."""
        return _last_id(self.redis.xrevrange(Keys(game_id).changes, max="+", min="-", count=1))

    def last_change_ids(self, game_ids: Sequence[str]) -> list[str]:
        """:meth:`last_change_id` of each game, in one round trip."""
        pipe = self.redis.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.xrevrange(Keys(game_id).changes, max="+", min="-", count=1)
        return [_last_id(rows) for rows in pipe.execute()]

    def games(self, limit: int = 100) -> list[str]:
        return [text(g) for g in self.redis.zrevrange(INDEX, 0, limit - 1)]

    def count_games(self) -> int:
        return int(self.redis.zcard(INDEX))

    def all_games(self) -> list[str]:
        return [text(g) for g in self.redis.zrange(INDEX, 0, -1)]

    def active_games(self) -> list[str]:
        return sorted(_game_ids(ACTIVE, [text(g) for g in self.redis.smembers(ACTIVE)], self.redis.srem))

    def due_work(self) -> list[str]:
        """The games due in the work index (:mod:`red7es.service.work_index`)."""
        return _game_ids(WORK, self.work.due(), self.redis.zrem)

    def some_active_games(self, cursor: int, count: int) -> tuple[int, list[str]]:
        """About ``count`` active games from ``cursor`` (``SSCAN``), and the cursor to go on from
        (0: the set was gone through); a game may come twice."""
        if count <= 0:
            return cursor, []
        after, games = self.redis.sscan(ACTIVE, cursor, count=count)
        return int(after), _game_ids(ACTIVE, [text(g) for g in games], self.redis.srem)

    def work_states(self, game_ids: list[str]) -> list[WorkState | redis.ResponseError]:
        """What the sweep needs to know of each game (:class:`WorkState`), in one round trip.

        A game whose keys cannot be read (one of the wrong type, written by hand) gives
        the error instead of its state, so that it cannot hide every other game.
        """
        pipe = self.redis.pipeline(transaction=False)
        for g in game_ids:
            k = Keys(g)
            pipe.hgetall(k.meta)
            pipe.get(k.lease)
            pipe.pttl(k.lease)
            pipe.xrevrange(k.commands, max="+", min="-", count=1)
            pipe.pttl(k.nudge)
        replies = pipe.execute(raise_on_error=False)
        states: list[WorkState | redis.ResponseError] = []
        for i in range(0, len(replies), 5):
            error = next((r for r in replies[i : i + 5] if isinstance(r, redis.ResponseError)), None)
            if error is not None:
                states.append(error)
                continue
            meta = {text(a): text(b) for a, b in replies[i].items()}
            lease = text(replies[i + 1]) if replies[i + 1] else None
            states.append(WorkState(meta, lease, int(replies[i + 2]), _last_id(replies[i + 3]), int(replies[i + 4])))
        return states

    def metas(self, game_ids: list[str]) -> list[dict[str, str]]:
        pipe = self.redis.pipeline(transaction=False)
        for g in game_ids:
            pipe.hgetall(Keys(g).meta)
        return [{text(a): text(b) for a, b in raw.items()} for raw in pipe.execute()]

    def metas_and_views(self, game_ids: list[str]) -> list[tuple[dict[str, str], bytes | None]]:
        """Each game's meta and public view, in one round trip.

        A pipeline of per-game reads rather than one MGET: the games' keys live in
        different hash slots, which a Redis Cluster refuses in a single command.
        """
        states = []
        for meta, view, problem in self.metas_and_views_as_read(game_ids):
            if problem is not None:
                raise redis.ResponseError(problem)
            states.append((meta, view))
        return states

    def metas_and_views_as_read(self, game_ids: list[str]) -> list[tuple[dict[str, str], bytes | None, str | None]]:
        """:meth:`metas_and_views`, with a key of another type (damage) read as missing and
        Redis's reason for it third, instead of failing the whole read: a listing shows
        the damaged game and every other one."""
        pipe = self.redis.pipeline(transaction=False)
        for g in game_ids:
            k = Keys(g)
            pipe.hgetall(k.meta)
            pipe.get(k.public_view)
        replies = pipe.execute(raise_on_error=False)
        states: list[tuple[dict[str, str], bytes | None, str | None]] = []
        for game_id, meta, view in zip(game_ids, replies[0::2], replies[1::2], strict=True):
            problem = None
            if isinstance(meta, redis.ResponseError):
                problem, meta = f"{Keys(game_id).meta}: {meta}", {}
            if isinstance(view, redis.ResponseError):
                problem, view = problem or f"{Keys(game_id).public_view}: {view}", None
            states.append(({text(a): text(b) for a, b in meta.items()}, view, problem))
        return states

    # ------------------------------------------------------------------ coordination

    def acquire_lease(self, game_id: str, owner: str, ttl_ms: int, *, index: bool = False) -> bool:
        """Take the game's lease, or extend it if this owner already holds it.

        ``index``: and put the game on the work index in the same round trip (a worker
        about to fold it), so that a game being folded always has an entry, however its
        worker was woken (a deadline, the slow-bot inbox): should the worker die, the
        sweep looks at the game."""
        lease = Keys(game_id).lease
        if index:
            [taken] = self._indexed_with(game_id, lambda pipe: pipe.set(lease, owner, nx=True, px=ttl_ms))
        else:
            taken = self.redis.set(lease, owner, nx=True, px=ttl_ms)
        if taken:
            return True
        return self.renew_lease(game_id, owner, ttl_ms)

    def take_and_read(
        self, game_id: str, owner: str, ttl_ms: int, read: Callable[[Any], object], *, indexed: bool = False
    ) -> tuple[bool, Any]:
        """:meth:`acquire_lease` (``index=True``) with ``read`` queued after it in the same
        round trip: (taken, the read's reply, an error as an exception). What a worker does
        as it takes a game: the lease and the first read of what it folds (issue #23). The
        read is made whether or not the lease was taken: the caller drops it if not.
        ``indexed``: the game was posted by the step that put it on the work index
        (:meth:`Inbox.take_posts`), so it is not added again (issue #23: a command a turn)."""
        lease = Keys(game_id).lease
        taken, reply = self._indexed_with(
            game_id, lambda pipe: pipe.set(lease, owner, nx=True, px=ttl_ms), read, kept=1, index=not indexed
        )
        return bool(taken) or self.renew_lease(game_id, owner, ttl_ms), reply

    def renew_lease(self, game_id: str, owner: str, ttl_ms: int) -> bool:
        return bool(self._renew(keys=[Keys(game_id).lease], args=[owner, ttl_ms]))

    def release_lease(self, game_id: str, owner: str) -> None:
        self._release(keys=[Keys(game_id).lease], args=[owner])

    def drop_lease(self, game_id: str, holder: str, longest_ms: int) -> bool:
        """Remove the game's lease if ``holder`` still has it and it never expires, or not within
        ``longest_ms``; True if removed.  A worker's lease always expires within ``longest_ms``:
        one that does not was written by hand, and would keep every worker off the game for ever.
        Removing even a live worker's is safe: the compare-and-append, not the lease, keeps two
        workers from both extending a game."""
        return bool(self._drop_lease(keys=[Keys(game_id).lease], args=[holder, longest_ms]))

    def lease_holder(self, game_id: str) -> str | None:
        value = self.redis.get(Keys(game_id).lease)
        return text(value) if value else None

    def set_nudge(self, game_id: str, ttl_ms: int) -> bool:
        """Mark that a job for the game is queued; False if one already is.

        In the same round trip the game goes into the work index (unless it is there), so
        that the sweep looks at it should the job be lost (:mod:`red7es.service.work_index`).
        """
        nudge = Keys(game_id).nudge
        [nudged] = self._indexed_with(game_id, lambda pipe: pipe.set(nudge, 1, nx=True, px=ttl_ms))
        return bool(nudged)

    def clear_nudge(self, game_id: str) -> None:
        self.redis.delete(Keys(game_id).nudge)

    def renew_nudge(self, game_id: str, ttl_ms: int) -> None:
        """Give a nudge its whole time again (a game posted again): its age restarts."""
        self.redis.pexpire(Keys(game_id).nudge, ttl_ms)

    def set_slow_nudge(self, game_id: str, ttl_ms: int) -> None:
        """Mark that the game waits on the slow-bot inbox (the sweep re-posts it there)."""
        self.redis.set(Keys(game_id).nudge, SLOW_NUDGE, px=ttl_ms)

    def waits_for_slow_bots(self, game_id: str) -> bool:
        """Whether the game was last posted to the slow-bot inbox (:meth:`set_slow_nudge`)."""
        return self.redis.get(Keys(game_id).nudge) == SLOW_NUDGE

    def publish_max_bot_time(self, seconds: float) -> None:
        """Tell clients the workers' cap on a bot's decision (the last worker started says)."""
        self.redis.set(MAX_BOT_TIME_KEY, str(seconds))

    def max_bot_time(self) -> float:
        """The cap the workers published, or :data:`DEFAULT_MAX_BOT_TIME` if none did
        (or the key holds no number: written by hand)."""
        try:
            value = float(self.redis.get(MAX_BOT_TIME_KEY) or DEFAULT_MAX_BOT_TIME)
        except (ValueError, redis.ResponseError):
            return DEFAULT_MAX_BOT_TIME
        return value if 0 < value < float("inf") else DEFAULT_MAX_BOT_TIME

    def release_and_look(self, game_id: str, owner: str, *, may_leave: bool) -> tuple[dict[str, str], str, bool]:
        """Release the lease (if still ``owner``'s), clear the nudge, read the meta and last
        command id, and (``may_leave``) take a game with no work off the work index: what a
        worker does after folding a game, in one round trip (``release_look.lua``) where it
        took three. Returns (meta, last command id, whether taken off the index).

        One script, so no command can come in between the clearing and the read: one
        submitted before is seen (the caller wakes a worker for it), one after finds the
        nudge cleared and wakes one itself. On a cluster the index (another slot) is left
        to :meth:`off_index`, which the caller then calls: the result says not taken off.
        """
        k = Keys(game_id)
        keys = [k.lease, k.nudge, k.meta, k.commands]
        if not is_cluster(self.redis):
            keys.append(WORK)
        flat, last, off = self._release_look(keys=keys, args=[owner, game_id, int(may_leave)])
        meta = {text(flat[j]): text(flat[j + 1]) for j in range(0, len(flat), 2)}
        return meta, text(last), bool(off)

    def off_index(self, game_id: str) -> tuple[dict[str, str], str]:
        """Take a game off the work index, *then* read its meta and last command id.

        In that order, so that a command that arrives meanwhile is either seen by the
        read (the caller wakes a worker for it, which puts the game back) or puts the
        game back itself.  On one Redis a pipeline keeps the order; a cluster's pipeline
        does not across slots, so there the removal goes first on its own.
        """
        k = Keys(game_id)
        if is_cluster(self.redis):
            self.redis.zrem(WORK, game_id)
            pipe = self.redis.pipeline(transaction=False)
        else:
            pipe = self.redis.pipeline(transaction=False)
            pipe.zrem(WORK, game_id)
        pipe.hgetall(k.meta)
        pipe.xrevrange(k.commands, max="+", min="-", count=1)
        *_removed, meta, last = pipe.execute()
        return {text(a): text(b) for a, b in meta.items()}, _last_id(last)


def _game_ids(key: str, members: list[str], remove: Callable[[str, str], object]) -> list[str]:
    """The game ids among a set's members; any other (written by hand, which ``Keys`` would
    refuse and so stop the sweep of every game) is removed from the set (``remove(key,
    member)``) and said."""
    bad = [m for m in members if not valid_game_id(m)]
    for member in bad:
        _log.error("%s held %r, which is no game id: removed", key, member)
        remove(key, member)
    return [m for m in members if valid_game_id(m)] if bad else members


def log_length_problem(length: int, version: str) -> str | None:
    """Why a log of ``length`` events cannot belong to a game whose meta says ``version``; None if it can.

    ``meta.version`` counts the log's events, and one append moves both: a log longer
    than that holds events of an append that failed half-way (a crash, or a red7es whose
    appends were not all-or-nothing); a shorter one lost events.  Either way the game
    cannot be extended, and folding it again would only be refused again.
    """
    if whole_number(version) is None:
        return f"meta.version is {version!r}, not a number of events"
    if length > int(version):
        return (
            f"the log holds {counted(length, 'event')} but meta.version is {version}: events from {version} on were "
            "written by an append that did not finish, and no append counted them"
        )
    if length < int(version):
        held = counted(length, "event")
        return f"the log holds {held} but meta.version is {version}: events from {length} on are missing"
    return None


# The largest stream id there is: nothing can follow it, and Redis refuses "(" before it as a range start.
LAST_STREAM_ID = "18446744073709551615-18446744073709551615"


def start_after(after: str) -> str | None:
    """The XRANGE start for the entries after stream id ``after``; None when none can follow it."""
    if after == "0-0":
        return "-"
    if after == LAST_STREAM_ID:
        return None
    return f"({after}"


def _last_id(rows: Sequence[Any] | None) -> str:
    """The id of the only entry of a ``count=1`` XREVRANGE reply, ``"0-0"`` for none."""
    return text(rows[0][0]) if rows else "0-0"


def text(value: Any) -> str:
    """A Redis reply as str (this connection answers bytes)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _view_bytes(game_id: str, value: object) -> bytes | None:
    if value is not None and not isinstance(value, bytes):
        raise TypeError(f"view of game {game_id} is {type(value).__name__}, not bytes")
    return value


def whole_number(value: str | bytes) -> int | None:
    """``value`` as the whole number it spells in ASCII digits (as red7es writes numbers, and
    as Lua's tonumber reads them), None for anything else: ``"²"`` and ``"٣"`` are digits to
    Python's isdigit, but the first is no number to int() and the second none to Lua.

    At most 20 digits: every number red7es writes (versions, seats, times, both parts of a
    stream id) fits in 64 bits, and int() raises ValueError past 4,300 digits, a traceback
    for a hostile value."""
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 20 else None


def stream_order(stream_id: str) -> tuple[int, int]:
    """A stream id as a comparable pair, ``(-1, -1)`` for text that is not one (both parts
    are 64-bit whole numbers in Redis)."""
    ms, dash, seq = stream_id.partition("-")
    first, second = whole_number(ms), whole_number(seq)
    if dash and first is not None and second is not None and max(first, second) < 1 << 64:
        return first, second
    return (-1, -1)


def _version_field(fields: Mapping[bytes | str, bytes | str] | None) -> int | None:
    """A changes entry's ``v`` as a number, None if it has none that reads as one."""
    return whole_number(entry_field(fields, b"v"))
