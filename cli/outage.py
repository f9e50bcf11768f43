"""Riding out a Redis outage in the commands that follow a game live (``watch``, ``play``).

Redis restarted with append-only persistence loses nothing, and a changes stream keeps
its ids: a client that waits for it and then reads on from the last change it saw
misses nothing and sees nothing twice. Workers and ``red7 serve`` reconnect the same
way (``red7es.workers.worker.run_worker``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import click

from red7es.service.connection import UNREACHABLE_ERRORS, backoff

from .session import Session

__all__ = ["OUTAGE_LIMIT", "riding_out", "wait_for_redis"]

T = TypeVar("T")

OUTAGE_LIMIT = 300.0  # seconds a client waits for Redis to come back before it gives up


def wait_for_redis(session: Session, lost: Exception, limit: float | None = None) -> None:
    """After ``lost`` (one of UNREACHABLE_ERRORS), wait until Redis answers again.

    Says once on stderr that Redis is unreachable and once that it is back; meanwhile it
    pings with :func:`backoff`. After ``limit`` seconds (default :data:`OUTAGE_LIMIT`)
    it gives up by raising the last error, which the caller reports in its one line
    (exit 1). Ctrl-C while it waits is the caller's, as anywhere else.
    """
    limit = OUTAGE_LIMIT if limit is None else limit
    where = session.endpoint.shown
    click.echo(f"Redis at {where} is unreachable; waiting for it (Ctrl-C to stop).", err=True)
    deadline = time.monotonic() + limit
    for delay in backoff():
        left = deadline - time.monotonic()
        if left <= 0:
            raise lost
        time.sleep(min(delay, left))
        try:
            session.connection.ping()
        except UNREACHABLE_ERRORS as again:
            lost = again
            continue
        click.echo(f"Redis at {where} is back; carrying on.", err=True)
        return


def riding_out(session: Session, read: Callable[[], T], limit: float | None = None) -> T:
    """``read()``, tried again each time Redis comes back after it was lost (:func:`wait_for_redis`).

    Only for what is safe to repeat: reads of views and of the changes stream.
    """
    while True:
        try:
            return read()
        except UNREACHABLE_ERRORS as lost:
            wait_for_redis(session, lost, limit)
