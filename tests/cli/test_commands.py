"""Every ``red7`` command and its errors, through click's CliRunner, against a real
Redis and real worker processes.

Each user is a separate ``RED7_HOME`` (fixtures ``alice`` and ``bob``); game ids are
unique per test so tests do not depend on each other.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
import redis
from click.testing import CliRunner
from support import Red7, damaged_key, fails, new_id, one_event_per_entry, one_line_error, wait_for

from red7es.cli.commands_game import bot_entry, build_turn, seat_specs, split_bots
from red7es.cli.main import cli
from red7es.cli.session import live_workers
from red7es.service.client import GameService
from red7es.service.connection import masked_url
from red7es.service.redis_server import free_port
from red7es.service.store import Keys

from .conftest import BOTH_TRANSPORTS, RED7

pytestmark = pytest.mark.integration

HEX64 = re.compile(r"^[0-9a-f]{64}$")
ALL_CARDS = [c + str(n) for n in range(1, 8) for c in "ROYGBIV"]


# ---------------------------------------------------------------------------- helpers


def offline_env(home: Any, **extra: str) -> dict[str, str]:
    """The environment of a command that must not need Redis: a closed port, its own data directory."""
    return {"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "RED7_HOME": str(home), **extra}


def create(user: Red7, *args: str, game: str | None = None) -> dict[str, Any]:
    game = game or new_id()
    data: dict[str, Any] = user.new("--id", game, *args)
    assert data["game"] == game
    return data


def seat_view(user: Red7, game: str, name: str) -> dict[str, Any]:
    view: dict[str, Any] = user.json("show", game, "--as", name)
    return view


def wait_turn(user: Red7, game: str, name: str) -> dict[str, Any]:
    """Wait (bots move in the workers) until it is ``name``'s turn; returns their view."""

    def ready() -> dict[str, Any] | None:
        view = seat_view(user, game, name)
        return view if view["status"] == "over" or view["to_move"] == view["seat"] else None

    view: dict[str, Any] = wait_for(ready, f"{name}'s turn in {game}")
    return view


def wait_person(user: Red7, game: str, name: str) -> dict[str, Any]:
    """Wait until a person (not a bot) is to move, or the game is over; returns ``name``'s view."""

    def ready() -> dict[str, Any] | None:
        view = seat_view(user, game, name)
        if view["status"] == "over":
            return view
        mover = view.get("to_move")
        return view if mover is not None and view["seats"][mover]["kind"] == "person" else None

    view: dict[str, Any] = wait_for(ready, f"a person's turn in {game}")
    return view


def create_to_move(user: Red7, *args: str, prefix: str = "t", tries: int = 20) -> tuple[str, dict[str, Any]]:
    """A new game (with alice) in which alice is to move; returns (game id, alice's view)."""
    for i in range(tries):
        game = create(user, *args, "--seed", f"{prefix}-{i}")["game"]
        view = wait_person(user, game, "alice")
        if view["status"] == "playing" and view["to_move"] == view["seat"]:
            return game, view
    pytest.fail("no game where alice gets to move")


def find_game(user: Red7, args: tuple[str, ...], want: Any, tries: int = 40) -> tuple[str, dict[str, Any], str]:
    """A game where alice, to move, has a legal turn matching ``want``; returns (game, view, turn)."""
    for i in range(tries):
        game = create(user, *args, "--seed", f"find-{i}")["game"]
        view = wait_person(user, game, "alice")
        for turn in view.get("legal", []):
            if want(turn):
                return game, view, turn
    pytest.fail("no game with the wanted legal turn")


# ---------------------------------------------------------------------------- help


def test_top_level_help_lists_every_command() -> None:
    result = CliRunner().invoke(cli, ["--help"], prog_name="red7")
    assert result.exit_code == 0
    for name in ("new", "join", "games", "show", "moves", "move", "watch", "play", "worker", "serve", "shutdown"):
        assert re.search(rf"^\s+{name}\s", result.output, re.M), name
    assert "red7 play --bots" in result.output
    assert "Exit codes" in result.output


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_help_has_an_example(command: str, tmp_path: Any) -> None:
    # --help never needs Redis: point at a closed port to prove it.
    env = offline_env(tmp_path)
    result = CliRunner().invoke(cli, [command, "--help"], env=env, prog_name="red7")
    assert result.exit_code == 0, result.output
    assert f"Usage: red7 {command}" in result.output
    assert "Example" in result.output
    assert not any(tmp_path.iterdir()), "--help must not create files in the data directory"


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"], prog_name="red7")
    assert result.exit_code == 0
    assert result.output.startswith("red7, version ")


def test_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["nosuch"], prog_name="red7")
    assert fails(result, 2)


# ---------------------------------------------------------------------------- new


@BOTH_TRANSPORTS
def test_new_prints_the_game_and_the_seats(alice: Red7) -> None:
    game = new_id()
    result = alice.ok("new", "-p", "alice", "-p", "bob", "--bot", "greedy", "--id", game)
    out = result.stdout
    assert f"Game {game} created: 3 players, basic." in out
    assert re.search(r"Seed commitment \(SHA-256\): [0-9a-f]{64}", out)
    token = alice.credentials()["games"][game]["alice"]
    assert f"alice: yours, token {token}" in out
    assert f"bob: open: red7 join {game} bob" in out
    assert "greedy: bot (greedy)" in out
    assert f"red7 play --game {game}" in out


@BOTH_TRANSPORTS
def test_names_are_printed_as_typed_never_as_markup(alice: Red7) -> None:
    """rich reads "[red]" as a style and "[/]" as an error: one such name broke `red7 games`
    for everyone on the server, and a paste-able command named another seat."""
    game = new_id()
    names = ("[/]", "[red]ann", ":smile:", "[b]bot")
    result = alice.ok("new", "-p", names[0], "-p", names[1], "-p", names[2], "-b", f"{names[3]}=greedy", "--id", game)
    for name in names:
        assert f"  {name}: " in result.stdout, result.stdout
    assert f"red7 join {game} '[red]ann'" in result.stdout
    listed = alice.ok("games").stdout
    assert all(name in listed for name in names), listed
    shown = alice.ok("show", game).stdout
    assert all(name in shown for name in names), shown


@BOTH_TRANSPORTS
def test_new_and_join_print_the_web_tables_link_with_web(alice: Red7, bob: Red7) -> None:
    """`--web URL`: a seat taken here opens in the browser from the printed link (docs/web.md)."""
    game = new_id()
    out = alice.ok(
        "new", "--id", game, "-p", "alice", "-p", "bob", "-b", "greedy", "--web", "http://127.0.0.1:8007/"
    ).stdout
    token = re.search(r"alice: yours, token ([0-9a-f]{64})", out)
    assert token is not None, out
    assert f"\nIn a browser, alice: http://127.0.0.1:8007/g/{game}#seat=0&token={token.group(1)}\n" in out
    joined = bob.ok("join", game, "bob", "--web", "https://red7.example:8443").stdout
    bobs = re.search(r"Token: ([0-9a-f]{64})", joined)
    assert bobs is not None, joined
    assert joined.endswith(f"In a browser: https://red7.example:8443/g/{game}#seat=1&token={bobs.group(1)}\n")
    for bad in ("ftp://x", "127.0.0.1:8007", "http://", "http://h/#x"):
        assert "Invalid value for '--web'" in fails(alice("new", "-p", "a", "-b", "greedy", "--web", bad), 2)
    assert "with --json" in fails(alice("new", "-p", "a", "-b", "greedy", "--web", "http://h", "--json"), 2)


@BOTH_TRANSPORTS
def test_new_json_shape(alice: Red7) -> None:
    data = create(alice, "-p", "alice", "-p", "bob", "-b", "greedy", "-b", "mc=random")
    assert set(data) == {"game", "commitment", "seats", "tokens"}
    assert HEX64.match(data["commitment"])
    assert data["seats"] == [
        {"name": "alice", "kind": "person", "bot": None},
        {"name": "bob", "kind": "person", "bot": None},
        {"name": "greedy", "kind": "bot", "bot": "greedy"},
        {"name": "mc", "kind": "bot", "bot": "random"},
    ]
    assert list(data["tokens"]) == ["alice"]
    assert HEX64.match(data["tokens"]["alice"])


@BOTH_TRANSPORTS
def test_new_saves_tokens_in_a_private_credentials_file(alice: Red7) -> None:
    data = create(alice, "-p", "alice", "-b", "greedy")
    path = alice.home / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert alice.credentials()["games"][data["game"]] == data["tokens"]
    # A second game keeps the first one's token, still private.
    other = create(alice, "-p", "alice", "-b", "greedy")
    games = alice.credentials()["games"]
    assert games[data["game"]] == data["tokens"] and games[other["game"]] == other["tokens"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not list(alice.home.glob(".credentials.*")), "no temporary file left behind"


@BOTH_TRANSPORTS
def test_new_join_all_and_no_join(alice: Red7) -> None:
    data = create(alice, "-p", "alice", "-p", "bob", "-p", "carol", "--join-all")
    assert sorted(data["tokens"]) == ["alice", "bob", "carol"]
    assert alice.credentials()["games"][data["game"]] == data["tokens"]
    none = create(alice, "-p", "alice", "-p", "bob", "--no-join")
    assert none["tokens"] == {}
    assert none["game"] not in alice.credentials()["games"]
    view = alice.json("show", none["game"])
    assert [s["joined"] for s in view["seats"]] == [False, False]


@BOTH_TRANSPORTS
def test_new_bots_get_distinct_names(alice: Red7) -> None:
    data = create(alice, "-p", "alice", "-b", "greedy", "-b", "greedy", "-b", "random")
    assert [s["name"] for s in data["seats"]] == ["alice", "greedy", "greedy2", "random"]


@BOTH_TRANSPORTS
def test_new_bot_specs_with_options(alice: Red7) -> None:
    """``ismcts:iterations=50`` is a spec (its ``=`` is an option's), ``g2=greedy`` names a seat."""
    data = create(
        alice, "-p", "alice", "-b", "ismcts:iterations=50,belief=0.5", "-b", "g2=greedy", "-b", "x=ismcts:c=1"
    )
    seats = [(s["name"], s["bot"]) for s in data["seats"]]
    assert seats == [
        ("alice", None),
        ("ismcts", "ismcts:iterations=50,belief=0.5"),
        ("g2", "greedy"),
        ("x", "ismcts:c=1"),
    ]


@BOTH_TRANSPORTS
def test_new_bots_only_game_plays_to_the_end(alice: Red7) -> None:
    data = create(alice, "-b", "greedy", "-b", "random")
    assert data["tokens"] == {}
    game = data["game"]
    view = wait_for(lambda: (v := alice.json("show", game))["status"] == "over" and v, "the bots to finish")
    assert view["outcome"]["winners"]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ((), {"scoring": False, "draw": False, "actions": False, "rounds": 1, "target": None}),
        (("--scoring", "--draw", "--actions"), {"scoring": True, "draw": True, "actions": True}),
        (("--scoring", "--target", "25"), {"scoring": True, "target": 25}),
        (("--rounds", "3"), {"scoring": False, "rounds": 3}),
    ],
)
@BOTH_TRANSPORTS
def test_new_variant_flags(alice: Red7, flags: tuple[str, ...], expected: dict[str, Any]) -> None:
    game = create(alice, "-p", "alice", "-b", "greedy", *flags)["game"]
    view = alice.json("show", game)
    assert view["variant"]["players"] == 2
    for key, value in expected.items():
        assert view["variant"][key] == value, key


