"""The player's commands over the HTTP gateway (``red7 --url http://HOST:PORT``): the same
output, ``--json`` and exit codes as on Redis, through one client interface with two
transports (red7es.service.transport; docs/gateway.md, The CLI over HTTP).

A real gateway (uvicorn on a free loopback port) stands in front of the module's Redis
and its two real workers.  Tests marked with the ``transport`` fixture run once per
transport; the others compare the two, or run ``red7`` as its own process with no
Redis it could reach.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import Gateway, Red7, WorkerPool, fails, new_id, one_line_error, self_signed, wait_for

from red7es.cli.credentials import Credentials
from red7es.gateway.settings import Limits
from red7es.service.http_client import is_http_url, server_key
from red7es.service.redis_server import RedisServer, free_port, redis_binary

from .conftest import RED7

pytestmark = pytest.mark.integration

TRANSPORTS = ("redis", "http")


@pytest.fixture(scope="module")
def gateway(service_url: str) -> Iterator[Gateway]:
    """A gateway in front of the module's Redis and workers (limits off: test_limits.py has them)."""
    served = Gateway(service_url, heartbeat=0.5, limits=Limits.off())
    yield served
    served.stop()


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest, service_url: str, gateway: Gateway) -> str:
    """The URL the CLI is given: the Redis itself, or the gateway in front of it."""
    return service_url if request.param == "redis" else gateway.base


@pytest.fixture
def ann(transport: str, homes: Any) -> Red7:
    return Red7(transport, homes("ann"))


@pytest.fixture
def both(service_url: str, gateway: Gateway, homes: Any) -> tuple[Red7, Red7]:
    """One user (one data directory) on Redis and over HTTP."""
    return Red7(service_url, homes("both")), Red7(gateway.base, homes("both"))


