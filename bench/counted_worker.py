"""A real ``red7 worker`` that counts its own round trips to Redis, for bench/turn_cost.py.

Every request redis-py sends goes through ``send_packed_command`` once: one command, or a
whole pipeline (or MULTI/EXEC) in one write. Each call is therefore one round trip. The
count (of every connection of the process: the games' and RQ's) is written to the file
named by ``RED7ES_COUNT_FILE`` every 50 ms, atomically (write then rename), so the bench
reads it before and after a run without asking the worker anything over Redis.

Usage (by the bench):  RED7ES_COUNT_FILE=/tmp/w0.count python bench/counted_worker.py worker --url URL
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from redis.connection import AbstractConnection

_SENDS = [0]
_original = AbstractConnection.send_packed_command


def _counted(self: AbstractConnection, command: Any, check_health: bool = True) -> None:
    _SENDS[0] += 1  # (a GIL-protected int: threads of the worker, e.g. the keep-alive, may send too)
    _original(self, command, check_health)


def _report(path: str) -> None:
    stop = threading.Event()
    while not stop.wait(0.05):
        tmp = f"{path}.tmp"
        with open(tmp, "w") as f:
            f.write(str(_SENDS[0]))
        os.replace(tmp, path)


def main() -> None:
    AbstractConnection.send_packed_command = _counted  # type: ignore[method-assign]
    threading.Thread(target=_report, args=(os.environ["RED7ES_COUNT_FILE"],), daemon=True).start()
    from red7es.cli.main import main as red7

    sys.argv = ["red7", *sys.argv[1:]]
    red7()


if __name__ == "__main__":
    main()