@BOTH_TRANSPORTS
def test_new_variant_shown_in_words(alice: Red7) -> None:
    game = new_id()
    out = alice.ok("new", "-p", "alice", "-b", "greedy", "--rounds", "3", "--id", game).stdout
    assert "first to 3 rounds" in out
    assert "first to 3 rounds" in alice.ok("show", game).stdout


@BOTH_TRANSPORTS
def test_new_seed_reproduces_the_deal(alice: Red7) -> None:
    args = ("-p", "alice", "-p", "bob", "-b", "greedy")
    one = create(alice, *args, "--seed", "same seed")
    two = create(alice, *args, "--seed", "same seed")
    other = create(alice, *args, "--seed", "another seed")
    assert one["commitment"] == two["commitment"] != other["commitment"]
    a, b = wait_turn(alice, one["game"], "alice"), wait_turn(alice, two["game"], "alice")
    assert a["hand"] == b["hand"]
    assert [s["palette"] for s in a["seats"]] == [s["palette"] for s in b["seats"]]
    assert a["legal"] == b["legal"]
    c = wait_turn(alice, other["game"], "alice")
    assert (c["hand"], [s["palette"] for s in c["seats"]]) != (a["hand"], [s["palette"] for s in a["seats"]])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (  # the workers' --max-bot-time, 10 s by default (issue 24: time=3600 held a worker an hour a turn)
            ("-p", "a", "-b", "ismcts:time=20"),
            "time must be above 0 and at most 10 seconds on this service (red7 worker --max-bot-time), not 20.0",
        ),
    ],
)
@BOTH_TRANSPORTS
def test_new_errors(alice: Red7, args: tuple[str, ...], message: str) -> None:
    line = one_line_error(alice("new", *args))
    assert message in line
    assert alice.credentials() == {"games": {}}, "a failed new saves no token"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("-p", "a", "-b", "nosuch"), "unknown bot 'nosuch'"),
        (("-p", "a", "-b", "ismcts:frob=1"), "bot 'ismcts' has no option 'frob': it takes iterations, time, c, belief"),
        (("-p", "a", "-b", "ismcts:iterations=many"), "iterations must be a whole number, not 'many'"),
        (("-p", "a", "-b", "ismcts:time=inf"), "time must be above 0 and at most 3600 seconds, not inf"),
        (("-p", "a", "-b", "greedy", "--seed", ""), "a seed must not be empty"),
        (("-p", "a", "-b", "greedy", "--id", "Not An Id"), "is not a valid game id"),
    ],
)
@BOTH_TRANSPORTS
def test_new_typing_mistakes_are_usage_errors(alice: Red7, args: tuple[str, ...], message: str) -> None:
    """An unknown bot or a bad --id exited 1, like a refusal, while five players exited 2."""
    err = fails(alice("new", *args), 2)
    assert message in err.splitlines()[-1] and err.splitlines()[-1].startswith("Error: ")
    assert alice.credentials() == {"games": {}}, "a failed new saves no token"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Red7 is played by 2 to 4 players, not 0"),
        (("-p", "alice"), "Red7 is played by 2 to 4 players, not 1"),
        (("-p", "a", "-p", "b", "-p", "c", "-b", "greedy", "-b", "random"), "Red7 is played by 2 to 4 players, not 5"),
        (("-p", "a", "-b", "greedy", "--target", "20"), "a target score needs the scoring variant"),
        (("-p", "a", "-b", "greedy", "--scoring", "--rounds", "2"), "rounds is for the basic game"),
    ],
)
@BOTH_TRANSPORTS
def test_options_that_contradict_the_rules_are_usage_errors(alice: Red7, args: tuple[str, ...], message: str) -> None:
    err = fails(alice("new", *args), 2)
    assert f"Error: {message}" in err
    assert alice.credentials() == {"games": {}}


@BOTH_TRANSPORTS
def test_new_existing_id_is_refused(alice: Red7) -> None:
    game = create(alice, "-p", "alice", "-b", "greedy")["game"]
    line = one_line_error(alice("new", "-p", "alice", "-b", "greedy", "--id", game))
    assert f"a game '{game}' already exists" in line


@pytest.mark.parametrize(
    "args", [("--rounds", "0"), ("--target", "0"), ("--frobnicate",), ("--join-all", "--no-join"), ("--id", "")]
)
@BOTH_TRANSPORTS
def test_new_usage_errors(alice: Red7, args: tuple[str, ...]) -> None:
    assert "Usage: red7 new" in fails(alice("new", "-p", "a", "-b", "greedy", *args), 2)


# ---------------------------------------------------------------------------- join


@BOTH_TRANSPORTS
def test_join_takes_an_open_seat(alice: Red7, bob: Red7) -> None:
    game = create(alice, "-p", "alice", "-p", "bob", "-b", "greedy")["game"]
    out = bob.ok("join", game, "bob").stdout
    token = bob.credentials()["games"][game]["bob"]
    assert HEX64.match(token)
    assert f"You are bob in game {game}. Token: {token}" in out
    assert f"red7 play --game {game} --as bob" in out
    assert stat.S_IMODE((bob.home / "credentials.json").stat().st_mode) == 0o600
    assert "bob" not in alice.credentials()["games"][game], "bob's token is only in bob's file"
    view = alice.json("show", game)
    assert [s["joined"] for s in view["seats"]] == [True, True, True]
    # bob now sees his own hand.
    assert len(seat_view(bob, game, "bob")["hand"]) == view["seats"][1]["hand_size"]