def closed_redis_env(home: Path) -> dict[str, str]:
    """A process environment whose Redis URL is a closed port and without RED7_URL_FILE:
    a command that touched Redis would fail."""
    env = {k: v for k, v in os.environ.items() if k not in ("RED7_URL_FILE", "RED7_TOKEN", "RED7_TOKEN_FILE")}
    return {**env, "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "RED7_HOME": str(home), "NO_COLOR": "1"}


def red7(env: dict[str, str], *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """``red7`` as its own process (nothing of the test process's Redis connections in it)."""
    return subprocess.run([str(RED7), *args], env=env, input=input, capture_output=True, text=True, timeout=120)


def person_to_move(user: Red7, game: str, name: str, token: str) -> dict[str, Any]:
    """Wait until ``name`` is to move (the bot moves in a worker) or the game is over."""

    def ready() -> dict[str, Any] | None:
        view: dict[str, Any] = user.json("show", game, "--as", name, "--token", token)
        return view if view["status"] == "over" or view["to_move"] == view["seat"] else None

    view: dict[str, Any] = wait_for(ready, f"{name}'s turn in {game}")
    return view


# ---------------------------------------------------------------------------- one interface, two transports


def test_the_scheme_picks_the_transport() -> None:
    assert is_http_url("http://127.0.0.1:8007") and is_http_url("HTTPS://host") and is_http_url(" https://h/p ")
    assert not is_http_url("redis://localhost:6379/0") and not is_http_url("rediss://h") and not is_http_url(None)
    assert not is_http_url("unix:///tmp/redis.sock") and not is_http_url("localhost:8007")


def test_the_http_transport_loads_no_server_code() -> None:
    """Every command loads the HTTP client: FastAPI and the gateway's app stay unloaded (their
    import costs every command a tenth of a second), the tournament package too (test_cli.py)."""
    code = (
        "import sys, red7es.cli.main, red7es.service.http_client; "
        "print(sorted({m.split('.')[0] if m.startswith(('fastapi', 'starlette')) else m for m in sys.modules "
        "if m.startswith(('fastapi', 'starlette', 'red7es.gateway', 'red7es.tournament'))}))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # (red7 gateway's options read the gateway's default limits: settings, which imports nothing of a server)
    assert loaded.stdout == "['red7es.gateway', 'red7es.gateway.settings']\n", loaded.stdout


def test_a_game_played_with_new_moves_move_show(ann: Red7, transport: str) -> None:
    """The same commands, on either transport, play a game against a bot to its end."""
    game = new_id()
    created = ann.json("new", "--id", game, "-p", "ann", "--bot", "greedy")
    token = created["tokens"]["ann"]
    assert created["game"] == game and len(created["commitment"]) == 64
    for _ in range(60):
        view = person_to_move(ann, game, "ann", token)
        if view["status"] == "over":
            break
        legal = ann.json("moves", game)["legal"]
        assert legal == view["legal"]
        answer = ann.json("move", game, legal[0])
        assert answer["applied"] is True and answer["seat"] == "ann"
    else:
        pytest.fail("the game did not end")
    assert ann.json("show", game, "--public")["status"] == "over"
    assert "PASS" in ann.ok("audit", game).stdout
    saved = json.loads((ann.home / "credentials.json").read_text())["games"]  # the file as it is
    assert list(saved) == ([f"{server_key(transport)}/{game}"] if is_http_url(transport) else [game])


def test_show_moves_and_games_print_the_same_on_both_transports(both: tuple[Red7, Red7]) -> None:
    on_redis, over_http = both
    game = new_id()
    token = on_redis.json("new", "--id", game, "-p", "ann", "--bot", "greedy", "--seed", "same")["tokens"]["ann"]
    person_to_move(on_redis, game, "ann", token)
    seat = ("--as", "ann", "--token", token)
    for args in (
        ("show", game, *seat),
        ("show", game, *seat, "--json"),
        ("show", game, "--public"),
        ("show", game, "--public", "--json"),
        ("moves", game, *seat),
        ("moves", game, *seat, "--json"),
        ("games", "--limit", "3"),
        ("games", "--limit", "3", "--json"),
    ):
        first, second = on_redis.ok(*args), over_http.ok(*args)
        assert (first.stdout, first.stderr) == (second.stdout, second.stderr), args
    assert "Your hand:" in on_redis.ok("show", game, *seat).stdout


def test_a_finished_game_replays_and_audits_the_same_on_both_transports(both: tuple[Red7, Red7]) -> None:
    on_redis, over_http = both
    game = new_id()
    token = on_redis.json("new", "--id", game, "-p", "ann", "--bot", "greedy", "--seed", "over")["tokens"]["ann"]
    person_to_move(on_redis, game, "ann", token)
    on_redis.ok("move", game, "--fold")
    for args in (
        ("replay", game),
        ("replay", game, "--as", "greedy", "--json"),
        ("replay", game, "--at", "5", "--position"),
        ("audit", game),
        ("audit", game, "--json"),
        ("show", game, "--public"),
        ("watch", game, "--json"),
    ):
        first, second = on_redis(*args), over_http(*args)
        assert first.exit_code == second.exit_code == 0, (args, first.output, second.output)
        assert (first.stdout, first.stderr) == (second.stdout, second.stderr), args
    records = [user.ok("export", game, "-o", "-").stdout.splitlines() for user in both]
    assert len(records[0]) == len(records[1]) > 2  # (each says when it was exported)


def test_refusals_and_usage_errors_say_the_same_with_the_same_exit_codes(both: tuple[Red7, Red7]) -> None:
    on_redis, over_http = both
    game = new_id()
    token = on_redis.json("new", "--id", game, "-p", "ann", "-p", "bob", "--seed", "errors")["tokens"]["ann"]
    bob = on_redis.json("join", game, "bob")["token"]
    view = on_redis.json("show", game, "--as", "ann", "--token", token)
    mover, waiter = ("ann", bob) if view["to_move"] == 0 else ("bob", token)
    other = "bob" if mover == "ann" else "ann"
    cases: list[tuple[tuple[str, ...], int]] = [
        (("show", "nosuch"), 1),  # no such game
        (("move", game, "fold", "--as", other, "--token", waiter), 1),  # not your turn: the referee's refusal
        (("move", game, "p:Z5", "--as", other, "--token", waiter), 2),  # not notation: a usage error
        (("show", game, "--as", "nobody", "--token", waiter), 1),  # no such seat
        (("show", game, "--as", "ann", "--token", bob), 1),  # another seat's token
        (("new", "-p", "a", "--bot", "cleverest"), 2),  # an unknown bot
        (("export", game, "-o", "-"), 1),  # not over
        (("tournament", "show", "nosuch"), 1),
    ]
    for args, code in cases:
        first, second = on_redis(*args), over_http(*args)
        assert first.exit_code == second.exit_code == code, (args, first.output, second.output)
        assert "Traceback" not in first.output + second.output
        if code == 1:
            assert first.stderr == second.stderr, args
    # an id the gateway would refuse (under 16 characters) is a usage error over HTTP, before anything is sent
    short = fails(
        over_http("move", game, "fold", "--as", mover, "--token", bob if mover == "bob" else token, "--id", "cmd-1"), 2
    )
    assert "--id: a gateway takes 16 to 100 of A-Z a-z 0-9 _ -" in short
    # a refused turn's --json: the referee's CommandRejected with its reason, exit 1 (command ids differ)
    refused = [user("move", game, "fold", "--as", other, "--token", waiter, "--json") for user in both]
    assert [r.exit_code for r in refused] == [1, 1]
    answers = [json.loads(r.stdout) for r in refused]
    for answer in answers:
        answer.pop("command")
        for event in answer["events"]:
            event.pop("id")
    assert answers[0] == answers[1] and answers[0]["applied"] is False, answers
    assert answers[0]["events"][0]["reason"] == answers[0]["reason"]
    # a taken seat, joined by users who hold no token of it on either transport
    strangers = [Red7(user.url, user.home.with_name(user.home.name + "-stranger")) for user in both]
    first, second = (stranger("join", game, "bob") for stranger in strangers)
    assert first.exit_code == second.exit_code == 1 and first.stderr == second.stderr, (first.output, second.output)


def test_operators_commands_refuse_a_gateway_url(gateway: Gateway, homes: Any) -> None:
    """(``red7 shutdown`` takes no URL: it stops the embedded Redis of this machine.)"""
    user = Red7(gateway.base, homes("operator"))
    for args in (
        ("serve",),
        ("worker",),
        ("gateway",),
        ("import", "x.jsonl"),
        ("tournament", "create", "cup", "-b", "greedy", "-b", "random"),
        ("tournament", "run", "cup"),
        ("tournament", "audit", "cup"),
        ("audit", "--all"),
    ):
        err = fails(user(*args), 2)
        assert err.strip().splitlines()[-1].startswith("Error: "), (args, err)
        assert "needs a Redis URL" in err or "give a Redis URL" in err, (args, err)


def test_a_gateway_that_is_down_is_one_line(homes: Any) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    for args in (("games",), ("show", "g1"), ("tournament", "list"), ("new", "-p", "a", "--bot", "greedy")):
        line = one_line_error(Red7(down, homes("down"))(*args))
        assert line.startswith(f"Error: cannot reach the gateway at {down}: "), line


def test_a_server_that_is_no_gateway_is_one_line(homes: Any) -> None:
    """An http:// URL of some other server: what it answers is said in one line, exit 1."""

    class NotAGateway(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = self.path.startswith("/api/games")  # 200 with a page, else 404 with a page
            body = b"<html>hello</html>"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotAGateway)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        user = Red7(url, homes("elsewhere"))
        assert one_line_error(user("games")) == f"Error: the gateway at {url} answered what is not JSON"
        assert one_line_error(user("tournament", "list")) == f"Error: the gateway at {url} answered 404 Not Found"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_what_a_hostile_gateway_answers_reaches_the_terminal_as_text(homes: Any) -> None:
    """A gateway (or whoever stands between it and a plain-http client) answering terminal
    escapes in ids and statuses: games and tournament list/show print them as text (was:
    raw, so it could retitle the terminal, clear it or plant a link)."""
    escape = "\x1b]0;PWNED\x07\x1b[2J"
    answers = {
        "/api/games": [
            {"game": "evil" + escape, "status": "playing" + escape, "version": 1, "to_move": None, "seats": []}
        ],
        "/api/tournaments": [
            {
                "tournament": "cup" + escape,
                "created": 0,
                "format": "swiss" + escape,
                "entrants": 2,
                "games_played": 0,
                "games_total": 1,
                "status": "finished" + escape,
            }
        ],
    }

    class Hostile(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(answers.get(self.path.split("?")[0], {"error": "no"})).encode()
            self.send_response(200 if self.path.split("?")[0] in answers else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        user = Red7(f"http://127.0.0.1:{server.server_address[1]}", homes("hostile"))
        for command in (("games",), ("tournament", "list")):
            printed = user.ok(*command).stdout
            assert "\x1b" not in printed and "PWNED" in printed, (command, printed)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.mark.slow
def test_a_gateway_without_workers_is_one_line_naming_no_worker_to_start(homes: Any, tmp_path: Path) -> None:
    """The gateway answers 503 after its 10 s wait: the game is created, said in one line
    (exit 1) that names no `red7 worker` to start, since the workers are the operator's."""
    server = RedisServer(tmp_path / "redis", port=free_port(), binary=redis_binary(prefer_system=True)).start()
    served = Gateway(server.url, heartbeat=0.5, limits=Limits.off())
    try:
        user = Red7(served.base, homes("lonely"))
        line = one_line_error(user("new", "--id", "lonely", "-p", "ann", "--bot", "greedy"))
        assert line.startswith("Error: game lonely is created, but no worker has dealt it within 10 s"), line
        assert "red7 worker" not in line
        assert "ann" in user.credentials()["games"]["lonely"]  # kept before the wait, as on Redis
    finally:
        served.stop()
        server.stop()


@pytest.mark.slow
def test_a_join_nobody_answered_keeps_its_token_and_is_sent_again(homes: Any, tmp_path: Path) -> None:
    """A join over HTTP that no worker answers (503 after the gateway's 10 s) keeps its token;
    joining again sends the same key again (GameClient.join_answered), and once a worker
    has answered, the seat is the kept token's."""
    server = RedisServer(tmp_path / "redis", port=free_port(), binary=redis_binary(prefer_system=True)).start()
    pool = WorkerPool(server.url, tmp_path)
    served = Gateway(server.url, heartbeat=0.5, limits=Limits.off())
    try:
        host = Red7(server.url, homes("host"))
        pool.start(1, wait=True)
        game = host.json("new", "--id", new_id(), "-p", "ann", "-p", "bob", "--no-join")["game"]
        pool.stop()  # dealt, and nobody left to answer a join
        bob = Red7(served.base, homes("bob"))
        first = one_line_error(bob("join", game, "bob"))
        assert first.startswith(f"Error: no answer from a worker for game {game}: ") and "red7 worker" not in first
        kept = bob.credentials()["games"][game]["bob"]
        again = one_line_error(bob("join", game, "bob"))
        assert again == (
            f"Error: your earlier join of seat bob in game {game} is not answered yet: is a worker running? "
            "(the gateway's operator runs them; your token is kept)"
        )
        pool.start(1, wait=True)
        # The new worker answers the join kept pending (bob's seat is the kept key's); a join
        # sent before that answer waits for it and is told so, one after it is refused.
        third = bob("join", game, "bob")
        said = third.stdout + third.stderr
        held = third.exit_code == 1 and f"Error: you already hold seat bob in game {game}: play it with " in said
        assert held or (third.exit_code == 0 and f"Token: {kept}" in said), said
        assert bob.credentials()["games"][game]["bob"] == kept
        assert bob.json("show", game, "--as", "bob")["seat"] == 1  # the kept token reads the seat
    finally:
        served.stop()
        pool.stop()
        server.stop()


def test_seed_is_not_taken_over_http(gateway: Gateway, homes: Any) -> None:
    user = Red7(gateway.base, homes("seed"))
    err = fails(user("new", "-p", "a", "--bot", "greedy", "--seed", "mine"), 2)
    assert "a gateway draws every game's seed itself" in err
    assert "gateway draws" in fails(user("play", "--seed", "mine"), 2)


def test_https_with_the_gateways_certificate_trusted_through_ssl_cert_file(
    service_url: str, homes: Any, tmp_path: Path
) -> None:
    cert_file, key_file = self_signed(tmp_path)
    served = Gateway(
        service_url,
        heartbeat=0.5,
        limits=Limits.off(),
        serving={"ssl_certfile": str(cert_file), "ssl_keyfile": str(key_file)},
    )
    try:
        url = f"https://127.0.0.1:{served.port}"
        user = Red7(url, homes("tls"))
        untrusting = one_line_error(user("games", "--limit", "1"))  # the system's CAs do not vouch for it
        assert untrusting.startswith(f"Error: cannot reach the gateway at {url}: ") and "CERTIFICATE" in untrusting
        user.extra_env = {"SSL_CERT_FILE": str(cert_file)}  # (an instance's: env reads it)
        game = new_id()
        assert user.json("new", "--id", game, "-p", "ann", "--bot", "greedy")["game"] == game
        assert user.json("show", game)["seat"] == 0  # a signed read of ann's seat, over HTTPS
    finally:
        served.stop()


# ---------------------------------------------------------------------------- no Redis at all


def test_a_whole_game_over_http_by_a_process_that_cannot_reach_redis(gateway: Gateway, tmp_path: Path) -> None:
    """``red7 new``, ``moves``, ``move``, ``show``, ``export`` and ``audit`` as separate
    processes whose REDIS_URL is a closed port: only the gateway's URL reaches anything."""
    env = closed_redis_env(tmp_path / "home")
    url = ("--url", gateway.base)
    game = new_id()
    made = red7(env, "new", "--id", game, "-p", "ann", "--bot", "greedy", "--json", *url)
    assert made.returncode == 0, made.stderr
    for _ in range(80):
        view = json.loads(red7(env, "show", game, "--json", *url).stdout)
        if view["status"] == "over":
            break
        if view["to_move"] != view["seat"]:
            time.sleep(0.05)  # the bot's turn, in a worker
            continue
        moves = red7(env, "moves", game, "--json", *url)
        assert moves.returncode == 0, moves.stderr
        played = red7(env, "move", game, json.loads(moves.stdout)["legal"][0], *url)
        assert played.returncode == 0, played.stderr
    else:
        pytest.fail("the game did not end")
    record = tmp_path / "game.jsonl"
    exported = red7(env, "export", game, "-o", str(record), *url)
    assert exported.returncode == 0, exported.stderr
    audited = red7(env, "audit", game, "--as", "ann", *url)
    assert audited.returncode == 0 and audited.stdout.startswith(f"PASS {game}: "), audited.stdout + audited.stderr
    offline = red7(env, "audit", str(record))
    assert offline.returncode == 0 and offline.stdout.startswith(f"PASS {game}: "), offline.stdout + offline.stderr
    # and the same process given no URL at all would have needed that Redis
    assert red7(env, "games").returncode == 1


def test_play_against_a_bot_over_http_without_redis(gateway: Gateway, tmp_path: Path) -> None:
    """``red7 play`` over HTTP from a process that cannot reach Redis: menu choices (1,
    each time) play a whole game against greedy."""
    env = closed_redis_env(tmp_path / "home")
    played = red7(env, "play", "--bots", "greedy", "--name", "ann", "--url", gateway.base, input="1\n" * 400)
    assert played.returncode == 0, played.stdout[-2000:] + played.stderr
    assert "Game over:" in played.stdout, played.stdout[-2000:]
    [game] = [line.split()[2].rstrip(":") for line in played.stdout.splitlines() if line.startswith("New game ")]
    credentials = json.loads((tmp_path / "home" / "credentials.json").read_text())
    assert list(credentials["games"]) == [f"{server_key(gateway.base)}/{game}"]
    audited = red7(env, "audit", game, "--url", gateway.base)
    assert audited.returncode == 0 and audited.stdout.startswith(f"PASS {game}: "), audited.stdout + audited.stderr


def test_watch_json_over_http_follows_the_game_to_its_end(gateway: Gateway, tmp_path: Path, homes: Any) -> None:
    env = closed_redis_env(tmp_path / "home")
    player = Red7(gateway.base, homes("player"))
    game = new_id()
    token = player.json("new", "--id", game, "-p", "ann", "--bot", "greedy")["tokens"]["ann"]
    person_to_move(player, game, "ann", token)
    watcher = subprocess.Popen(
        [str(RED7), "watch", game, "--json", "--timeout", "30", "--url", gateway.base],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watcher.stdout is not None
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(watcher.stdout.readline()) if watcher.stdout else None)
        reader.start()
        reader.join(30)
        assert first and json.loads(first[0])["type"] == "View", first  # following from the view's change on
        player.ok("move", game, "--fold")
        out, err = watcher.communicate(timeout=30)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()
    assert watcher.returncode == 0, err
    types = [json.loads(line)["type"] for line in out.splitlines()]
    assert types[-2:] == ["GameOver", "SeedRevealed"] and "CommandApplied" in types, types


# ---------------------------------------------------------------------------- tokens per server


def test_the_same_game_id_on_two_servers_keeps_two_tokens(tmp_path: Path) -> None:
    path = tmp_path / "credentials.json"
    on_redis = Credentials(path)
    first, second = (Credentials(path, server=server_key(url)) for url in ("http://a:8007", "https://b"))
    on_redis.save("g1", "ann", "r" * 64)
    first.save("g1", "ann", "a" * 64)
    second.save("g1", "ann", "b" * 64)
    assert (on_redis.token("g1", "ann"), first.token("g1", "ann"), second.token("g1", "ann")) == (
        "r" * 64,
        "a" * 64,
        "b" * 64,
    )
    assert sorted(json.loads(path.read_text())["games"]) == ["g1", "http://a:8007/g1", "https://b:443/g1"]
    first.forget("g1", "ann", "a" * 64)
    assert first.seats("g1") == {} and second.token("g1", "ann") == "b" * 64 and on_redis.token("g1", "ann")


def test_server_key_writes_one_server_one_way() -> None:
    assert server_key("HTTP://Example.COM/") == server_key("http://example.com:80") == "http://example.com:80"
    assert server_key("https://h/red7/") == "https://h:443/red7"
    assert server_key("http://[::1]:8007") == "http://[::1]:8007"


# ---------------------------------------------------------------------------- tournaments


def test_tournament_reads_print_the_same_on_both_transports(both: tuple[Red7, Red7], tmp_path: Path) -> None:
    on_redis, over_http = both
    name = new_id("cup")
    on_redis.ok("tournament", "create", name, "-b", "greedy", "-b", "random", "-b", "g2=greedy", "--seed", "cup")
    on_redis.ok("tournament", "run", name)
    for args in (
        ("tournament", "list", "--limit", "3"),
        ("tournament", "list", "--limit", "3", "--json"),
        ("tournament", "show", name),
        ("tournament", "show", name, "--json"),
        ("tournament", "standings", name),
        ("tournament", "standings", name, "--json"),
        ("tournament", "standings", name, "--csv", "-"),
        ("tournament", "report", name, "-o", "-"),
    ):
        first, second = on_redis.ok(*args), over_http.ok(*args)
        assert (first.stdout, first.stderr) == (second.stdout, second.stderr), args
    # head-to-head without games is "—" (whoever is tied with nobody), read from the JSON over HTTP too
    rows = over_http.json("tournament", "standings", name)["standings"]
    dashes = sum(1 for row in rows if row["head_to_head_games"] == 0)
    assert over_http.ok("tournament", "standings", name).stdout.count("—") == dashes
