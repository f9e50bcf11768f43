"""The red7es worker: an RQ SimpleWorker working in shifts, with warm games.

RQ costs dozens of Redis commands per job, far too many for one job per move.  So a
red7es worker takes *shift* jobs from a queue of its own: each shift serves the
shared inbox of games with work for ``SHIFT_SECONDS`` (see ``WorkerContext.shift``),
and whenever the worker comes back to RQ it makes sure its next shift is queued.
It does not fork per job (RQ's default ``Worker`` does), so the folded state of the
games it handles stays in memory between shifts.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import redis
from rq import Queue, SimpleWorker, Worker
from rq.exceptions import StopRequested

from red7es.bots.ismcts import MAX_TIME
from red7es.service.client import QUEUE_NAME
from red7es.service.connection import WAITED_OUT_ERRORS, backoff, is_cluster
from red7es.service.store import DEFAULT_MAX_BOT_TIME, KEEP_CHANGES_MS

from .context import WorkerContext, use_context

__all__ = ["Red7Worker", "run_worker", "SHIFT_SECONDS", "shift_queue_name"]

log = logging.getLogger(__name__)
T = TypeVar("T")

SHIFT_SECONDS = 10.0
# RQ kills a job that runs longer than this. A shift ends after SHIFT_SECONDS, but only
# between two games' slices, and a slice ends only after the bot decision under way,
# which may last up to MAX_TIME (or about as long for an iteration budget). Killed, the
# shift would lose that decision, and the game would be retried and killed for ever.
SHIFT_TIMEOUT = int(SHIFT_SECONDS * 6 + MAX_TIME)
BEAT_PREFIX = "red7:worker:"
SHIFT_QUEUE_PREFIX = "red7-shift-"
# How long the thread listening for RQ's commands (`red7 shutdown` sends one) blocks on
# one read: stopping it waits for that read to end.  RQ reads for 60 s at a time.
PUBSUB_POLL_SECONDS = 0.2


def shift_queue_name(worker_name: str) -> str:
    return f"{SHIFT_QUEUE_PREFIX}{worker_name}"


class _RedisLost(Exception):
    """An outage met by RQ's dequeue, carried past its handler (which logs an error and
    retries on its own) to the worker's (see ``Red7Worker._riding_out``)."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


