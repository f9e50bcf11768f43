"""A worker's reads of a game's commands, bounded in bytes.

Anyone who can submit can put commands on a game's stream, and a worker used to read
200 of them at a time whatever their size: 200 commands of 4 MB grew a worker past a
gigabyte.  ``read_commands.lua`` reads them for the worker two entries at a time inside
Redis and sends back at most :data:`READ_BYTES` (plus one command) per read.  A command
larger than its game's referee reads (:func:`~red7es.service.codec.command_limit`)
never crosses the network: only its size does, as :class:`Oversized`, and the worker
answers it as corrupt with the very words the audit gives when it re-executes the
command from its bytes (:func:`~red7es.service.codec.oversized_command`).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import redis
from redis.exceptions import NoScriptError

from .store import Keys, NoSuchGame, start_after, text

__all__ = ["READ_BYTES", "READ_COUNT", "CommandReader", "Oversized", "Row"]

READ_COUNT = 200  # commands per read at most (a flood is folded in batches of this many)
READ_BYTES = 1 << 20  # once this many bytes of commands are read, the read stops (one more at most)


@dataclass(frozen=True)
class Oversized:
    """A command larger than its game's referee reads: only its size was read."""

    size: int


Row = tuple[str, bytes | Oversized]  # (stream id, the command's bytes or its size)


class CommandReader:
    """Bounded reads of games' commands on one connection (a worker's)."""

    def __init__(self, connection: redis.Redis) -> None:
        script = resources.files("red7es.service").joinpath("read_commands.lua").read_text()
        self._read = connection.register_script(script)

    def commands(self, game_id: str, after: str, limit: int, count: int = READ_COUNT) -> list[Row]:
        """Commands after stream id ``after`` (exclusive), oldest first; those over ``limit``
        bytes as :class:`Oversized`."""
        _meta, rows = self._call([Keys(game_id).commands], start_after(after), limit, count)
        return rows

    def meta_and_commands(
        self, game_id: str, after: str | None, limit: int, count: int = READ_COUNT
    ) -> tuple[dict[str, str], list[Row] | None]:
        """The game's meta and, if ``after`` is given, the commands after it: one atomic step."""
        k = Keys(game_id)
        start = None if after is None else start_after(after)
        meta, rows = self._call([k.commands, k.meta], start, limit, count)
        if not meta:
            raise NoSuchGame(game_id)
        return meta, None if after is None else rows

    def queue_meta_and_commands(self, pipe: Any, game_id: str, after: str | None, limit: int) -> None:
        """Queue :meth:`meta_and_commands` on a pipeline, read back by :meth:`meta_and_commands_from`.

        As a plain ``EVALSHA``: a redis-py ``Script`` on a pipeline costs a ``SCRIPT
        EXISTS`` round trip of its own at every execute, the one this saves."""
        k = Keys(game_id)
        start = "" if after is None else start_after(after) or ""
        pipe.evalsha(self._read.sha, 2, k.commands, k.meta, start, READ_COUNT, limit, READ_BYTES)

    def meta_and_commands_from(
        self, reply: Any, game_id: str, after: str | None, limit: int
    ) -> tuple[dict[str, str], list[Row] | None]:
        """What :meth:`meta_and_commands` returns, from the reply of a queued read; read
        again if the script was not loaded (a Redis restarted or flushed), an error raised."""
        if isinstance(reply, NoScriptError):
            return self.meta_and_commands(game_id, after, limit)
        if isinstance(reply, Exception):
            raise reply
        meta, rows = self._parse(reply)
        if not meta:
            raise NoSuchGame(game_id)
        return meta, None if after is None else rows

    def _call(self, keys: list[str], start: str | None, limit: int, count: int) -> tuple[dict[str, str], list[Row]]:
        return self._parse(self._read(keys=keys, args=[start or "", count, limit, READ_BYTES]))

    @staticmethod
    def _parse(reply: Any) -> tuple[dict[str, str], list[Row]]:
        meta, flat = reply
        pairs = iter(meta)
        rows = iter(flat)
        return (
            {text(name): text(value) for name, value in zip(pairs, pairs, strict=True)},
            [(text(stream_id), _command(value)) for stream_id, value in zip(rows, rows, strict=True)],
        )


def _command(value: bytes | int) -> bytes | Oversized:
    """A command as the script returned it: its bytes, or the size of one too large to send."""
    return Oversized(value) if isinstance(value, int) else value
