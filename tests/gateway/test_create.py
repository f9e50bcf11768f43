"""POST /api/games: creating a game over HTTP (docs/gateway.md, Create a game).

Real Redis, a real worker, the gateway on loopback: a game with a bot created and played
to its end over HTTP only; a seat reserved for a key that nobody else can take; who may
create (open, operator key, closed); bad bodies; the creation limits."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from support import Red7, wait_for

from red7es.gateway.limits import PREFIX
from red7es.gateway.settings import Creation, Limits
from red7es.service.audit import audit_record
from red7es.service.record_files import read_all
from red7es.service.redis_server import RedisServer, free_port
from red7es.service.store import Keys
from red7es.service.tokens import new_token, public_key
from red7es.variant import Variant

from .conftest import Gateway, Seat, join
from .test_gateway import error, play_to_the_end

pytestmark = pytest.mark.integration

OPERATOR_KEY = "operator-" + "k" * 32


def body(*players: dict[str, Any], **options: Any) -> dict[str, Any]:
    return {"players": list(players), **options}


def fresh_id() -> str:
    return f"gc-{uuid.uuid4().hex[:10]}"


def created(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 201, response.text
    answer = dict(response.json())
    assert set(answer) == {"game", "view"}
    return answer


def test_a_game_created_over_http_with_a_bot_is_played_to_its_end_over_http(http: httpx.Client) -> None:
    token = new_token()
    answer = created(
        http.post("/api/games", json=body({"name": "ann", "key": public_key(token)}, {"name": "g", "bot": "greedy"}))
    )
    game, view = answer["game"], answer["view"]
    now = http.get(f"/api/games/{game}").json()  # the public view, as GET shows it (the bot may have moved since)
    assert view.keys() == now.keys() and view["version"] <= now["version"]
    assert view["game"] == game and view["status"] == "playing" and view["commitment"] == now["commitment"]
    assert [(s["name"], s["kind"], s["key"]) for s in view["seats"]] == [
        ("ann", "person", public_key(token)),
        ("g", "bot", None),
    ]
    assert "hand" not in view
    final = play_to_the_end(Seat(http, game, 0, token))  # the key's seat is ann's from the start
    assert final["outcome"]["winners"]
    record = http.get(f"/api/games/{game}/record?format=jsonl")
    assert record.status_code == 200, record.text
    (exported,) = read_all("record.jsonl", "jsonl", data=record.content)
    assert audit_record(exported).passed


def test_an_open_seat_of_a_created_game_is_joined_later(http: httpx.Client) -> None:
    # (no bot: a bot may fold its first turn, and a two-seat game then ends before any join)
    bob = {"name": "bob", "key": public_key(new_token())}
    game = created(http.post("/api/games", json=body({"name": "ann"}, bob)))["game"]
    seat = created_view = http.get(f"/api/games/{game}").json()["seats"][0]
    assert (seat["name"], seat["joined"], seat["key"]) == ("ann", False, None), created_view
    ann = join(http, game, 0)
    assert "hand" in ann.view()


def test_a_seat_reserved_at_creation_cannot_be_taken(http: httpx.Client) -> None:
    key = public_key(new_token())
    game = created(
        http.post(
            "/api/games",
            json=body({"name": "alice"}, {"name": "carol", "key": key}, {"name": "g", "bot": "greedy"}),
        )
    )["game"]
    intruder = public_key(new_token())
    assert "taken" in error(http.post(f"/api/games/{game}/seats/carol/join", json={"key": intruder}), 409)
    assert "taken" in error(http.post(f"/api/games/{game}/seats/1/join", json={"key": key}), 409)
    assert http.get(f"/api/games/{game}").json()["seats"][1]["key"] == key
    join(http, game, 0)  # the open seat is anyone's


def test_options_default_as_red7_new_and_the_seed_is_never_the_clients(http: httpx.Client) -> None:
    game = fresh_id()
    view = created(
        http.post(
            "/api/games",
            json=body(
                {"name": "a", "bot": "random"},
                {"name": "b", "bot": "random"},
                {"name": "c", "bot": "greedy"},
                scoring=True,
                draw=True,
                actions=True,
                target=12,
                id=game,
            ),
        )
    )["view"]
    assert view["game"] == game
    assert view["variant"] == Variant(3, scoring=True, draw=True, actions=True, target=12).to_dict()
    plain = created(http.post("/api/games", json=body({"name": "a", "bot": "random"}, {"name": "b", "bot": "random"})))
    assert plain["view"]["variant"] == Variant(2).to_dict()  # red7 new's defaults
    same = body({"name": "a", "bot": "random"}, {"name": "b", "bot": "random"})
    first, second = (created(http.post("/api/games", json=same))["view"] for _ in range(2))
    assert first["game"] != second["game"]
    assert first["commitment"] != second["commitment"]  # a fresh seed each time
    line = error(http.post("/api/games", json={**same, "seed": "known"}), 400)
    assert "seed" in line


def test_a_time_control_is_taken_as_red7_new_takes_it_and_the_view_shows_the_clock(http: httpx.Client) -> None:
    """A "clock": "5m+5s" and "turn_time": "30s" are the variant's time control; the seats'
    clocks run once every person's seat is taken (here at creation, by key)."""
    ann, bob = ({"name": n, "key": public_key(new_token())} for n in ("ann", "bob"))
    view = created(http.post("/api/games", json=body(ann, bob, clock="5m+5s")))["view"]
    assert view["variant"] == Variant(2, clock=(300_000, 5_000)).to_dict()
    clock = view["clock"]
    assert clock["seat"] in (0, 1) and clock["deadline"] == clock["started"] + 300_000
    assert [(s["time_left"], s["forfeited"]) for s in view["seats"]] == [(300_000, False)] * 2
    turn = created(http.post("/api/games", json=body({"name": "ann"}, {"name": "bob"}, turn_time="30s")))["view"]
    assert turn["variant"] == Variant(2, turn_time=30_000).to_dict()
    assert turn["clock"] is None  # open seats: no clock runs until both are taken
    assert [(s["time_left"], s["forfeited"]) for s in turn["seats"]] == [(None, False)] * 2
    untimed = created(http.post("/api/games", json=body({"name": "ann"}, {"name": "bob"})))["view"]
    assert "clock" not in untimed and "clock" not in untimed["variant"]


