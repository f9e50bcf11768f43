"""The RQ jobs of red7es: thin functions that hand work to the worker's context."""

from __future__ import annotations

from typing import Any

from rq import get_current_job

from .context import WorkerContext, current_context, use_context

__all__ = ["advance_game"]


def advance_game(game_id: str) -> dict[str, Any]:
    """Fold the pending commands of a game and let its bots move (one time slice)."""
    context = current_context()
    if context is None:
        # Run by a plain `rq worker`: build a context on the job's own connection.
        job = get_current_job()
        if job is None:
            raise RuntimeError("advance_game must run inside an RQ worker")
        context = WorkerContext(job.connection)
        use_context(context)
    return context.advance(game_id)
