"""Finished games moved out of Redis into record files, and read back from them.

``red7 archive --older-than 7d`` writes each finished game older than the age to
``DIR/<game>.msgpack`` (the record ``red7 export`` writes, byte for byte the same
commands and events), then deletes the game's keys, keeping in Redis only a stub:

* ``red7:games`` (the games index) keeps the game, so ``red7 games`` lists it in order;
* ``red7:archived``, a hash, maps the game id to its stub: a msgpack map with the
  record file's absolute path (``file``) and what ``red7 games`` shows of a finished
  game (``version``, ``created``, ``seats``, ``variant``, ``winners``, ``reason``).

Readers that find no keys for a game look for its stub (:func:`archived_record`):
``export``, ``replay``, ``audit``, ``show`` and ``games`` then read the record file, so
an archived game reads as it did in Redis (docs/records.md, *Archived games*).

Crash safety, in this order for each game: the record is written to a temporary file
beside its place, fsynced, renamed into place and the directory fsynced; the file is
read back and checked against the game's meta (its version and head); the stub is
written; only then are the game's keys deleted, by ``archive_delete.lua``, and only if
the meta still says the same version and head.  A crash at any point leaves the game
whole in Redis (re-archived by the next run, its file written again) or whole in its
file (with its stub): never neither.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import redis
from redis.exceptions import NoPermissionError

from .client import GameService, GameSummary, ServiceError
from .envelope import pack_map
from .record_files import read_all, record_bytes
from .records import Record, RecordError, export
from .store import ARCHIVED, INDEX, Keys, registered_script, text
from .witness import Divergent

__all__ = [
    "ARCHIVED",
    "ArchiveError",
    "Candidate",
    "archive_game",
    "archived_divergence",
    "archived_record",
    "archived_summaries",
    "archived_view",
    "candidates",
    "parse_age",
    "stub",
    "stubs",
]

TOURNAMENT_PREFIX = "t-"  # tournament games (red7es.tournament.ids): not archived (see candidates)
_PAGE = 500  # games read per pipeline when looking for candidates

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


class ArchiveError(RuntimeError):
    """A game could not be archived (said in one line; its keys are left as they were)."""


def parse_age(text_: str) -> float:
    """Seconds in an age such as ``7d``, ``12h``, ``30m``, ``90s`` or ``90`` (seconds)."""
    match = _AGE.match(text_)
    if match is None:
        raise ValueError(f"{text_!r} is not an age: write a number and a unit, s, m, h, d or w (7d, 12h)")
    return float(match.group(1)) * _UNIT[match.group(2)]


@dataclass(frozen=True)
class Candidate:
    """A finished game old enough to archive: its id and when it last changed (ms)."""

    game_id: str
    finished: int


def candidates(connection: redis.Redis, before_ms: int) -> tuple[list[Candidate], list[str]]:
    """Games to archive: over (not broken), every command answered, last changed before
    ``before_ms``; and the tournament games that would qualify but are left in Redis.

    Tournament games (``t-…``) stay: their tournament reads them from Redis for its
    standings and audit (red7es.tournament), which do not read archived records yet.
    """
    ids = [text(g) for g in connection.zrange(INDEX, 0, -1)]
    found: list[Candidate] = []
    tournament: list[str] = []
    for start in range(0, len(ids), _PAGE):
        page = ids[start : start + _PAGE]
        pipe = connection.pipeline(transaction=False)  # one slot per game: not one command
        for game_id in page:
            pipe.hmget(Keys(game_id).meta, ["status", "broken", "updated", "created", "cursor"])
            pipe.xrevrange(Keys(game_id).commands, max="+", min="-", count=1)
        replies = pipe.execute(raise_on_error=False)
        for n, game_id in enumerate(page):
            meta, last = replies[2 * n], replies[2 * n + 1]
            if isinstance(meta, Exception) or isinstance(last, Exception):
                continue  # a damaged key: the audit reports it; never archived
            status, broken, updated, created, cursor = meta
            if status != b"over" or broken is not None:
                continue
            last_id = text(last[0][0]) if last else "0-0"
            if cursor is None or text(cursor) != last_id:
                continue  # commands still to answer (refusals after the end): not settled yet
            when = _int(updated) or _int(created)
            if when is None or when >= before_ms:
                continue
            if game_id.startswith(TOURNAMENT_PREFIX):
                tournament.append(game_id)
                continue
            found.append(Candidate(game_id, when))
    return found, tournament


def _int(value: bytes | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def archive_game(connection: redis.Redis, game_id: str, directory: Path, fmt: str = "msgpack") -> Path:
    """Move one finished game out of Redis into ``directory/<game>.<fmt>``; the file's path.

    Raises :class:`ArchiveError` (nothing deleted) if the game is not a finished one, or
    changed while it was being written.
    """
    service = GameService(connection, wake=lambda _game: None)
    try:
        record = export(service, game_id)
        view = service.view(game_id)  # what `red7 games` shows of it, kept in its stub
    except (RecordError, ServiceError) as exc:
        raise ArchiveError(str(exc)) from None
    if record.status != "over":
        raise ArchiveError(f"game {game_id} is not over: only finished games are archived")
    path = (directory / f"{game_id}.{fmt}").resolve()
    write_synced(path, record_bytes([record], fmt))
    check_file(path, record)
    connection.hset(ARCHIVED, game_id, pack_map(_stub(record, path, view)))
    k = Keys(game_id)
    keys = [k.meta, k.log, k.sealed, k.commands, k.changes, k.cmdids, k.secret, k.lease, k.nudge, k.public_view]
    keys += [k.view(s) for s in range(len(record.seats))]
    deleted = _delete_script(connection)(keys=keys, args=[record.version, record.head])
    if int(deleted) != 1:
        raise ArchiveError(f"game {game_id} changed while it was archived: its keys are kept, run again")
    return path


def write_synced(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that it is on disk before this returns (temp, fsync,
    rename, fsync of the directory): after a crash the file is whole, or not there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def check_file(path: Path, record: Record) -> None:
    """Read ``path`` back: it must hold exactly ``record``'s commands and events."""
    try:
        [read] = read_all(path)
    except (RecordError, ValueError) as exc:
        raise ArchiveError(f"{path} does not read back: {exc}") from None
    if (read.game_id, read.version, read.head, read.commands, read.events) != (
        record.game_id,
        record.version,
        record.head,
        record.commands,
        record.events,
    ):
        raise ArchiveError(f"{path} does not hold game {record.game_id} as exported")


