"""The red7es worker: an RQ SimpleWorker working in shifts, with warm games.

RQ costs dozens of Redis commands per job, far too many for one job per move.  So a
red7es worker takes *shift* jobs from a queue of its own: each shift serves the
shared inbox of games with work for ``SHIFT_SECONDS`` (see ``WorkerContext.shift``),
and whenever the worker comes back to RQ it makes sure its next shift is queued.
It does not fork per job (RQ's default ``Worker`` does), so the folded state of the
games it handles stays in memory between shifts.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

import redis
from rq import Queue, SimpleWorker, Worker
from rq.exceptions import StopRequested

from red7es.bots.ismcts import MAX_TIME
from red7es.service.client import QUEUE_NAME
from red7es.service.connection import WAITED_OUT_ERRORS, backoff, is_cluster, unavailable
from red7es.service.store import DEFAULT_MAX_BOT_TIME

from .context import WorkerContext, use_context

__all__ = ["Red7Worker", "run_worker", "SHIFT_SECONDS", "shift_queue_name"]

log = logging.getLogger(__name__)

SHIFT_SECONDS = 10.0
# RQ kills a job that runs longer than this. A shift ends after SHIFT_SECONDS, but only
# between two games' slices, and a slice ends only after the bot decision under way,
# which may last up to MAX_TIME (or about as long for an iteration budget). Killed, the
# shift would lose that decision, and the game would be retried and killed for ever.
SHIFT_TIMEOUT = int(SHIFT_SECONDS * 6 + MAX_TIME)
BEAT_PREFIX = "red7:worker:"
SHIFT_QUEUE_PREFIX = "red7-shift-"


def shift_queue_name(worker_name: str) -> str:
    return f"{SHIFT_QUEUE_PREFIX}{worker_name}"


class Red7Worker(SimpleWorker):
    """SimpleWorker + its own shift queue + a warm :class:`WorkerContext`."""

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
        self.shift_queue = Queue(shift_queue_name(name), connection=connection)
        super().__init__([self.shift_queue, *queues], connection=connection, name=name)
        # The name clients and healthchecks know this worker by: the one it was given,
        # even after a restart registers it with RQ under a fresh one.
        self.beat_name = beat_name or name
        self.context = context
        context.beat = self._beat
        use_context(context)

    def _beat(self) -> None:
        # A short-lived key per worker, so clients can tell within seconds whether
        # any worker is alive (RQ's own registry keeps dead workers for minutes).
        self.context.store.redis.set(f"{BEAT_PREFIX}{self.beat_name}", self.context.owner, px=3000)

    def request_stop(self, signum: Any, frame: Any) -> None:
        # RQ raises StopRequested when idle without recording why work() returned;
        # remember it so run_worker does not restart a worker asked to stop, and a
        # running shift ends within half a second.
        self.context.stopping = True
        super().request_stop(signum, frame)  # type: ignore[no-untyped-call]  # rq leaves it unannotated

    def heartbeat(self, *args: Any, **kwargs: Any) -> None:
        super().heartbeat(*args, **kwargs)
        self._beat()

    def dequeue_job_and_maintain_ttl(self, timeout: int | None, max_idle_time: int | None = None) -> Any:
        if self.context.stopping:
            raise StopRequested()
        if self.shift_queue.count == 0:
            self.shift_queue.enqueue(
                "red7es.workers.jobs.work_shift",
                SHIFT_SECONDS,
                result_ttl=0,
                failure_ttl=3600,
                job_timeout=SHIFT_TIMEOUT,
                description="serve the inbox",
            )
        return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)

    @property
    def dequeue_timeout(self) -> int:
        return 1

    def teardown(self) -> None:
        # Our shift queue is useless without us: do not leave it for `rq info`.
        try:
            self.shift_queue.delete(delete_jobs=True)
            self.context.store.redis.delete(f"{BEAT_PREFIX}{self.beat_name}")
        except WAITED_OUT_ERRORS:
            pass
        super().teardown()  # type: ignore[no-untyped-call]  # rq leaves it unannotated


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
) -> None:
    """Run one worker until stopped; survives Redis restarts by reconnecting.

    ``rq_connection`` is where RQ keeps its queues and registries (default: the games'
    Redis), so games can live on a Redis Cluster while RQ, which needs a single
    server, has its own.  ``burst`` serves one shift and stops; ``max_idle`` stops once
    no game has needed work for that many seconds.  ``redis_down``: the caller has
    already told that Redis cannot be reached, so the worker only tells when it can.
    ``slow_bots``: take games whose bot thinks long (docs/architecture.md, *Slow bots*);
    ``max_bot_time``: no bot decision lasts longer, and new games may ask no more.
    """
    if rq_connection is None:
        if is_cluster(connection):
            raise ValueError("RQ needs a single Redis server: give run_worker an rq_connection besides the cluster")
        rq_connection = connection
    context = WorkerContext(connection, slow_bots=slow_bots, max_bot_time=max_bot_time)
    context.max_idle = max_idle
    delays = backoff()
    delay = next(delays)
    given_name, rq_name = name, name
    outage = redis_down  # an outage is told once when it starts and once when it ends, not at every retry
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
            if outage:
                # Worker() proved RQ's Redis reachable; with --rq-url the games' may still be down
                connection.ping()
                log.warning("Redis reachable again")
                outage = False
            worker.work(logging_level=logging_level, max_jobs=1 if burst else None)
            if burst or context.stopping:
                return
        except WAITED_OUT_ERRORS as exc:
            if outage:
                log.debug("Redis still %s; retrying in %.1fs", unavailable(exc), delay)
            else:
                log.warning("Redis %s; waiting for it", unavailable(exc))
                outage = True
        if context.stopping:
            return
        if time.monotonic() - started > 30:
            delays = backoff()  # it had been working: this is a new outage, start the backoff over
            delay = next(delays)
        time.sleep(delay)
        delay = next(delays)
        # (a registration RQ still lists, the dead one included, is renamed at the loop's top)