def test_new_and_join_keep_the_token_when_no_worker_answers(
    homes: Any, redis_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No worker running: the command times out, but the seat it will take is yours."""
    from red7es.service.client import GameService
    from red7es.service.tokens import public_key
    from red7es.workers.context import WorkerContext

    for method in (GameService.create, GameService.join):  # the CLI runs in-process: wait 0.5 s, not 10
        monkeypatch.setitem(method.__kwdefaults__, "wait", 0.5)
    empty = redis_server.url.rsplit("/", 1)[0] + "/3"  # a database no worker serves
    connection = redis.Redis.from_url(empty)
    worker = WorkerContext(connection)  # folds by hand, once the commands have timed out
    try:
        carol, dan = Red7(empty, homes("carol")), Red7(empty, homes("dan"))
        game = new_id()
        line = one_line_error(carol("new", "-p", "carol", "-p", "dan", "-b", "random", "--id", game))
        assert "no answer from a worker" in line
        carol_token = carol.credentials()["games"][game]["carol"]
        worker.advance(game)
        assert "no answer from a worker" in one_line_error(dan("join", game, "dan"))
        dan_token = dan.credentials()["games"][game]["dan"]
        worker.advance(game)
        seats = carol.json("show", game)["seats"]
        assert [s["key"] for s in seats] == [public_key(carol_token), public_key(dan_token), None]
        assert "hand" in dan.json("show", game, "--as", "dan")
        assert "you already hold seat dan" in one_line_error(dan("join", game, "dan"))
    finally:
        connection.flushdb()
        connection.close()


@pytest.fixture
def slow_service(
    homes: Any, redis_server: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Callable[[str], Red7], Any]]:
    """Users of a database no worker serves (commands time out in 0.5 s) and a worker folding by hand."""
    from red7es.cli import commands_game
    from red7es.service.client import GameService
    from red7es.workers.context import WorkerContext

    for method in (GameService.create, GameService.join, GameService.play):  # in-process: wait 0.5 s, not 10
        monkeypatch.setitem(method.__kwdefaults__, "wait", 0.5)
    monkeypatch.setattr(commands_game, "ANSWER_WAIT", 0.5)
    empty = redis_server.url.rsplit("/", 1)[0] + "/4"
    connection = redis.Redis.from_url(empty)
    try:
        yield (lambda name: Red7(empty, homes(name))), WorkerContext(connection)
    finally:
        connection.flushdb()
        connection.close()


def _folding(worker: Any, game: str) -> contextlib.AbstractContextManager[None]:
    """The hand-run worker folds ``game`` every 20 ms while the block runs (a single timed
    fold could come before the in-process command has submitted what it waits for)."""
    from red7es.workers.context import repeating

    return repeating(lambda: worker.advance(game), 0.02, f"folding {game}")


def _two_seats(user: Callable[[str], Red7], worker: Any, *bots: str) -> tuple[Red7, Red7, str]:
    """carol's new game with seats carol (taken) and dan (open), created by the hand-run worker."""
    carol, dan = user("carol"), user("dan")
    game = new_id()
    carol("new", "-p", "carol", "-p", "dan", *bots, "--id", game)
    worker.advance(game)
    return carol, dan, game


def test_a_join_that_timed_out_and_was_refused_does_not_block_the_next(slow_service: Any) -> None:
    """The token a timed-out join kept is forgotten once the seat turns out to be someone else's."""
    user, worker = slow_service
    _carol, dan, game = _two_seats(user, worker, "-b", "random")
    erin = user("erin")
    assert "no answer from a worker" in one_line_error(erin("join", game, "dan"))
    assert "no answer from a worker" in one_line_error(dan("join", game, "dan"))
    worker.advance(game)  # erin's join came first: dan's is refused
    line = one_line_error(dan("join", game, "dan"))
    assert line == (
        "Error: cannot join: seat dan has already been taken "
        "(your earlier join of it was refused; its saved token is forgotten)"
    )
    assert game not in dan.credentials()["games"]
    assert "hand" in erin.json("show", game, "--as", "dan")


def test_a_join_waits_for_the_answer_to_an_earlier_one(slow_service: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unanswered: say so and keep the token; answered meanwhile: the earlier join's seat is yours."""
    user, worker = slow_service
    _carol, dan, game = _two_seats(user, worker)
    assert "no answer from a worker" in one_line_error(dan("join", game, "dan"))
    token = dan.credentials()["games"][game]["dan"]
    line = one_line_error(dan("join", game, "dan"))
    assert line == (
        f"Error: your earlier join of seat dan in game {game} is not answered yet: is a worker running? "
        "(start one: red7 worker; your token is kept)"
    )
    assert dan.credentials()["games"][game]["dan"] == token
    from red7es.service.client import GameService

    waiting = GameService.answered

    def answered_meanwhile(service: GameService, game_id: str, wait: float) -> bool:
        with _folding(worker, game_id):  # a worker comes up while this join waits for the earlier one
            return waiting(service, game_id, wait)

    monkeypatch.setattr(GameService, "answered", answered_meanwhile)
    out = dan.ok("join", game, "dan").stdout
    assert f"You are dan in game {game}. Token: {token}" in out
    assert "you already hold seat dan" in one_line_error(dan("join", game, "dan"))


def test_a_move_nobody_answers_yet_says_it_is_stored_and_how_to_ask_again(slow_service: Any) -> None:
    """It said 'is one running?' while two workers were busy with slow bots, and a player who
    then typed the turn again got 'R1 is not in your hand': the first had been applied."""
    from red7es.service.client import GameService
    from red7es.service.events import CommandApplied

    user, worker = slow_service
    carol = user("carol")
    game = new_id()
    carol("new", "-p", "carol", "-p", "dan", "--join-all", "--id", game)  # no worker yet: it times out
    worker.advance(game)
    public = carol.json("show", game)
    mover = public["seats"][public["to_move"]]["name"]
    turn = carol.json("show", game, "--as", mover)["legal"][0]
    line = one_line_error(carol("move", game, turn, "--as", mover, "--id", "slow-1"))
    again = f"red7 move {game} {shlex.quote(turn)} --as {mover} --id slow-1"
    assert line == (
        f"Error: no answer yet for game {game}: no worker is running (start one with: red7 worker); "
        f"the turn is stored and will be answered, so do not play another: ask for its answer with {again}"
    )
    with redis.Redis.from_url(carol.url) as connection:
        connection.set("red7:worker:busy-1", "x", px=60_000)  # a live worker, busy with a slow bot
        assert "all 1 worker(s) are busy" in one_line_error(carol(*shlex.split(again)[1:]))
        worker.advance(game)
        answered = carol.ok(*shlex.split(again)[1:])  # the printed command, pasted
        assert "rejected" not in answered.stdout.lower()
        log = GameService(connection).log(game)
    assert sum(isinstance(r.event, CommandApplied) and r.event.id == "slow-1" for r in log) == 1


def test_join_waits_for_a_game_created_a_moment_ago(slow_service: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A join right after new (the create not folded yet) waits for the game's first view
    instead of failing with 'no view yet'."""
    from red7es.cli import commands_game
    from red7es.service.client import GameService
    from red7es.workers.context import repeating

    # waits of 10 s, not the fixture's 0.5: what is checked is that join waits, not how briefly
    monkeypatch.setitem(GameService.join.__kwdefaults__, "wait", 10)
    monkeypatch.setattr(commands_game, "ANSWER_WAIT", 10)
    user, worker = slow_service
    carol, dan = user("carol"), user("dan")
    game = new_id()
    carol("new", "-p", "carol", "-p", "dan", "--id", game)  # no worker yet: it times out, the game waits
    with repeating(lambda: worker.advance(game), 0.2, "a worker coming up"):  # first fold after 0.2 s
        out = dan.ok("join", game, "dan").stdout
    assert f"You are dan in game {game}." in out


def test_a_saved_token_that_took_no_seat_is_replaced_by_a_fresh_join(slow_service: Any) -> None:
    """Every command answered and the seat still open: the saved token was refused; join afresh."""
    from red7es.cli.credentials import Credentials
    from red7es.service.tokens import new_token, public_key

    user, worker = slow_service
    carol, dan, game = _two_seats(user, worker)
    stale = new_token()
    Credentials(dan.home / "credentials.json").save(game, "dan", stale)
    with _folding(worker, game):
        out = dan.ok("join", game, "dan").stdout
    token = dan.credentials()["games"][game]["dan"]
    assert token != stale and f"Token: {token}" in out
    assert carol.json("show", game)["seats"][1]["key"] == public_key(token)


def test_forget_drops_only_the_token_it_is_given(tmp_path: Any) -> None:
    """A refused join forgets its own token, never a newer one saved for the seat meanwhile."""
    from red7es.cli.credentials import Credentials

    credentials = Credentials(tmp_path / "credentials.json")
    credentials.save("g", "dan", "a" * 64)
    credentials.forget("g", "dan", "b" * 64)
    assert credentials.token("g", "dan") == "a" * 64
    credentials.forget("g", "dan", "a" * 64)
    assert credentials.seats("g") == {}


def _save_tokens(path: str, worker: int, count: int) -> None:
    from red7es.cli.credentials import Credentials

    credentials = Credentials(Path(path))
    for i in range(count):
        credentials.save(f"g{worker}-{i}", "me", f"{worker:02d}{i:062d}")


def test_tokens_saved_at_once_by_several_commands_are_all_kept(tmp_path: Path) -> None:
    """QA joined 24 seats at once from a script: every join said its token was kept, but
    only 21 were in the file (each command wrote back what it read plus its own)."""
    import multiprocessing

    from red7es.cli.credentials import Credentials

    path = tmp_path / "credentials.json"
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_save_tokens, args=(str(path), w, 15)) for w in range(6)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    credentials = Credentials(path)
    assert sum(len(credentials.seats(f"g{w}-{i}")) for w in range(6) for i in range(15)) == 90


@pytest.mark.parametrize(
    "content",
    ["[]", '"x"', '{"games": []}', '{"games": {"j1": "x"}}', '{"games": {"j1": {"alice": 5}}}', "{oops"],
    ids=["list", "text", "games-list", "game-text", "token-number", "not-json"],
)
def test_a_credentials_file_of_another_shape_is_one_line(content: str, tmp_path: Any) -> None:
    """Valid JSON of the wrong shape was an AttributeError or ValueError traceback."""
    (tmp_path / "credentials.json").write_text(content)
    env = offline_env(tmp_path)  # read before Redis
    for args in (("moves", "j1"), ("show", "j1", "--as", "alice")):
        line = one_line_error(CliRunner().invoke(cli, list(args), env=env, prog_name="red7"))
        assert line.startswith(f"Error: cannot read the credentials file {tmp_path / 'credentials.json'}: "), line


def test_printed_commands_paste_into_a_shell(alice: Red7, bob: Red7) -> None:
    """Game commands print command lines like the tournament's: shell-quoted, a typed --url repeated."""
    odd = "o'neil$(x)"
    game = new_id()
    created = alice.ok("new", "-p", "alice", "-p", odd, "--id", game, "--url", alice.url).stdout
    pasted = next(line for line in created.splitlines() if line.startswith(f"  {odd}: open: ")).partition("open: ")[2]
    assert shlex.split(pasted) == ["red7", "join", game, odd, "--url", alice.url]
    assert f"Play it: red7 play --game {game} --url {alice.url}" in created
    joined = bob.ok("join", game, odd).stdout  # --url from $REDIS_URL is not repeated
    play = next(line for line in joined.splitlines() if line.startswith("Play it: ")).partition(": ")[2]
    assert shlex.split(play) == ["red7", "play", "--game", game, "--as", odd]
    line = one_line_error(bob("join", game, odd, "--url", bob.url))
    held = shlex.split(line.partition("play it with ")[2])
    assert held == ["red7", "play", "--game", game, "--as", odd, "--url", bob.url]


def test_hints_to_paste_repeat_a_typed_url(slow_service: Any) -> None:
    """'start one with: red7 worker' and 'list games with: red7 games' dropped the --url typed: pasted,
    they went to another Redis (the embedded one, or $REDIS_URL's)."""
    user, _worker = slow_service
    carol = user("carol")
    game, url = new_id(), carol.url
    start = f"(start one with: red7 worker --url {url})"
    line = one_line_error(carol("new", "-p", "carol", "-b", "random", "--id", game, "--url", url))
    assert line == f"Error: no answer from a worker for game {game}: is one running? {start}"
    assert one_line_error(carol("show", game, "--url", url)) == (
        f"Error: game {game} has no view yet: is a worker running? {start}"
    )
    line = one_line_error(carol("show", "nosuch", "--url", url))
    assert line == f"Error: no game 'nosuch' (list games with: red7 games --url {url})"
    line = one_line_error(carol("show", "nosuch"))  # --url from $REDIS_URL is not repeated
    assert line == "Error: no game 'nosuch' (list games with: red7 games)"


@BOTH_TRANSPORTS
def test_join_json(alice: Red7, bob: Red7) -> None:
    game = create(alice, "-p", "alice", "-p", "bob")["game"]
    data = bob.json("join", game, "bob")
    assert data == {"game": game, "seat": "bob", "token": bob.credentials()["games"][game]["bob"]}


@BOTH_TRANSPORTS
def test_join_errors(alice: Red7, bob: Red7) -> None:
    game = create(alice, "-p", "alice", "-p", "bob", "-b", "greedy")["game"]
    assert "cannot join: seat alice has already been taken" in one_line_error(bob("join", game, "alice"))
    assert "cannot join: seat greedy is played by a bot" in one_line_error(bob("join", game, "greedy"))
    line = one_line_error(bob("join", game, "zed"))
    assert f"no seat 'zed' in game {game} (seats: alice, bob, greedy)" in line
    assert "no game 'nope'" in one_line_error(bob("join", "nope", "bob"))
    bob.ok("join", game, "bob")
    assert "seat bob has already been taken" in one_line_error(alice("join", game, "bob"))
    assert bob.credentials()["games"] == {game: {"bob": bob.credentials()["games"][game]["bob"]}}
    assert "bob" not in alice.credentials()["games"][game], "a refused join keeps no token"


# ---------------------------------------------------------------------------- broken games


def test_a_game_that_breaks_says_so_at_once(slow_service: Any) -> None:
    """A move waiting for its answer when the worker finds the log broken says why at once
    (it waited 10 s, then blamed a missing worker), and so does every command that reads the game."""
    from red7es.workers.context import WorkerContext

    user, worker = slow_service
    carol = user("carol")
    game = new_id()
    carol("new", "-p", "carol", "-p", "dan", "--join-all", "--id", game, "--seed", "breaks")
    worker.advance(game)
    view = carol.json("show", game)
    mover = view["seats"][view["to_move"]]["name"]
    turn = carol.json("moves", game, "--as", mover)["legal"][0]
    connection = worker.store.redis
    log = f"red7:{{{game}}}:log"
    connection.xdel(log, one_event_per_entry(connection, game)[1][0])
    cold = WorkerContext(connection)  # has not got the game warm: rebuilds it from the log, and finds the gap
    expected = f"Error: game {game} is broken: event 0 is followed by event 2"
    started = time.monotonic()
    with _folding(cold, game):
        assert one_line_error(carol("move", game, turn, "--as", mover)) == expected
    assert time.monotonic() - started < 5, "said at once, not after the 10 s wait for an answer"
    for args in (
        ("move", game, turn, "--as", mover),
        ("show", game),
        ("show", game, "--as", mover, "--json"),
        ("moves", game, "--as", mover),
        ("watch", game, "--timeout", "5"),
        ("join", game, "dan"),
        ("play", "--game", game, "--as", mover),
    ):
        assert one_line_error(carol(*args)) == expected, args
    assert "broken" in carol.ok("games").stdout  # listed, as before


def test_watch_notices_a_game_marked_broken_without_a_changes_entry(alice: Red7) -> None:
    """meta.broken set with no entry to wake the wait (an older worker, an operator): said within a second or so."""
    game, _ = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="breakwatch")
    connection = redis.Redis.from_url(alice.url)
    mark = threading.Timer(0.5, lambda: connection.hset(f"red7:{{{game}}}:meta", "broken", "the log was edited"))
    mark.start()
    try:
        started = time.monotonic()
        result = alice("watch", game, "--timeout", "8")
        elapsed = time.monotonic() - started
    finally:
        mark.cancel()
        connection.close()
    assert one_line_error(result) == f"Error: game {game} is broken: the log was edited"
    assert elapsed < 4, elapsed


# ---------------------------------------------------------------------------- games


@pytest.mark.parametrize("limit", ["0", "-5"])
@BOTH_TRANSPORTS
def test_games_limit_must_be_positive(alice: Red7, limit: str) -> None:
    assert "Invalid value for '--limit'" in fails(alice("games", "--limit", limit), 2)


@BOTH_TRANSPORTS
def test_games_json_and_table(alice: Red7) -> None:
    playing = create(alice, "-p", "alice", "-b", "greedy", "--seed", "games-1")["game"]
    open_game = create(alice, "-p", "alice", "-p", "bob", "--no-join")["game"]
    wait_turn(alice, playing, "alice")
    listed = {g["game"]: g for g in alice.json("games")}
    assert {playing, open_game} <= set(listed)
    entry = listed[playing]
    assert set(entry) == {
        "game",
        "status",
        "version",
        "to_move",
        "created",
        "seats",
        "winners",
        "reason",
        "variant",
        "unreadable",
    }
    assert entry["status"] == "playing" and entry["unreadable"] is None
    assert entry["to_move"] == 0
    assert entry["winners"] is None
    assert entry["seats"] == [
        {"name": "alice", "kind": "person", "bot": None, "joined": True},
        {"name": "greedy", "kind": "bot", "bot": "greedy", "joined": True},
    ]
    # An open seat says so (the web lobby lists games with free seats by it).
    opened = wait_for(
        lambda: next((g for g in alice.json("games") if g["game"] == open_game and g["seats"]), None), "its view"
    )
    assert [s["joined"] for s in opened["seats"]] == [False, False]
    assert entry["variant"]["players"] == 2
    assert entry["version"] > 0
    # Newest first.
    order = [g["game"] for g in alice.json("games")]
    assert order.index(open_game) < order.index(playing)

    table = alice.ok("games").stdout
    header = table.splitlines()[0].split()
    assert header == ["game", "created", "players", "status", "events"]
    row = next(line for line in table.splitlines() if line.startswith(playing))
    assert "alice, greedy" in row and "alice to move" in row

    assert len(alice.json("games", "--limit", "1")) == 1
    total = len(alice.json("games", "--limit", "100000"))
    assert alice.ok("games", "--limit", "1").stdout.splitlines()[-1] == (
        f"The newest 1 of {total} games; all of them: red7 games --limit {total}"
    )
    assert "The newest" not in alice.ok("games", "--limit", str(total)).stdout


def test_a_view_that_is_not_msgpack_hides_no_game_and_is_said_in_one_line(alice: Red7) -> None:
    """Was a msgpack FormatError traceback from `games` (for every game on the server) and
    from every command that reads the game."""
    other, _ = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="unread-other")
    game, _ = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="unread-view")
    key = Keys(game).public_view
    line = rf"game {game}: {re.escape(key)} cannot be read: not valid msgpack \(\w+\)"
    with redis.Redis.from_url(alice.url) as connection, damaged_key(connection, key, b"\xc1"):
        listed = {g["game"]: g for g in alice.json("games", "--limit", "100000")}
        assert listed[other]["status"] == "playing" and listed[other]["unreadable"] is None
        assert listed[other]["seats"][0]["name"] == "alice"
        damaged = listed[game]
        assert damaged["status"] == "unreadable" and damaged["seats"] == []
        assert re.fullmatch(line, damaged["unreadable"]), damaged
        assert damaged["version"] > 0  # what its meta says is still shown
        table = alice.ok("games", "--limit", "100000").stdout.splitlines()
        assert any(row.startswith(game) and "unreadable" in row for row in table)
        assert any(row.startswith(other) and "alice to move" in row for row in table)
        assert any(re.fullmatch(line, row) for row in table), "why, under the table"
        for args in (
            ("show", game),
            ("show", game, "--json"),
            ("show", game, "--as", "alice"),
            ("moves", game),
            ("watch", game, "--timeout", "2"),
            ("play", "--game", game, "--as", "alice"),
        ):
            assert re.fullmatch(f"Error: {line}", one_line_error(alice(*args))), args
        alice.ok("show", other)
    seat_key = Keys(game).view(0)
    with redis.Redis.from_url(alice.url) as connection, damaged_key(connection, seat_key, msgpack.packb([1, 2])):
        assert one_line_error(alice("show", game, "--as", "alice")) == (
            f"Error: game {game}: {seat_key} cannot be read: a list, not a map"
        )
    alice.ok("move", game, "--fold")  # the game itself was never touched


