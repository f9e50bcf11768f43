"""Real ``red7 worker`` processes for the benchmarks that measure the service path.

Both bench/service.py and bench/tournament.py run the workers exactly as a user
would (``red7 worker --url``), so the figures include RQ, the inbox and the leases.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis

from red7es.service.client import GameService


@contextmanager
def worker_processes(
    url: str,
    count: int,
    log_dir: Path,
    timeout: float = 30,
    command: Sequence[str] = ("-m", "red7es.cli"),
    env: Callable[[int], dict[str, str]] | None = None,
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Start ``count`` workers (logs in ``log_dir``), wait for their heartbeats, stop them after.

    Yields the worker processes (their pids, for :func:`cpu_seconds`). ``command`` is what
    the interpreter runs (``red7``'s entry, or a script wrapping it: bench/counted_worker.py),
    ``env`` the environment of worker ``i`` (default: this one's).

    Stopping is SIGTERM, then SIGKILL for any worker still running 10 s later, so a
    benchmark never leaves a worker behind.
    """
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for i in range(count):
            with open(log_dir / f"worker{i}.log", "wb") as log:
                procs.append(
                    subprocess.Popen(
                        [sys.executable, *command, "worker", "--url", url],
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env=None if env is None else env(i),
                    )
                )
        with redis.Redis.from_url(url) as conn:
            deadline = time.monotonic() + timeout
            while len(list(conn.scan_iter(match="red7:worker:*"))) < count:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{count} workers did not report within {timeout:g} s (logs in {log_dir})")
                time.sleep(0.05)
        yield procs
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                print(f"worker {p.pid} ignored SIGTERM for 10 s; killing it", file=sys.stderr)
                p.kill()
                p.wait()


def cpu_seconds(procs: list[subprocess.Popen[bytes]]) -> float:
    """User plus system CPU seconds the processes have used so far (Linux: /proc/<pid>/stat)."""
    total = 0
    for p in procs:
        with open(f"/proc/{p.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / os.sysconf("SC_CLK_TCK")


def next_person_turn(
    service: GameService, game_id: str, cursor: str, view: dict[str, Any] | None = None
) -> tuple[str, str | None, bool]:
    """One look of a scripted person at a game she plays as seat 0, as ``red7 play`` does:
    the view (``view``: the one her last answer came with, :attr:`Answer.view`; read when
    None), or (not her turn) a wait for the next change. Returns (cursor after it, the
    turn to play, None when not hers: the first legal one, or a fold only when it is the
    only one; whether the game is over)."""
    if view is None:
        view = service.view(game_id, 0)
    if view["status"] == "over":
        return cursor, None, True
    if view.get("to_move") != 0:
        change = service.wait_change(game_id, cursor, 10)
        return (change[0] if change else cursor), None, False
    legal = view["legal"]
    return cursor, (legal[0] if legal[0] != "fold" or len(legal) == 1 else legal[-1]), False


def applied_moves(conn: redis.Redis, games: Sequence[str] | None = None, batch: int = 500) -> int:
    """Validated moves (``CommandApplied`` events) in the logs of ``games``, or of every game
    (a finished game's log sealed by its compaction too)."""
    from red7es.service.sealing import unseal
    from red7es.service.stream_entries import log_rows_events

    if games is None:
        found = [*conn.scan_iter(match="red7:{*}:log"), *conn.scan_iter(match="red7:{*}:sealed")]
        keys = [k.decode() if isinstance(k, bytes) else str(k) for k in found]
    else:
        keys = [f"red7:{{{g}}}:{name}" for g in games for name in ("log", "sealed")]
    total = 0
    for i in range(0, len(keys), batch):
        pipe = conn.pipeline(transaction=False)
        for key in keys[i : i + batch]:
            if key.endswith(":sealed"):
                pipe.get(key)
            else:
                pipe.xrange(key)
        for reply in pipe.execute():
            if isinstance(reply, bytes):  # a seal
                total += sum(b"\xaeCommandApplied" in raw for _id, raw in unseal(reply))
            elif reply:
                total += sum(b"\xaeCommandApplied" in raw for _id, raw in log_rows_events(reply))
    return total
