"""RQ workers for red7es (installed as ``red7es.workers``).

Jobs are thin: ``advance_game(game_id)`` folds a game's pending commands (and plays its
bots) through :class:`red7es.service.folding.Folder`, which the worker process keeps
warm between jobs.  :class:`Red7Worker` is an RQ ``SimpleWorker`` that also sweeps
unfinished games so that work a killed worker left behind is picked up again.
"""
