"""Hundreds of streams on one game: one change wakes them all at once, and every one of
them reads it (bench/gateway.py's 1,000-stream run found each stream past the pool's
100th ended with 'lost the connection to Redis')."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from red7es.gateway import streams
from red7es.service.client import GameService

from .conftest import Gateway, join, new_game

pytestmark = pytest.mark.integration

STREAMS = 250  # well past redis-py's default pool of 100 connections


class RawStream:
    """A public NDJSON stream read over a bare socket (far lighter than an HTTP client
    per stream); HTTP/1.1 chunk-size lines are skipped, each frame is one JSON line."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int, path: str) -> RawStream:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        await writer.drain()
        status = await reader.readline()
        assert b" 200 " in status, status
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        return cls(reader, writer)

    async def line(self) -> dict[str, Any]:
        """The next JSON line (keep-alives and chunk framing skipped)."""
        while True:
            raw = await self.reader.readline()
            if not raw:
                raise AssertionError("the stream ended")
            if raw.startswith(b"{"):
                return dict(json.loads(raw))

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()


async def until_applied(stream: RawStream, command_id: str) -> dict[str, Any]:
    """Lines up to the view after the change that applied ``command_id``; that view."""
    applied = False
    while True:
        line = await stream.line()
        assert line["type"] in ("view", "change"), line
        if line["type"] == "change":
            applied = applied or any(e.get("id") == command_id for e in line["events"])
        elif applied:
            return line


async def watch_one_turn(port: int, game: str, play: Any, count: int = STREAMS) -> list[dict[str, Any]]:
    """Open ``count`` public streams on ``game``, make ``play()`` play a turn; each stream's view after it."""
    path = f"/api/games/{game}/stream"
    streams: list[RawStream] = []
    try:
        for _ in range(count):
            stream = await RawStream.open(port, path)
            assert (await asyncio.wait_for(stream.line(), 30))["type"] == "view"
            streams.append(stream)  # subscribed: its first view is read after the hub registered it
        command_id = await asyncio.to_thread(play)
        return list(await asyncio.wait_for(asyncio.gather(*(until_applied(s, command_id) for s in streams)), 60))
    finally:
        await asyncio.gather(*(s.close() for s in streams))


def player(http: httpx.Client, service: GameService) -> tuple[str, Callable[[], str]]:
    """A game with a person joined over HTTP; a function that plays its next turn (its id)."""
    game = new_game(service, ["ann"], {"bob": "greedy"})
    ann = join(http, game, 0)

    def play() -> str:
        view = ann.view()
        body = ann.turn_body(view["legal"][0])
        answer = http.post(f"/api/games/{game}/turns", json=body)
        assert answer.status_code == 200, answer.text
        return str(body["id"])

    return game, play


def test_one_change_reaches_hundreds_of_streams_of_one_game(
    served: Gateway, http: httpx.Client, service: GameService
) -> None:
    game, play = player(http, service)
    views = asyncio.run(watch_one_turn(served.port, game, play))
    assert len(views) == STREAMS
    assert all(v["view"]["version"] >= views[0]["view"]["version"] - 10 for v in views)


def test_the_streams_of_a_game_share_one_read_per_change(
    served: Gateway, http: httpx.Client, service: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each change used to cost one Redis transaction (and the view's bytes) per stream:
    bench/gateway.py's 1,000 streams spent 40% of the gateway's time in them."""
    game, play = player(http, service)
    reads: list[str | None] = []
    real = streams._read

    async def counted(connection: Any, game_id: str, seat: int | None, after: str | None) -> Any:
        if game_id == game and after is not None:
            reads.append(after)
        return await real(connection, game_id, seat, after)

    monkeypatch.setattr(streams, "_read", counted)
    count = 60
    views = asyncio.run(watch_one_turn(served.port, game, play, count))
    assert len(views) == count
    assert len(reads) < count // 3, f"{len(reads)} reads of the changes for {count} streams"