def test_red7_new_over_http_makes_the_timed_game_it_is_asked_for(served: Gateway, tmp_path: Path) -> None:
    """`red7 --url http://GATEWAY new --clock 1m+2s` sends the clock: the game's view (and
    `show --json`) carries it; `--turn-time` likewise; both at once is refused as on Redis."""
    red7 = Red7(served.base, tmp_path / "home")
    game = fresh_id()
    out = red7.ok("new", "-p", "alice", "-p", "bob", "--join-all", "--clock", "1m+2s", "--id", game).stdout
    assert "2 players, basic, clock 1m+2s" in out
    view = red7.json("show", game, "--as", "alice")
    assert view["variant"]["clock"] == [60_000, 2_000]
    assert view["clock"]["deadline"] == view["clock"]["started"] + 60_000
    assert [s["time_left"] for s in view["seats"]] == [60_000, 60_000]
    game = fresh_id()
    red7.ok("new", "-p", "alice", "-b", "greedy", "--turn-time", "1h30m", "--id", game)
    assert red7.json("show", game)["variant"]["turn_time"] == 5_400_000
    result = red7("new", "-p", "alice", "-p", "bob", "--clock", "5m", "--turn-time", "30s")
    assert result.exit_code == 2
    assert result.output.rstrip("\n").splitlines()[-1] == "Error: a game has --clock or --turn-time, not both"


def test_an_id_taken_is_409(http: httpx.Client) -> None:
    game = fresh_id()
    players = body({"name": "a", "bot": "random"}, {"name": "b", "bot": "random"}, id=game)
    created(http.post("/api/games", json=players))
    assert f"a game {game!r} already exists" in error(http.post("/api/games", json=players), 409)


