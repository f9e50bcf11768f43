"""RQ workers for red7es (installed as ``red7es.workers``).

A worker is an RQ ``SimpleWorker`` (:class:`worker.Red7Worker`) taking *shift* jobs
(:func:`jobs.work_shift`) from a queue of its own: each shift serves the shared inbox of
games with work for a few seconds through :class:`context.WorkerContext`, which keeps
games warm in memory, holds their leases and sweeps unfinished games so that work a
killed worker left behind is picked up again.
"""
