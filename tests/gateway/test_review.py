"""The security review's findings against the real gateway (real Redis, a real worker,
uvicorn on loopback, httpx): each test failed before its fix."""

from __future__ import annotations

import asyncio
import socket
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from red7es.gateway.hub import Hub
from red7es.gateway.serving import uvicorn_options
from red7es.gateway.settings import Limits
from red7es.service.client import GameService
from red7es.service.events import SeatSpec
from red7es.service.redis_server import RedisServer
from red7es.service.store import Keys
from red7es.service.tokens import new_token, public_key
from red7es.variant import Variant

from .conftest import Gateway, join, new_game
from .test_gateway import error

pytestmark = pytest.mark.integration


# ---------------------------------------------------------------- 1: who may join


def test_a_tournament_games_seats_are_not_joinable(http: httpx.Client, service: GameService) -> None:
    game = f"t-gw{uuid.uuid4().hex[:6]}-r1-1"
    service.create(Variant(players=2), [SeatSpec("alice"), SeatSpec("bob", "bot", "greedy")], game_id=game)
    refused = error(http.post(f"/api/games/{game}/seats/alice/join", json={"key": public_key(new_token())}), 403)
    assert "tournament" in refused
    assert http.get(f"/api/games/{game}").json()["seats"][0]["key"] is None  # still the entrant's


def test_a_key_holds_one_seat_of_a_game_and_open_seats_go_to_whoever_comes_first(
    http: httpx.Client, service: GameService
) -> None:
    game = new_game(service, ["ann", "cat"])
    ann = join(http, game, 0)
    twice = http.post(f"/api/games/{game}/seats/1/join", json={"key": public_key(ann.token)})
    assert "one seat per key" in error(twice, 409)
    join(http, game, 1)  # anyone else's key: first come, first served


# ---------------------------------------------------------------- 2: command ids


def test_another_seats_turn_text_is_never_shown_and_ids_must_be_unguessable(
    http: httpx.Client, service: GameService
) -> None:
    game = new_game(service, ["ann", "cat"])
    ann, cat = join(http, game, 0), join(http, game, 1)
    view = ann.view()
    waiter, other = (cat, ann) if view["to_move"] == 0 else (ann, cat)
    card = waiter.view()["hand"][0]
    secret = f"p:{card}"
    command_id = uuid.uuid4().hex
    assert error(waiter.play(secret, command_id), 409).startswith("rejected: it is not")  # out of turn
    claimed = error(other.play("fold", command_id), 409)
    assert (
        secret not in claimed and claimed == f"command id {command_id} is already in use; use a new id for a new turn"
    )
    assert "was already used for" in error(waiter.play("fold", command_id), 409)  # its own seat is told
    assert "16 to 100 characters" in error(other.play("fold", "turn-1"), 400)  # guessable
    assert "16 to 100 characters" in error(other.play("fold", "x" * 16 + "\n"), 400)


# ---------------------------------------------------------------- 3: exact shapes


def test_ids_keys_and_signatures_are_matched_whole(http: httpx.Client, service: GameService) -> None:
    game = new_game(service, ["ann", "cat"])
    ann = join(http, game, 0)
    stream = f"/api/games/{game}/stream"
    for after in ("99999999999999999999-0", "18446744073709551616-0", "1-0\n"):
        assert "is not a change id" in error(http.get(stream, params={"after": after}), 400)
        if not after.endswith("\n"):  # (no header value can end in a newline)
            assert "is not a change id" in error(http.get(stream, headers={"Last-Event-ID": after}), 400)
    with http.stream("GET", stream, params={"after": "18446744073709551615-0"}) as tail:  # the largest: valid
        assert tail.status_code == 200
    assert "64 lower-case hex" in error(
        http.post(f"/api/games/{game}/seats/1/join", json={"key": public_key(new_token()) + "\n"}), 400
    )
    # a key anyone can sign for (the identity point): its seat's turns would bind nobody
    assert error(http.post(f"/api/games/{game}/seats/1/join", json={"key": "01" + "00" * 31}), 400) == (
        "key is refused: anyone can sign for it (an Ed25519 point of small order, or one not written canonically)"
    )
    weak_create = {"players": [{"name": "a", "key": "00" * 32}, {"name": "b", "bot": "greedy"}]}
    assert "players.0.key: is refused: anyone can sign for it" in error(http.post("/api/games", json=weak_create), 400)
    turn = ann.turn_body("fold")
    assert "128 lower-case hex" in error(
        http.post(f"/api/games/{game}/turns", json=dict(turn, sig=turn["sig"] + "\n")), 401
    )
    error(http.get(f"/api/games/{game}%0A"), 404)


