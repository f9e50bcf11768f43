"""A turn's checks come before anything it costs the gateway: nothing a stranger sends
subscribes to a game's changes (each new subscription restarts the hub's read of every
streamed game; that forged turns count nothing against a seat is test_limits.py's); and a
seat's remembered key is dropped when the referee refuses a turn sent under it.  Real
Redis, worker, uvicorn, httpx."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support import wait_for

from red7es.cards import ALL_CARDS
from red7es.gateway.settings import Limits
from red7es.service.client import GameService
from red7es.service.events import SeatSpec
from red7es.service.redis_server import RedisServer
from red7es.service.store import Keys
from red7es.service.tokens import new_token, public_key
from red7es.variant import Variant

from .conftest import Gateway, Seat, join, new_game

pytestmark = pytest.mark.integration


@pytest.fixture
def counted(redis_server: RedisServer, served: Gateway) -> Iterator[tuple[Gateway, list[str]]]:
    """A gateway of its own (the module's worker referees) whose hub lists what it is asked to follow."""
    gateway = Gateway(redis_server.url, heartbeat=0.5, limits=Limits.off())
    hub = gateway.app.state.hub
    followed: list[str] = []
    real = hub.subscribe_stream

    async def subscribe_stream(key: str, owner: str) -> Any:
        followed.append(key)
        return await real(key, owner)

    hub.subscribe_stream = subscribe_stream
    yield gateway, followed
    gateway.stop()


def to_move(seat: Seat) -> dict[str, Any]:
    """The seat's view once it is to move (the bot may lead)."""
    view: dict[str, Any] = wait_for(lambda: (v := seat.view())["to_move"] == seat.seat and v, "the seat to move")
    return view


def test_nothing_before_a_turns_signature_passes_subscribes(
    counted: tuple[Gateway, list[str]], service: GameService
) -> None:
    gateway, followed = counted
    with httpx.Client(base_url=gateway.base, timeout=20) as http:
        game = new_game(service, ["ann"], {"bob": "greedy"})
        ann = join(http, game, 0)
        view = to_move(ann)
        followed.clear()
        forged = dict(ann.turn_body(view["legal"][0]), sig="0" * 128)
        stranger = Seat(http, game, 0, new_token())  # not ann's token
        for _ in range(3):
            assert http.post(f"/api/games/{game}/turns", json=forged).status_code == 401
            assert stranger.play(view["legal"][0]).status_code == 401
            ghost = dict(ann.turn_body("fold"), id=uuid.uuid4().hex)
            assert http.post(f"/api/games/gw-{uuid.uuid4().hex[:10]}/turns", json=ghost).status_code == 404
        assert followed == []
        assert ann.play(view["legal"][0]).status_code == 200
        assert followed == [Keys(game).changes]
        followed.clear()
        for _ in range(3):  # the seat's key is known now: a forged turn is still checked first
            assert http.post(f"/api/games/{game}/turns", json=forged).status_code == 401
            assert stranger.play("fold").status_code == 401
        assert followed == []


def test_a_turn_the_referee_refuses_drops_its_seats_remembered_key(
    counted: tuple[Gateway, list[str]], service: GameService
) -> None:
    gateway, _followed = counted
    keys = gateway.app.state.seat_keys
    with httpx.Client(base_url=gateway.base, timeout=20) as http:
        game = new_game(service, ["ann"], {"bob": "greedy"}, seed="turn-checks")  # (ann does not fold)
        ann = join(http, game, 0)
        view = to_move(ann)
        assert ann.play(next(t for t in view["legal"] if t != "fold")).status_code == 200
        assert keys.get(game, 0) is not None
        view = to_move(ann)
        absent = next(str(c) for c in ALL_CARDS if str(c) not in view["hand"])  # refused: not in her hand
        refused = ann.play(f"p:{absent}")
        assert refused.status_code == 409, refused.text
        assert keys.get(game, 0) is None  # the next turn reads the game again
        assert ann.play(to_move(ann)["legal"][0]).status_code == 200
        assert keys.get(game, 0) is not None


def test_a_turn_checked_against_a_game_since_made_again_under_its_id_is_checked_again(
    counted: tuple[Gateway, list[str]], service: GameService
) -> None:
    """The gateway remembers ann's signer (key, commitment, created) after her first turn.
    Her game's keys are deleted by hand and the id made again with her key and another
    seed: her first game's public, signed turn passes the remembered check, but the
    submit script sees another ``created`` and refuses it, and the turn checked again
    against the game as it is gets 401, stored nowhere (it used to be stored and refused
    by the worker, in the new game's log)."""
    gateway, _followed = counted
    with httpx.Client(base_url=gateway.base, timeout=20) as http:
        game = new_game(service, ["ann"], {"bob": "greedy"}, seed="remade-first")
        ann = join(http, game, 0)
        first = ann.turn_body(to_move(ann)["legal"][0])
        assert http.post(f"/api/games/{game}/turns", json=first).status_code == 200
        for key in service.redis.scan_iter(f"red7:{{{game}}}:*"):
            service.redis.delete(key)
        seats = [SeatSpec("ann"), SeatSpec("bob", "bot", "greedy")]
        service.create(Variant(2), seats, seed="remade-second", game_id=game, keys={"ann": public_key(ann.token)})
        answer = http.post(f"/api/games/{game}/turns", json=first)
        assert answer.status_code == 401 and answer.json()["error"].startswith("bad signature"), answer.text
        assert not service.redis.hexists(Keys(game).cmdids, first["id"])
        again = Seat(http, game, 0, ann.token)  # her turns signed for the game as it is now
        answer = http.post(f"/api/games/{game}/turns", json=again.turn_body(to_move(again)["legal"][0]))
        assert answer.status_code == 200 and answer.json()["applied"] is True, answer.text
