"""The gateway logged in as the Redis ACL user docs/gateway.md defines: a whole game over
HTTP works (with a worker as the default user), and that user cannot read the seed or
RQ's keys, run administrative commands, or write a game's log or views.

A private Redis 7 of its own (the ACL user is set there, from the docs' very line), a
real worker, and ``red7 gateway`` as a real process, given its URL in the environment."""

from __future__ import annotations

import os
import re
import secrets
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from support import WorkerPool, damaged_key, wait_for

from red7es.service.client import GameService
from red7es.service.events import BOT, SeatSpec
from red7es.service.redis_server import RedisServer, free_port, redis_binary
from red7es.service.sealing import seal_finished
from red7es.service.store import ARCHIVED, Keys
from red7es.service.tokens import new_token, public_key
from red7es.tournament import TournamentRunner, create_tournament
from red7es.tournament.store import TournamentKeys
from red7es.variant import Variant

from .conftest import Seat, join, new_game
from .test_gateway import play_to_the_end

pytestmark = pytest.mark.integration

GATEWAY_MD = Path(__file__).resolve().parents[2] / "docs" / "gateway.md"


def acl_rule(password: str) -> list[str]:
    """The ``ACL SETUSER red7-gateway ...`` line of docs/gateway.md, as words, with ``password``."""
    found = re.findall(r"^ACL SETUSER red7-gateway .*$", GATEWAY_MD.read_text(encoding="utf-8"), re.M)
    assert len(found) == 1, "docs/gateway.md gives the gateway's ACL rule on one line"
    return [word.replace("GATEWAY_PASSWORD", password) for word in shlex.split(found[0])]


@pytest.fixture(scope="module")
def acl_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RedisServer, str]]:
    """A private Redis with the gateway's user (the default user keeps every right)."""
    server = RedisServer(
        tmp_path_factory.mktemp("acl-redis"), port=free_port(), binary=redis_binary(prefer_system=True)
    ).start()
    password = secrets.token_hex(16)
    with redis.Redis.from_url(server.url) as admin:
        assert admin.execute_command(*acl_rule(password)) in (b"OK", "OK", True)
    yield server, password
    server.stop()