BAD_BODIES: list[tuple[Any, str]] = [
    ({"players": [{"name": "a"}]}, "players"),
    ({"players": [{"name": "a"}] * 5}, "players"),
    ({"players": "ann,bob"}, "players"),
    ({}, "players"),
    (body({"name": "a"}, {"name": "a"}), "players.1.name: seat names must be different"),
    (body({"name": "a"}, {"name": "b c"}), "players.1.name: seat name 'b c' must be"),
    (body({"name": "a"}, {"name": "b\x07"}), "players.1.name: seat name"),
    (body({"name": "a"}, {"name": "b", "bot": "nosuchbot"}), "players.1.bot: unknown bot 'nosuchbot'"),
    (
        body({"name": "a"}, {"name": "b", "bot": "greedy\r\n"}),
        "players.1.bot: a bot spec is printable text, not 'greedy\\r\\n'",
    ),
    (body({"name": "a"}, {"name": "b", "bot": "greedy:depth=3"}), "players.1.bot: "),
    (body({"name": "a"}, {"name": "b", "bot": "ismcts:time=60"}), "players.1.bot: bad options for bot 'ismcts': time"),
    (body({"name": "a"}, {"name": "b", "bot": "greedy", "key": "ab" * 32}), "players.1"),
    (body({"name": "a", "key": "AB" * 32}, {"name": "b"}), "players.0.key"),
    (body({"name": "a", "key": "ab" * 31}, {"name": "b"}), "players.0.key"),
    (body({"name": "a", "key": "ab" * 32}, {"name": "b", "key": "ab" * 32}), "players.1.key"),
    (body({"name": "a", "age": 3}, {"name": "b"}), "players.0.age"),
    (body({"name": 7}, {"name": "b"}), "players.0.name"),
    (body({"name": "a"}, {"name": "b"}, rounds="2"), "rounds"),
    (body({"name": "a"}, {"name": "b"}, rounds=0), "rounds"),
    (body({"name": "a"}, {"name": "b"}, scoring="yes"), "scoring"),
    (body({"name": "a"}, {"name": "b"}, target=30), "target score needs the scoring variant"),
    (body({"name": "a"}, {"name": "b"}, id="Not An Id"), "id"),
    (body({"name": "a"}, {"name": "b"}, id="t-cup-r1-1"), "tournament"),
    (body({"name": "a"}, {"name": "b"}, seed="x"), "seed"),
    (body({"name": "a"}, {"name": "b"}, clock="5m", turn_time="30s"), "clock, turn_time: a game has a clock or a turn"),
    (body({"name": "a"}, {"name": "b"}, clock="5x"), "clock: not a duration: '5x'"),
    (body({"name": "a"}, {"name": "b"}, clock="5m+"), "clock: not a duration: ''"),
    (body({"name": "a"}, {"name": "b"}, clock="0s"), "clock: a duration must be more than nothing"),
    (body({"name": "a"}, {"name": "b"}, clock=300), "clock"),
    (body({"name": "a"}, {"name": "b"}, turn_time="31d"), "turn_time: '31d' is longer than 30 days"),
    (body({"name": "a"}, {"name": "b"}, turn_time=""), "turn_time"),
]


@pytest.mark.parametrize(("sent", "said"), BAD_BODIES)
def test_a_bad_body_is_400_with_a_line_naming_what_is_wrong(http: httpx.Client, sent: Any, said: str) -> None:
    assert said in error(http.post("/api/games", json=sent), 400)


def test_a_body_that_is_not_json_or_too_large(http: httpx.Client) -> None:
    headers = {"content-type": "application/json"}
    assert "not valid JSON" in error(http.post("/api/games", content=b"{players", headers=headers), 400)
    huge = b'{"players": [{"name": "' + b"a" * 70_000 + b'"}]}'
    error(http.post("/api/games", content=huge, headers=headers), 413)


@pytest.fixture(scope="module")
def operator(redis_server: RedisServer, served: Gateway) -> Iterator[Gateway]:
    """A gateway on the module's Redis and worker that lets only the operator create."""
    gateway = Gateway(redis_server.url, heartbeat=0.5, limits=Limits.off(), creation=Creation("operator", OPERATOR_KEY))
    yield gateway
    gateway.stop()


