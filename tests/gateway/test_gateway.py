"""The HTTP gateway end to end: real Redis, a real worker process, uvicorn on loopback, httpx."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from red7es.service.client import GameService
from red7es.service.compaction import COMPACTIONS, compact_due
from red7es.service.tokens import new_token, sign_turn
from red7es.variant import Variant

from .conftest import Gateway, Seat, join, new_game

pytestmark = pytest.mark.integration


def play_to_the_end(me: Seat) -> dict[str, Any]:
    """Play ``me``'s first legal turn whenever its stream says it is to move; the final view."""
    path = f"/api/games/{me.game}/seats/{me.seat}/stream"
    with me.http.stream("GET", path, headers=me.headers("GET", path)) as stream:
        for raw in stream.iter_lines():
            if not raw.strip():
                continue
            line = json.loads(raw)
            assert line["type"] in ("view", "change"), line
            view = line.get("view")
            if line["type"] != "view" or view is None:
                continue
            if view["status"] == "over":
                return dict(view)
            if view["to_move"] == me.seat and view.get("legal"):
                answer = me.play(view["legal"][0])
                assert answer.status_code == 200, answer.text
                assert answer.json()["applied"] is True
    raise AssertionError("the stream ended before the game did")


def test_a_whole_game_over_http_against_a_bot(http: httpx.Client, service: GameService) -> None:
    game = new_game(service, ["ann"], {"bob": "greedy"})
    listed = next(g for g in http.get("/api/games").json() if g["game"] == game)
    direct = next(g.as_json() for g in service.games(500) if g.game_id == game)  # as `red7 games --json`
    assert listed.keys() == direct.keys() and (listed["seats"], listed["variant"]) == (
        direct["seats"],
        direct["variant"],
    )
    ann = join(http, game, 0)
    final = play_to_the_end(ann)
    assert final["outcome"]["winners"]
    assert final["seed"]  # revealed at the end
    record = http.get(f"/api/games/{game}/record")
    assert record.status_code == 200
    assert record.headers["content-type"].startswith("application/x-ndjson")
    header = json.loads(record.content.splitlines()[0])
    assert header["game"] == game


# ---------------------------------------------------------------------------- errors