@pytest.fixture(scope="module")
def gateway_url(acl_redis: tuple[RedisServer, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``red7 gateway`` as the gateway user (its URL in a file named by $RED7_URL_FILE),
    and one worker as the default user; the gateway's base URL."""
    server, password = acl_redis
    directory = tmp_path_factory.mktemp("acl-gateway")
    url_file = directory / "url"
    url_file.write_text(f"redis://red7-gateway:{password}@127.0.0.1:{server.port}/0\n")
    url_file.chmod(0o600)
    pool = WorkerPool(server.url, directory)
    pool.start(1, wait=True)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    with open(directory / "gateway.log", "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "red7es.cli", "gateway", "--port", str(port), "--log-level", "warning"],
            env=dict(env, RED7_URL_FILE=str(url_file)),
            cwd=directory,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        assert process.poll() is None, (directory / "gateway.log").read_text()
        try:
            return httpx.get(f"{base}/api/games", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_for(answers, "red7 gateway to answer as the ACL user")
        assert password not in " ".join(Path(f"/proc/{process.pid}/cmdline").read_text().split("\0"))
        yield base
    finally:
        process.terminate()
        process.wait(20)
        pool.stop()
        log_text = (directory / "gateway.log").read_text()
        for refusal in ("NOPERM", "can't run", "can't access", "no permissions"):
            assert refusal not in log_text, log_text  # no command of the gateway was refused


def test_a_whole_game_through_a_gateway_logged_in_as_its_acl_user(
    acl_redis: tuple[RedisServer, str], gateway_url: str
) -> None:
    server, _password = acl_redis
    with redis.Redis.from_url(server.url) as admin:
        service = GameService(admin)
        game = new_game(service, ["ann"], {"bob": "greedy"})
        with httpx.Client(base_url=gateway_url, timeout=20) as http:
            assert any(g["game"] == game for g in http.get("/api/games").json())
            ann = join(http, game, 0)
            assert "hand" in ann.view()
            final = play_to_the_end(ann)
            assert final["outcome"]["winners"]
            # the submits woke the worker from submit.lua itself: posts carrying the turns
            posts = [fields for _id, fields in admin.xrange("red7:inbox") if fields.get(b"g") == game.encode()]
            assert any(b"c" in fields for fields in posts), posts
            record = http.get(f"/api/games/{game}/record")
            assert record.status_code == 200, record.text
            spectator = http.get(f"/api/games/{game}/stream?after=0-0")
            assert spectator.status_code == 200 and '"type":"view"' in spectator.text
            assert ann.play("fold").status_code == 409  # over: the referee's answer, not a Redis refusal
            wait_for(lambda: seal_finished(admin, game), "the worker to let go of the finished game")
            sealed = http.get(f"/api/games/{game}/record")  # the log read from its seal, as the ACL user
            assert sealed.status_code == 200, sealed.text
            assert len(record.text.splitlines()) > 5
            assert sealed.text.splitlines()[1:] == record.text.splitlines()[1:]  # (the first says when it was read)
        with redis.Redis(port=server.port, username="red7-gateway", password=_password) as gateway:
            refused(lambda: gateway.set(Keys(game).sealed, b"forged"))


def refused(call: Any) -> str:
    with pytest.raises(redis.exceptions.ResponseError) as caught:
        call()
    assert "NOPERM" in str(caught.value) or "no permissions" in str(caught.value), caught.value
    return str(caught.value)


def test_the_gateway_user_cannot_read_secrets_or_write_what_workers_write(
    acl_redis: tuple[RedisServer, str], gateway_url: str
) -> None:
    server, password = acl_redis
    with redis.Redis.from_url(server.url) as admin:
        game = new_game(GameService(admin), ["ann"], {"bob": "greedy"})
        keys = Keys(game)
        admin.set("rq:job:x", "a job")
        wait_for(lambda: admin.exists(keys.public_view), "the deal")
        assert admin.hget(keys.secret, "seed")
    gateway = redis.Redis(port=server.port, username="red7-gateway", password=password)
    with gateway:
        assert gateway.get(keys.public_view)  # what it needs, it has
        refused(lambda: gateway.hget(keys.secret, "seed"))
        refused(lambda: gateway.get("rq:job:x"))
        refused(lambda: gateway.keys("*"))
        refused(lambda: gateway.scan())
        refused(lambda: gateway.config_get("*"))
        refused(lambda: gateway.flushall())
        refused(lambda: gateway.delete(keys.commands))
        refused(lambda: gateway.xadd(keys.log, {"e": b"forged"}))
        refused(lambda: gateway.xadd(keys.changes, {"p": b"forged"}))
        refused(lambda: gateway.set(keys.public_view, b"forged"))
        refused(lambda: gateway.set(keys.view(0), b"forged"))
        refused(lambda: gateway.set(keys.lease, "me", px=1000))
        refused(lambda: gateway.eval("return 1", 0))
        forge = gateway.register_script("return redis.call('XADD', KEYS[1], '*', 'e', 'forged')")
        refused(lambda: forge(keys=[keys.log]))
        sneak = gateway.register_script(f"return redis.call('XADD', '{keys.log}', '*', 'e', 'forged')")
        with pytest.raises(redis.exceptions.ResponseError, match="can't access"):
            sneak(keys=[])
    with redis.Redis.from_url(server.url) as admin:
        assert all(b"forged" not in fields.get(b"e", b"") for _id, fields in admin.xrange(keys.log))


def test_a_turn_the_games_keys_cannot_take_is_409_though_the_gateway_may_not_mark_it_broken(
    acl_redis: tuple[RedisServer, str], gateway_url: str
) -> None:
    """A client that finds a game's keys damaged marks the game broken; the gateway's user
    may not write the changes stream that says so, and answered 500 instead of the 409 the
    gateway gives any broken game. It now answers 409 with the reason, marking nothing."""
    server, _password = acl_redis
    with redis.Redis.from_url(server.url) as admin:
        game = new_game(GameService(admin), ["ann"], {"bob": "greedy"})
        with httpx.Client(base_url=gateway_url, timeout=20) as http:
            ann = join(http, game, 0)
            with damaged_key(admin, Keys(game).cmdids, b"not a hash"):
                answer = ann.play("fold")
        assert answer.status_code == 409, answer.text
        assert f"{Keys(game).cmdids} cannot take a command" in answer.json()["error"]


def test_a_game_created_over_http_by_the_gateway_user_is_played_to_its_end(
    acl_redis: tuple[RedisServer, str], gateway_url: str
) -> None:
    """Creating writes a new game's seed (HSET, in a transaction) without ever reading one."""
    server, password = acl_redis
    token = new_token()
    players = [{"name": "ann", "key": public_key(token)}, {"name": "g", "bot": "greedy"}]
    with httpx.Client(base_url=gateway_url, timeout=20) as http:
        answer = http.post("/api/games", json={"players": players})
        assert answer.status_code == 201, answer.text
        game = answer.json()["game"]
        with redis.Redis.from_url(server.url) as admin:
            assert admin.hget(Keys(game).secret, "seed")  # written, by the gateway's user
            assert admin.zscore("red7:games", game) and admin.sismember("red7:active", game)
        with redis.Redis(port=server.port, username="red7-gateway", password=password) as gateway:
            refused(lambda: gateway.hget(Keys(game).secret, "seed"))
            refused(lambda: gateway.hgetall(Keys(game).secret))
            refused(lambda: gateway.smembers("red7:active"))
        final = play_to_the_end(Seat(http, game, 0, token))
        assert final["outcome"]["winners"]
        assert http.get(f"/api/games/{game}/record").status_code == 200


def test_the_gateway_user_asks_whether_an_id_is_archived_and_reads_nothing_else_of_it(
    acl_redis: tuple[RedisServer, str], gateway_url: str
) -> None:
    """An archived game's id is not created again over HTTP (its public, signed turns name
    it); the gateway's user may ask HEXISTS of the archived games' hash, nothing more."""
    server, password = acl_redis
    with redis.Redis.from_url(server.url) as admin:
        admin.hset(ARCHIVED, "gone", b"a stub")
    players = [{"name": "ann"}, {"name": "g", "bot": "greedy"}]
    with httpx.Client(base_url=gateway_url, timeout=20) as http:
        answer = http.post("/api/games", json={"players": players, "id": "gone"})
        assert answer.status_code == 409 and "already exists" in answer.json()["error"], answer.text
        assert http.post("/api/games", json={"players": players, "id": "fresh"}).status_code == 201
    with redis.Redis(port=server.port, username="red7-gateway", password=password) as gateway:
        assert gateway.hexists(ARCHIVED, "gone") and not gateway.hexists(ARCHIVED, "fresh")
        refused(lambda: gateway.hget(ARCHIVED, "gone"))
        refused(lambda: gateway.hgetall(ARCHIVED))
        refused(lambda: gateway.hset(ARCHIVED, "x", b"forged"))


def test_tournaments_are_read_by_the_gateway_user_but_not_their_seeds(
    acl_redis: tuple[RedisServer, str], gateway_url: str
) -> None:
    server, password = acl_redis
    with redis.Redis.from_url(server.url) as admin:
        entrants = [SeatSpec("a", BOT, "random"), SeatSpec("b", BOT, "greedy")]
        create_tournament(admin, "acl-cup", entrants, Variant(2), "round-robin")
        TournamentRunner(GameService(admin), "acl-cup", poll=0.2).run()
        assert admin.hget(TournamentKeys("acl-cup").secret, "seed")
    with httpx.Client(base_url=gateway_url, timeout=20) as http:
        assert [t["tournament"] for t in http.get("/api/tournaments").json()] == ["acl-cup"]
        for path in ("", "/standings", "/report", "/stream?after=0-0", "/stream?entrant=a"):
            assert http.get(f"/api/tournaments/acl-cup{path}").status_code == 200, path
    with redis.Redis(port=server.port, username="red7-gateway", password=password) as gateway:
        refused(lambda: gateway.hget(TournamentKeys("acl-cup").secret, "seed"))
        refused(lambda: gateway.xadd(TournamentKeys("acl-cup").events, {"e": b"forged"}))
