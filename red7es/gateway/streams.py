"""A game's live stream: the current view, then each change as it happens.

Lines (each a JSON object; NDJSON by default, Server-Sent Events on request)::

    {"type": "view",   "id": C, "view": {...}}          the whole view as of change C
    {"type": "change", "id": C, "from": v, "to": w, "events": [...]}   one change (public events)
    {"type": "broken", "id": C, "reason": "..."}       the game broke: the stream ends
    {"type": "error",  "error": "..."}                  the stream cannot go on: resume from your last id

A fresh stream starts with a ``view``; one resumed after change id C starts with the
changes after C.  Every batch of changes is followed by a ``view`` (a seat's stream:
that seat's view, with its hand; anyone else's: the public view) read in the same
transaction as the changes, so each view is exactly the state after the change whose
id it carries.  The stream ends after the view of a finished game.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import anyio
import msgpack
import redis.asyncio as aioredis
from redis.exceptions import ResponseError
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from red7es.service.client import UnreadableKey, read_view
from red7es.service.connection import UNREACHABLE_ERRORS
from red7es.service.store import Keys, start_after, text

from .hub import Dropped, Hub, Subscriber

__all__ = ["Lines", "StreamResponse", "change_lines", "frame", "frames", "told_changes"]

PAGE = 200  # changes read per round trip
HEARTBEAT = 15.0  # seconds without a line before an empty keep-alive one


def frame(item: dict[str, Any] | None, sse: bool) -> bytes:
    """One line of the stream; None is a keep-alive (an empty line, or an SSE comment)."""
    if item is None:
        return b": keep-alive\n\n" if sse else b"\n"
    data = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
    if not sse:
        return data.encode() + b"\n"
    head = f"id: {item['id']}\n" if "id" in item else ""
    return f"{head}event: {item['type']}\ndata: {data}\n\n".encode()


def frames(batch: Lines | None, sse: bool) -> bytes:
    """A batch of lines as one chunk of the response (None: a keep-alive)."""
    if batch is None:
        return frame(None, sse)
    return b"".join(frame(item, sse) for item in batch)


async def _read(
    connection: aioredis.Redis, game_id: str, seat: int | None, after: str | None
) -> tuple[list[tuple[str, bytes]], bytes | None, str]:
    """In one transaction: the changes after ``after`` (or none, and the last change id,
    when ``after`` is None) and the view, so the view is the state after the last of them."""
    keys = Keys(game_id)
    pipe = connection.pipeline(transaction=True)
    start = start_after(after) if after is not None else None
    if after is None:
        pipe.xrevrange(keys.changes, max="+", min="-", count=1)
    elif start is not None:
        pipe.xrange(keys.changes, min=start, max="+", count=PAGE)
    else:
        pipe.xrange(keys.changes, min="+", max="+", count=1)  # nothing can follow the largest id
    pipe.get(keys.public_view if seat is None else keys.view(seat))
    rows, view = await pipe.execute()
    changes = [(text(i), fields.get(b"p", b"")) for i, fields in rows or []]
    if after is None:
        return [], view, changes[0][0] if changes else "0-0"
    return changes, view, changes[-1][0] if changes else after


async def _shared_read(
    hub: Hub, game_id: str, seat: int | None, after: str | None
) -> tuple[list[tuple[str, bytes]], bytes | None, str]:
    """:func:`_read`, once for all the game's streams of the same seat (or spectators)
    that ask for the changes after the same id at once (:meth:`Hub.shared`)."""

    def read() -> Awaitable[tuple[list[tuple[str, bytes]], bytes | None, str]]:
        return _read(hub.redis, game_id, seat, after)

    return await hub.shared(game_id, (seat, after), read)


def _stream_id(stream_id: str) -> tuple[int, int]:
    """A Redis stream id as the pair it is ordered by."""
    ms, _, seq = stream_id.partition("-")
    return int(ms), int(seq or 0)


def _change(game_id: str, change_id: str, payload: bytes) -> dict[str, Any]:
    try:
        change = msgpack.unpackb(payload, raw=False)
    except Exception:  # msgpack raises several unrelated types for bad bytes
        change = None
    if not isinstance(change, dict) or not isinstance(change.get("events"), list):
        return {"type": "error", "error": f"game {game_id}: change {change_id} cannot be read"}
    if change.get("broken"):
        return {"type": "broken", "id": change_id, "reason": str(change["broken"])}
    return {
        "type": "change",
        "id": change_id,
        "from": change.get("from"),
        "to": change.get("to"),
        "events": change["events"],
    }


def _view(game_id: str, seat: int | None, change_id: str, raw: bytes | None) -> dict[str, Any]:
    try:
        view = None if raw is None else read_view(game_id, raw, seat)
    except UnreadableKey as exc:
        return {"type": "error", "error": str(exc)}
    return {"type": "view", "id": change_id, "view": view}


Lines = list[dict[str, Any]]  # the lines of one read, sent in one write


async def change_lines(
    hub: Hub, subscriber: Subscriber, game_id: str, seat: int | None, after: str | None, heartbeat: float = HEARTBEAT
) -> AsyncGenerator[Lines | None, None]:
    """The stream's items, each read's lines together (None: nothing for ``heartbeat``
    seconds); ``subscriber`` must be registered with ``hub`` before the first read, and
    is let go when this ends.

    A change and the view after it go out as one batch, so in one write to the client
    (two writes a change were the gateway's largest cost per turn: issue #17)."""
    resumed = after is not None  # (a resumed stream with nothing to tell still starts with a view)
    try:
        if after is None:
            _rows, raw, after = await _shared_read(hub, game_id, seat, None)
            line = _view(game_id, seat, after, raw)
            yield [line]
            if _ends(line):
                return
        while True:
            rows, raw, last = await _shared_read(hub, game_id, seat, after)
            if resumed and not rows:
                # resumed at the game's last change (or past it): nothing to tell, so the
                # view now, as a fresh stream's (a finished game's ends the stream at once)
                _rows, raw, last = await _shared_read(hub, game_id, seat, None)
                if _stream_id(last) <= _stream_id(after):  # (else a change came meanwhile: told next)
                    line = _view(game_id, seat, last, raw)
                    yield [line]
                    if _ends(line):
                        return
                    after = last  # (resumed past the last change: the next one is told, whatever its id)
                resumed = False
                continue
            resumed = False
            batch: Lines = []
            for change_id, payload in rows:
                line = _change(game_id, change_id, payload)
                batch.append(line)
                if line["type"] != "change":
                    yield batch
                    return
                after = change_id
            if rows and len(rows) < PAGE:
                line = _view(game_id, seat, last, raw)
                batch.append(line)
                if _ends(line):
                    yield batch
                    return
            if batch:
                yield batch
            if rows and len(rows) == PAGE:
                continue  # more to read before the view is current
            if not await subscriber.wait(after, heartbeat):
                yield None
    except Dropped as exc:
        yield [{"type": "error", "error": str(exc)}]
    except UNREACHABLE_ERRORS:
        yield [{"type": "error", "error": "lost the connection to Redis: resume from your last change id"}]
    except ResponseError as exc:  # Redis refused the read (a damaged key): a line, not an aborted response
        yield [{"type": "error", "error": f"game {game_id} cannot be read: {' '.join(str(exc).split())}"}]
    finally:
        hub.unsubscribe(subscriber)


async def told_changes(
    subscriber: Subscriber, game_id: str, heartbeat: float = HEARTBEAT
) -> AsyncGenerator[Lines | None, None]:
    """The changes the hub tells ``subscriber`` of, in batches as :func:`change_lines`
    words them (None: nothing for ``heartbeat`` seconds), read from no key: for a waiter
    subscribed before its command was stored, whose answer comes after that (a stream
    needs :func:`change_lines`, which reads each change with the view after it)."""
    try:
        while True:
            notices = await subscriber.notices(heartbeat)
            if not notices:
                yield None
                continue
            batch = [_change(game_id, notice.id, notice.fields.get(b"p", b"")) for notice in notices]
            ended = next((i for i, line in enumerate(batch) if line["type"] != "change"), None)
            if ended is not None:
                yield batch[: ended + 1]
                return
            yield batch
    except Dropped as exc:
        yield [{"type": "error", "error": str(exc)}]


def _ends(line: dict[str, Any]) -> bool:
    """A stream ends after an error and after the view of a finished game."""
    view = line.get("view")
    return line["type"] == "error" or (isinstance(view, dict) and view.get("status") == "over")


class StreamResponse(StreamingResponse):
    """A streaming response that the hub can end at once (its client reads too slowly):
    the subscriber's ``on_overflow`` cancels the sending, even one blocked on a full socket.
    ``on_close`` runs once when the response ends, however it ends (the open-stream count)."""

    def __init__(
        self,
        lines: AsyncGenerator[bytes, None],
        subscriber: Subscriber,
        media_type: str,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(lines, media_type=media_type, headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
        self.subscriber = subscriber
        self.lines = lines
        self.on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            on_close, self.on_close = self.on_close, None
            if on_close is not None:
                on_close()

    async def stream_response(self, send: Send) -> None:
        with anyio.CancelScope() as scope:
            self.subscriber.on_overflow = scope.cancel
            try:
                await super().stream_response(send)
            finally:
                with contextlib.suppress(Exception):
                    await self.lines.aclose()
