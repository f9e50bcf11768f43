"""What a worker process keeps between jobs: its store, its warm games, its name."""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import redis
from rq.timeouts import JobTimeoutException

from red7es.service import compaction, deadlines
from red7es.service.client import NUDGE_TTL_MS, GameService
from red7es.service.connection import WAITED_OUT_ERRORS, is_cluster, unavailable
from red7es.service.ending import end_problem
from red7es.service.folding import Folder, GameBroken, HandBack, Progress, has_work
from red7es.service.inbox import SLOW_INBOX_KEY, Carried, Inbox, Post
from red7es.service.store import DEFAULT_MAX_BOT_TIME, KEEP_CHANGES_MS, NoSuchGame

__all__ = ["WorkerContext", "current_context", "repeating", "use_context"]

log = logging.getLogger(__name__)

LEASE_MS = 5_000  # renewed while the game is folded; a dead worker's games wait at most this long
KEEPALIVE_SECONDS = 1.0  # how often the lease and the heartbeat are renewed while a slice runs
SLICE_SECONDS = 0.5
STALL_SECONDS = 3.0
# Active games each sweep reads besides those due in the work index, going round all of
# them: keys written by hand are caught within (games / SCAN_SLICE) sweeps, at a cost per
# second that no number of idle games raises.
SCAN_SLICE = 20
SWEEP_SECONDS = 2.0
DUE_REPOST_SECONDS = 1.0  # a due game not yet timed out (its lease elsewhere) is posted again after this
# A pass of a shift beats and reads the deadline index at most this often (issue #23: a
# busy worker passes many times a second, and each beat and deadline pass was a round trip
# a pass). A time-out is seen within about 0.5 s of its deadline, as an idle worker (whose
# pass waits up to 0.5 s for the inbox) always saw it; a busy one used to see it sooner.
# The heartbeat lives 3 s (workers/worker.py), renewed 6 times in that.
BEAT_SECONDS = 0.5
DUE_PASS_SECONDS = 0.5
# While a bot of a game from the slow-bot inbox thinks, its worker looks at the inbox this
# often and folds what no other worker took (people's moves, new games), between two of
# the search's steps: with every worker in a long search, people waited for one to end.
BETWEEN_THOUGHTS_SECONDS = 0.05
BETWEEN_THOUGHTS_BUDGET = 0.1  # a look folds games until this is spent (the first one whole)
# No look starts this close to the end of a timed game's bot decision: one game's fold may
# take a slice and a quick bot's decision after it, and the bot must move within its share.
TIMED_MARGIN_SECONDS = SLICE_SECONDS + 0.75

_CURRENT: contextvars.ContextVar[WorkerContext | None] = contextvars.ContextVar("red7es_worker", default=None)


