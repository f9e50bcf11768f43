"""The RQ job of red7es: a worker's *shift*, serving the inbox for a few seconds."""

from __future__ import annotations

from typing import Any

from rq import get_current_job

from .context import WorkerContext, current_context, use_context

__all__ = ["work_shift"]


def work_shift(seconds: float = 10.0) -> dict[str, Any]:
    """Fold every game posted to the inbox during ``seconds``, and sweep for lost work."""
    job = get_current_job()
    context = current_context()
    if context is None:
        # Run by a plain `rq worker`: build a context on the job's own connection.
        if job is None:
            raise RuntimeError("work_shift must run inside an RQ worker")
        context = WorkerContext(job.connection)
        use_context(context)
    consumer = job.worker_name if job is not None and job.worker_name else context.owner
    return context.shift(seconds, consumer)
