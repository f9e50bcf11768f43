"""Tournaments over HTTP (docs/gateway.md, Tournaments): list, show, standings and report
say what `red7 tournament ... --json` says; an entrant's stream tells it when its games
start, a player that reaches the game over HTTP only plays them, and a resumed stream
misses nothing and repeats nothing.  Real Redis, a real worker, the tournament runner in
a thread, the gateway on loopback."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from support import Red7, wait_for

from red7es.service.client import GameService, ServiceError
from red7es.service.events import BOT, PERSON, SeatSpec
from red7es.service.redis_server import RedisServer
from red7es.tournament import TournamentRunner, create_tournament
from red7es.variant import Variant

from .conftest import Gateway, Seat
from .test_gateway import error, play_to_the_end

pytestmark = pytest.mark.integration


def new_tournament(connection: redis.Redis, entrants: list[SeatSpec]) -> str:
    tid = f"tc-{uuid.uuid4().hex[:8]}"
    create_tournament(connection, tid, entrants, Variant(2), "round-robin", seed=f"seed of {tid}")
    return tid


class Run:
    """``red7 tournament run`` in a thread (its runner), joined at the end of the test."""

    def __init__(self, url: str, tid: str) -> None:
        self.connection = redis.Redis.from_url(url)
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(tid,), daemon=True)
        self.thread.start()

    def _run(self, tid: str) -> None:
        try:
            TournamentRunner(GameService(self.connection), tid, poll=0.2).run()
        except BaseException as exc:  # seen by the test in finish()
            self.failure = exc

    def finish(self) -> None:
        self.thread.join(120)
        assert not self.thread.is_alive(), "the tournament run did not end"
        assert self.failure is None, self.failure
        self.connection.close()


@pytest.fixture(scope="module")
def finished(redis_server: RedisServer, served: Gateway) -> Iterator[str]:
    """A round robin of two bots (one game), run to its end."""
    with redis.Redis.from_url(redis_server.url) as connection:
        tid = new_tournament(connection, [SeatSpec(f"b{i}", BOT, kind) for i, kind in enumerate(("greedy", "random"))])
    run = Run(redis_server.url, tid)
    run.finish()
    yield tid


def play_as_ann(http: httpx.Client, service: GameService, game: str, seat: int) -> None:
    """Join ann's seat on Redis (entrants cannot join through the gateway yet), then play it
    over HTTP only, to the end; a game a bot ended at once by folding needs no join."""
    try:
        token = service.join(game, "ann")
    except ServiceError:
        assert http.get(f"/api/games/{game}").json()["status"] == "over"
        return
    assert play_to_the_end(Seat(http, game, seat, token))["status"] == "over"


def ndjson(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line) for line in response.iter_lines() if line.strip()]


def test_list_show_and_standings_say_what_the_cli_says(
    http: httpx.Client, finished: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    red7 = Red7(redis_server.url, tmp_path / "home")
    listed = http.get("/api/tournaments", params={"limit": 500})
    assert listed.status_code == 200
    assert listed.json() == red7.json("tournament", "list", "--limit", "500")
    assert any(t["tournament"] == finished and t["status"] == "finished" for t in listed.json())
    shown = http.get(f"/api/tournaments/{finished}").json()
    assert shown == red7.json("tournament", "show", finished)
    assert shown["finished"] and shown["seed"] and shown["paired"][0]["tables"][0]["status"] == "recorded"
    standings = http.get(f"/api/tournaments/{finished}/standings").json()
    assert standings == red7.json("tournament", "standings", finished)
    assert [s["name"] for s in standings["standings"]] != []


def test_the_report_is_the_page_the_cli_writes(
    http: httpx.Client, finished: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    page = http.get(f"/api/tournaments/{finished}/report")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    written = Red7(redis_server.url, tmp_path / "home").ok("tournament", "report", finished, "-o", "-").stdout
    assert page.text == written and "<svg" in page.text
    # a page with no script: nothing can run in it, whatever a name put in it
    assert page.headers["content-security-policy"].startswith("default-src 'none'; style-src 'unsafe-inline'")
    assert page.headers["x-content-type-options"] == "nosniff"


def test_unknown_tournaments_entrants_and_ids_are_json_errors(http: httpx.Client, finished: str) -> None:
    for path in ("", "/standings", "/report", "/stream"):
        assert error(http.get(f"/api/tournaments/nosuch{path}"), 404) == "no tournament 'nosuch'"
        assert "no tournament" in error(http.get(f"/api/tournaments/Not%20An%20Id{path}"), 404)
    assert "no entrant 'zed'" in error(http.get(f"/api/tournaments/{finished}/stream?entrant=zed"), 404)
    assert "not a line id" in error(http.get(f"/api/tournaments/{finished}/stream?after=yesterday"), 400)
    headers = {"Last-Event-ID": "1-0/x"}
    assert "not a line id" in error(http.get(f"/api/tournaments/{finished}/stream", headers=headers), 400)
    error(http.get("/api/tournaments?limit=0"), 400)


def test_the_stream_of_a_finished_tournament_is_its_state_or_its_whole_story(http: httpx.Client, finished: str) -> None:
    (state,) = ndjson(http.get(f"/api/tournaments/{finished}/stream"))
    assert state["type"] == "state" and state["tournament"] == http.get(f"/api/tournaments/{finished}").json()
    story = ndjson(http.get(f"/api/tournaments/{finished}/stream?after=0-0"))
    assert [line["type"] for line in story] == ["round_paired", "game_started", "game_finished", "tournament_over"]
    assert story[1]["id"] == f"{story[0]['id']}/1" and story[1]["game"] == story[0]["tables"][0]["game"]
    assert story[-1]["seed"] == state["tournament"]["seed"] and story[-1]["standings"]
    sse = http.get(f"/api/tournaments/{finished}/stream?after=0-0", headers={"Accept": "text/event-stream"})
    assert sse.headers["content-type"].startswith("text/event-stream")
    assert f"id: {story[1]['id']}\nevent: game_started\ndata: " in sse.text


def test_an_entrant_is_told_of_its_games_and_plays_them_over_http(
    http: httpx.Client, redis_server: RedisServer, service: GameService
) -> None:
    """ann (a person) and two bots, round robin: ann's stream tells her each game of hers
    as it starts, with her seat; a player that reaches the game over HTTP only plays it.
    Then the stream resumed from each line it sent gives exactly the lines after it."""
    entrants = [SeatSpec("ann", PERSON), SeatSpec("g", BOT, "greedy"), SeatSpec("r", BOT, "random")]
    with redis.Redis.from_url(redis_server.url) as connection:
        tid = new_tournament(connection, entrants)
    path = f"/api/tournaments/{tid}/stream?entrant=ann"
    seen: list[dict[str, Any]] = []
    played: list[str] = []
    run: Run | None = None
    with http.stream("GET", path) as stream:
        for raw in stream.iter_lines():
            if not raw.strip():
                continue
            line = json.loads(raw)
            seen.append(line)
            if line["type"] == "state":
                assert line["tournament"]["paired"] == [] and not line["tournament"]["finished"]
                run = Run(redis_server.url, tid)  # started once the stream is open: every event is news
            elif line["type"] == "game_started":
                seats = {s["entrant"]: s["seat"] for s in line["seats"]}
                assert seats["ann"] == line["seat"] and len(seats) == 2
                game = line["game"]
                assert http.get(f"/api/games/{game}").status_code == 200  # it exists when told
                play_as_ann(http, service, game, line["seat"])
                played.append(game)
            elif line["type"] == "game_finished":
                assert line["game"] in played  # only ann's games, each after its start
            elif line["type"] == "tournament_over":
                break
    assert run is not None
    run.finish()
    kinds = [line["type"] for line in seen]
    assert kinds.count("round_paired") == 3 and kinds.count("game_started") == 2 == len(played)
    assert kinds.count("game_finished") == 2 and kinds[-1] == "tournament_over"
    ids = [line["id"] for line in seen]
    assert len(set(ids)) == len(ids)
    for i, line in enumerate(seen):  # resumed after any line: exactly the lines after it (none after the last)
        resumed = ndjson(http.get(path, headers={"Last-Event-ID": line["id"]}))
        assert [(x["type"], x["id"]) for x in resumed] == [(x["type"], x["id"]) for x in seen[i + 1 :]], line
        assert resumed == seen[i + 1 :]


def test_a_stream_resumed_between_a_rounds_tables_misses_none(http: httpx.Client, redis_server: RedisServer) -> None:
    """Four bots at tables of two: two games a round, so a round's game_started lines
    are C/1 and C/2; resumed after C/1, the stream gives C/2 first."""
    with redis.Redis.from_url(redis_server.url) as connection:
        tid = new_tournament(connection, [SeatSpec(f"b{i}", BOT, "random") for i in range(4)])
    run = Run(redis_server.url, tid)
    run.finish()
    story = ndjson(http.get(f"/api/tournaments/{tid}/stream?after=0-0"))
    first_round = story[0]
    assert first_round["type"] == "round_paired" and len(first_round["tables"]) == 2
    assert [x["id"] for x in story[1:3]] == [f"{first_round['id']}/1", f"{first_round['id']}/2"]
    resumed = ndjson(http.get(f"/api/tournaments/{tid}/stream", headers={"Last-Event-ID": story[1]["id"]}))
    assert resumed == story[2:]
    only_b0 = ndjson(http.get(f"/api/tournaments/{tid}/stream?after=0-0&entrant=b0"))
    started = [x for x in only_b0 if x["type"] == "game_started"]
    assert len(started) == 3 and all("b0" in [s["entrant"] for s in x["seats"]] for x in started)
    assert all(x["seats"][x["seat"]]["entrant"] == "b0" for x in started)


def test_a_game_started_line_waits_for_its_game_to_exist(
    http: httpx.Client, redis_server: RedisServer, service: GameService
) -> None:
    """A round is paired before its games are created: the stream says round_paired, then
    waits (keep-alives) until the runner creates the game, and only then game_started."""
    with redis.Redis.from_url(redis_server.url) as connection:
        tid = new_tournament(connection, [SeatSpec("ann", PERSON), SeatSpec("g", BOT, "greedy")])
    runner = TournamentRunner(service, tid, poll=0.2)
    runner._pair_next()  # the run's first step alone: the round is paired, no game created yet
    runner.refresh()
    with http.stream("GET", f"/api/tournaments/{tid}/stream?after=0-0") as stream:
        lines = stream.iter_lines()
        paired = json.loads(next(lines))
        assert paired["type"] == "round_paired"
        game = paired["tables"][0]["game"]
        assert next(lines) == ""  # a keep-alive: nothing to tell while the game does not exist
        assert http.get(f"/api/games/{game}").status_code == 404
        runner._ensure_games()  # the run's next step: it creates the game
        started = json.loads(next(line for line in lines if line.strip()))
        assert started["type"] == "game_started" and started["game"] == game
        assert http.get(f"/api/games/{game}").status_code == 200  # dealt, as it said


def test_an_entrant_connecting_late_is_told_of_its_games_under_way(
    http: httpx.Client, redis_server: RedisServer, service: GameService
) -> None:
    """A round robin pairs every round at once and creates people's games at once: ann,
    connecting after that, gets the state, then a game_started for each game of hers not
    recorded yet, whatever its round, and plays them.  (A bot that folds at once can end a
    game of hers before she connects: the state shows it recorded and it is not told.)"""
    entrants = [SeatSpec("ann", PERSON), SeatSpec("g", BOT, "greedy"), SeatSpec("r", BOT, "random")]
    with redis.Redis.from_url(redis_server.url) as connection:
        tid = new_tournament(connection, entrants)
    run = Run(redis_server.url, tid)

    def anns_games_exist() -> list[str]:
        shown = http.get(f"/api/tournaments/{tid}").json()
        tables = [t for r in shown["paired"] for t in r["tables"] if "ann" in t["seats"]]
        created = len(shown["paired"]) == 3 and all(t["status"] != "not created" for t in tables)
        return [t["game"] for t in tables] if created else []

    games = wait_for(anns_games_exist, "ann's games to be created")
    told: list[str] = []
    recorded: list[str] = []

    def started(line: dict[str, Any]) -> None:
        told.append(line["game"])
        play_as_ann(http, service, line["game"], line["seat"])

    def state(line: dict[str, Any]) -> None:
        assert len(line["tournament"]["paired"]) == 3 and not told
        tables = [t for r in line["tournament"]["paired"] for t in r["tables"]]
        recorded.extend(t["game"] for t in tables if t["game"] in games and t["status"] == "recorded")

    seen = follow_entrant(http, tid, "ann", started, state)
    run.finish()
    assert told == [g for g in games if g not in recorded], (games, recorded, seen)


def follow_entrant(
    http: httpx.Client,
    tid: str,
    entrant: str,
    started: Callable[[dict[str, Any]], None],
    state: Callable[[dict[str, Any]], None] = lambda _line: None,
) -> list[tuple[str | None, str | None, str | None]]:
    """Read an entrant's stream to ``tournament_over``, calling ``started`` on each
    ``game_started`` line (it plays the game, not reading meanwhile) and ``state`` on a
    ``state`` line; after an error line, resume from the last id, as docs/gateway.md tells
    clients (one that reads too slowly may be dropped).  Returns every line's (type, id,
    game), for a failing assertion to show."""
    errors: list[str] = []
    seen: list[tuple[str | None, str | None, str | None]] = []
    last: str | None = None
    while len(errors) < 5:
        headers = {"Last-Event-ID": last} if last else {}
        with http.stream("GET", f"/api/tournaments/{tid}/stream?entrant={entrant}", headers=headers) as stream:
            for raw in stream.iter_lines():
                line = json.loads(raw) if raw.strip() else {"type": None}
                last = line.get("id", last)
                if line["type"] is not None:
                    seen.append((line["type"], line.get("id"), line.get("game") or line.get("error")))
                if line["type"] == "state":
                    state(line)
                elif line["type"] == "game_started":
                    started(line)
                elif line["type"] == "error":
                    errors.append(line["error"])
                    break
                elif line["type"] == "tournament_over":
                    return seen
            else:
                raise AssertionError(f"the stream ended with no tournament_over nor error line: {seen}")
    raise AssertionError(f"dropped {len(errors)} times: {errors}")


def test_an_entrant_with_a_key_of_its_own_plays_its_whole_tournament_over_http_without_joining(
    http: httpx.Client, redis_server: RedisServer
) -> None:
    """`tournament create --reserve ann=KEY`: ann holds her token, reaches nothing but the
    gateway, never joins, and plays every game of hers from her entrant stream; a stranger's
    turn on her seat is refused; the tournament finishes and audits."""
    from red7es.service.tokens import new_token, public_key
    from red7es.tournament.audit import audit_tournament

    token = new_token()
    entrants = [SeatSpec("ann", PERSON), SeatSpec("g", BOT, "greedy"), SeatSpec("r", BOT, "random")]
    tid = f"tk-{uuid.uuid4().hex[:8]}"
    with redis.Redis.from_url(redis_server.url) as connection:
        create_tournament(
            connection, tid, entrants, Variant(2), "round-robin", seed=tid, keys={"ann": public_key(token)}
        )
    run = Run(redis_server.url, tid)
    told: list[str] = []

    def started(line: dict[str, Any]) -> None:
        game, seat = line["game"], line["seat"]
        told.append(game)
        stranger = Seat(http, game, seat, new_token())
        assert stranger.play("fold").status_code == 401  # not her key: refused, unread
        assert play_to_the_end(Seat(http, game, seat, token))["status"] == "over"

    follow_entrant(http, tid, "ann", started)
    run.finish()
    assert len(told) == 2
    with redis.Redis.from_url(redis_server.url) as connection:
        assert audit_tournament(GameService(connection), tid).ok


def test_a_withdrawal_is_told_on_the_tournaments_stream_and_the_entrants_own(
    http: httpx.Client, redis_server: RedisServer
) -> None:
    from red7es.tournament.withdrawal import withdraw_entrant

    with redis.Redis.from_url(redis_server.url) as connection:
        tid = new_tournament(connection, [SeatSpec(f"b{i}", BOT, "random") for i in range(3)])
        withdraw_entrant(GameService(connection), tid, "b0", "b0's author pulled it")
    run = Run(redis_server.url, tid)
    run.finish()
    told = {"type": "entrant_withdrew", "entrant": "b0", "reason": "b0's author pulled it"}
    story = ndjson(http.get(f"/api/tournaments/{tid}/stream?after=0-0"))
    (line,) = [x for x in story if x["type"] == "entrant_withdrew"]
    assert {k: line[k] for k in told} == told and story[0] == line  # before round 1 was paired
    own = ndjson(http.get(f"/api/tournaments/{tid}/stream?after=0-0&entrant=b0"))
    assert [x for x in own if x["type"] == "entrant_withdrew"] == [line]
    other = ndjson(http.get(f"/api/tournaments/{tid}/stream?after=0-0&entrant=b1"))
    assert not [x for x in other if x["type"] == "entrant_withdrew"]
    standings = http.get(f"/api/tournaments/{tid}/standings").json()["standings"]
    assert [r["withdrawn"] for r in standings if r["name"] == "b0"] == [True]
    finished = [x for x in own if x["type"] == "game_finished"]
    assert len(finished) == 2 and all(
        x["forfeited"] == ["b0"] and x["forfeit_reasons"] == ["withdrawn"] for x in finished
    ), finished
