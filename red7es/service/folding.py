"""Folding commands into a game's log: the work a worker does for one game.

:class:`Folder` keeps recently used :class:`~red7es.service.table.Table` objects warm
in memory.  ``advance(game_id)`` reads the commands after the game's cursor, has the
table decide each one, lets bots move while a bot is to move, and writes the results
with one compare-and-append per batch.  If anyone else extended the game in the
meantime (another worker, a restarted one), the append is refused, the table is
rebuilt from the log and the work is redone: nothing is applied twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..bots.base import QUICK_TIME, DecisionInterrupted
from ..facts import GameOver
from ..game import BATCH_RULES, GameOverError
from .codec import (
    GENESIS,
    CorruptEvent,
    Recorded,
    command_limit,
    decode_command,
    decode_log,
    encode_command,
    encode_event,
    event_hash,
    oversized_command,
    pack_map,
)
from .command_reads import CommandReader, Oversized, Row
from .connection import is_cluster
from .deadlines import index as index_deadline
from .deadlines import redis_now
from .envelope import MAX_SIZE, chain_problem
from .events import Command, CommandRejected, CreateCommand, JoinClosed, LogEvent, TimedOut, TurnCommand
from .inbox import Carried
from .store import (
    LAST_STREAM_ID,
    AppendConflict,
    Batch,
    DamagedGame,
    GameStore,
    Keys,
    log_length_problem,
    now_ms,
    stream_order,
)
from .table import CreateRejected, Table, public_event

__all__ = [
    "Contended",
    "Folder",
    "HandBack",
    "Progress",
    "GameBroken",
    "decide",
    "decide_command",
    "has_work",
    "stream_ms",
    "time_out_due",
]

log = logging.getLogger(__name__)

# Most events a warm table catches up by folding them (Folder._caught_up); further behind,
# it is rebuilt from the log.  A person's turn and a bot's reply are a few events.
CATCH_UP_EVENTS = 200


class GameBroken(RuntimeError):
    """A game whose stored log cannot be read; it is left alone and reported."""


class NotStarted(RuntimeError):
    """A game whose create command no worker has folded yet: it has no log to extend."""


class Contended(RuntimeError):
    """Another folder kept extending the game first: nothing was lost, try again later.

    Workers hold a lease on a game, so they only see this when leases are lost (or
    in tests that race folders without them); the sweep re-posts the game.
    """


@dataclass
class Progress:
    """What one ``advance`` call did."""

    commands: int = 0
    bot_moves: int = 0
    events: int = 0
    appends: int = 0
    conflicts: int = 0
    more: bool = False  # stopped by the time or move budget with work left
    slow: bool = False  # (quick folds) stopped because the bot to move thinks long: for a slow-bot worker


@dataclass
class HandBack:
    """A worker's leave for the last append of a fold to hand the game back (issue #23).

    The append that leaves nothing to do (no command waiting after it, no bot to move)
    then also releases the worker's lease, clears the nudge and takes the game off the
    work index, in its own script: what ``release_look.lua`` did in a round trip of its
    own after every fold.  ``done`` says it did.  The worker's keep-alive thread renews
    the lease under ``lock`` and not once ``done``: the folder appends under the same
    lock, so a renewal can never take back a lease the append has just released (the
    game would stay closed to other workers until the lease ran out).  Untimed games
    only: a timed game's fold looks at the clock after its last append.  A carried
    command's hand-back (``carried``) only takes the game off the index: no lease was
    taken, and the nudge is left (``append.lua``, Posted).
    """

    owner: str  # the worker's lease token ('' for a carried command's: :meth:`Folder.answer_carried`)
    lock: threading.Lock = field(default_factory=threading.Lock)
    done: bool = False
    carried: Carried | None = None  # the command a post carried, answered without the lease (Batch.posted)


class Folder:
    """Advances games from their pending commands; one per worker process."""

    def __init__(
        self,
        store: GameStore,
        *,
        cache_size: int = 2000,
        bot_batch: int = 32,
        interrupted: Callable[[], bool] | None = None,
        max_bot_time: float | None = None,
    ) -> None:
        self.store = store
        self.reader = CommandReader(store.redis)  # reads commands bounded in bytes, whatever was submitted
        self.cache_size = cache_size
        self.bot_batch = bot_batch
        # Asked by bots that think long (``ismcts``): True while a worker is stopping, so its
        # decision under way is given up, the turns decided before it written, the game handed on.
        self.interrupted = interrupted
        self.max_bot_time = max_bot_time  # the worker's cap on one bot decision (seconds)
        # While a bot of a timed game decides: when (time.monotonic()) its decision must be
        # made by for its seat's clock. What the worker does between the search's steps
        # (WorkerContext) must not run past it.
        self.decision_ends: float | None = None
        self.tables: OrderedDict[str, Table] = OrderedDict()
        # The first read of a game just taken (take), made with its lease: game -> (cursor, reply)
        self._taken: dict[str, tuple[str | None, Any]] = {}
        # game -> the version at which its meta said a bot is to move (see advance)
        self._meta_bot: dict[str, str] = {}
        # Games taken without adding them to the work index (their post said they were on
        # it: take's ``indexed``), until an append that may leave them work adds them.
        self._unindexed: set[str] = set()

    # ------------------------------------------------------------------ public

    def advance(
        self, game_id: str, *, max_seconds: float = 1.0, quick: bool = False, hand_back: HandBack | None = None
    ) -> Progress:
        """Fold everything pending for a game (or until ``max_seconds``).

        With ``hand_back`` (a worker holding the game's lease), the append that leaves
        nothing to do also hands the game back (:class:`HandBack`) and sets its ``done``:
        the fold then stops, and the worker must not release the game again.

        ``quick`` folds leave a bot that thinks long to a slow-bot worker: they stop with
        ``progress.slow`` before its decision (a bot that ``thinks_long``), or give the
        decision up after about :data:`~red7es.bots.base.QUICK_TIME` seconds (one whose
        budget proved longer than it said), so the worker is soon free for people.

        A compare-and-append lost to another folder is redone from the stored log;
        after 20 lost in a row this raises :class:`Contended` (nothing is lost: the
        game is simply tried again later).  One the game's keys cannot take
        (:class:`~red7es.service.store.DamagedGame`) marks the game broken and raises
        :class:`GameBroken`.
        """
        try:
            return self._advance_retried(game_id, time.monotonic() + max_seconds, quick, hand_back)
        finally:
            self._unindexed.discard(game_id)  # (taken again, the post says again)

    def _advance_retried(self, game_id: str, deadline: float, quick: bool, hand_back: HandBack | None) -> Progress:
        """:meth:`advance`'s fold, folded again from the store after an append that lost a race."""
        progress = Progress()
        for _attempt in range(20):
            try:
                self._advance(game_id, progress, deadline, quick, hand_back)
                table = self.tables.get(game_id)
                said_bot = self._meta_bot.pop(game_id, None)
                if table is not None and said_bot == str(table.version) and not table.bot_to_move:
                    # A meta written by an older worker (a bot to move in a timed game not
                    # started: it now waits) would have the game rescheduled for ever.
                    self.store.clear_bot_to_move(game_id, table.version)
                if table is not None and table.variant.timed:
                    # also corrects an index entry left stale (docs/architecture.md, Clocks)
                    index_deadline(self.store.redis, game_id, table.deadline)
                return progress
            except AppendConflict:
                progress.conflicts += 1
                self.tables.pop(game_id, None)
            except DamagedGame as exc:
                # Nothing was written, and trying again would be refused again: a human must look.
                raise self._broken_by(game_id, exc) from None
            except BaseException:
                # The table may have run ahead of what was stored: never reuse it.
                self.tables.pop(game_id, None)
                raise
        raise Contended(f"game {game_id}: gave up after 20 conflicting appends")

    def take(self, game_id: str, owner: str, ttl_ms: int, *, indexed: bool = False) -> bool:
        """Take the game's lease (:meth:`~red7es.service.store.GameStore.acquire_lease`,
        ``index=True``), and read its meta and commands in the same round trip for the
        :meth:`advance` that follows (a worker's); whether taken. Not on a cluster, whose
        pipelines span slots without keeping order: the lease alone there.

        ``indexed``: the game's post says it was put on the work index with it, so it is
        not added again here (issue #23: a command a turn).  The post may be stale by now
        (another worker folded its command and took the game off the index meanwhile),
        so an append of this fold that may leave the game work adds it first
        (:meth:`_index_before`): a game with work is on the index whatever kills its
        worker."""
        self._unindexed.discard(game_id)
        if is_cluster(self.store.redis):
            return self.store.acquire_lease(game_id, owner, ttl_ms, index=True)
        table = self.tables.get(game_id)
        cursor = table.cursor if table is not None else None
        limit = _limit(table)
        taken, reply = self.store.take_and_read(
            game_id,
            owner,
            ttl_ms,
            lambda pipe: self.reader.queue_meta_and_commands(pipe, game_id, cursor, limit),
            indexed=indexed,
        )
        if taken:
            self._taken[game_id] = (cursor, reply)
            if indexed:
                self._unindexed.add(game_id)
        else:
            self._taken.pop(game_id, None)
        return taken

    def answer_carried(self, game_id: str, carried: Carried) -> Progress | None:
        """Answer the command a post carried (:class:`~red7es.service.inbox.Carried`) from
        the warm table, without the lease and without reading the game, if the table is at
        the version the command was stored at (caught up to it when behind): a person's
        turn and the bots' replies in one append that checks the rest (``append.lua``,
        Posted) and hands the game back when nothing is left to do (issue #23: the lease's
        ``SET``, the read's script and its ``HGETALL`` and ``XRANGE``, the hand-back's
        ``GET``: five commands a turn).

        The progress when that append handed the game back (nothing left to do, or the game
        over: finished here, :meth:`GameStore.finish`); None when the worker must fold the
        game as usual, with the lease: no such table (or a timed game's, or one with a bot
        to move), the append refused (another command came first, or another worker moved
        the game on: the table is dropped), or work left after it (a bot to move, a command
        waiting). No lease is needed for safety: the compare-and-append keeps two workers
        from both extending a game (:meth:`GameStore.drop_lease`); the lease only keeps
        them from doing the same work, and this is one append's worth."""
        table = self.tables.get(game_id)
        if table is None or table.variant.timed or is_cluster(self.store.redis):
            return None
        if table.version < carried.version:
            # Behind (another worker folded the game's last turns): caught up from the log's
            # tail, checked against the stored views, in one round trip (issues #17, #23);
            # a table that cannot be is dropped, and the usual fold rebuilds it.
            if not self._caught_up(table, {"version": str(carried.version), "cursor": carried.cursor}):
                self.tables.pop(game_id, None)
                return None
        if (
            table.version != carried.version
            or table.over
            or table.bot_to_move
            or stream_order(carried.stream_id) <= stream_order(table.cursor)
            or len(carried.command) > _limit(table)
        ):
            return None
        progress = Progress()
        hand_back = HandBack("", carried=carried)
        row: Row = (carried.stream_id, carried.command)
        try:
            self._answer(table, [row], progress, time.monotonic() + 1.0, True, hand_back)
        except AppendConflict:
            return None  # (the table was dropped: the usual fold rebuilds it)
        except DamagedGame as exc:
            raise self._broken_by(game_id, exc) from None
        except BaseException:
            self.tables.pop(game_id, None)  # the table may have run ahead of what was stored
            raise
        if not hand_back.done:
            return None
        self.tables.move_to_end(game_id)  # (used: not the first to leave the cache)
        return progress

    def _index_before(self, game_id: str, batch: Batch, hand_back: HandBack | None) -> None:
        """Add a game taken without its index add (:meth:`take`) to the work index before
        an append that may leave it work: a bot to move, the game over (its worker keeps
        it until it is finished), a timed game, or no hand-back.  Not before one that
        hands the game back or finds a command come in (whose client indexed it)."""
        if game_id not in self._unindexed:
            return
        if not (batch.bot_to_move or batch.status == "over" or batch.timed or hand_back is None):
            return
        self.store.work.add_or_say(game_id)
        self._unindexed.discard(game_id)

    def adjudicate(self, game_id: str, winners: tuple[int, ...], reason: str) -> list[LogEvent]:
        """Append an operator's adjudication (RULES.md, Adjudication) to a game not over.

        Commands stored but not yet answered are then answered here, refused as the game is
        over (a finished game leaves the sweep's lists, so no worker might come back for
        them).  Returns the adjudication's events.  Raises
        :class:`~red7es.game.IllegalStep` (a ValueError: the game is over, a winner is no
        seat or is out of the game, no reason), and what :meth:`_operator_act` raises.
        """
        return self._operator_act(game_id, "adjudicate", lambda table, _now: table.adjudicate(winners, reason))

    def withdraw(self, game_id: str, seat: int, reason: str) -> list[LogEvent]:
        """Append an operator's withdrawal of ``seat`` (RULES.md, Withdrawal), at Redis's time.

        A time-out already due comes first, at the same time (RULES.md, Time: before
        anything that comes after the deadline); the withdrawal is then refused if that
        time-out ended the game or put the seat out.  The game is not folded further here:
        the caller wakes a worker.  Returns the events appended.  Raises
        :class:`~red7es.game.IllegalStep` (a ValueError: the game is over, the seat is no
        seat or already out, no reason) and what :meth:`_operator_act` raises.
        """

        def act(table: Table, now: int) -> list[LogEvent]:
            events = table.time_out(now) if table.deadline is not None and now > table.deadline else []
            if table.over:
                raise GameOverError("the game is over")
            return events + table.withdraw(seat, reason, now)

        return self._operator_act(game_id, "withdraw a seat from", act, advance=False, answer_first=True)

    def _operator_act(
        self,
        game_id: str,
        what: str,
        act: Callable[[Table, int], list[LogEvent]],
        *,
        advance: bool = True,
        answer_first: bool = False,
    ) -> list[LogEvent]:
        """Append the events ``act`` makes of the game's table at Redis's time now.

        The same compare-and-append as a worker's: from the log as stored, at its version and
        command cursor, so a worker folding a turn meanwhile makes one of the two appends
        fail, and the loser is redone from the new log (the act then finds the game as that
        turn left it).  A time-out among the events is checked by ``append.lua`` as a
        worker's is.  With ``answer_first`` the commands already stored are answered before
        each try (a quick fold here: they came before the act, and a time-out the act makes
        must not overtake one that came in time).  With ``advance`` the game is then folded
        here (commands waiting: an adjudication answers them as the game is over); else the
        caller wakes a worker for what follows (its bots think on workers, not here).  Raises
        :class:`NotStarted` for a game no worker has created yet, :class:`GameBroken` for
        one without its seed, and :class:`Contended` after 20 lost appends.
        """
        for _attempt in range(20):
            try:
                if answer_first and self.store.meta(game_id).get("version", "0") != "0":
                    self.advance(game_id, max_seconds=1.0, quick=True)
                table, _rows = self._table(game_id)
            except AppendConflict:
                continue  # a worker appended while the log was read
            if table is None:
                raise NotStarted(f"game {game_id} has not been created by a worker yet: nothing to {what}")
            if table.over:
                raise GameOverError("the game is over")
            if table.game.seed is None:
                raise GameBroken(f"game {game_id}: its seed is missing, so it cannot end")
            due, now = table.deadline, redis_now(self.store.redis)
            try:
                events = act(table, now)
            except ValueError:
                self.tables.pop(game_id, None)  # the act may have changed the warm table first
                raise
            timed_out = (
                (now, due) if due is not None and any(isinstance(e, TimedOut | JoinClosed) for e in events) else None
            )
            try:
                self._flush(table, events, table.cursor, [], timed_out)
            except AppendConflict:
                continue  # _flush dropped the table: the next try rebuilds it from the new log
            if advance:
                self.advance(game_id, max_seconds=5.0)
            return events
        raise Contended(f"game {game_id}: gave up after 20 conflicting appends")

    def pending(self, game_id: str) -> bool:
        """Whether the game has unanswered commands or a bot to move."""
        return has_work(self.store.meta(game_id), self.store.last_command_id(game_id))

    # ------------------------------------------------------------------ folding

    def _advance(
        self, game_id: str, progress: Progress, deadline: float, quick: bool, hand_back: HandBack | None = None
    ) -> None:
        """Fold until nothing is pending or the slice is spent.  The caller keeps the game's
        lease alive meanwhile (a worker renews it from a thread: a bot may think for minutes)."""
        table, rows = self._table(game_id)
        while True:
            if rows is None:
                rows = self.reader.commands(game_id, table.cursor if table else "0-0", _limit(table))
            if table is None:
                if not rows:
                    return
                table = self._start(game_id, rows[0])
                progress.commands += 1
                progress.appends += 1
                rows = rows[1:]
            if rows:
                waiting = self._answer(table, rows, progress, deadline, quick, hand_back)
                if progress.more:
                    return  # a bot's decision given up, or left to a slow-bot worker
                if table.cursor == LAST_STREAM_ID:  # answered; but no command can follow it, and no bot move
                    raise DamagedGame(
                        f"{Keys(game_id).commands} has no stream ids left after {LAST_STREAM_ID}: "
                        "no command can follow it"
                    )
                if hand_back is not None and hand_back.done:
                    return  # nothing left to do, and the game is no longer this worker's
                rows = None if waiting else []  # (the append saw no command after its cursor)
                if time.monotonic() > deadline:
                    progress.more = True  # a flood of commands: let other games have a turn
                    return
                continue
            if table.deadline is not None:
                now = redis_now(self.store.redis)
                due = table.deadline
                if now > due:  # nobody moved in time: the referee times the seat out
                    events = table.time_out(now)
                    self._flush(table, events, table.cursor, [], (now, due))
                    progress.events += len(events)
                    progress.appends += 1
                    continue
            if not table.bot_to_move:
                return
            if progress.appends and time.monotonic() > deadline:
                # the slice is spent (but every call moves the game on by one batch at least)
                progress.more = True
                return
            if table.clock is not None:
                self._timed_bot_move(table, progress, quick)
                if progress.more:
                    return
                rows = None
                continue
            events = []
            bot_commands = self._bot_turns(table, events, progress, quick, deadline)
            waiting = True
            if bot_commands:
                waiting = self._flush(table, events, table.cursor, bot_commands, hand_back=hand_back)
                progress.bot_moves += len(bot_commands)
                progress.events += len(events)
                progress.appends += 1
                if hand_back is not None and hand_back.done:
                    return
            if progress.more:
                return
            rows = None if waiting else []

    def _answer(
        self,
        table: Table,
        rows: list[Row],
        progress: Progress,
        deadline: float,
        quick: bool,
        hand_back: HandBack | None,
    ) -> bool:
        """Decide commands read after the table's cursor, the bots' replies with them (as
        :meth:`_answers_with_bots` allows), in one append; whether commands may wait after
        it (:meth:`_flush`)."""
        events: list[LogEvent] = []
        cursor = table.cursor
        timed_out = None
        for stream_id, raw in rows:
            due = table.deadline
            expired = time_out_due(table, stream_id)  # a command after the deadline: time-out first
            if expired and due is not None:
                timed_out = (stream_ms(stream_id), due)
            events.extend(expired)
            events.extend(decide(table, stream_id, raw))
            cursor = stream_id
            progress.commands += 1
        bot_commands: list[TurnCommand] = []
        if self._answers_with_bots(table, cursor):
            # the bots' replies go in the same append as the answers (issue #23)
            bot_commands = self._bot_turns(table, events, progress, quick, deadline)
        waiting = self._flush(table, events, cursor, bot_commands, timed_out, hand_back=hand_back)
        progress.bot_moves += len(bot_commands)
        progress.events += len(events)
        progress.appends += 1
        return waiting

    def _bot_turns(
        self, table: Table, events: list[LogEvent], progress: Progress, quick: bool, deadline: float
    ) -> list[TurnCommand]:
        """Let the bots to move decide, adding their events to ``events``; their commands.

        Bots move in batches (one append for many fast turns), but a slow bot's turn is
        flushed as soon as the slice is spent: each decision is kept, never redone."""
        bot_commands: list[TurnCommand] = []
        while (
            table.bot_to_move
            and len(bot_commands) < self.bot_batch
            and (not bot_commands or time.monotonic() <= deadline)
        ):
            if quick and table.bot_thinks_long:
                progress.more = progress.slow = True
                break
            try:
                command = table.bot_command(table.version + len(events), self._interrupted(quick), self.max_bot_time)
            except DecisionInterrupted:
                progress.more = True  # a bot is still to move: whoever takes the game decides again
                progress.slow = quick and not (self.interrupted is not None and self.interrupted())
                break
            produced = table.handle(command)
            if isinstance(produced[0], CommandRejected):  # a bot must never be refused
                raise RuntimeError(f"game {table.game_id}: bot turn refused: {produced[0].reason}")
            events.extend(produced)
            bot_commands.append(command)
        return bot_commands

    @staticmethod
    def _answers_with_bots(table: Table, cursor: str) -> bool:
        """Whether the bots' replies to the commands just decided go in the same append as
        their answers: one append (and one change for watchers) where there were two. Not in
        a timed game (a bot's command there is appended alone, its stream id its referee
        time), not for a bot that thinks long (the person's answer would wait on it), not
        after the last stream id (no bot command can follow it: the answers are written
        alone, then the game is marked broken), and not without the seed (a table rebuilt
        while another worker ended the game: its answers' append is refused first)."""
        return (
            table.bot_to_move
            and not table.variant.timed
            and not table.bot_thinks_long
            and cursor != LAST_STREAM_ID
            and table.game.seed is not None
        )

    def _timed_bot_move(self, table: Table, progress: Progress, quick: bool) -> None:
        """One bot turn of a timed game, in its own append: its command's stream id is its
        referee time (the next seat's clock starts from it), so it is written as soon as it
        is decided. The bot thinks for a share of the time it has left, never more: half
        of a turn time, a tenth of a game clock's remaining time."""
        if quick and table.bot_thinks_long:
            progress.more = progress.slow = True
            return
        assert table.clock is not None
        left = (table.clock.deadline - redis_now(self.store.redis)) / 1000
        share = max(0.001, left / (10 if table.variant.clock is not None else 2))
        cap = share if self.max_bot_time is None else min(self.max_bot_time, share)
        self.decision_ends = time.monotonic() + cap
        try:
            command = table.bot_command(table.version, self._interrupted(quick), cap)
        except DecisionInterrupted:
            progress.more = True
            progress.slow = quick and not (self.interrupted is not None and self.interrupted())
            return
        finally:
            self.decision_ends = None
        top_ms, _, top_seq = table.cursor.partition("-")
        now = max(redis_now(self.store.redis), int(top_ms))
        stream_id = f"{now}-{int(top_seq) + 1 if now == int(top_ms) else 0}"
        due = table.clock.deadline
        if now > due:  # it thought past its time (its cap is a share of it: a stalled worker)
            events = table.time_out(now)
            self._flush(table, events, table.cursor, [], (now, due))
        else:
            events = table.handle(command, at=now)
            if isinstance(events[0], CommandRejected):  # a bot must never be refused
                raise RuntimeError(f"game {table.game_id}: bot turn refused: {events[0].reason}")
            self._flush(table, events, table.cursor, [command], bot_stream_ids=(stream_id,))
            progress.bot_moves += 1
        progress.events += len(events)
        progress.appends += 1

    def _interrupted(self, quick: bool) -> Callable[[], bool] | None:
        """What a bot's decision asks as it searches: is the worker stopping, or (``quick``)
        has the decision outlasted :data:`~red7es.bots.base.QUICK_TIME`?"""
        stopping = self.interrupted
        if not quick:
            return stopping
        give_up_at = time.monotonic() + QUICK_TIME
        return lambda: (stopping is not None and stopping()) or time.monotonic() > give_up_at

    def _table(self, game_id: str) -> tuple[Table | None, list[Row] | None]:
        """The warm table if it is still current, else rebuilt from the log.

        With a warm table, the commands after its cursor are read in the same round
        trip as the game's meta (returned too; None when not read).
        """
        table = self.tables.get(game_id)
        cursor = table.cursor if table is not None else None
        taken_cursor, reply = self._taken.pop(game_id, (None, None))
        if reply is not None and taken_cursor == cursor:  # read as the game was taken (take)
            meta, rows = self.reader.meta_and_commands_from(reply, game_id, cursor, _limit(table))
        else:
            meta, rows = self.reader.meta_and_commands(game_id, cursor, _limit(table))
        if meta.get("broken"):
            raise GameBroken(f"game {game_id}: {meta['broken']}")
        if meta.get("bot_to_move") == "1":
            self._meta_bot[game_id] = meta.get("version", "")
        if table is not None and str(table.version) == meta["version"] and table.cursor == meta["cursor"]:
            self.tables.move_to_end(game_id)
            return table, rows
        self.tables.pop(game_id, None)
        version = meta.get("version", "")
        if version == "0":
            return None, None  # (a log that is not empty then is refused by the first append)
        if table is not None and self._caught_up(table, meta):
            self._remember(table)
            # The commands read with the meta start at the table's old cursor: those after
            # the new one are the first pending (more are read once they are answered).
            pending = [row for row in rows or [] if stream_order(row[0]) > stream_order(table.cursor)]
            return table, pending or None
        try:
            recorded = decode_log(self.store.log(game_id))  # (a damaged seal is a corrupt log too)
            _check_chain(recorded)
        except CorruptEvent as exc:
            self._break(game_id, str(exc))
            raise GameBroken(f"game {game_id}: {exc}") from None
        # Events no append counted (one that failed half-way), or events lost: the table would
        # be at another version than meta's, and every append of it refused, for ever.
        problem = log_length_problem(len(recorded), version)
        if problem is not None:
            if self.store.meta(game_id).get("version") != version:
                # Not damage: another worker appended between the meta read and the log read.
                raise AppendConflict(f"game {game_id} moved on while its log was read")
            self._break(game_id, problem)
            raise GameBroken(f"game {game_id}: {problem}")
        try:
            table = Table.rebuild([r.event for r in recorded], self.store.seed(game_id))
        except (ValueError, KeyError, IndexError, TypeError) as exc:  # IllegalStep is a ValueError
            reason = f"the log cannot be replayed: {exc}"
            self._break(game_id, reason)
            raise GameBroken(f"game {game_id}: {reason}") from None
        table.version = len(recorded)
        table.head = recorded[-1].hash
        table.cursor = meta["cursor"]
        self._remember(table)
        return table, None

    def _caught_up(self, table: Table, meta: dict[str, str]) -> bool:
        """Bring a warm table that other workers' appends left behind up to ``meta``'s
        version by folding only the events it has not seen; whether it now is there.

        With two workers, a person's turns go to either, so every other turn found its
        table behind, and rebuilding it from the whole log made a turn's answer take 5 ms
        instead of 2 (issues #17, #23).  The events are read with the views the appending
        worker stored beside them (one transaction), and the table is kept only if it
        now makes exactly those views, byte for byte; else (and for a chain that does
        not follow on, more than :data:`CATCH_UP_EVENTS` events, anything unreadable)
        False, the table in whatever state: the caller drops it and rebuilds from the log.
        """
        try:
            version = int(meta["version"])
        except (KeyError, ValueError):
            return False
        missing = version - table.version
        if not 0 < missing <= CATCH_UP_EVENTS:
            return False
        raws, stored = self.store.log_tail_and_views(table.game_id, missing, table.view_keys())
        try:  # an event that does not decode: the rebuild from the whole log says why, once
            recorded = decode_log(raws, table.version)
        except CorruptEvent:
            return False
        if len(recorded) != missing or chain_problem(recorded, table.version, table.head) is not None:
            return False
        try:
            for r in recorded:
                table.fold(r.event)
        except (ValueError, KeyError, IndexError, TypeError):  # IllegalStep is a ValueError
            return False
        table.version, table.head, table.cursor = version, recorded[-1].hash, meta["cursor"]
        return list(table.packed_views(version).values()) == stored

    def _start(self, game_id: str, row: Row) -> Table:
        stream_id, raw = row
        try:
            command, at = read_command(raw, f"command {stream_id}", BATCH_RULES)
            if not isinstance(command, CreateCommand):
                raise CreateRejected("the first command of a game must create it")
            table, events = Table.start(game_id, command, self.store.seed(game_id), at, stream_at=stream_ms(stream_id))
        except (CorruptEvent, CreateRejected) as exc:
            self._break(game_id, f"cannot create the game: {exc}")
            raise GameBroken(f"game {game_id}: cannot create the game: {exc}") from None
        table.version, table.head, table.cursor = 0, GENESIS, "0-0"
        self._flush(table, events, stream_id, [])
        self._remember(table)
        return table

    def _flush(
        self,
        table: Table,
        events: list[LogEvent],
        cursor: str,
        bot_commands: list[TurnCommand],
        time_out: tuple[int, int] | None = None,
        bot_stream_ids: tuple[str, ...] = (),
        hand_back: HandBack | None = None,
    ) -> bool:
        """Encode, chain and compare-and-append; on success the table moves on. Returns
        whether commands may wait after the new cursor (the append read the commands'
        last id): when not, the folder need not read the stream again (issue #23).

        A timed game's append carries its deadline (meta.deadline), the time-out the
        events make (``time_out``: at, deadline) and its bot commands' stream ids, which
        ``append.lua`` checks against Redis's clock; the store keeps the deadline index
        with it (:func:`~red7es.service.deadlines.append_indexed`). With ``hand_back`` (an
        untimed game's), the append hands the game back if it leaves nothing to do (no
        command waiting, no bot to move, the game not over: ``append.lua`` decides, in the
        same atomic step), and sets ``hand_back.done``."""
        at = now_ms()
        encoded: list[bytes] = []
        head = table.head
        for i, event in enumerate(events):
            raw = encode_event(event, table.version + i, head, at)
            if len(raw) > MAX_SIZE:  # commands are capped far below: never write what no reader accepts
                raise RuntimeError(f"game {table.game_id}: event {table.version + i} would be {len(raw):,} bytes")
            encoded.append(raw)
            head = event_hash(raw)
        views = table.packed_views(table.version + len(events))
        changes = pack_map(
            {
                "from": table.version,
                "to": table.version + len(events),
                "events": [p for p in (public_event(e, len(table.seats)) for e in events) if p is not None],
            }
        )
        batch = Batch(
            expected_version=table.version,
            expected_cursor=table.cursor,
            cursor=cursor,
            events=encoded,
            bot_commands=[(c.id, encode_command(c, at)) for c in bot_commands],
            head=head,
            status="over" if table.over else "playing",
            to_move=table.to_move,
            bot_to_move=table.bot_to_move,
            changes=changes,
            views=views,
            timed=table.variant.timed,
            deadline=table.deadline,
            time_out=time_out,
            bot_stream_ids=bot_stream_ids,
        )
        self._index_before(table.game_id, batch, hand_back)
        try:
            if hand_back is not None and not batch.timed:
                with hand_back.lock:  # (the keep-alive renews the lease under it: HandBack)
                    carried = hand_back.carried
                    handing = replace(
                        batch,
                        hand_back=hand_back.owner or None,
                        posted=carried.stream_id if carried else "",
                        posted_command=carried.command if carried else b"",
                    )
                    appended = self.store.append(table.game_id, handing)
                    hand_back.done = appended.handed_back
            else:
                appended = self.store.append(table.game_id, batch)
        except AppendConflict:
            self.tables.pop(table.game_id, None)
            raise
        table.version, table.head, table.cursor = appended.version, head, appended.cursor
        if any(isinstance(e, GameOver) for e in events):
            self.store.finish(table.game_id)  # once, when the game ends (later rejections need not)
        return appended.last_command != appended.cursor

    def _remember(self, table: Table) -> None:
        self.tables[table.game_id] = table
        self.tables.move_to_end(table.game_id)
        while len(self.tables) > self.cache_size:
            self.tables.popitem(last=False)

    def _broken_by(self, game_id: str, exc: DamagedGame) -> GameBroken:
        """A game whose keys cannot take an append: its table dropped, the game marked
        broken; the error to raise."""
        self.tables.pop(game_id, None)
        self._break(game_id, str(exc))
        return GameBroken(f"game {game_id}: {exc}")

    def _break(self, game_id: str, reason: str) -> None:
        log.error("game %s is broken: %s", game_id, reason)
        self.store.mark_broken(game_id, reason)


def has_work(meta: dict[str, str], last_command_id: str) -> bool:
    """Whether a game (its meta and last command id) has unanswered commands or a bot to move.

    release_look.lua decides the same in Lua, to take a game with none off the work index
    in the script that releases it: tests/service/test_release_look.py holds them alike."""
    if meta.get("broken"):
        return False
    if meta.get("bot_to_move") == "1" and meta.get("status") != "over":
        return True
    return last_command_id != meta.get("cursor", "0-0")


def decide(table: Table, stream_id: str, raw: bytes | Oversized) -> list[LogEvent]:
    """The log events a client's command causes (module level so the audit re-executes it)."""
    try:
        command, _at = read_command(raw, f"command {stream_id}", table.batch_rules)
    except CorruptEvent as exc:
        return [CommandRejected(stream_id, -1, "corrupt", "", str(exc))]
    return decide_command(table, command, stream_ms(stream_id))


def stream_ms(stream_id: str) -> int:
    """The milliseconds of a stream id: Redis's time when the entry was added."""
    return int(stream_id.partition("-")[0])


def time_out_due(table: Table, stream_id: str) -> list[LogEvent]:
    """The time-out that must come before answering the command ``stream_id`` (RULES.md,
    Time): a command after the seat to move's deadline finds its time up. Empty if none."""
    due = table.deadline
    if due is None or stream_ms(stream_id) <= due:
        return []
    return table.time_out(stream_ms(stream_id))


def read_command(raw: bytes | Oversized, what: str, rules: int) -> tuple[Command, int]:
    """:func:`~red7es.service.codec.decode_command`, for a command read whole or only
    measured (too large to read): CorruptEvent for both alike."""
    if isinstance(raw, Oversized):
        raise oversized_command(what, rules)
    return decode_command(raw, what, rules)  # type: ignore[no-any-return]


def _limit(table: Table | None) -> int:
    """The largest command read whole for a game: what its referee reads (a game not
    started yet is started under this red7es's batch rules)."""
    return command_limit(table.batch_rules if table is not None else BATCH_RULES)


def decide_command(table: Table, command: Command, at: int | None = None) -> list[LogEvent]:
    """The log events a decoded client command causes (:func:`decide` after decoding);
    ``at`` is its stream id's ms (referee time)."""
    if isinstance(command, CreateCommand):
        return [CommandRejected(command.id, -1, "create", "", "the game already exists")]
    return table.handle(command, from_client=True, at=at)


def _check_chain(recorded: list[Recorded]) -> None:
    """Raise CorruptEvent unless the events are numbered 0, 1, ... and hash-chained."""
    problem = chain_problem(recorded)
    if problem is not None:
        raise CorruptEvent(problem)
