"""A real gateway for the tests: uvicorn on a free loopback port, in a thread, in front of
the session's private Redis and one real worker process (both shared by the module)."""

from __future__ import annotations

import functools
import json
import secrets
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis
from support import Gateway, WorkerPool

from red7es.gateway.auth import signed_headers
from red7es.gateway.settings import Limits
from red7es.service.client import GameService
from red7es.service.events import SeatSpec
from red7es.service.redis_server import RedisServer
from red7es.service.tokens import new_token, public_key, sign_turn, turn_commitment
from red7es.variant import Variant


@pytest.fixture(scope="module")
def served(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """One worker and one gateway for the module (games get fresh ids, so none is flushed)."""
    pool = WorkerPool(redis_server.url, tmp_path_factory.mktemp("gateway-workers"))
    pool.start(1, wait=True)
    gateway = Gateway(redis_server.url, heartbeat=0.5, limits=Limits.off())  # limits: test_limits.py
    yield gateway
    gateway.stop()
    pool.stop()


@pytest.fixture
def http(served: Gateway) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served.base, timeout=20) as client:
        yield client


@pytest.fixture(scope="module")
def service(redis_server: RedisServer) -> Iterator[GameService]:
    connection = redis.Redis.from_url(redis_server.url)
    yield GameService(connection)
    connection.close()


@dataclass
class Seat:
    """A player of a game who reaches it only over HTTP: its token never leaves this object."""

    http: httpx.Client
    game: str
    seat: int
    token: str

    def headers(self, method: str, path: str, **overrides: Any) -> dict[str, str]:
        stamp = overrides.pop("stamp", None) or int(time.time() * 1000)
        nonce = overrides.pop("nonce", None) or secrets.token_urlsafe(16)
        return signed_headers(self.token, method, path, stamp, nonce)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.http.get(path, headers=self.headers("GET", path), **kwargs)

    @functools.cached_property
    def signed_over(self) -> str | None:
        """What this game's turns are signed over besides its id, from its public view."""
        return turn_commitment(self.http.get(f"/api/games/{self.game}").json())

    def view(self) -> dict[str, Any]:
        response = self.get(f"/api/games/{self.game}/seats/{self.seat}")
        assert response.status_code == 200, response.text
        return dict(response.json())

    def turn_body(self, turn: str, command_id: str | None = None) -> dict[str, Any]:
        command_id = command_id or uuid.uuid4().hex
        sig = sign_turn(self.token, self.game, command_id, self.seat, turn, self.signed_over)
        return {"id": command_id, "seat": self.seat, "turn": turn, "sig": sig}

    def play(self, turn: str, command_id: str | None = None) -> httpx.Response:
        return self.http.post(f"/api/games/{self.game}/turns", json=self.turn_body(turn, command_id))


def new_game(
    service: GameService,
    people: list[str],
    bots: dict[str, str] | None = None,
    variant: Variant | None = None,
    seed: str | None = None,
) -> str:
    """A game with open seats for ``people`` and bots after them; waits for its deal."""
    bots = bots or {}
    seats = [SeatSpec(name) for name in people] + [SeatSpec(name, "bot", spec) for name, spec in bots.items()]
    variant = variant or Variant(players=len(seats))
    created = service.create(variant, seats, seed=seed, game_id=f"gw-{uuid.uuid4().hex[:10]}")
    return created.game_id


def join(http: httpx.Client, game: str, seat: int) -> Seat:
    """Take seat ``seat`` over HTTP with a token made here."""
    token = new_token()
    response = http.post(f"/api/games/{game}/seats/{seat}/join", json={"key": public_key(token)})
    assert response.status_code == 200, response.text
    return Seat(http, game, seat, token)


def lines(response: httpx.Response, count: int) -> list[dict[str, Any]]:
    """The next ``count`` non-empty NDJSON lines of a stream."""
    out: list[dict[str, Any]] = []
    for line in response.iter_lines():
        if line.strip():
            out.append(json.loads(line))
            if len(out) == count:
                break
    return out