def test_a_meta_version_that_is_no_number_hides_no_game_and_is_said_in_one_line(alice: Red7) -> None:
    """Was `ValueError: invalid literal for int()` from games, audit and export."""
    other, _ = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="unread-meta-other")
    game, _ = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="unread-meta")
    key = Keys(game).meta
    line = f"game {game}: {key} cannot be read: its version is 'abc', not a whole number"
    with redis.Redis.from_url(alice.url) as connection, damaged_key(connection, key, b"abc", field="version"):
        listed = {g["game"]: g for g in alice.json("games", "--limit", "100000")}
        assert listed[other]["status"] == "playing" and listed[other]["unreadable"] is None
        assert listed[game]["status"] == "unreadable" and listed[game]["unreadable"] == line
        assert listed[game]["version"] is None
        assert listed[game]["seats"][0]["name"] == "alice", "the view is read all the same"
        row = next(r for r in alice.ok("games", "--limit", "100000").stdout.splitlines() if r.startswith(game))
        assert row.split()[-2:] == ["unreadable", "?"]

        result = alice("audit", game)
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert result.stdout == (
            f"FAIL {game}: record: unreadable: {line}; expected a game as workers store it, "
            "found a key that cannot be read\n"
        )
        report = json.loads(alice("audit", game, "--json").stdout)
        assert report["result"] == "fail" and report["divergence"]["check"] == "unreadable"
        assert report["divergence"]["reason"] == line
        assert one_line_error(alice("export", game, "--unfinished", "-o", "-")) == f"Error: {line}"
        assert one_line_error(alice("export", other, game, "--unfinished", "-o", "-")) == f"Error: {line}"


@BOTH_TRANSPORTS
def test_replay_game_is_for_files(alice: Red7) -> None:
    game = create(alice, "-p", "alice", "-b", "greedy")["game"]
    result = alice("replay", game, "--game", "other")
    assert result.exit_code == 2
    assert f"--game picks a game of a FILE; {game} is a game in Redis already" in result.stderr


@BOTH_TRANSPORTS
def test_games_shows_the_winner(alice: Red7) -> None:
    game = create(alice, "-b", "greedy", "-b", "random")["game"]
    wait_for(lambda: alice.json("show", game)["status"] == "over", "the bots to finish")
    assert one_line_error(alice("show", game, "--as", "greedy")) == (
        f"Error: seat 'greedy' in game {game} is a bot: it has no token; the game is over: "
        f"red7 replay {game} --as greedy shows its hand"
    )
    entry = next(g for g in alice.json("games") if g["game"] == game)
    assert entry["status"] == "over" and entry["winners"]
    winner = entry["seats"][entry["winners"][0]]["name"]
    row = next(line for line in alice.ok("games").stdout.splitlines() if line.startswith(game))
    assert f"won by {winner}" in row


def test_games_on_an_empty_database(alice: Red7, redis_server: Any) -> None:
    empty = Red7(redis_server.url.replace("/0", "/5"), alice.home)
    assert empty.json("games") == []
    assert "No games yet" in empty.ok("games").stdout


# ---------------------------------------------------------------------------- show


@BOTH_TRANSPORTS
def test_show_public_hides_every_hand(alice: Red7) -> None:
    game, _ = create_to_move(alice, "-p", "alice", "-p", "bob", "-b", "greedy", prefix="pub")
    view = alice.json("show", game, "--public")
    assert view["game"] == game and view["status"] == "playing"
    assert "hand" not in view and "legal" not in view and view.get("seat") is None
    assert all("hand" not in s for s in view["seats"])
    assert [s["name"] for s in view["seats"]] == ["alice", "bob", "greedy"]
    text = alice.ok("show", game, "--public").stdout
    assert f"Game {game}" in text and "Rule: Red" in text
    assert "Your hand" not in text and "(you)" not in text
    assert "alice to move." in text