class _Queue(Queue):
    """RQ's Queue, whose dequeue raises an outage as :class:`_RedisLost`."""

    @classmethod
    def dequeue_any(cls, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().dequeue_any(*args, **kwargs)
        except WAITED_OUT_ERRORS as exc:
            raise _RedisLost(exc) from exc


class Red7Worker(SimpleWorker):
    """SimpleWorker + its own shift queue + a warm :class:`WorkerContext`."""

    queue_class = _Queue

    def __init__(
        self,
        queues: list[Queue],
        *,
        connection: redis.Redis,
        context: WorkerContext,
        name: str | None = None,
        beat_name: str | None = None,
    ) -> None:
        name = name or uuid.uuid4().hex
        self.shift_queue = _Queue(shift_queue_name(name), connection=connection)
        # RQ wants its queue_class's instances
        queues = [q if isinstance(q, _Queue) else _Queue(q.name, connection=q.connection) for q in queues]
        super().__init__([self.shift_queue, *queues], connection=connection, name=name)
        # The name clients and healthchecks know this worker by: the one it was given,
        # even after a restart registers it with RQ under a fresh one.
        self.beat_name = beat_name or name
        self.context = context
        context.beat = self._beat
        use_context(context)
        self.lost: Exception | None = None  # the outage that ended RQ's loop, raised again by teardown
        self._unsubscribing = threading.Event()

    def _beat(self) -> None:
        # A short-lived key per worker, so clients can tell within seconds whether
        # any worker is alive (RQ's own registry keeps dead workers for minutes).
        self.context.store.redis.set(f"{BEAT_PREFIX}{self.beat_name}", self.context.owner, px=3000)

    def request_stop(self, signum: Any, frame: Any) -> None:
        # RQ raises StopRequested when idle without recording why work() returned;
        # remember it so run_worker does not restart a worker asked to stop, and a
        # running shift ends within half a second.
        self.context.stopping = True
        # RQ records the request in Redis when a job runs: that may fail in an outage, too late
        # to matter (it has set _stop_requested first), and must not raise into the shift.
        with contextlib.suppress(*WAITED_OUT_ERRORS):
            super().request_stop(signum, frame)  # type: ignore[no-untyped-call]  # rq leaves it unannotated

    # RQ's work loop logs any exception it did not expect with its traceback ("found an
    # unhandled exception, quitting"), an outage's too, each time: the calls it makes in
    # its loop are wrapped so an outage ends the loop as a stop request does, quietly, and
    # teardown raises it again for run_worker, which tells it once and reconnects.

    def _riding_out(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            return call(*args, **kwargs)
        except WAITED_OUT_ERRORS as exc:
            self.lost = exc
            raise StopRequested() from exc
        except _RedisLost as lost:
            self.lost = lost.cause
            raise StopRequested() from lost.cause

    def bootstrap(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().bootstrap(*args, **kwargs)  # type: ignore[no-untyped-call]  # rq leaves it unannotated
        except BaseException:
            self.unsubscribe()  # the work loop's teardown will not run: end RQ's listening thread here
            raise

    def check_for_suspension(self, burst: bool) -> None:
        self._riding_out(super().check_for_suspension, burst)

    def run_maintenance_tasks(self) -> None:
        self._riding_out(super().run_maintenance_tasks)

    def execute_job(self, job: Any, queue: Queue) -> None:
        self._riding_out(super().execute_job, job, queue)

    def heartbeat(self, *args: Any, **kwargs: Any) -> None:
        self._riding_out(super().heartbeat, *args, **kwargs)
        with contextlib.suppress(*WAITED_OUT_ERRORS):  # the calls around it report an outage
            self._beat()

    def dequeue_job_and_maintain_ttl(self, timeout: int | None, max_idle_time: int | None = None) -> Any:
        if self.context.stopping:
            raise StopRequested()
        return self._riding_out(self._dequeue, timeout, max_idle_time)

    def _dequeue(self, timeout: int | None, max_idle_time: int | None) -> Any:
        if self.shift_queue.count == 0:
            self.shift_queue.enqueue(
                "red7es.workers.jobs.work_shift",
                SHIFT_SECONDS,
                result_ttl=0,
                failure_ttl=3600,
                job_timeout=SHIFT_TIMEOUT,
                description="serve the inbox",
            )
        job = super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)
        self.context.redis_back()  # RQ's heartbeat, a write, went through
        return job

    @property
    def dequeue_timeout(self) -> int:
        return 1

    def subscribe(self) -> None:
        """Listen for RQ's commands as RQ does, but in reads of PUBSUB_POLL_SECONDS.

        RQ reads for 60 s at a time, and redis-py's ``PubSubWorkerThread.stop()`` (8.2,
        pinned in pyproject.toml) waits for the read under way to end: a worker asked to
        stop hung for up to a minute in its teardown, past Docker's grace, whenever the
        listening thread had started its next read before RQ's unsubscribe stopped it.
        """
        self._unsubscribing.clear()
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(  # type: ignore[assignment]  # rq annotates it as None
            sleep_time=PUBSUB_POLL_SECONDS, daemon=True, exception_handler=self._pubsub_exception_handler
        )

    def unsubscribe(self) -> None:
        """Stop the listening thread within one read; it closes its connection as it ends.

        Unlike RQ's, it sends no UNSUBSCRIBE: that may fail in an outage, and the server
        forgets a closed connection's subscriptions anyway.  Safe to call twice.
        """
        thread, self.pubsub_thread = self.pubsub_thread, None
        if thread is not None:
            self._unsubscribing.set()
            thread.stop()  # redis-py 8 joins it: one read at most; older ones return at once

    def _pubsub_exception_handler(self, exc: Exception, pubsub: Any, pubsub_thread: Any) -> None:
        """An outage met by the listening thread: retry quietly (RQ logs an error every 2 s);
        the worker's own loop tells the outage, once."""
        if not isinstance(exc, WAITED_OUT_ERRORS):
            super()._pubsub_exception_handler(exc, pubsub, pubsub_thread)
            return
        log.debug("RQ's command listener: %s", exc)
        self._unsubscribing.wait(1.0)

    def teardown(self) -> None:
        try:
            # Our shift queue is useless without us: do not leave it for `rq info`.
            self.shift_queue.delete(delete_jobs=True)
            self.context.store.redis.delete(f"{BEAT_PREFIX}{self.beat_name}")
            super().teardown()  # type: ignore[no-untyped-call]  # rq leaves it unannotated
        except WAITED_OUT_ERRORS as exc:
            self.lost = self.lost or exc
        finally:
            self.unsubscribe()  # RQ's teardown does not get to it when registering the death fails
        if self.lost is not None and not self.context.stopping:
            raise self.lost  # to run_worker, which waits the outage out


def _registered(connection: redis.Redis, name: str) -> bool:
    """Whether RQ lists a live worker named ``name`` (RQ's own test in ``register_birth``)."""
    key = f"{Worker.redis_worker_namespace_prefix}{name}"
    return bool(connection.exists(key)) and not connection.hexists(key, "death")


def run_worker(
    connection: redis.Redis,
    rq_connection: redis.Redis | None = None,
    *,
    burst: bool = False,
    max_idle: int | None = None,
    name: str | None = None,
    logging_level: str = "WARNING",
    redis_down: bool = False,
    slow_bots: bool = True,
    max_bot_time: float = DEFAULT_MAX_BOT_TIME,
    keep_changes_ms: int = KEEP_CHANGES_MS,
) -> None:
    """Run one worker until stopped; survives Redis restarts by reconnecting.

    ``rq_connection`` is where RQ keeps its queues and registries (default: the games'
    Redis), so games can live on a Redis Cluster while RQ, which needs a single
    server, has its own.  ``burst`` serves one shift and stops; ``max_idle`` stops once
    no game has needed work for that many seconds.  ``redis_down``: the caller has
    already told that Redis cannot be reached, so the worker only tells when it can.
    ``slow_bots``: take games whose bot thinks long (docs/architecture.md, *Slow bots*);
    ``max_bot_time``: no bot decision lasts longer, and new games may ask no more;
    ``keep_changes_ms``: how long a finished game keeps every change before it is compacted.
    """
    if rq_connection is None:
        if is_cluster(connection):
            raise ValueError("RQ needs a single Redis server: give run_worker an rq_connection besides the cluster")
        rq_connection = connection
    context = WorkerContext(connection, slow_bots=slow_bots, max_bot_time=max_bot_time, keep_changes_ms=keep_changes_ms)
    context.max_idle = max_idle
    context.outage = redis_down  # an outage is told once when it starts and once when it ends, not at every retry
    # StopRequested: asked to stop between two RQ workers, while Redis was away
    with _stopped_by_signals(context) as rearm, contextlib.suppress(StopRequested):
        _serve(context, connection, rq_connection, rearm, burst=burst, name=name, logging_level=logging_level)


def _serve(
    context: WorkerContext,
    connection: redis.Redis,
    rq_connection: redis.Redis,
    rearm: Callable[[], None],
    *,
    burst: bool,
    name: str | None,
    logging_level: str,
) -> None:
    """run_worker's loop: one RQ worker after another, for as long as Redis goes away and comes back."""
    delays = backoff()
    delay = next(delays)
    given_name, rq_name = name, name
    while True:
        started = time.monotonic()
        try:
            if rq_name and _registered(rq_connection, rq_name):
                # A worker killed without stopping (kill -9, a container's OOM) stays registered
                # with RQ for up to an hour, and RQ refuses a second worker of that name: a
                # restart under the same --name (docker-compose gives the hostname) would fail
                # for that long. Clients and healthchecks know it by its heartbeat's name.
                fresh = f"{given_name}-{uuid.uuid4().hex[:6]}"
                log.warning("RQ still lists a worker named %s: registering with RQ as %s", rq_name, fresh)
                rq_name = fresh
            # inside the try: RQ's Worker() already talks to Redis (CLIENT SETNAME)
            worker = Red7Worker(
                [Queue(QUEUE_NAME, connection=rq_connection)],
                connection=rq_connection,
                name=rq_name,
                beat_name=given_name,
                context=context,
            )
            if context.outage:
                # Worker() proved RQ's Redis reachable; with --rq-url the games' may still be down.
                # "Reachable again" is told once a write went through (a full Redis answers PING).
                connection.ping()
            try:
                worker.work(logging_level=logging_level, max_jobs=1 if burst else None)
            finally:
                rearm()  # RQ's signal handlers outlive its loop
            if burst or context.stopping:
                return
        except WAITED_OUT_ERRORS as exc:
            context.redis_lost(exc, retry_in=delay)
        if context.stopping:
            return
        if time.monotonic() - started > 30:
            delays = backoff()  # it had been working: this is a new outage, start the backoff over
            delay = next(delays)
        time.sleep(delay)
        delay = next(delays)
        # (a registration RQ still lists, the dead one included, is renamed at the loop's top)


@contextlib.contextmanager
def _stopped_by_signals(context: WorkerContext) -> Iterator[Callable[[], None]]:
    """SIGTERM and SIGINT stop the worker at once between two RQ workers too (RQ's own
    handlers serve while one works): while it waits for Redis, it has nothing to hand on.

    The handlers RQ installs stay after its loop ends: the caller puts ours back after each
    RQ worker with the function yielded, and the caller's are put back at the end (a test
    may run a worker in its own process).
    """

    def stop(signum: int, frame: Any) -> None:
        context.stopping = True
        raise StopRequested()

    def rearm() -> None:
        for sig in before:
            signal.signal(sig, stop)

    if threading.current_thread() is not threading.main_thread():
        yield lambda: None  # only the main thread may handle signals (RQ's work() would refuse too)
        return
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    rearm()
    try:
        yield rearm
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