def test_operator_mode_refuses_without_or_with_a_wrong_key_and_accepts_the_right_one(operator: Gateway) -> None:
    players = body({"name": "a", "bot": "random"}, {"name": "b", "bot": "random"})
    with httpx.Client(base_url=operator.base, timeout=20) as http:
        assert "operator key" in error(http.post("/api/games", json=players), 403)
        for wrong in (
            "Bearer nope",
            f"Bearer {OPERATOR_KEY[:-1]}",
            f"Bearer {OPERATOR_KEY}x",
            f"Basic {OPERATOR_KEY}",
            OPERATOR_KEY,
        ):
            assert error(http.post("/api/games", json=players, headers={"Authorization": wrong}), 403) == (
                "wrong operator key"
            )
        # refused before the body is looked at: a stranger learns nothing from 400s
        assert "operator key" in error(http.post("/api/games", json={"players": []}), 403)
        right = {"Authorization": f"Bearer {OPERATOR_KEY}"}
        game = created(http.post("/api/games", json=players, headers=right))["game"]
        assert http.get(f"/api/games/{game}").status_code == 200
        # everything else needs no key
        assert http.get("/api/games").status_code == 200


def test_closed_mode_refuses_every_creation(redis_server: RedisServer, served: Gateway) -> None:
    gateway = Gateway(redis_server.url, heartbeat=0.5, limits=Limits.off(), creation=Creation("closed"))
    try:
        with httpx.Client(base_url=gateway.base, timeout=20) as http:
            players = body({"name": "a", "bot": "random"}, {"name": "b", "bot": "random"})
            assert "closed" in error(http.post("/api/games", json=players), 403)
            headers = {"Authorization": f"Bearer {OPERATOR_KEY}"}
            assert "closed" in error(http.post("/api/games", json=players, headers=headers), 403)
            assert http.get("/api/games").status_code == 200
    finally:
        gateway.stop()


def test_operator_mode_needs_a_key_worth_the_name() -> None:
    with pytest.raises(ValueError, match="operator key"):
        Creation("operator", None)
    with pytest.raises(ValueError, match="at least 16"):
        Creation("operator", "short")
    with pytest.raises(ValueError, match="--create"):
        Creation("sometimes")


def test_creations_count_against_their_own_smaller_limit_and_the_clients(
    redis_server: RedisServer, served: Gateway
) -> None:
    connection = redis.Redis.from_url(redis_server.url)
    for key in connection.scan_iter(f"{PREFIX}*"):
        connection.delete(key)
    players = body({"name": "a", "bot": "random"}, {"name": "b", "bot": "random"})
    gateway = Gateway(redis_server.url, heartbeat=0.5, limits=Limits(rate=5, seat_rate=0, window=60, create=2))
    try:
        with httpx.Client(base_url=gateway.base, timeout=20) as http:
            created(http.post("/api/games", json=players))
            unknown = body({"name": "a", "bot": "nosuchbot"}, {"name": "b", "bot": "random"})
            assert "unknown bot" in error(http.post("/api/games", json=unknown), 400)  # refused: counted too
            line = error(http.post("/api/games", json=players), 429)
            assert "too many games created from this address: at most 2 in 60 s" in line
            assert 1 <= int(http.post("/api/games", json=players).headers["Retry-After"]) <= 60
            # four creations (two refused) and this one: the client's allowance of 5 is spent
            assert http.get("/api/games").status_code == 200
            assert "too many requests from this address" in error(http.get("/api/games"), 429)
    finally:
        gateway.stop()
        for key in connection.scan_iter(f"{PREFIX}*"):
            connection.delete(key)
        connection.close()


def test_no_worker_dealing_a_new_game_is_503_naming_it(tmp_path: Any) -> None:
    """Created, but nobody deals it: 503 with the game's id (sending again would be 409)."""
    server = RedisServer(tmp_path, port=free_port()).start()
    try:
        import red7es.gateway.app as app_module

        wait, app_module.ANSWER_WAIT = app_module.ANSWER_WAIT, 1.0
        gateway = Gateway(server.url, heartbeat=0.5, limits=Limits.off())
        try:
            with httpx.Client(base_url=gateway.base, timeout=20) as http:
                game = fresh_id()
                players = body({"name": "a", "bot": "random"}, {"name": "b", "bot": "random"}, id=game)
                response = http.post("/api/games", json=players)
                assert f"game {game} is created, but no worker has dealt it" in error(response, 503)
                assert response.json()["game"] == game
                with redis.Redis.from_url(server.url) as connection:
                    assert connection.exists(Keys(game).meta)
        finally:
            app_module.ANSWER_WAIT = wait
            gateway.stop()
    finally:
        server.stop()