def error(response: httpx.Response, status: int) -> str:
    """The one-line error of a response that must have ``status``."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert isinstance(body["error"], str) and "\n" not in body["error"] and "Traceback" not in body["error"]
    return str(body["error"])


@pytest.fixture(scope="module")
def table(served: Gateway, service: GameService) -> tuple[str, str, str]:
    """A game of two people (seats 0 and 1, joined over HTTP) and a bot; their tokens."""
    game = new_game(service, ["ann", "cat"], {"bob": "greedy"})
    with httpx.Client(base_url=served.base, timeout=20) as client:
        ann, cat = join(client, game, 0), join(client, game, 1)
    return game, ann.token, cat.token


def seats(http: httpx.Client, table: tuple[str, str, str]) -> tuple[Seat, Seat]:
    game, ann, cat = table
    return Seat(http, game, 0, ann), Seat(http, game, 1, cat)


def test_unknown_games_are_404(http: httpx.Client) -> None:
    assert error(http.get("/api/games/nosuch"), 404) == "no game 'nosuch'"
    error(http.get("/api/games/NOT-AN-ID!"), 404)
    error(http.get("/api/games/nosuch/stream"), 404)
    error(http.get("/api/games/nosuch/record"), 404)
    error(http.post("/api/games/nosuch/turns", json={"id": "x", "seat": 0, "turn": "fold", "sig": "0" * 128}), 404)
    error(http.get("/api/nothing-here"), 404)


def test_malformed_bodies_and_turns_are_400(http: httpx.Client, table: tuple[str, str, str]) -> None:
    ann, _cat = seats(http, table)
    path = f"/api/games/{ann.game}/turns"
    headers = {"content-type": "application/json"}
    assert error(http.post(path, content=b"{not json", headers=headers), 400) == "the body is not valid JSON"
    # what the JSON parser gives up on otherwise (nested too deep, bytes that are no UTF-8, an
    # integer of more digits than Python reads) says the same, not FastAPI's own words
    for body in (b"[" * 5_000 + b"]" * 5_000, b'{"id": "\xff\xfe"}', b'{"seat": ' + b"9" * 5_000 + b"}"):
        assert error(http.post(path, content=body, headers=headers), 400) == "the body is not valid JSON", body[:20]
    assert "seat" in error(http.post(path, json=dict(ann.turn_body("fold"), seat="0")), 400)
    assert "sig" in error(http.post(path, json={"id": "x", "seat": 0, "turn": "fold"}), 400)
    error(http.post(path, json=[1, 2]), 400)
    assert error(ann.play("p:R9"), 400).startswith("malformed turn: ")
    assert "bot-" in error(ann.play("fold", command_id="bot-1"), 400)
    error(http.get("/api/games", params={"limit": 0}), 400)
    error(http.get(f"/api/games/{ann.game}/stream", params={"after": "yesterday"}), 400)
    error(http.get(f"/api/games/{ann.game}/record", params={"format": "xml"}), 400)
    error(http.post(f"/api/games/{ann.game}/seats/1/join", json={"key": "xyz"}), 400)


def test_unsigned_and_badly_signed_reads_are_401(http: httpx.Client, table: tuple[str, str, str]) -> None:
    ann, _cat = seats(http, table)
    path = f"/api/games/{ann.game}/seats/0"
    assert "must be signed" in error(http.get(path), 401)
    stranger = Seat(http, ann.game, 0, "11" * 32)
    assert error(stranger.get(path), 401).startswith("bad signature")
    signed_elsewhere = ann.headers("GET", f"/api/games/{ann.game}/seats/0/legal")
    error(http.get(path, headers=signed_elsewhere), 401)  # a signature covers the path
    stale = ann.headers("GET", path, stamp=int(ann.view()["created"]) - 60_000)
    assert "from the server's clock" in error(http.get(path, headers=stale), 401)
    bad_turn = dict(ann.turn_body("fold"), turn="p:R7")  # signed for another turn
    assert error(http.post(f"/api/games/{ann.game}/turns", json=bad_turn), 401).startswith("bad signature")


def test_another_seats_key_is_403(http: httpx.Client, table: tuple[str, str, str]) -> None:
    ann, cat = seats(http, table)
    path = f"/api/games/{ann.game}/seats/0"
    assert error(http.get(path, headers=cat.headers("GET", path)), 403) == "signed by seat 1's key, not seat 0's"
    bot = f"/api/games/{ann.game}/seats/2"
    assert "open (join it first) or a bot's" in error(http.get(bot, headers=ann.headers("GET", bot)), 403)
    forged = Seat(http, ann.game, 2, ann.token).turn_body("fold")
    error(http.post(f"/api/games/{ann.game}/turns", json=forged), 403)


def test_a_replayed_signed_request_is_409(http: httpx.Client, table: tuple[str, str, str]) -> None:
    ann, _cat = seats(http, table)
    path = f"/api/games/{ann.game}/seats/0/legal"
    captured = ann.headers("GET", path)
    first = http.get(path, headers=captured)
    assert first.status_code == 200 and isinstance(first.json()["legal"], list)
    assert "already received" in error(http.get(path, headers=captured), 409)


def test_refusals_are_409(http: httpx.Client, table: tuple[str, str, str]) -> None:
    ann, cat = seats(http, table)
    with http.stream("GET", f"/api/games/{ann.game}/stream") as stream:  # past the bot's turn, if it leads
        view = next(v["view"] for v in _views(stream) if v["view"]["to_move"] in (0, 1))
    mover, waiter = (ann, cat) if view["to_move"] == 0 else (cat, ann)
    legal = mover.view()["legal"]
    refused = waiter.play(legal[0])  # out of turn: stored, refereed, refused with the reason
    assert error(refused, 409).startswith("rejected: it is not")
    assert refused.json()["applied"] is False
    assert "taken" in error(http.post(f"/api/games/{ann.game}/seats/0/join", json={"key": "ab" * 32}), 409)
    assert "is a bot" in error(http.post(f"/api/games/{ann.game}/seats/2/join", json={"key": "ab" * 32}), 409)
    assert "not over" in error(http.get(f"/api/games/{ann.game}/record"), 409)


def test_the_same_turn_sent_twice_takes_effect_once(http: httpx.Client, service: GameService) -> None:
    game = new_game(service, ["ann"], {"bob": "greedy"})
    ann = join(http, game, 0)
    view = ann.view()
    if view["to_move"] != 0:  # the bot leads: wait for ann's turn on her stream
        path = f"/api/games/{game}/seats/0/stream"
        with http.stream("GET", path, headers=ann.headers("GET", path)) as stream:
            view = next(v["view"] for v in _views(stream) if v["view"]["to_move"] == 0)
    body = ann.turn_body(view["legal"][0])
    first = http.post(f"/api/games/{game}/turns", json=body)
    again = http.post(f"/api/games/{game}/turns", json=body)
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()
    applied = [e for e in service.log(game) if type(e.event).__name__ == "CommandApplied"]
    assert [e.event.id for e in applied].count(body["id"]) == 1  # type: ignore[attr-defined]


def test_joins_and_turns_are_answered_from_the_hubs_notices_not_from_a_read(
    http: httpx.Client, service: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue #17: the hub's XREAD returns each change whole, and a join or a turn subscribes
    # before its command is stored, so its answer is among the notices: no read of the
    # changes (nor of a view to throw away) per request.  A resent turn still reads.
    import red7es.gateway.streams as streams

    reads: list[Any] = []
    real_read = streams._read

    async def counted(*args: Any) -> Any:
        reads.append(args[1:])
        return await real_read(*args)

    monkeypatch.setattr(streams, "_read", counted)
    game = new_game(service, ["ann"], {"bob": "greedy"})
    ann = join(http, game, 0)
    deadline = time.monotonic() + 20
    while (view := ann.view())["to_move"] != 0:  # the bot may lead
        assert time.monotonic() < deadline, "ann never came to move"
        time.sleep(0.02)
    body = ann.turn_body(view["legal"][0])
    applied = http.post(f"/api/games/{game}/turns", json=body)
    assert applied.status_code == 200 and applied.json()["applied"] is True
    assert applied.json()["events"][0] == {**applied.json()["events"][0], "type": "CommandApplied"}
    assert reads == []
    again = http.post(f"/api/games/{game}/turns", json=body)  # sent again: read from the start
    assert again.json() == applied.json() and reads


def test_a_seats_next_turns_read_nothing_before_their_append_and_refusals_stay_the_same(
    served: Gateway, http: httpx.Client, service: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue #17: once a turn of a seat passed, the gateway knows the seat's key (it never
    # changes), so the seat's next turns are checked and appended without reading the game.
    # Whatever fails under the known key goes the full way, with the same error; a game
    # broken meanwhile is refused by the append itself.
    gateway_service = served.app.state.service
    game = new_game(service, ["ann"], {"bob": "greedy"})
    ann = join(http, game, 0)
    views: list[str] = []
    real_view = gateway_service.view
    monkeypatch.setattr(gateway_service, "view", lambda g, seat=None: views.append(g) or real_view(g, seat))

    def turn_of(seat: Seat) -> dict[str, Any]:
        deadline = time.monotonic() + 20
        while (view := seat.view())["to_move"] != seat.seat or not view.get("legal"):
            assert time.monotonic() < deadline, "never came to move"
            time.sleep(0.02)
        return seat.turn_body(view["legal"][0])

    forger = Seat(http, game, 0, new_token())
    assert forger.signed_over == ann.signed_over  # (read now: the views counted below are the gateway's own)
    played = 0
    while played < 2:  # ann's first turn reads the game, her second does not
        body = turn_of(ann)
        views.clear()
        answer = http.post(f"/api/games/{game}/turns", json=body)
        assert answer.status_code == 200 and answer.json()["applied"] is True, answer.text
        assert views == ([game] if played == 0 else []), views
        played += 1
    forged = ann.turn_body("fold")
    forged["sig"] = forger.turn_body("fold", forged["id"])["sig"]
    assert error(http.post(f"/api/games/{game}/turns", json=forged), 401).startswith("bad signature")
    assert views == [game]  # the known key did not sign it: the full way, which reads the game
    assert error(http.post(f"/api/games/{game}/turns", json={**forged, "turn": "p:R9"}), 400).startswith("malformed")
    unbound = ann.turn_body("fold")  # ann's own key, but turn/v1: not over this game's commitment
    unbound["sig"] = sign_turn(ann.token, game, unbound["id"], 0, "fold")
    assert error(http.post(f"/api/games/{game}/turns", json=unbound), 401).startswith("bad signature")
    service.store.mark_broken(game, "broken for the test")
    assert "broken for the test" in error(http.post(f"/api/games/{game}/turns", json=ann.turn_body("fold")), 409)


def _views(stream: httpx.Response) -> Any:
    for raw in stream.iter_lines():
        if raw.strip():
            line = json.loads(raw)
            if line["type"] == "view" and line["view"]:
                yield line


def test_oversized_bodies_are_413(http: httpx.Client, table: tuple[str, str, str]) -> None:
    game = table[0]
    big = {"id": "x" * 70_000, "seat": 0, "turn": "fold", "sig": "0" * 128}
    assert "larger than 65536" in error(http.post(f"/api/games/{game}/turns", json=big), 413)

    def chunks() -> Any:  # no Content-Length: counted as it comes
        for _ in range(100):
            yield b"x" * 1024

    error(http.post(f"/api/games/{game}/turns", content=chunks()), 413)


def test_redis_down_is_503(served: Gateway) -> None:
    from red7es.service.redis_server import free_port

    nowhere = Gateway(f"redis://127.0.0.1:{free_port()}/0")
    try:
        with httpx.Client(base_url=nowhere.base, timeout=20) as client:
            assert error(client.get("/api/games"), 503) == "Redis is unavailable: try again shortly"
            error(client.get("/api/games/g1"), 503)
            error(client.get("/api/games/g1/stream"), 503)
    finally:
        nowhere.stop()


def test_the_openapi_document_lists_every_endpoint(http: httpx.Client) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    assert {
        "/api/games",
        "/api/games/{game_id}",
        "/api/games/{game_id}/seats/{seat}",
        "/api/games/{game_id}/seats/{seat}/legal",
        "/api/games/{game_id}/seats/{seat}/join",
        "/api/games/{game_id}/turns",
        "/api/games/{game_id}/record",
        "/api/games/{game_id}/stream",
        "/api/games/{game_id}/seats/{seat}/stream",
    } <= set(paths)
    # no Swagger UI or ReDoc: their scripts come from a CDN into the origin holding seats' tokens
    assert http.get("/docs").status_code == 404 and http.get("/redoc").status_code == 404


# ---------------------------------------------------------------------------- streams


def change_ids(service: GameService, game: str) -> list[str]:
    """Every change id of a game, read from Redis directly."""
    return [i.decode() for i, _ in service.redis.xrange(f"red7:{{{game}}}:changes")]


def finished_bot_game(service: GameService) -> str:
    game = new_game(service, [], {"ann": "random", "bob": "greedy"})
    wait_over(service, game)
    return game


def wait_over(service: GameService, game: str) -> None:
    from support import wait_for

    wait_for(lambda: service.view(game)["status"] == "over", "the game's end")


def played_game(http: httpx.Client, service: GameService, turns: int = 3) -> str:
    """A game in play with a change per move: ann (over HTTP) and a greedy bot have made
    ``turns`` moves each, and ann is to move (so nothing changes while a test reads it).
    A finished game would not do: its changes are trimmed to the last (docs/records.md)."""
    from support import wait_for

    game = new_game(service, ["ann"], {"bob": "greedy"}, variant=Variant(2, rounds=5), seed="streams")
    ann = join(http, game, 0)
    for _ in range(turns):
        view = wait_for(lambda: (v := ann.view())["to_move"] == 0 and v, "ann's turn")
        legal = [t for t in view["legal"] if t != "fold"]
        assert ann.play(legal[0]).status_code == 200
    wait_for(lambda: ann.view()["to_move"] == 0, "ann's turn")
    assert service.view(game)["status"] == "playing"
    return game


def _to_view(stream: httpx.Response) -> list[dict[str, Any]]:
    """The lines of a stream of a game in play, up to the first view after its changes."""
    out = []
    for line in _lines(stream):
        out.append(line)
        if line["type"] == "view":
            return out
    raise AssertionError("the stream ended before a view")


def test_a_stream_tells_every_change_once_and_resumes_from_last_event_id(
    http: httpx.Client, service: GameService
) -> None:
    game = played_game(http, service)
    every = change_ids(service, game)
    assert len(every) >= 4
    with http.stream("GET", f"/api/games/{game}/stream", params={"after": "0-0"}) as stream:
        told = _to_view(stream)
    assert [line["id"] for line in told if line["type"] == "change"] == every
    assert told[-1]["type"] == "view" and told[-1]["id"] == every[-1] and told[-1]["view"]["status"] == "playing"
    for cut in (1, len(every) // 2, len(every) - 1):
        headers = {"Last-Event-ID": every[cut - 1]}
        with http.stream("GET", f"/api/games/{game}/stream", headers=headers) as stream:
            rest = [line["id"] for line in _to_view(stream) if line["type"] == "change"]
        assert rest == every[cut:]


def test_a_stream_of_a_finished_game_resumed_from_a_trimmed_change_tells_the_end(
    http: httpx.Client, service: GameService
) -> None:
    """Once compacted, its changes start at the one holding GameOver: a reader resuming from
    any earlier id gets that change, then the final view, and the stream ends."""
    game = finished_bot_game(service)
    whole = change_ids(service, game)
    with http.stream("GET", f"/api/games/{game}/stream", headers={"Last-Event-ID": whole[0]}) as stream:
        told = list(_lines(stream))  # before its compaction is due: every change after the id
    assert [line["id"] for line in told if line["type"] == "change"] == whole[1:]
    service.redis.zadd(COMPACTIONS, {game: 0})  # its time has come
    assert compact_due(service.redis) == 1  # what a worker's sweep does
    [last] = change_ids(service, game)
    with http.stream("GET", f"/api/games/{game}/stream", headers={"Last-Event-ID": "1-0"}) as stream:
        told = list(_lines(stream))
    assert [line["type"] for line in told] == ["change", "view"]
    assert told[0]["id"] == last and "GameOver" in [e["type"] for e in told[0]["events"]]
    assert told[1]["view"]["status"] == "over"


def test_a_stream_resumed_at_the_last_change_starts_with_the_view(http: httpx.Client, service: GameService) -> None:
    """Was: nothing but keep-alives until the next change, and a finished game's stream
    resumed at its last change never ended."""
    game = played_game(http, service)
    last = change_ids(service, game)[-1]
    with http.stream("GET", f"/api/games/{game}/stream", params={"after": last}) as stream:
        first = next(_lines(stream))
    assert first["type"] == "view" and first["id"] == last and first["view"]["status"] == "playing"
    over = finished_bot_game(service)
    end = change_ids(service, over)[-1]
    with http.stream("GET", f"/api/games/{over}/stream", headers={"Last-Event-ID": end}) as stream:
        told = list(_lines(stream))  # ends by itself
    assert [(line["type"], line["id"], line["view"]["status"]) for line in told] == [("view", end, "over")]


def test_a_stream_resumed_past_the_last_change_tells_the_next_one(http: httpx.Client, service: GameService) -> None:
    """An id later than any change (another game's, a clock ahead): the view, then the changes
    as they come (was: the view, then nothing, the ids below the one asked for skipped)."""
    from support import wait_for

    game = new_game(service, ["ann"], {"bob": "greedy"}, variant=Variant(2, rounds=5), seed="past")
    ann = join(http, game, 0)
    view = wait_for(lambda: (v := ann.view())["to_move"] == 0 and v, "ann's turn")
    last = change_ids(service, game)[-1]
    ahead = f"{int(last.split('-')[0]) + 10**9}-0"
    with http.stream("GET", f"/api/games/{game}/stream", params={"after": ahead}) as stream:
        lines = _lines(stream)
        first = next(lines)
        assert (first["type"], first["id"]) == ("view", last)
        assert ann.play(view["legal"][0]).status_code == 200
        following = next(lines)
    every = change_ids(service, game)
    assert (following["type"], following["id"]) == ("change", every[every.index(last) + 1])


def _lines(stream: httpx.Response) -> Any:
    for raw in stream.iter_lines():
        if raw.strip():
            yield json.loads(raw)


def test_a_live_stream_dropped_mid_game_resumes_without_gaps_or_repeats(
    http: httpx.Client, service: GameService
) -> None:
    # (a match of five round wins, a fixed deal: ann's first turns cannot end it)
    game = new_game(service, ["ann"], {"bob": "greedy"}, Variant(2, rounds=5), seed="resume")
    ann = join(http, game, 0)
    seen: list[str] = []
    last: str | None = None
    first = ""
    for _ in range(5):  # five connections, each for one of ann's turns (and the bot's reply: one change)
        headers = {"Last-Event-ID": last} if last else {}
        with http.stream("GET", f"/api/games/{game}/stream", headers=headers) as stream:
            for line in _lines(stream):
                if line["type"] == "change":
                    seen.append(line["id"])
                first = first or line["id"]  # the first connection's first line: a view
                last = line["id"]
                view = line.get("view")
                if view and (view["status"] == "over" or view["to_move"] == 0):
                    break
        if view["status"] == "over":
            break
        answer = ann.play(ann.view()["legal"][0])  # played while nobody streams
        assert answer.status_code == 200, answer.text
    every = change_ids(service, game)  # (the bot may have moved since: compare the part seen)
    start = every.index(first) + 1 if first != "0-0" else 0
    assert len(seen) > 3 and seen == every[start : start + len(seen)]


def test_the_lines_of_one_read_go_out_as_one_chunk(served: Gateway, service: GameService) -> None:
    # Issue #17: a change and the view after it were one write each (each a socket send on
    # the gateway, the largest cost per turn).  A resumed stream of a finished game reads
    # every change and the last view at once: one chunk of the chunked response holds all.
    import socket

    import h11

    game = finished_bot_game(service)
    client = h11.Connection(h11.CLIENT)
    chunks: list[bytes] = []
    with socket.create_connection(("127.0.0.1", served.port), timeout=20) as sock:
        path = f"/api/games/{game}/stream"
        request = h11.Request(method="GET", target=path, headers=[("Host", "test"), ("Last-Event-ID", "0-0")])
        sock.sendall(client.send(request) + client.send(h11.EndOfMessage()))
        current = b""
        while True:
            event = client.next_event()
            if event is h11.NEED_DATA:
                client.receive_data(sock.recv(65536))
                continue
            if isinstance(event, h11.Data):
                current += event.data
                if event.chunk_end:
                    chunks.append(current)
                    current = b""
            if isinstance(event, h11.EndOfMessage):
                break
    lines = [json.loads(line) for chunk in chunks for line in chunk.splitlines()]
    assert [line["type"] for line in lines] == ["change"] * len(change_ids(service, game)) + ["view"]
    assert len(chunks) == 1, [len(chunk.splitlines()) for chunk in chunks]


def test_server_sent_events_are_framed_with_ids(http: httpx.Client, service: GameService) -> None:
    game = finished_bot_game(service)
    response = http.get(f"/api/games/{game}/stream", headers={"Accept": "text/event-stream", "Last-Event-ID": "0-0"})
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [block for block in response.text.split("\n\n") if block]
    assert len(events) == len(change_ids(service, game)) + 1
    for block in events:
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        assert set(fields) == {"id", "event", "data"}
        data = json.loads(fields["data"])
        assert (data["type"], data["id"]) == (fields["event"], fields["id"])


def test_a_seat_stream_carries_its_hand_and_a_spectators_none(http: httpx.Client, service: GameService) -> None:
    game = new_game(service, ["ann"], {"bob": "greedy"})
    ann = join(http, game, 0)
    path = f"/api/games/{game}/seats/0/stream"
    with http.stream("GET", path, headers=ann.headers("GET", path)) as stream:
        first = next(_lines(stream))
    assert first["type"] == "view" and first["view"]["hand"] == ann.view()["hand"]
    with http.stream("GET", f"/api/games/{game}/stream") as stream:
        public = next(_lines(stream))
    assert public["type"] == "view" and "hand" not in public["view"] and "legal" not in public["view"]
    assert "must be signed" in error(http.get(path), 401)


def test_a_subscriber_that_takes_no_notices_is_dropped_and_stalls_nobody(served: Gateway) -> None:
    import asyncio

    from red7es.gateway.hub import Dropped, Hub
    from red7es.service.store import text

    url = served.url

    async def scenario() -> None:
        hub = Hub(url, queue_size=2)
        hub.start()
        try:
            slow, fast = await hub.subscribe("gw-slow"), await hub.subscribe("gw-slow")
            ended: list[bool] = []
            slow.on_overflow = lambda: ended.append(True)
            mark = "0-0"
            for n in range(4):
                change = text(await hub.redis.xadd("red7:{gw-slow}:changes", {"v": n, "p": b""}))
                assert await fast.wait(mark, 10), "the fast subscriber missed a change"
                mark = change
            assert ended == [True] and slow.dropped and "too slow" in slow.dropped
            with pytest.raises(Dropped):
                await slow.wait("0-0", 1)
        finally:
            await hub.redis.delete("red7:{gw-slow}:changes")
            await hub.stop()

    asyncio.run(scenario())


def test_a_subscribers_notices_are_every_entry_written_after_it_subscribed_in_order(served: Gateway) -> None:
    import asyncio

    from red7es.gateway.hub import Dropped, Hub
    from red7es.service.store import text

    async def scenario() -> None:
        hub = Hub(served.url)
        hub.start()
        key = "red7:{gw-notices}:changes"
        try:
            await hub.redis.xadd(key, {"p": b"before"})
            first = await hub.subscribe("gw-notices")
            assert await first.notices(0.2) == []  # nothing written since: none told, after the timeout
            ids = [text(await hub.redis.xadd(key, {"p": f"n{n}".encode()})) for n in range(5)]
            told: list[tuple[str, bytes]] = []
            while len(told) < 5:
                batch = await first.notices(10)
                assert batch, "a change written after the subscribe was not told"
                told.extend((notice.id, notice.fields[b"p"]) for notice in batch)
            assert told == [(i, f"n{n}".encode()) for n, i in enumerate(ids)]
            last = text(await hub.redis.xadd(key, {"p": b"last"}))
            for _ in range(2000):  # up to 20 s for the hub to queue it
                if first.queue.qsize():
                    break
                await asyncio.sleep(0.01)
            first.drop("gone for the test")  # told after the last entry: that entry is still taken
            assert [notice.id for notice in await first.notices(1)] == [last]
            with pytest.raises(Dropped, match="gone for the test"):
                await first.notices(1)
        finally:
            await hub.redis.delete(key)
            await hub.stop()

    asyncio.run(scenario())


def test_a_changes_key_written_by_hand_ends_only_its_own_streams(served: Gateway) -> None:
    """XREAD of every streamed game fails when one key is not a stream: the hub finds it,
    ends its subscribers with the reason, and goes on serving the others."""
    import asyncio

    from red7es.gateway.hub import Dropped, Hub

    async def scenario() -> None:
        hub = Hub(served.url)
        hub.start()
        try:
            good, bad = await hub.subscribe("gw-good"), await hub.subscribe("gw-bad")
            await hub.redis.set("red7:{gw-bad}:changes", "not a stream")
            with pytest.raises(Dropped, match="is a string, not a stream"):
                await bad.wait("0-0", 10)
            await hub.redis.xadd("red7:{gw-good}:changes", {"v": 1, "p": b""})
            assert await good.wait("0-0", 10)
        finally:
            await hub.redis.delete("red7:{gw-bad}:changes", "red7:{gw-good}:changes")
            await hub.stop()

    asyncio.run(scenario())


def test_red7_gateway_serves_until_stopped(served: Gateway, service: GameService, tmp_path: Any) -> None:
    import os
    import signal
    import subprocess
    import sys

    from support import wait_for

    from red7es.service.redis_server import free_port

    port = free_port()
    command = [sys.executable, "-m", "red7es.cli", "gateway", "--port", str(port), "--log-level", "warning"]
    process = subprocess.Popen(
        command,
        env=dict(os.environ, REDIS_URL=served.url),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:

        def answers() -> bool:
            try:
                return httpx.get(f"http://127.0.0.1:{port}/api/games", timeout=2).status_code == 200
            except httpx.TransportError:
                assert process.poll() is None, process.communicate()
                return False

        wait_for(answers, "red7 gateway to answer")
        game = new_game(service, ["ann"], {"bob": "greedy"})
        with httpx.stream("GET", f"http://127.0.0.1:{port}/api/games/{game}/stream", timeout=20) as stream:
            assert next(stream.iter_lines())  # open: the gateway stops all the same, cutting it
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert f"red7es gateway on http://127.0.0.1:{port} for {served.url}." in out.decode()
    cluster = subprocess.run(
        [*command[:3], "gateway", "--url", "redis+cluster://127.0.0.1:1"], capture_output=True, text=True, timeout=60
    )
    assert cluster.returncode == 1 and "does not serve a Redis Cluster yet" in cluster.stderr


def test_the_bot_in_the_docs_plays_a_whole_game(served: Gateway, service: GameService) -> None:
    import re
    import subprocess
    import sys
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "gateway.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", page, re.S)
    assert code, "no bot in docs/gateway.md"
    game = new_game(service, ["bob"], {"greedy": "greedy"})
    bot = subprocess.run(
        [sys.executable, "-c", code.group(1), served.base, game, "bob"], capture_output=True, text=True, timeout=60
    )
    assert bot.returncode == 0, bot.stderr
    assert bot.stdout.startswith("joined: {'game': ") and "\nover: {'winners': " in bot.stdout
    assert service.view(game)["status"] == "over"


def test_a_stream_whose_client_stops_reading_is_ended_and_let_go(served: Gateway) -> None:
    """Its response is stuck sending (the client's socket is full): once it falls
    queue_size changes behind, the hub's overflow cancels the send, and the stream lets
    go of its subscription; the hub never waits for it."""
    import asyncio

    from red7es.gateway.hub import Hub
    from red7es.gateway.streams import StreamResponse

    async def scenario() -> None:
        hub = Hub(served.url, queue_size=2)
        hub.start()
        stuck = asyncio.Event()
        try:
            subscriber = await hub.subscribe("gw-stuck")

            async def lines() -> Any:
                while True:
                    yield b"{}\n"

            async def send(message: Any) -> None:
                if message["type"] == "http.response.body":
                    stuck.set()
                    await asyncio.Event().wait()  # a client that never reads

            async def receive() -> Any:
                await asyncio.Event().wait()

            scope = {"type": "http", "asgi": {"spec_version": "2.4"}}
            response = asyncio.ensure_future(
                StreamResponse(lines(), subscriber, "application/x-ndjson")(scope, receive, send)
            )
            await asyncio.wait_for(stuck.wait(), 10)
            for n in range(3):
                await hub.redis.xadd("red7:{gw-stuck}:changes", {"v": n, "p": b""})
            await asyncio.wait_for(response, 10)  # ended, not stuck
            assert subscriber.dropped and "too slow" in subscriber.dropped
            assert hub.games == 0
        finally:
            await hub.redis.delete("red7:{gw-stuck}:changes")
            await hub.stop()

    asyncio.run(scenario())