class WorkerContext:
    """One per worker process: folds games, holds their leases, sweeps for lost work."""

    def __init__(
        self,
        connection: redis.Redis,
        owner: str | None = None,
        *,
        slow_bots: bool = True,
        max_bot_time: float = DEFAULT_MAX_BOT_TIME,
        keep_changes_ms: int = KEEP_CHANGES_MS,
    ) -> None:
        self.inbox = Inbox(connection)
        # Games whose bot to move thinks long wait here for a worker that takes slow bots,
        # so that no search holds up the inbox, where people's moves arrive.
        self.slow_inbox = Inbox(connection, SLOW_INBOX_KEY)
        self.slow_bots = slow_bots  # whether this worker takes games from the slow-bot inbox
        self.max_bot_time = max_bot_time  # no bot decision of this worker lasts longer
        self._published = False  # max_bot_time told to clients this shift
        self.service = GameService(connection, inbox=self.inbox)  # posts by script where it can
        self.store = self.service.store
        self.store.keep_changes_ms = keep_changes_ms  # a finished game's changes kept this long for watchers
        self.folder = Folder(self.store, interrupted=self._between_thoughts, max_bot_time=max_bot_time)
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}"
        self._unreadable: set[str] = set()  # games whose keys the sweep could not read (logged once)
        self.last_sweep = 0.0
        self.stopping = False  # set when the worker was asked to stop
        self.max_idle: float | None = None  # stop after this long without work
        self.last_work = time.monotonic()
        self.beat: Callable[[], None] = lambda: None  # the worker's liveness signal
        self.outage = False  # Redis is unreachable or refusing: told once when it starts, once when it ends
        self._due_posted: dict[str, float] = {}  # games posted for a deadline, and when
        self._last_beat = self._last_due_pass = -math.inf  # when a pass last beat, last read the deadlines
        self._scan_cursor = 0  # where the sweep's slice of every active game goes on from
        self._consumer = self.owner  # this worker's name in the inboxes' group (set by shift)
        self._thinking: str | None = None  # the game from the slow-bot inbox being folded, if any
        self._serving_between = False  # folding the inbox between a slow bot's thoughts
        self._looked_between = -math.inf  # when the inbox was last looked at between thoughts

    def redis_lost(self, exc: Exception, retry_in: float | None = None) -> None:
        """Tell that Redis cannot serve the worker (``exc``, one of WAITED_OUT_ERRORS), once per outage.

        The shift and the worker's loop around RQ both meet an outage, and retry every
        second or so: an operator wants one line when it starts, not one a retry.
        """
        if self.outage:
            later = f"; retrying in {retry_in:.1f}s" if retry_in is not None else ""
            log.debug("Redis still %s%s", unavailable(exc), later)
        else:
            log.warning("Redis %s; waiting for it", unavailable(exc))
            self.outage = True

    def redis_back(self) -> None:
        """Tell that an outage ended; only after a write succeeded (a Redis at its maxmemory still answers PING)."""
        if self.outage:
            log.warning("Redis reachable again")
            self.outage = False
            # Writes refused during the outage may have left a game with work off the work
            # index (its wake-up refused): the next sweep reads every active game.
            self.last_sweep = 0.0

    def shift(self, seconds: float, consumer: str) -> dict[str, Any]:
        """Serve the inbox for ``seconds``: fold every game posted there, sweep as due.

        This is what one RQ job does, so RQ's per-job cost is paid once per shift
        instead of once per command, and the games stay warm in this process.
        """
        end = time.monotonic() + seconds
        served = 0
        self._consumer = consumer
        self.inbox.recheck_group()  # once a shift
        self.slow_inbox.recheck_group()
        self._published = False
        while not self.stopping:
            left = end - time.monotonic()
            if left <= 0:
                break
            try:
                served += self._serve(consumer, left)
                self.redis_back()
            except WAITED_OUT_ERRORS as exc:
                # The games' Redis is gone or refusing writes (RQ's may not be: --rq-url, a
                # cluster): keep the shift and try again shortly, rather than fail it and get
                # the next one at once.  A lease held meanwhile expires; the sweep recovers games.
                self.redis_lost(exc)
                time.sleep(min(1.0, max(0.0, end - time.monotonic())))
            if self.max_idle is not None and time.monotonic() - self.last_work > self.max_idle:
                log.info("no work for %.0f s: stopping", self.max_idle)
                self.stopping = True
        return {"games_served": served}

    def _serve(self, consumer: str, left: float) -> int:
        """One pass of a shift: beat, sweep if due, fold what the inbox holds; games served."""
        self._housekeeping(time.monotonic())
        if not self._published:
            self.store.publish_max_bot_time(self.max_bot_time)
            self._published = True
        end = time.monotonic() + left
        taken = self.inbox.take_posts(consumer, block_ms=max(1, int(min(left, 0.5) * 1000)))
        served = self._fold(taken, end, self.inbox, quick=True)
        if self.slow_bots and not self.stopping:
            # One slow game a pass, then back to the inbox: a search never holds up games
            # this worker has taken, and the other slow games are left to other workers.
            served += self._fold(self.slow_inbox.take_posts(consumer, count=1, block_ms=None), end, self.slow_inbox)
        return served

    def _housekeeping(self, now: float) -> None:
        """What a pass does before it reads the inbox, each when due: beat, sweep, post the
        games whose deadline passed (so a time-out waits for no search either)."""
        if now - self._last_beat >= BEAT_SECONDS:
            self.beat()
            self._last_beat = now
        if now - self.last_sweep >= SWEEP_SECONDS:
            self.sweep()
        if now - self._last_due_pass >= DUE_PASS_SECONDS:
            self.post_due()
            self._last_due_pass = now

    def _fold(self, taken: list[Post], end: float, inbox: Inbox, quick: bool = False) -> int:
        """Advance the games taken from ``inbox`` (``quick``: leaving slow bots to others),
        each with what its post says (on the work index; a command it carries); games served."""
        served = 0
        for n, post in enumerate(taken):
            game_id = post.game_id
            if self.stopping or (n and time.monotonic() > end):
                # A worker asked to stop goes at once, and slow bots can make a batch outlast
                # the shift: hand the rest back rather than run into RQ's job timeout, which
                # would cut a decision short.
                for later in taken[n:]:
                    inbox.post(later.game_id)
                break
            try:
                self.advance(game_id, quick=quick, indexed=post.indexed, carried=post.carried)
            except WAITED_OUT_ERRORS:
                raise  # Redis is gone or refusing writes: the shift waits, the sweep recovers the games
            except JobTimeoutException:
                raise  # RQ ends the job: not this game's failure
            except Exception:
                # One game's failure must not cost the others taken with it: log it;
                # the sweep re-posts the game, which is retried later.
                log.exception("game %s failed", game_id)
            served += 1
            self.last_work = time.monotonic()
        return served

    def advance(
        self, game_id: str, *, quick: bool = False, indexed: bool = False, carried: Carried | None = None
    ) -> dict[str, Any]:
        """Fold a game for one time slice, then hand it back (re-posted if work is left).

        A ``quick`` fold (a game from the inbox) leaves a bot that thinks long to the
        slow-bot inbox, so the worker is soon back for people's moves.  ``indexed``: the
        game's post says it is on the work index (it is not added again as it is taken).
        ``carried``: the command the post carries; a quick fold whose warm table is at its
        version answers it first without the lease (:meth:`Folder.answer_carried`), and
        is done if that append handed the game back.
        """
        if carried is not None and quick:
            try:
                answered = self.folder.answer_carried(game_id, carried)
            except GameBroken as exc:
                log.error("%s", exc)
                self.store.clear_nudge(game_id)
                return {"game": game_id, "error": str(exc)}
            if answered is not None:
                return self._progress_report(game_id, answered)
        if not self.folder.take(game_id, self.owner, LEASE_MS, indexed=indexed):
            return {"game": game_id, "skipped": "another worker holds the game"}
        hand_back = HandBack(self.owner)  # the fold's last append may hand the game back itself
        try:
            with self._kept_alive(game_id, hand_back), self._thinking_about(None if quick else game_id):
                progress = self.folder.advance(game_id, max_seconds=SLICE_SECONDS, quick=quick, hand_back=hand_back)
        except (GameBroken, NoSuchGame) as exc:
            log.error("%s", exc)
            self.store.release_lease(game_id, self.owner)
            self.store.clear_nudge(game_id)
            return {"game": game_id, "error": str(exc)}
        except BaseException:
            self.store.release_lease(game_id, self.owner)
            raise
        if progress.slow:
            self.store.release_lease(game_id, self.owner)
            # The nudge stays set (to "slow"): a client's command meanwhile is answered by
            # the slow-bot worker, before its bot thinks, and the sweep re-posts it there.
            self.store.set_slow_nudge(game_id, NUDGE_TTL_MS)
            self.slow_inbox.post_once(game_id)
        elif hand_back.done:
            # The last append released the lease, cleared the nudge and (one Redis) took
            # the game off the work index, atomically with finding nothing left to do.
            if is_cluster(self.store.redis):  # the index is in another slot than the game
                self._off_the_index(game_id)
        else:
            # Release, clear the nudge, look again, and take a game with nothing left to do
            # off the work index: one script, so a command that arrived meanwhile is either
            # seen here or wakes a worker itself. A game with work stays on the index:
            # killed before the wake-up below, this worker leaves it where the sweep looks.
            meta, last_command, off = self.store.release_and_look(game_id, self.owner, may_leave=not progress.more)
            if progress.more or has_work(meta, last_command):
                self.service.schedule(game_id)
            elif not off:  # a cluster: the index is in another slot than the game
                self._off_the_index(game_id)
        return self._progress_report(game_id, progress)

    @staticmethod
    def _progress_report(game_id: str, progress: Progress) -> dict[str, Any]:
        return {
            "game": game_id,
            "commands": progress.commands,
            "bot_moves": progress.bot_moves,
            "events": progress.events,
            "conflicts": progress.conflicts,
            "slow": progress.slow,
        }

    @contextlib.contextmanager
    def _thinking_about(self, game_id: str | None) -> Iterator[None]:
        """While the block folds ``game_id`` (a game from the slow-bot inbox; None: a quick
        fold), its bots' searches serve the inbox between their steps (:meth:`_between_thoughts`).
        Posts of the game itself met meanwhile are dropped: the fold's end looks for what
        came meanwhile (the hand-back's check, release_and_look), and the sweep and the
        deadline pass post it again if need be."""
        if game_id is None or self._thinking is not None:
            yield
            return
        self._thinking = game_id
        try:
            yield
        finally:
            self._thinking = None

    def _between_thoughts(self) -> bool:
        """What a bot's search asks between its steps: whether the worker is stopping.

        During a slow bot's search (:meth:`_thinking_about`) it also folds, every
        :data:`BETWEEN_THOUGHTS_SECONDS`, what the inbox holds that no other worker took:
        people's moves, new games, quick bots, time-outs (its sweep and deadline pass run
        here too, when due). Without it, two workers each in a 10 s search
        (anyone may create a game of bots thinking that long through an open gateway) kept
        every person's move waiting up to 10 s, and her clock running meanwhile. The search
        loses the time those folds take, from its own budget: milliseconds each, up to
        half a second for a quick bot's decision among them (a quick fold leaves a bot
        that thinks long to the slow-bot inbox). A timed game's bot keeps its share of its
        clock: no look starts within :data:`TIMED_MARGIN_SECONDS` of the end of its
        decision. A worker whose inbox posts go first to idle workers (each blocked
        reading it) finds nothing here.
        """
        if self._thinking is None or self._serving_between or self.stopping:
            return self.stopping
        now = time.monotonic()
        ends = self.folder.decision_ends
        if (
            ends is not None and ends - now < TIMED_MARGIN_SECONDS
        ) or now - self._looked_between < BETWEEN_THOUGHTS_SECONDS:
            return False
        self._looked_between = now
        self._serving_between = True
        try:
            self._housekeeping(now)
            taken = self.inbox.take_posts(self._consumer, block_ms=None)
            others = [post for post in taken if post.game_id != self._thinking]
            self._fold(others, time.monotonic() + BETWEEN_THOUGHTS_BUDGET, self.inbox, quick=True)
        except JobTimeoutException:
            raise  # RQ ends the job
        except Exception as exc:  # Redis lost, the inbox's group deleted by hand: the
            # search goes on (its own append meets an outage), the pass after it retries
            log.debug("between a slow bot's thoughts: %s", exc)
        finally:
            self._serving_between = False
        return self.stopping

    def _kept_alive(self, game_id: str, hand_back: HandBack) -> contextlib.AbstractContextManager[None]:
        """Renew the game's lease and the worker's heartbeat from a thread while the block runs.

        A bot may think for minutes on one turn (``ismcts:time=60``), with no Redis call
        in between: without this the lease would expire (and a second worker would think
        the same turn) and the worker would look dead to ``red7 status``.
        """

        def renew() -> None:
            # acquire, not renew: a lease that lapsed in a Redis stall is taken back; but
            # not one an append handed back (under the lock the append holds: HandBack)
            with hand_back.lock:
                if not hand_back.done and not self.store.acquire_lease(game_id, self.owner, LEASE_MS):
                    log.warning("game %s: another worker took its lease while this one was folding it", game_id)
            self.beat()

        return repeating(renew, KEEPALIVE_SECONDS, f"keepalive for game {game_id}")

    def post_due(self) -> int:
        """Post to the inbox every timed game whose seat to move's time is up by Redis's clock
        (the deadline index: one script a pass, nothing for untimed games). The folder that
        takes it writes the time-out with the usual compare-and-append, so it happens once
        whichever workers see it; a game still due a second later (its lease held by a
        worker that died at the deadline) is posted again."""
        _now, due = deadlines.due(self.store.redis)
        now = time.monotonic()
        posted = 0
        for game_id in due:
            if now - self._due_posted.get(game_id, -DUE_REPOST_SECONDS) >= DUE_REPOST_SECONDS:
                self.inbox.post(game_id)
                self._due_posted[game_id] = now
                posted += 1
        for game_id in [g for g, at in self._due_posted.items() if now - at > 10 * DUE_REPOST_SECONDS]:
            del self._due_posted[game_id]
        return posted

    def sweep(self, full: bool | None = None) -> int:
        """Re-post games that have work but nobody on them (a worker died mid-game, a
        wake-up was lost); how many were posted.

        Only the games due in the work index are read (:mod:`red7es.service.work_index`),
        so idle games cost nothing; a ``full`` sweep reads every active game, which a
        worker does first of all (by default, its first sweep): games from before the
        index, and what one write by hand would freeze for ever, are caught then.  A lease
        that never expires (or outlasts a worker's) is removed, and a game meta says is
        over is finished only if its log shows it ended (else it is marked broken, its
        seed kept).
        """
        full = self.last_sweep == 0.0 if full is None else full
        self.last_sweep = time.monotonic()
        woken = 0
        if full:
            active = self.store.active_games()
            indexed = set(self.store.work.members())
        else:
            active = self.store.due_work()
            indexed = set(active)
            # and a slice of every game, whatever the index says, for what a hand wrote
            self._scan_cursor, some = self.store.some_active_games(self._scan_cursor, SCAN_SLICE)
            active += [g for g in dict.fromkeys(some) if g not in indexed]
        timed: dict[str, int] = {}
        busy: list[str] = []  # games with work, or a worker on them: looked at again later
        for game_id, state in zip(active, self.store.work_states(active), strict=True):
            if not isinstance(state, redis.ResponseError) and state.meta.get("deadline", "").isdigit():
                timed[game_id] = int(state.meta["deadline"])
            if isinstance(state, redis.ResponseError):
                if game_id not in self._unreadable:  # said once, not at every sweep
                    log.error("game %s cannot be swept: %s", game_id, str(state).splitlines()[0])
                    self._unreadable.add(game_id)
                busy.append(game_id)  # tried again at each look, as every game was before the index
                continue
            self._unreadable.discard(game_id)
            if state.meta.get("broken"):
                self.store.deactivate(game_id)  # its log needs a human, not a retry every sweep
                continue
            if not full and game_id in indexed and not state.meta and state.last_command == "0-0":
                self._off_the_index(game_id)  # no such game: a create refused after it was indexed
                continue
            if not state.meta or state.meta.get("status") == "over":
                self._finish(game_id, state.meta)  # its worker died between the last append and tidying up
                continue
            lease = state.lease
            if lease is not None and (state.lease_ms == -1 or state.lease_ms > LEASE_MS):
                lease = self._drop_lease(game_id, lease, state.lease_ms)
                if lease is None and has_work(state.meta, state.last_command):
                    # Its nudge may be set, by a wake-up the lease turned away: post it at once.
                    self.inbox.post(game_id)
                    busy.append(game_id)
                    woken += 1
                    continue
            if lease is None and not has_work(state.meta, state.last_command):
                if game_id in indexed:
                    self._off_the_index(game_id)
                continue
            busy.append(game_id)
            if lease is not None:
                continue
            if self.service.schedule(game_id):
                woken += 1
            elif state.nudge_ms >= 0 and NUDGE_TTL_MS - state.nudge_ms >= STALL_SECONDS * 1000:
                # The nudge was set that long ago and nobody picked the game up: its post
                # was lost. (The nudge's age is in Redis, so any worker's look can tell.
                # A game waiting on the slow-bot inbox was not lost, only queued: posted once.)
                if self.store.waits_for_slow_bots(game_id):
                    self.slow_inbox.post_once(game_id)
                else:
                    self.inbox.post(game_id)
                self.store.renew_nudge(game_id, NUDGE_TTL_MS)  # posted again: its age restarts
                woken += 1
        self.store.work.later(busy)
        if full:  # (an index look sees only the games due: the others keep what they had)
            self._unreadable &= set(active)
        # A deadline whose index entry was lost (a worker died between its append and the
        # index write) is put back from the game's meta, which the append wrote atomically.
        deadlines.restore(self.store.redis, timed)
        compaction.compact_due(self.store.redis)  # finished games whose watchers had their time
        return woken

    def _off_the_index(self, game_id: str) -> None:
        """Take a game with no work and no worker off the work index, then look again: work
        that arrived meanwhile either is seen here or put the game back itself."""
        meta, last_command = self.store.off_index(game_id)
        if has_work(meta, last_command):
            self.service.schedule(game_id)

    def _finish(self, game_id: str, meta: dict[str, str]) -> None:
        """Forget the seed of a game whose log shows it ended; mark one whose meta alone says so
        broken (``HSET meta status over`` by hand): a seed once deleted is gone for good."""
        problem = end_problem(self.store, game_id)
        if problem is None:
            self.store.finish(game_id)
        elif meta:
            reason = f"meta.status is 'over' but {problem}"
            log.error("game %s is broken: %s", game_id, reason)
            self.store.mark_broken(game_id, reason)
        else:
            # No meta to mark: there is nothing to fold, but keep the seed for whoever repairs it.
            log.error("game %s has no meta and %s: no longer swept, its seed kept", game_id, problem)
            self.store.deactivate(game_id)

    def _drop_lease(self, game_id: str, holder: str, left_ms: int) -> str | None:
        """Remove a lease that never expires (or not within a worker's), which would keep every
        worker off the game for ever, and say so; the lease's holder after that (None: removed)."""
        if not self.store.drop_lease(game_id, holder, LEASE_MS):
            return holder  # someone else's by now, or fine: the next sweep looks again
        expiry = "no expiry" if left_ms == -1 else f"{left_ms:,} ms left"
        log.warning(
            "game %s: removed its lease, held by %r with %s, where a worker's lasts %d ms",
            game_id,
            holder,
            expiry,
            LEASE_MS,
        )
        return None


@contextlib.contextmanager
def repeating(action: Callable[[], object], every: float, what: str) -> Iterator[None]:
    """Call ``action`` from a thread every ``every`` seconds while the block runs.

    A failure is logged and the next call made on time (the block's own calls report
    a real outage); the thread is stopped and joined when the block ends.
    """
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(every):
            try:
                action()
            except WAITED_OUT_ERRORS as exc:  # the block's own Redis calls report the outage
                log.debug("%s failed: %s", what, exc)
            except Exception:
                log.exception("%s failed", what)

    thread = threading.Thread(target=run, name=f"red7es {what}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def current_context() -> WorkerContext | None:
    return _CURRENT.get()


def use_context(context: WorkerContext) -> contextvars.Token[WorkerContext | None]:
    return _CURRENT.set(context)