@BOTH_TRANSPORTS
def test_show_and_moves_default_to_the_same_seat(alice: Red7, bob: Red7) -> None:
    """`show` showed the public view to the holder of the game's only seat, while `moves`
    acted as that seat: both act as the one seat held; several held, `show` is public
    and says how to choose."""
    game, _ = create_to_move(alice, "-p", "alice", "-p", "bob", "-b", "greedy", prefix="same")
    assert alice.json("show", game)["seat"] == 0 == alice.json("show", game, "--as", "alice")["seat"]
    assert alice.json("moves", game)["seat"] == "alice"
    assert "Your hand: " in alice.ok("show", game).stdout
    assert bob.json("show", game).get("seat") is None  # no seat held: the public view
    assert "--public shows no seat" in fails(alice("show", game, "--public", "--as", "alice"), 2)
    both = create(alice, "-p", "alice", "-p", "bob", "--join-all")["game"]
    assert alice.json("show", both).get("seat") is None and "hand" not in alice.json("show", both)
    text = alice.ok("show", both).stdout
    assert "Your hand" not in text
    assert f"You hold seats alice, bob: see one with red7 show {both} --as NAME" in text


@BOTH_TRANSPORTS
def test_a_finished_game_says_it_is_over(alice: Red7) -> None:
    """`moves` on a finished game whose seats you all hold asked to choose a seat; `join` suggested `play`."""
    game = create(alice, "-p", "alice", "-p", "bob", "--join-all", "--seed", "over")["game"]
    alice.ok("move", game, "fold")  # two seats: the one to move folds, the other wins
    view = wait_for(lambda: (v := alice.json("show", game, "--public"))["status"] == "over" and v, "the end")
    assert view["status"] == "over"
    assert alice.ok("moves", game).stdout.strip() == f"The game is over: see red7 show {game}"
    line = one_line_error(alice("join", game, "bob"))
    assert "play" not in line and f"which is over: see it with red7 show {game} --as bob" in line


@BOTH_TRANSPORTS
def test_show_as_own_seat_shows_own_hand_only(alice: Red7, bob: Red7) -> None:
    game, view = create_to_move(alice, "-p", "alice", "-p", "bob", "-b", "greedy", prefix="own")
    bob.ok("join", game, "bob")
    bob_view = seat_view(bob, game, "bob")
    assert view["seat"] == 0 and bob_view["seat"] == 1
    assert len(view["hand"]) == view["seats"][0]["hand_size"]
    assert not set(view["hand"]) & set(bob_view["hand"])
    assert all("hand" not in s for s in view["seats"]), "no other seat's hand in alice's view"
    text = alice.ok("show", game, "--as", "alice").stdout
    hand_line = next(line for line in text.splitlines() if line.startswith("Your hand: "))
    assert hand_line.split(": ", 1)[1].split() == view["hand"]
    assert not any(card in hand_line for card in bob_view["hand"])
    assert "alice (you)" in text and "Your turn." in text


@BOTH_TRANSPORTS
def test_show_as_a_seat_you_do_not_hold(alice: Red7, bob: Red7) -> None:
    game = create(alice, "-p", "alice", "-p", "bob", "-b", "greedy")["game"]
    bob.ok("join", game, "bob")
    line = one_line_error(alice("show", game, "--as", "bob"))
    assert line == f"Error: you hold no token for seat 'bob' in game {game} (give its token with --token)"
    line = one_line_error(bob("show", game, "--as", "alice"))
    assert line == f"Error: you hold no token for seat 'alice' in game {game} (give its token with --token)"
    line = one_line_error(bob("show", game, "--as", "greedy"))
    assert line == (
        f"Error: seat 'greedy' in game {game} is a bot: it has no token, and nobody sees its hand until the game "
        f"is over (then: red7 replay {game} --as greedy)"
    )
    line = one_line_error(bob("show", game, "--as", "zed"))
    assert line == f"Error: no seat 'zed' in game {game} (seats: alice, bob, greedy)"
    assert "no game 'x'" in one_line_error(bob("show", "x", "--as", "bob"))
    open_game = create(alice, "-p", "alice", "-p", "bob")["game"]
    line = one_line_error(alice("show", open_game, "--as", "bob"))
    assert line.endswith(f"(join it: red7 join {open_game} bob)")
    # --token alone is a usage error; --as with someone else's token is refused by the service.
    assert "--token needs --as" in fails(alice("show", game, "--token", "ab" * 32), 2)


@BOTH_TRANSPORTS
def test_show_unknown_game(alice: Red7) -> None:
    assert "no game 'x' (list games with: red7 games)" in one_line_error(alice("show", "x"))
    assert "no game 'x'" in one_line_error(alice("show", "x", "--json"))


# ---------------------------------------------------------------------------- moves


@BOTH_TRANSPORTS
def test_moves_lists_legal_turns(alice: Red7) -> None:
    game, view = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="moves")
    data = alice.json("moves", game)
    assert data == {"game": game, "seat": "alice", "to_move": 0, "legal": view["legal"]}
    assert data["legal"] and "fold" in data["legal"]
    lines = alice.ok("moves", game).stdout.splitlines()
    assert lines == [f"{i:3}. {turn}" for i, turn in enumerate(view["legal"], 1)]


@BOTH_TRANSPORTS
def test_moves_when_it_is_not_your_turn(alice: Red7, bob: Red7) -> None:
    game, _ = create_to_move(alice, "-p", "alice", "-p", "bob", prefix="notyours")
    bob.ok("join", game, "bob")
    assert bob.json("moves", game) == {"game": game, "seat": "bob", "to_move": 0, "legal": []}
    assert bob.ok("moves", game).stdout.strip() == "It is not your turn (alice to move)."


@BOTH_TRANSPORTS
def test_moves_without_a_seat(alice: Red7, bob: Red7) -> None:
    game = create(alice, "-p", "alice", "-p", "bob")["game"]
    line = one_line_error(bob("moves", game))
    assert f"you hold no seat in game {game} (join one: red7 join {game} NAME)" in line
    assert "no game 'x'" in one_line_error(bob("moves", "x"))


@BOTH_TRANSPORTS
def test_moves_picks_the_seat_to_move_when_you_hold_several(alice: Red7) -> None:
    game = create(alice, "-p", "alice", "-p", "bob", "--join-all", "--seed", "hot")["game"]
    mover = alice.json("show", game)["seats"][alice.json("show", game)["to_move"]]["name"]
    assert alice.json("moves", game)["seat"] == mover
    assert alice.json("moves", game, "--as", "alice")["seat"] == "alice"


# ---------------------------------------------------------------------------- move


def test_a_move_whose_answer_is_lost_says_how_to_ask_again(alice: Red7, monkeypatch: pytest.MonkeyPatch) -> None:
    """Redis gone after the turn was stored: the error gives the command again with its id, which is safe to send."""
    from red7es.service.client import GameService

    game, view = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="lost-answer")
    turn = view["legal"][0]
    submit = GameService._submit_signed  # what play() stores a turn with (its answer waited for after)

    def stored_then_lost(service: GameService, *args: Any, **kwargs: Any) -> Any:
        submit(service, *args, **kwargs)
        raise redis.exceptions.ConnectionError("Connection reset by peer")

    with monkeypatch.context() as outage:
        outage.setattr(GameService, "_submit_signed", stored_then_lost)
        line = one_line_error(alice("move", game, turn))
    lost = f"lost the connection to Redis at {alice.url}: Connection reset by peer; the turn may or may not be stored"
    assert lost in line
    again = shlex.split(line.partition("which takes effect once: ")[2])
    assert again[:3] == ["red7", "move", game] and again[4:6] == ["--as", "alice"] and again[6] == "--id"
    out = alice.ok(*again[1:]).stdout  # the stored turn's answer, not a second turn
    assert "alice plays" in out or "alice discards" in out or "alice folds" in out
    assert alice("move", game, turn, "--id", again[7]).exit_code == 0, "the same id again has no further effect"
    with redis.Redis.from_url(alice.url) as connection:
        answers = [r.event for r in GameService(connection).log(game) if getattr(r.event, "id", None) == again[7]]
    assert [type(e).__name__ for e in answers] == ["CommandApplied"]


@BOTH_TRANSPORTS
def test_move_with_a_turn_argument(alice: Red7) -> None:
    game, view = create_to_move(alice, "-p", "alice", "-p", "bob", "--join-all", prefix="arg")
    turn = next(t for t in view["legal"] if t.startswith("p:") and " c:" in t)
    played, discarded = turn.split()[0][2:], turn.split()[1][2:]
    out = alice.ok("move", game, turn, "--as", "alice").stdout
    assert f"alice plays {played} to their palette." in out
    assert f"alice discards {discarded}: the rule is now" in out
    after = seat_view(alice, game, "alice")
    assert played in after["seats"][0]["palette"]
    assert played not in after["hand"] and discarded not in after["hand"]
    assert after["canvas"][-1] == discarded
    assert after["to_move"] == 1


@BOTH_TRANSPORTS
def test_move_with_play_and_canvas_options(alice: Red7) -> None:
    game, view = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="opts")
    turn = next(t for t in view["legal"] if t.startswith("p:") and " c:" in t)
    played, discarded = turn.split()[0][2:], turn.split()[1][2:]
    data = alice.json("move", game, "--play", played.lower(), "--canvas", discarded)
    assert data["applied"] is True and data["reason"] is None
    assert data["events"][0] == {
        "type": "CommandApplied",
        "id": data["command"],
        "seat": 0,
        "by": "person",
        "turn": turn,
    }
    steps = [e["step"] for e in data["events"] if e["type"] == "StepApplied"]
    assert steps == [f"p:{played}", f"c:{discarded}", "end"]


@BOTH_TRANSPORTS
def test_move_play_only(alice: Red7) -> None:
    game, _view, turn = find_game(alice, ("-p", "alice", "-b", "greedy"), lambda t: re.fullmatch(r"p:\w\d", t))
    out = alice.ok("move", game, "-P", turn[2:]).stdout
    assert f"alice plays {turn[2:]} to their palette." in out


@BOTH_TRANSPORTS
def test_move_fold(alice: Red7) -> None:
    game, _ = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="fold")
    out = alice.ok("move", game, "--fold").stdout
    assert "alice folds." in out
    assert "alice is out of the round (folded)." in out
    assert "Game over: greedy wins." in out
    view = alice.json("show", game)
    assert view["status"] == "over" and view["outcome"]["winners"] == [1]
    assert view["seed"], "the seed is revealed at the end"