def test_red7_gateway_create_options(served: Gateway, tmp_path: Path) -> None:
    """--create operator needs a key (file or $RED7_OPERATOR_KEY) of 16+ characters, and a key
    file is for operator mode only (usage errors, exit 2); a real `red7 gateway` in operator
    mode then refuses a creation without the key and takes one with it."""
    red7 = Red7(served.url, tmp_path / "home")
    key_file = tmp_path / "operator.key"
    key_file.write_text(OPERATOR_KEY + "\n")
    short = tmp_path / "short.key"
    short.write_text("short\n")
    for args, said in [
        (["--create", "operator"], "needs --operator-key-file"),
        (["--create", "operator", "--operator-key-file", str(short)], "at least 16"),
        (["--operator-key-file", str(key_file)], "is for --create operator"),
        (["--create", "sometimes"], "'sometimes' is not one of"),
    ]:
        result = red7("gateway", *args)
        assert result.exit_code == 2 and said in result.output, result.output
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "RED7_OPERATOR_KEY"}
    command = [sys.executable, "-m", "red7es.cli", "gateway", "--port", str(port), "--log-level", "warning"]
    process = subprocess.Popen(
        [*command, "--create", "operator"],
        env=dict(env, REDIS_URL=served.url, RED7_OPERATOR_KEY=OPERATOR_KEY),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        try:
            return httpx.get(f"{base}/api/games", timeout=2).status_code == 200
        except httpx.TransportError:
            assert process.poll() is None, process.communicate()
            return False

    try:
        wait_for(answers, "red7 gateway --create operator to answer")
        players = body({"name": "a", "bot": "random"}, {"name": "b", "bot": "random"})
        with httpx.Client(base_url=base, timeout=20) as http:
            assert "operator key" in error(http.post("/api/games", json=players), 403)
            created(http.post("/api/games", json=players, headers={"Authorization": f"Bearer {OPERATOR_KEY}"}))
    finally:
        process.terminate()
        process.communicate(timeout=20)


def test_red7_new_reserves_a_seat_for_a_key(served: Gateway, http: httpx.Client, tmp_path: Path) -> None:
    """`red7 new --reserve carol=KEY`: carol's seat is joined at creation with KEY, which
    nobody else can take, and whose token (never given to red7) plays it over HTTP."""
    red7 = Red7(served.url, tmp_path / "home")
    token = new_token()
    key = public_key(token)
    game = fresh_id()
    out = red7.ok("new", "-p", "alice", "-p", "carol", "-b", "greedy", "--reserve", f"carol={key}", "--id", game)
    assert f"carol: reserved for key {key}" in out.stdout and "alice: yours, token" in out.stdout
    seats = http.get(f"/api/games/{game}").json()["seats"]
    assert [(s["name"], s["key"] == key) for s in seats] == [("alice", False), ("carol", True), ("greedy", False)]
    assert seats[0]["joined"]  # --join took the first seat not reserved
    intruder = {"key": public_key(new_token())}
    assert "taken" in error(http.post(f"/api/games/{game}/seats/carol/join", json=intruder), 409)
    assert "hand" in Seat(http, game, 1, token).view()
    for args, said in [
        (["--reserve", f"bob={key}"], "'bob' is no person's seat"),
        (["--reserve", "carol=ABC"], "64 lower-case hex digits"),
        (["--reserve", "carol=01" + "00" * 31], "the key is refused: anyone can sign for it"),
        (["--reserve", key], "give NAME=KEY"),
        (["--reserve", f"carol={key}", "--reserve", f"carol={key}"], "given twice"),
        (["-p", "dan", "--reserve", f"carol={key}", "--reserve", f"dan={key}"], "one seat per key"),
    ]:
        result = red7("new", "-p", "alice", "-p", "carol", *args)
        assert result.exit_code == 2 and said in result.output, (args, result.output)
