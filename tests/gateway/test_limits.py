"""Rate limits per client address and per seat, counted in Redis (shared by every gateway
process), and the cap on a client's open streams: real Redis, worker, uvicorn, httpx.

Two client addresses on one machine: every address of 127.0.0.0/8 is loopback, so a
client bound to 127.0.0.2 is another client to the gateway."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import redis
from support import wait_for

from red7es.gateway.limits import PREFIX
from red7es.gateway.settings import Limits
from red7es.service.client import GameService
from red7es.service.redis_server import RedisServer

from .conftest import Gateway, Seat, join, new_game
from .test_gateway import error

pytestmark = pytest.mark.integration

WINDOW = 60.0  # long enough that no window ends inside a test, even on a loaded machine


def client(gateway: Gateway, address: str = "127.0.0.1") -> httpx.Client:
    return httpx.Client(
        base_url=gateway.base, timeout=20, transport=httpx.HTTPTransport(local_address=address, retries=0)
    )


def too_many(response: httpx.Response) -> str:
    """The one-line error of a 429, which must say when to come back."""
    line = error(response, 429)
    assert 1 <= int(response.headers["Retry-After"]) <= WINDOW
    return line


@pytest.fixture
def limited(redis_server: RedisServer, served: Gateway) -> Iterator[tuple[Gateway, Gateway]]:
    """Two gateway processes' apps on the module's Redis and worker, sharing small limits."""
    connection = redis.Redis.from_url(redis_server.url)
    for key in connection.scan_iter(f"{PREFIX}*"):
        connection.delete(key)  # another test's counts
    limits = Limits(rate=6, seat_rate=4, window=WINDOW, streams=2)
    first = Gateway(redis_server.url, limits=limits, heartbeat=0.5)
    second = Gateway(redis_server.url, limits=limits, heartbeat=0.5)
    yield first, second
    first.stop()
    second.stop()
    for key in connection.scan_iter(f"{PREFIX}*"):
        connection.delete(key)
    connection.close()


def test_a_client_over_its_rate_gets_429_on_every_gateway_and_others_do_not(
    limited: tuple[Gateway, Gateway], service: GameService
) -> None:
    first, second = limited
    game = new_game(service, ["ann"], {"bob": "greedy"})
    with client(first) as one, client(second) as same_address, client(first, "127.0.0.2") as other:
        for _ in range(3):
            assert one.get(f"/api/games/{game}").status_code == 200
            assert same_address.get(f"/api/games/{game}").status_code == 200
        line = too_many(one.get(f"/api/games/{game}"))  # the 7th, counted across both processes
        assert "too many requests from this address: at most 6 in 60 s" in line
        too_many(same_address.post(f"/api/games/{game}/turns", content=b"x" * 100))  # before any body is read
        assert other.get(f"/api/games/{game}").status_code == 200


@pytest.mark.usefixtures("served")  # its games need the module's worker, whichever test runs first
def test_a_seat_over_its_rate_gets_429_from_any_address_and_other_seats_do_not(
    redis_server: RedisServer, service: GameService
) -> None:
    limits = Limits(rate=100, seat_rate=4, window=WINDOW, streams=2)
    gateway = Gateway(redis_server.url, limits=limits)
    try:
        game = new_game(service, ["ann", "cat"], {"bob": "greedy"})
        with client(gateway) as here, client(gateway, "127.0.0.2") as there:
            ann, cat = join(here, game, 0), join(here, game, 1)
            ann_there = Seat(there, game, 0, ann.token)
            for seat in (ann, ann_there, ann, ann_there):
                seat.view()
            line = too_many(ann.get(f"/api/games/{game}/seats/0"))
            assert "too many requests for seat 0: at most 4 in 60 s" in line
            too_many(ann_there.play("fold"))  # a signed turn counts for its seat too
            assert cat.view()["seat"] == 1
            # A request not signed by the seat's token uses up none of its allowance.
            forged = Seat(there, game, 1, ann.token)
            for _ in range(6):
                assert forged.get(f"/api/games/{game}/seats/1").status_code == 403
                assert forged.play("fold").status_code == 401  # a turn: counted only once its signature passed
            assert cat.view()["seat"] == 1
    finally:
        gateway.stop()


def test_a_client_may_hold_only_so_many_streams_and_one_closed_frees_its_place(
    limited: tuple[Gateway, Gateway], service: GameService
) -> None:
    first, _second = limited
    game = new_game(service, ["ann"], {"bob": "greedy"})
    path = f"/api/games/{game}/stream"
    limiter = first.app.state.limiter
    with client(first) as one, client(first, "127.0.0.2") as other:
        with one.stream("GET", path) as a, one.stream("GET", path) as b:
            assert (a.status_code, b.status_code) == (200, 200)
            refused = one.get(path)
            assert refused.status_code == 429 and "too many open streams" in refused.json()["error"]
            with other.stream("GET", path) as elsewhere:
                assert elsewhere.status_code == 200
        wait_for(lambda: limiter.open_streams("127.0.0.1") == 0, "the closed streams to be let go")
        with one.stream("GET", path) as again:
            assert again.status_code == 200