@BOTH_TRANSPORTS
def test_move_draw_option(alice: Red7) -> None:
    game, view, turn = find_game(
        alice, ("-p", "alice", "-b", "greedy", "--draw"), lambda t: re.fullmatch(r"p:\w\d c:\w\d draw", t)
    )
    played, discarded = turn.split()[0][2:], turn.split()[1][2:]
    data = alice.json("move", game, "--play", played, "--canvas", discarded, "--draw")
    assert data["applied"], data
    drawn = [e for e in data["events"] if e["type"] == "CardDrawn"]
    assert len(drawn) == 1 and drawn[0]["seat"] == 0
    after = seat_view(alice, game, "alice")
    assert len(after["hand"]) == len(view["hand"]) - 1  # played, discarded, drew one


@BOTH_TRANSPORTS
def test_move_open_keeps_the_turn(alice: Red7) -> None:
    game, _view, turn = find_game(
        alice, ("-p", "alice", "-b", "greedy", "--actions"), lambda t: re.fullmatch(r"p:\w3 \.\.\.", t)
    )
    data = alice.json("move", game, "--play", turn[2:4], "--open")
    assert data["applied"], data
    assert any(e["type"] == "CardDrawn" for e in data["events"])
    after = seat_view(alice, game, "alice")
    assert after["to_move"] == 0, "an open turn stays with alice"
    assert after["turn_steps"][0] == turn.split()[0]
    assert after["legal"], "alice can finish the turn"
    # In text, alice sees the hand with the card the 3 drew, and that her turn goes on.
    again, _view, _turn = find_game(alice, ("-p", "alice", "-b", "greedy", "--actions"), lambda t: t == turn)
    out = alice.ok("move", again, "-P", turn[2:4], "--open").stdout.splitlines()
    hand = seat_view(alice, again, "alice")["hand"]
    assert f"Your hand: {' '.join(hand)}" in out
    assert out[-1] == f"Your turn continues after {turn.split()[0]}: see red7 moves {again}"

    rest = alice.json("move", game, after["legal"][0])
    assert rest["applied"], rest
    assert {"type": "StepApplied", "seat": 0, "step": "end"} in rest["events"] or any(
        e["type"] == "PlayerOut" for e in rest["events"]
    ), "finishing the open turn ends it"


@BOTH_TRANSPORTS
def test_move_illegal_turn_gives_the_engines_reason(alice: Red7) -> None:
    game, view = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="illegal")
    missing = next(c for c in ALL_CARDS if c not in view["hand"])
    line = one_line_error(alice("move", game, f"p:{missing}"))
    assert line == f"Error: rejected: {missing} is not in your hand"
    data = json.loads(alice("move", game, f"p:{missing}", "--json").stdout)
    assert data["applied"] is False and data["reason"] == f"{missing} is not in your hand"
    assert alice("move", game, f"p:{missing}", "--json").exit_code == 1
    assert seat_view(alice, game, "alice")["hand"] == view["hand"], "nothing changed"


@BOTH_TRANSPORTS
def test_move_not_your_turn(alice: Red7, bob: Red7) -> None:
    game, _ = create_to_move(alice, "-p", "alice", "-p", "bob", prefix="turn")
    bob.ok("join", game, "bob")
    legal = seat_view(bob, game, "bob")
    card = legal["hand"][0]
    line = one_line_error(bob("move", game, f"p:{card}"))
    assert line == "Error: rejected: it is not bob's turn (it is alice's)"


@BOTH_TRANSPORTS
def test_move_with_a_wrong_token(alice: Red7, bob: Red7) -> None:
    game, view = create_to_move(alice, "-p", "alice", "-p", "bob", prefix="token")
    bob.ok("join", game, "bob")
    bob_token = bob.credentials()["games"][game]["bob"]
    turn = view["legal"][0]
    version = alice.json("show", game)["version"]
    line = one_line_error(bob("move", game, turn, "--as", "alice", "--token", bob_token))
    assert line == f"Error: that token is not alice's in game {game}"  # checked before anything is signed
    assert "a seat token is 64 hex digits" in one_line_error(bob("move", game, turn, "--as", "alice", "--token", "x"))
    assert alice.json("show", game)["version"] == version  # nothing was submitted
    # show, moves and watch check a given token the same way
    for command in (["show", game], ["moves", game], ["watch", game, "--timeout", "1"]):
        assert one_line_error(bob(*command, "--as", "alice", "--token", bob_token)).startswith("Error: that token")
        assert "64 hex digits" in one_line_error(bob(*command, "--as", "alice", "--token", "nothex"))
    assert "--token needs --as NAME" in fails(bob("move", game, turn, "--token", bob_token), 2)
    # The right token works from anywhere, without a credentials file.
    alice_token = alice.credentials()["games"][game]["alice"]
    assert bob("move", game, turn, "--as", "alice", "--token", alice_token).exit_code == 0


@pytest.mark.parametrize(
    ("turn", "message"),
    [
        ("p:R9", "not a card"),
        ("p:X1", "not a card"),
        ("p:", "needs a card"),
        ("c:B3:B4", "not a card"),
        ("x:I2", "not a step"),
        ("p:R1 jump", "not a step"),
    ],
)
@BOTH_TRANSPORTS
def test_move_malformed_turn(alice: Red7, turn: str, message: str) -> None:
    game, view = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="bad")
    result = alice("move", game, turn)
    err = fails(result, 2)  # notation that is no turn: a usage error, caught before anything is sent
    assert message in err.splitlines()[-1]
    assert seat_view(alice, game, "alice")["hand"] == view["hand"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give a turn"),
        (("p:R1", "--play", "R1"), "either as TURN or with --play"),
        (("--fold", "--play", "R1"), "--fold stands alone"),
        (("--fold", "--open"), "--fold stands alone"),
    ],
)
@BOTH_TRANSPORTS
def test_move_usage_errors(alice: Red7, args: tuple[str, ...], message: str) -> None:
    game = create(alice, "-p", "alice", "-b", "greedy")["game"]
    err = fails(alice("move", game, *args), 2)
    assert message in err and "Usage: red7 move" in err


@BOTH_TRANSPORTS
def test_move_unknown_game_and_seat(alice: Red7) -> None:
    assert "no game 'x'" in one_line_error(alice("move", "x", "p:R1", "--as", "a", "--token", "ab" * 32))
    game = create(alice, "-p", "alice", "-b", "greedy")["game"]
    assert "no seat 'zed'" in one_line_error(alice("move", game, "p:R1", "--as", "zed"))
    assert "no game 'x'" in one_line_error(alice("move", "x", "p:R1"))
    assert "no game 'x'" in one_line_error(alice("moves", "x", "--as", "alice"))


@BOTH_TRANSPORTS
def test_move_id_resubmission_has_its_effect_once(alice: Red7) -> None:
    game, view = create_to_move(alice, "-p", "alice", "-p", "bob", "--join-all", prefix="idem")
    turn = view["legal"][0]
    command = "cmd-1-resubmitted"  # (16 characters at least: a gateway's rule for ids)
    first = alice.json("move", game, turn, "--as", "alice", "--id", command)
    version = alice.json("show", game)["version"]
    again = alice.json("move", game, turn, "--as", "alice", "--id", command)
    assert first == again
    assert first["command"] == command and first["applied"]
    assert alice.json("show", game)["version"] == version, "the duplicate changed nothing"
    text = alice.ok("move", game, turn, "--as", "alice", "--id", command).stdout
    assert text.startswith("alice ")
    assert alice.json("show", game)["version"] == version


@pytest.mark.parametrize(
    ("text", "entries"),
    [
        ("greedy,greedy", ("greedy", "greedy")),
        ("greedy,ismcts:time=0.05,belief=0.5", ("greedy", "ismcts:time=0.05,belief=0.5")),
        ("ismcts:iterations=5,bob=greedy,random", ("ismcts:iterations=5", "bob=greedy", "random")),
        ("x=ismcts:c=1,belief=0, random ,", ("x=ismcts:c=1,belief=0", "random")),
    ],
)
def test_split_bots_keeps_a_spec_s_options_together(text: str, entries: tuple[str, ...]) -> None:
    assert split_bots(text) == entries


def test_bot_entry_names_a_seat_only_before_the_spec() -> None:
    assert bot_entry("greedy") == ("greedy", "greedy")
    assert bot_entry("g2=greedy") == ("g2", "greedy")
    assert bot_entry("ismcts:iterations=200") == ("ismcts", "ismcts:iterations=200")
    assert bot_entry("deep=ismcts:iterations=200") == ("deep", "ismcts:iterations=200")


def test_unnamed_bots_are_numbered_past_the_names_given() -> None:
    seats = seat_specs(("alice",), ("greedy", "greedy=random", "greedy", "alice2=greedy"))
    assert [(s.name, s.bot) for s in seats] == [
        ("alice", None),
        ("greedy2", "greedy"),
        ("greedy", "random"),
        ("greedy3", "greedy"),
        ("alice2", "greedy"),
    ]


@pytest.mark.parametrize(
    "args",
    [
        ("new", "-b", "x=random", "-b", "x=greedy"),
        ("new", "-p", "x", "-b", "x=greedy"),
        ("new", "-p", "x", "-p", "x"),
        ("tournament", "create", "cup", "-p", "x", "-p", "x", "-b", "greedy"),
        ("new", "-p", "a", "-b", "x=random", "-b", "greedy", "-b", "x=ismcts:iterations=5"),
        ("play", "--name", "x", "--bots", "x=greedy"),
        ("play", "--bots", "x=random,x=greedy"),
        ("tournament", "create", "cup", "-b", "x=random", "-b", "x=greedy"),
    ],
)
def test_a_name_given_twice_is_refused_not_renamed(args: tuple[str, ...], tmp_path: Any) -> None:
    """``-b x=random -b x=greedy`` made seats x and x2: a name the user chose must not change under them."""
    env = offline_env(tmp_path)  # refused before Redis
    result = CliRunner().invoke(cli, list(args), env=env, prog_name="red7")
    err = fails(result, 2)
    assert err.strip().splitlines()[-1] == "Error: the name 'x' is given twice: each seat needs its own"
    assert not (tmp_path / "credentials.json").exists()


def test_a_bot_named_like_the_default_seat_name_says_where_that_name_came_from(tmp_path: Any) -> None:
    env = offline_env(tmp_path, LOGNAME="zed")
    result = CliRunner().invoke(cli, ["play", "--bots", "zed=random"], env=env, prog_name="red7")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: a bot is named 'zed', the name your seat takes by default (your login name): give yours with --name"
    )