def _stub(record: Record, path: Path, view: dict[str, Any]) -> dict[str, Any]:
    """What ``red7 games`` shows of the game (GameService.games), from its final public view."""
    outcome = view.get("outcome")
    return {
        "file": str(path),
        "version": record.version,
        "created": record.created,
        "seats": [{k: seat.get(k) for k in _SEAT_FIELDS if k in seat} for seat in view.get("seats", [])],
        "variant": view.get("variant", {}),
        "winners": outcome.get("winners") if isinstance(outcome, dict) else None,
        "reason": outcome.get("reason") if isinstance(outcome, dict) else None,
    }


_SEAT_FIELDS = ("name", "kind", "bot", "joined")  # what GameSummary.as_json reads of a seat


def stub(connection: redis.Redis, game_id: str) -> dict[str, Any] | None:
    """The stub of an archived game, or None (also for a user who may not read the stubs:
    the gateway's, docs/gateway.md, to which archived games are unknown)."""
    try:
        return _unpacked(connection.hget(ARCHIVED, game_id))
    except NoPermissionError:
        return None


def stubs(connection: redis.Redis, game_ids: Sequence[str]) -> list[dict[str, Any] | None]:
    """The stubs of these games (None for a game not archived), as :func:`stub`."""
    if not game_ids:
        return []
    try:
        return [_unpacked(raw) for raw in connection.hmget(ARCHIVED, list(game_ids))]
    except NoPermissionError:
        return [None] * len(game_ids)


def _unpacked(raw: bytes | str | None) -> dict[str, Any] | None:
    if not isinstance(raw, bytes):
        return None
    try:
        value = msgpack.unpackb(raw, raw=False)
    except Exception:  # msgpack raises several unrelated types for bad bytes
        return None
    return value if isinstance(value, dict) and isinstance(value.get("file"), str) else None


def archived_record(connection: redis.Redis, game_id: str) -> Record | None:
    """The record of an archived game, read from its file; None if the game is not archived.

    RecordError (one line) if its file is gone or cannot be read.
    """
    found = stub(connection, game_id)
    if found is None:
        return None
    path = found["file"]
    try:
        records = [r for r in read_all(path) if r.game_id == game_id]
    except OSError as exc:
        raise RecordError(f"game {game_id} is archived: cannot read {path}: {exc.strerror}") from None
    except RecordError as exc:
        raise RecordError(f"game {game_id} is archived: {exc}") from None
    if not records:
        raise RecordError(f"game {game_id} is archived in {path}, which does not hold it")
    return records[0]


def _delete_script(connection: redis.Redis) -> Any:
    """archive_delete.lua, registered once per connection (tests stand in for it here)."""
    return registered_script(connection, "archive_delete.lua")


def archived_view(connection: redis.Redis, game_id: str, seat: int | None = None) -> dict[str, Any] | None:
    """The view of an archived game (the public one, or ``seat``'s), replayed from its
    record as ``red7 replay --json`` shows it: the view Redis held when the game ended.
    None if the game is not archived."""
    from .codec import decode_log
    from .replay import Replay

    record = archived_record(connection, game_id)
    if record is None:
        return None
    replay = Replay(decode_log(e.raw for e in record.events), version=record.version, head=record.head)
    return replay.view(None, seat)


def archived_summaries(connection: redis.Redis, game_ids: Sequence[str]) -> dict[str, GameSummary]:
    """What ``red7 games`` shows of the archived ones among ``game_ids``, from their stubs."""
    out: dict[str, GameSummary] = {}
    for game_id, found in zip(game_ids, stubs(connection, game_ids), strict=True):
        if found is not None:
            out[game_id] = GameSummary(
                game_id,
                "over",
                found.get("version"),
                None,
                found.get("created"),
                list(found.get("seats") or []),
                dict(found.get("variant") or {}),
                found.get("winners"),
                reason=found.get("reason"),
            )
    return out


def archived_divergence(
    connection: redis.Redis, game_id: str, heads: Mapping[int, str]
) -> tuple[bool, Divergent | None]:
    """Whether the game is archived, and if so the first head a client remembers that its
    record's chain does not have (what ``live_divergence`` tells of a game in Redis)."""
    from .codec import event_hash
    from .witness import chain_divergence

    if connection.exists(Keys(game_id).meta) or stub(connection, game_id) is None:
        return False, None
    record = archived_record(connection, game_id)
    assert record is not None  # its stub was just read
    return True, chain_divergence(heads, [event_hash(e.raw) for e in record.events])