# ---------------------------------------------------------------- 4: slow clients


@pytest.fixture(scope="module")
def strict(redis_server: RedisServer) -> Iterator[Gateway]:
    """A gateway served as `red7 gateway` serves it, with 1 s for a request to arrive whole."""
    gateway = Gateway(
        redis_server.url, serving=uvicorn_options(request_timeout=1.0), heartbeat=0.5, limits=Limits.off()
    )
    yield gateway
    gateway.stop()


def closed_within(conn: socket.socket, seconds: float) -> float:
    """How long until the server closed ``conn`` (reading whatever it sent first)."""
    start = time.monotonic()
    conn.settimeout(seconds)
    while conn.recv(4096):
        pass
    return time.monotonic() - start


@pytest.mark.parametrize(
    "half",
    [
        b"GET /api/games HTTP/1.1\r\nHost: x\r\n",  # headers never end
        b"POST /api/games/g/seats/0/join HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n{",  # a body that never comes
        b"",  # nothing at all
    ],
)
def test_a_half_sent_request_is_dropped_within_seconds(strict: Gateway, half: bytes) -> None:
    with socket.create_connection(("127.0.0.1", strict.port), timeout=20) as conn:
        conn.sendall(half)
        assert closed_within(conn, 15) < 10  # 1 s here; 10 s by default (uvicorn alone: never)


@pytest.mark.usefixtures("served")  # its games need the module's worker, whichever test runs first
def test_a_stream_outlives_the_request_deadline(strict: Gateway, service: GameService) -> None:
    game = new_game(service, ["ann", "cat"])
    with httpx.Client(base_url=strict.base, timeout=20) as client:
        assert client.get("/api/games").status_code == 200
        with client.stream("GET", f"/api/games/{game}/stream") as stream:
            start = time.monotonic()
            for _line in stream.iter_lines():  # a keep-alive line each 0.5 s
                if time.monotonic() - start > 3:
                    break


# ---------------------------------------------------------------- 5, 6: nonces and seat names


def test_a_nonce_is_spent_for_its_own_seat_only(http: httpx.Client, service: GameService) -> None:
    game = new_game(service, ["ann", "cat"])
    ann, cat = join(http, game, 0), join(http, game, 1)
    nonce = uuid.uuid4().hex
    for seat in (ann, cat):
        path = f"/api/games/{game}/seats/{seat.seat}/legal"
        assert http.get(path, headers=seat.headers("GET", path, nonce=nonce)).status_code == 200


def test_digits_in_a_path_are_a_seat_number_never_a_name(http: httpx.Client, service: GameService) -> None:
    game = new_game(service, ["ann", "0"])
    zero = http.post(f"/api/games/{game}/seats/1/join", json={"key": public_key(new_token())})
    assert zero.json()["name"] == "0"
    ann = http.post(f"/api/games/{game}/seats/0/join", json={"key": public_key(new_token())})
    assert ann.status_code == 200 and ann.json()["name"] == "ann", ann.text
    assert http.post(f"/api/games/{game}/seats/ann/join", json={"key": "ab" * 32}).status_code == 409


# ---------------------------------------------------------------- 7: a subscribe racing an unsubscribe


def test_a_subscribe_racing_the_last_unsubscribe_of_its_game(redis_server: RedisServer) -> None:
    asyncio.run(_race(redis_server.url))


