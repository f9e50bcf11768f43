"""The red7es worker: an RQ SimpleWorker that keeps games warm and sweeps for lost work.

It does not fork per job (RQ's default ``Worker`` does), so the folded state of the
games it handles stays in memory between jobs.  Between jobs it wakes at least once a
second and, every ``sweep_interval`` seconds, re-queues unfinished games that have
work but no worker (``WorkerContext.sweep``).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import redis
from rq import Queue, SimpleWorker

from red7es.service.client import QUEUE_NAME

from .context import WorkerContext, use_context

__all__ = ["Red7Worker", "run_worker"]

log = logging.getLogger(__name__)


class Red7Worker(SimpleWorker):
    """SimpleWorker + a warm :class:`WorkerContext` + periodic sweeps."""

    sweep_interval = 2.0

    def __init__(self, *args: Any, context: WorkerContext, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.context = context
        use_context(context)

    def heartbeat(self, *args: Any, **kwargs: Any) -> None:
        super().heartbeat(*args, **kwargs)
        # A short-lived key per worker, so clients can tell within seconds whether
        # any worker is alive (RQ's own registry keeps dead workers for minutes).
        self.connection.set(f"red7:worker:{self.name}", self.context.owner, px=5000)

    @property
    def dequeue_timeout(self) -> int:
        return 1  # wake up every second so sweeps run even when no job comes

    @property
    def should_run_maintenance_tasks(self) -> bool:
        if time.monotonic() - self.context.last_sweep >= self.sweep_interval:
            return True
        return bool(super().should_run_maintenance_tasks)

    def run_maintenance_tasks(self) -> None:
        if time.monotonic() - self.context.last_sweep >= self.sweep_interval:
            try:
                woken = self.context.sweep()
                if woken:
                    log.info("sweep re-queued %d game(s)", woken)
            except redis.exceptions.ConnectionError as exc:
                log.warning("sweep skipped, Redis unreachable: %s", exc)
                self.context.last_sweep = time.monotonic()
        if super().should_run_maintenance_tasks:
            super().run_maintenance_tasks()


def run_worker(
    connection: redis.Redis,
    *,
    burst: bool = False,
    max_idle: int | None = None,
    name: str | None = None,
    logging_level: str = "WARNING",
) -> None:
    """Run one worker until stopped; survives Redis restarts by reconnecting."""
    context = WorkerContext(connection)
    delay = 0.5
    while True:
        worker = Red7Worker(
            [Queue(QUEUE_NAME, connection=connection)], connection=connection, name=name, context=context
        )
        try:
            worker.work(burst=burst, max_idle_time=max_idle, logging_level=logging_level)
            if burst or max_idle is not None or worker._stop_requested:
                return
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            log.warning("Redis unreachable (%s); retrying in %.1fs", exc, delay)
        if worker._stop_requested:
            return
        time.sleep(delay)
        delay = min(delay * 2, 5.0)
        name = None  # a fresh registration after a restart