UNSHOWABLE_NAMES = ["\x1b[31mred\x1b[0m", "evil\u202eoops", "zero\u200bwidth", "a\u2028b", "bell\x07"]


@pytest.mark.parametrize("name", UNSHOWABLE_NAMES, ids=["esc", "bidi", "zwsp", "line-sep", "bel"])
@pytest.mark.parametrize(
    "args",
    [
        ("new", "-p", "{}", "-b", "random"),
        ("new", "-p", "ann", "-b", "{}=random"),
        ("play", "--name", "{}"),
        ("play", "--name", "ann", "--bots", "{}=random"),
        ("tournament", "create", "cup", "-p", "{}", "-b", "random"),
        ("tournament", "create", "cup", "-b", "{}=greedy", "-b", "random"),
    ],
    ids=["new-p", "new-b", "play-name", "play-bots", "tournament-p", "tournament-b"],
)
def test_a_seat_name_with_control_or_format_characters_is_a_usage_error(
    args: tuple[str, ...], name: str, tmp_path: Any
) -> None:
    """A name reaches every player's terminal: ESC could recolour or retitle it, U+202E reorder it."""
    env = offline_env(tmp_path)  # refused before Redis
    result = CliRunner().invoke(cli, [a.format(name) for a in args], env=env, prog_name="red7")
    line = fails(result, 2).strip().splitlines()[-1]
    assert line.startswith(f"Error: seat name {name!r} must "), line
    assert not any(ch in line for ch in "\x1b\u202e\u200b\u2028\x07"), "the error line shows the name escaped"


def test_names_are_checked_by_one_rule() -> None:
    from red7es.service.names import name_problem, shown

    assert name_problem("alice") is None and name_problem("o'neil$(x)") is None and name_problem("é✓") is None
    assert name_problem("a b") == name_problem("a\tb") == name_problem("") == "must be 1-40 characters without spaces"
    assert name_problem("x" * 41) == "must be 1-40 characters without spaces"
    assert all(name_problem(n) is not None for n in UNSHOWABLE_NAMES)
    assert shown("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"
    assert shown("evil\u202eoops\U000e0001") == "evil\\u202eoops\\U000e0001"
    assert shown("alice é ✓") == "alice é ✓"
    assert name_problem("👩\u200d💻") is None and name_problem("می\u200cخواهم") is None  # joiners only shape


def test_names_another_client_chose_are_shown_escaped(slow_service: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Games created before names were checked (or by a client of that time) may hold such
    names: every display escapes them, and rich markup in a name is text, not a style
    (``[/x]`` was a traceback)."""
    from red7es.service import table
    from red7es.service.client import GameService
    from red7es.service.events import BOT, PERSON, SeatSpec
    from red7es.service.names import shape_problem
    from red7es.variant import Variant

    user, worker = slow_service
    alice = user("alice")
    odd, bidi, markup = "\x1b]0;pwned\x07\x1b[2J", "evil\u202eoops", "[/x][bold]b"
    with monkeypatch.context() as before_the_rule, redis.Redis.from_url(alice.url) as connection:
        before_the_rule.setattr(table, "name_problem", shape_problem)  # the referee of red7es before the rule
        service = GameService(connection)
        seats = [SeatSpec(odd, BOT, "random"), SeatSpec(bidi, BOT, "random"), SeatSpec(markup, BOT, "random")]
        bots = service.create(Variant(3), seats, wait=None).game_id
        people = new_id()
        # a fixed seed: with a random one the bot, if it leads, folds now and then, and the
        # game is over before the person's seat can be joined
        people_seats = [SeatSpec(odd, PERSON), SeatSpec(bidi, BOT, "random")]
        service.create(Variant(2), people_seats, seed="escaped", game_id=people, wait=None)
        worker.advance(people)
        assert service.view(people)["status"] == "playing"
        worker.advance(bots)
        while worker.folder.pending(bots):  # the bots play to the end
            worker.advance(bots)
    stepped = alice("replay", bots, "--step", input="\n" * 400)
    assert stepped.exit_code == 0, stepped.output  # walked to the end, not stopped early
    outputs = [
        alice.ok("games").stdout,
        alice.ok("show", bots).stdout,
        alice.ok("watch", bots).stdout,
        alice.ok("replay", bots).stdout,
        stepped.stdout,
        alice.ok("show", people).stdout,
    ]
    with _folding(worker, people):
        joined = alice.ok("join", people, odd).stdout
    outputs += [joined, alice.ok("show", people, "--as", odd).stdout]
    refused = one_line_error(alice("show", people, "--as", "zed"))
    for out in [*outputs, refused]:
        assert not any(ch in out for ch in "\x1b\x07\u202e"), out
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in outputs[0]
    assert all("evil\\u202eoops" in out for out in outputs[:6]), "every display shows the name, escaped"
    assert "[/x][bold]b" in outputs[1]
    assert refused == f"Error: no seat 'zed' in game {people} (seats: \\x1b]0;pwned\\x07\\x1b[2J, evil\\u202eoops)"
    play = next(line for line in joined.splitlines() if line.startswith("Play it: ")).partition(": ")[2]
    pasted = subprocess.run(["bash", "-c", f'printf "%s\\n" {play}'], capture_output=True, text=True).stdout
    assert pasted.splitlines() == ["red7", "play", "--game", people, "--as", odd], "quoted $'...': pastes back"


@BOTH_TRANSPORTS
def test_move_with_two_canvas_options_is_refused_by_the_rules(alice: Red7) -> None:
    game, view = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="canvas2")
    first, second = view["hand"][:2]
    line = one_line_error(alice("move", game, "--canvas", first, "--canvas", second))
    assert line.startswith("Error: rejected: ")
    after = seat_view(alice, game, "alice")
    assert (after["hand"], after["to_move"]) == (view["hand"], view["seat"]), "nothing was played"


def test_build_turn_from_options() -> None:
    assert build_turn("p:R7 c:B3", (), (), False, False, False) == "p:R7 c:B3"
    assert build_turn(None, ("R7",), ("B3",), True, False, False) == "p:R7 c:B3 draw"
    assert build_turn(None, ("B5", "R3"), (), False, False, True) == "p:B5 p:R3 ..."
    assert build_turn("p:G3 ...", (), (), False, False, True) == "p:G3 ..."
    assert build_turn(None, (), (), False, True, False) == "fold"


# ---------------------------------------------------------------------------- watch


def _watched(user: Red7, redis_server: Any, game: str, play: Callable[[], object], *args: str, code: int = 0) -> str:
    """Run ``red7 watch GAME`` in its own process while ``play`` plays; returns what it printed
    (on stderr if it is to exit with a ``code`` other than 0)."""
    connection = redis.Redis.from_url(redis_server.url)
    blocked_before = _blocked_readers(connection)
    watcher = subprocess.Popen(
        [str(RED7), "watch", game, *args, "--timeout", "30"],
        env={**user.env, "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: _blocked_readers(connection) > blocked_before, "watch to block on the game's changes")
        play()
        out, err = watcher.communicate(timeout=30)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()
        connection.close()
    assert watcher.returncode == code, err
    return out if code == 0 else err


def test_watch_json_follows_a_game_to_its_end(alice: Red7, redis_server: Any) -> None:
    game, _ = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="watch")

    def play() -> None:
        for _ in range(60):
            view = wait_turn(alice, game, "alice")
            if view["status"] == "over":
                break
            alice.ok("move", game, view["legal"][0])

    first, *events = [json.loads(line) for line in _watched(alice, redis_server, game, play, "--json").splitlines()]
    # The first line is where the events start from: the public view (the state as watch began).
    assert first["type"] == "View" and first["game"] == game and first["status"] == "playing", first
    assert first["seats"][0]["name"] == "alice" and "hand" not in first and "legal" not in first
    types = [e["type"] for e in events]
    assert types[-2:] == ["GameOver", "SeedRevealed"], types[-3:]  # watch follows the game to its very end
    assert "CommandApplied" in types and "StepApplied" in types
    assert all("hand" not in e for e in events), "watch prints public events only"


def test_watch_says_the_end_once(alice: Red7, redis_server: Any) -> None:
    game, _ = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="watchend")
    out = _watched(alice, redis_server, game, lambda: alice.ok("move", game, "--fold"))
    assert "alice folds" in out
    assert out.count("Game over:") == 1 and out.count("Seed revealed:") == 1, out


def test_watch_is_woken_when_the_game_breaks_and_says_why(alice: Red7, redis_server: Any) -> None:
    """A worker that cannot read a game's log marks it broken with one change entry: watch ends on it."""
    game, _ = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="watchbroken")
    connection = redis.Redis.from_url(redis_server.url)

    def rogue_writer() -> None:  # an event no worker wrote, then something for a worker to fold
        keys = Keys(game)
        connection.xadd(keys.log, {"e": b"\xc1 not an event"})
        connection.hincrby(keys.meta, "version", 1)
        service = GameService(connection)
        service.store.submit(game, "poke", b"junk")
        service.schedule(game)
        wait_for(lambda: connection.hexists(keys.meta, "broken"), "a worker to find the log broken")

    with connection:
        err = _watched(alice, redis_server, game, rogue_writer, code=1)
        assert re.fullmatch(rf"Error: game {game} is broken: event \d+ is not valid msgpack \(\w+\)\n", err), err
        [(_id, fields)] = connection.xrevrange(Keys(game).changes, count=1)
        assert msgpack.unpackb(fields[b"p"])["broken"] in err, "the entry that woke it says why"


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"v": 9, "p": b"\xc1"}, r"not valid msgpack \(\w+\)"),
        ({"v": 9, "p": msgpack.packb([1, 2])}, "a list, not a map"),
        ({"v": 9, "p": msgpack.packb({"events": 3})}, "its events are not a list of maps"),
        ({"x": b"no fields a worker writes"}, r"not valid msgpack \(\w+\)"),
    ],
    ids=["not-msgpack", "not-a-map", "events-not-a-list", "no-fields"],
)
def test_watch_refuses_a_changes_entry_no_worker_wrote(
    alice: Red7, redis_server: Any, fields: dict[str, Any], problem: str
) -> None:
    """A hand-written changes entry was a ValueError or KeyError traceback: now one line, exit 1,
    and the game itself (log, views) is untouched and plays on."""
    game, _ = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="watchjunk")
    connection = redis.Redis.from_url(redis_server.url)
    entry: list[bytes] = []

    def write() -> None:
        entry.append(connection.xadd(Keys(game).changes, fields))

    with connection:
        err = _watched(alice, redis_server, game, write, code=1)
    change = entry[0].decode()
    expected = rf"Error: game {game}: change {change} on its changes stream cannot be read: {problem}\n"
    assert re.fullmatch(expected, err), err
    alice.ok("move", game, "--fold")
    assert "Game over: greedy wins" in alice.ok("show", game).stdout