async def _race(url: str) -> None:
    hub = Hub(url)
    hub.start()
    try:
        while hub._reader_id is None:
            await asyncio.sleep(0.01)
        inside, gone = asyncio.Event(), asyncio.Event()
        interrupt = hub._interrupt

        async def slow_interrupt() -> None:
            await interrupt()
            inside.set()
            await gone.wait()  # the other subscriber comes and goes meanwhile

        hub._interrupt = slow_interrupt  # type: ignore[method-assign]
        first = asyncio.ensure_future(hub.subscribe("race"))
        await asyncio.wait_for(inside.wait(), 20)
        other = await hub.subscribe("race")
        hub.unsubscribe(other)
        gone.set()
        subscriber = await asyncio.wait_for(first, 20)  # was: KeyError
        key = Keys("race").changes
        assert subscriber in hub._subscribers[key] and key in hub._cursors  # so it is told of changes
    finally:
        await hub.stop()


# ---------------------------------------------------------------- 8: a record is read only when over


def test_an_unfinished_games_record_is_refused_before_it_is_read(http: httpx.Client, service: GameService) -> None:
    game = new_game(service, ["ann", "cat"])
    service.redis.delete(f"red7:{{{game}}}:log")
    service.redis.set(f"red7:{{{game}}}:log", "not a stream")  # reading it would fail
    assert "is not over" in error(http.get(f"/api/games/{game}/record"), 409)


# ---------------------------------------------------------------- 9: one host holding every connection


@pytest.fixture(scope="module")
def capped(redis_server: RedisServer) -> Iterator[Gateway]:
    """A gateway that trusts no proxy (so loopback clients are capped), 4 connections an address."""
    serving = {**uvicorn_options(max_connections=4), "forwarded_allow_ips": "192.0.2.1"}
    gateway = Gateway(redis_server.url, serving=serving, heartbeat=0.5, limits=Limits.off())
    yield gateway
    gateway.stop()


def _connect(port: int, source: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=20, source_address=(source, 0))


def _answer(conn: socket.socket) -> bytes:
    """All the server sends before it closes ``conn``."""
    conn.settimeout(20)
    data = b""
    while chunk := conn.recv(4096):
        data += chunk
    return data


def test_one_address_holding_its_connections_leaves_other_clients_served(capped: Gateway) -> None:
    """Was: nothing capped one address; 4,200 idle connections from one host left every
    other client 503 (plain text) until they were gone."""
    idle = [_connect(capped.port, "127.0.0.1") for _ in range(4)]
    try:
        time.sleep(0.2)  # (accepted and counted)
        with _connect(capped.port, "127.0.0.1") as fifth:
            answer = _answer(fifth)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 429 ") and b"application/json" in head, answer
        assert body == b'{"error": "too many connections from this address: at most 4 at once"}'
        other = httpx.Client(base_url=capped.base, timeout=20, transport=httpx.HTTPTransport(local_address="127.0.0.2"))
        with other:
            assert other.get("/api/games").status_code == 200  # another address is served meanwhile
    finally:
        for conn in idle:
            conn.close()
    deadline = time.monotonic() + 20
    while True:  # once they are closed, the address is served again
        with _connect(capped.port, "127.0.0.1") as conn:
            conn.sendall(b"GET /api/games HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            if _answer(conn).startswith(b"HTTP/1.1 200 "):
                break
        assert time.monotonic() < deadline, "the closed connections were never counted off"
        time.sleep(0.05)


def test_a_path_with_a_slash_too_many_is_a_json_404_not_a_redirect(http: httpx.Client) -> None:
    """Was: 307 to a Location built from the request's Host header (Host: evil.example)."""
    answer = http.get("/api/games/", headers={"Host": "evil.example"})
    assert answer.status_code == 404 and "location" not in answer.headers
    assert answer.json() == {"error": "Not Found"}


def test_a_malformed_request_is_a_json_400(capped: Gateway) -> None:
    with _connect(capped.port, "127.0.0.3") as conn:
        conn.sendall(b"GET /api/games HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999x\r\n\r\n")
        head, _, body = _answer(conn).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ") and body == b'{"error": "malformed HTTP request"}'