def _blocked_readers(connection: redis.Redis) -> int:
    return sum(1 for c in connection.client_list() if c.get("cmd") == "xread" and "b" in c.get("flags", ""))


@BOTH_TRANSPORTS
def test_watch_timeout_when_nothing_happens(alice: Red7) -> None:
    game, _ = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="idle")
    result = alice("watch", game, "--json", "--timeout", "0.3")
    assert result.exit_code == 0
    [line] = result.stdout.splitlines()  # the view it started from, and no event
    assert json.loads(line)["type"] == "View"
    assert result.stderr.strip() == "No change for 0.3s; stopping."
    text = alice("watch", game, "--as", "alice", "--timeout", "0.3")
    assert text.exit_code == 0 and "Your hand:" in text.stdout


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "-1", "1e400", "1e300"])
def test_watch_timeout_must_be_a_finite_number_of_seconds(value: str, tmp_path: Any) -> None:
    """``nan`` was a traceback, ``inf`` an OverflowError, ``-1`` "No change for -1s": usage errors now."""
    env = offline_env(tmp_path)  # refused before Redis
    result = CliRunner().invoke(cli, ["watch", "g1", "--timeout", value], env=env, prog_name="red7")
    assert "Error: Invalid value for '--timeout'" in fails(result, 2)


@BOTH_TRANSPORTS
def test_watch_a_finished_game_returns_at_once(alice: Red7) -> None:
    game, _ = create_to_move(alice, "-p", "alice", "-b", "greedy", prefix="done")
    alice.ok("move", game, "--fold")
    quiet = alice("watch", game, "--json")
    [line] = quiet.stdout.splitlines()  # the state it starts from; no event will come
    assert quiet.exit_code == 0 and json.loads(line)["type"] == "View" and json.loads(line)["status"] == "over"
    assert quiet.stderr == f"Game {game} is over: nothing to follow (red7 export {game} has its events).\n"
    out = alice.ok("watch", game).stdout
    assert "Game over: greedy wins" in out
    assert alice.ok("moves", game).stdout == f"The game is over: see red7 show {game}\n"


@BOTH_TRANSPORTS
def test_watch_unknown_game(alice: Red7) -> None:
    assert "no game 'x'" in one_line_error(alice("watch", "x", "--timeout", "1"))


# ---------------------------------------------------------------------------- completion


@pytest.mark.parametrize(
    ("shell", "marker"), [("bash", "_red7_completion"), ("zsh", "#compdef red7"), ("fish", "complete")]
)
def test_completion(shell: str, marker: str) -> None:
    result = CliRunner().invoke(cli, ["completion", shell], prog_name="red7")
    assert result.exit_code == 0
    assert marker in result.stdout
    assert "_RED7_COMPLETE" in result.stdout


def test_completion_bash_is_valid_shell() -> None:
    script = CliRunner().invoke(cli, ["completion", "bash"], prog_name="red7").stdout
    checked = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    assert checked.returncode == 0, checked.stderr


def test_completion_unknown_shell() -> None:
    assert "'pwsh' is not one of" in fails(CliRunner().invoke(cli, ["completion", "pwsh"], prog_name="red7"), 2)


# ---------------------------------------------------------------------------- Redis unreachable


@pytest.mark.parametrize(
    "args",
    [
        ("games",),
        ("show", "g1"),
        ("new", "-p", "a", "-b", "greedy"),
        ("join", "g1", "bob"),
        ("moves", "g1", "--as", "a", "--token", "ab" * 32),
        ("move", "g1", "p:R1", "--as", "a", "--token", "ab" * 32),
        ("watch", "g1"),
        ("play", "--bots", "greedy"),
    ],
)
def test_redis_unreachable(args: tuple[str, ...], tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RED7_HOME", str(tmp_path))
    url = f"redis://127.0.0.1:{free_port()}/0"
    result = CliRunner().invoke(cli, [*args, "--url", url], env={"RED7_HOME": str(tmp_path)}, prog_name="red7")
    line = one_line_error(result)
    assert f"cannot reach Redis at {url}" in line
    assert not (tmp_path / "redis").exists(), "the embedded Redis was not started"


def test_redis_unreachable_from_the_environment(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    monkeypatch.setenv("RED7_HOME", str(tmp_path))
    monkeypatch.setenv("REDIS_URL", url)
    result = subprocess.run([str(RED7), "games"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: cannot reach Redis at {url}: "), result.stderr


def test_a_server_that_is_not_redis(tmp_path: Any) -> None:
    """Something else listens on the port (here an HTTP server's reply): one line, no traceback."""
    import socket

    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def answer() -> None:
        with server:
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:
                    return
                with conn:
                    conn.recv(1024)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

    threading.Thread(target=answer, daemon=True).start()
    try:
        for args in (("games",), ("status",)):
            url = f"redis://127.0.0.1:{port}/0"
            result = CliRunner().invoke(cli, [*args, "--url", url], env={"RED7_HOME": str(tmp_path)})
            assert f"Error: cannot reach Redis at {url}: Protocol Error" in one_line_error(result)
    finally:
        server.close()


def test_bad_url(tmp_path: Any) -> None:
    result = CliRunner().invoke(cli, ["games", "--url", "nonsense://x"], env={"RED7_HOME": str(tmp_path)})
    assert "cannot reach Redis at nonsense://x" in one_line_error(result)


def test_python_dash_m_runs_the_cli() -> None:
    result = subprocess.run([sys.executable, "-m", "red7es.cli", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and "red7" in result.stdout


# ---------------------------------------------------------------------------- service commands


def test_status(alice: Red7) -> None:
    data = alice.json("status")
    assert data["url"] == alice.url and data["embedded"] is False
    assert len(data["workers"]) >= 2 and data["problems"] == []
    line = one_line_error(alice("status", "--min-workers", "99"))
    assert "fewer than 99" in line
    assert "is not alive" in one_line_error(alice("status", "--worker", "nobody"))


def test_status_shows_worker_names_escaped(alice: Red7, private_redis: Any) -> None:
    """A worker's name is whatever --name (or a key in Redis) says: shown, never acted on."""
    server = private_redis()
    with redis.Redis.from_url(server.url) as connection:
        connection.set("red7:worker:w\x1b[2J", "x", px=60_000)
    result = alice("status", "--url", server.url, "--worker", "x\x1b[31m")
    assert "\x1b" not in result.output
    assert "(w\\x1b[2J)" in result.output and "worker x\\x1b[31m is not alive" in result.output


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cret@h:1/0", "redis://:***@h:1/0"),
        ("redis://user:s3cret@h:1/0", "redis://user:***@h:1/0"),
        ("rediss+cluster://u:s3cret@a:1,b:2/0", "rediss+cluster://u:***@a:1,b:2/0"),
        ("redis://h:1/0?password=s3cret&db=2", "redis://h:1/0?password=***&db=2"),
        ("redis://user@h:1/0", "redis://user@h:1/0"),
        ("REDIS://:s3cret@h:1/0", "REDIS://:***@h:1/0"),
        ("unix:///tmp/r.sock", "unix:///tmp/r.sock"),
    ],
)
def test_passwords_in_urls_are_masked(url: str, shown: str) -> None:
    assert masked_url(url) == shown


def test_status_and_errors_never_print_the_password(alice: Red7, private_redis: Any) -> None:
    server = private_redis()
    with redis.Redis.from_url(server.url) as connection:
        connection.config_set("requirepass", "s3cret")
    url = server.url.replace("redis://", "redis://:s3cret@")
    try:
        data = alice.json("status", "--url", url)
        assert data["url"] == server.url.replace("redis://", "redis://:***@")
        assert "s3cret" not in alice.ok("status", "--url", url).stdout
    finally:
        with redis.Redis.from_url(url) as connection:
            connection.config_set("requirepass", "")  # so the fixture can shut it down
    down = f"redis://user:s3cret@127.0.0.1:{free_port()}/0"
    warning, line = fails(alice("status", "--url", down)).splitlines()  # a typed password is warned about
    assert warning.startswith("Warning: the Redis URL in --url is seen by every local user in ps")
    assert line.startswith("Error: ") and "redis://user:***@127.0.0.1" in line and "s3cret" not in line


def test_serve_runs_workers_until_stopped(alice: Red7) -> None:
    connection = redis.Redis.from_url(alice.url)
    before = set(live_workers(connection))
    serve = subprocess.Popen(
        [str(RED7), "serve", "--workers", "2"],
        env={**alice.env, "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        started = wait_for(lambda: set(live_workers(connection)) - before, "serve's workers", timeout=30)
        wait_for(lambda: len(set(live_workers(connection)) - before) == 2, "both of serve's workers", timeout=30)
        serve.send_signal(signal.SIGTERM)
        out, err = serve.communicate(timeout=30)
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.communicate()
    assert serve.returncode == 0, err
    assert f"red7es serving {alice.url} with 2 worker(s). Ctrl-C to stop." in out
    assert out.rstrip().endswith("stopped.")
    wait_for(lambda: not (set(live_workers(connection)) & started), "serve's workers to stop", timeout=30)
    assert (alice.home / "worker.log").exists(), "serve's workers log in the data directory"
    connection.close()


def test_worker_and_serve_with_redis_unreachable(tmp_path: Any) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    for args in (["serve"], ["status"]):
        result = CliRunner().invoke(cli, [*args, "--url", url], env={"RED7_HOME": str(tmp_path)}, prog_name="red7")
        assert f"cannot reach Redis at {url}" in one_line_error(result)
    # A worker says so once and waits for its Redis (it connects when Redis comes up:
    # tests/service/test_integration.py); here it is stopped while waiting.
    env = dict(os.environ, RED7_HOME=str(tmp_path))
    env.pop("REDIS_URL", None)
    worker = subprocess.Popen(
        [sys.executable, "-m", "red7es.cli", "worker", "--url", url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert worker.stderr is not None
        first = worker.stderr.readline().strip()
        assert first.startswith(f"cannot reach Redis at {url}: "), first
        assert first.endswith("; waiting for it (Ctrl-C to stop)"), first
        time.sleep(0.5)
        assert worker.poll() is None, "a worker waits for its Redis instead of exiting"
    finally:
        worker.terminate()
        worker.wait(15)
