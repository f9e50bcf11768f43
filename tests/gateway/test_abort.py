"""Aborting over the HTTP gateway (docs/gateway.md, Turns): the same signed ``POST …/turns``
with ``"turn": "abort"``, no endpoint of its own; real Redis, a real worker, uvicorn."""

from __future__ import annotations

import httpx
import pytest

from red7es.service.client import GameService

from .conftest import join, new_game

pytestmark = pytest.mark.integration


def test_a_signed_abort_over_http_ends_a_fresh_game_with_no_winner(http: httpx.Client, service: GameService) -> None:
    game = new_game(service, ["ann", "bob"])
    ann, bob = join(http, game, 0), join(http, game, 1)
    waiting = ann if ann.view()["to_move"] != 0 else bob  # out of turn: accepted all the same
    answer = waiting.play("abort")
    assert answer.status_code == 200, answer.text
    events = answer.json()["events"]
    assert [e["type"] for e in events] == ["CommandApplied", "GameOver", "SeedRevealed"]
    assert events[0]["turn"] == "abort" and events[1]["winners"] == [] and events[1]["reason"] == "aborted"
    listed = next(g for g in http.get("/api/games").json() if g["game"] == game)
    assert listed["status"] == "over" and listed["winners"] == [] and listed["reason"] == "aborted"
    again = waiting.play("abort")
    assert again.status_code == 409, again.text
    assert http.get(f"/api/games/{game}/record").status_code == 200  # over: the record is served


def test_an_abort_after_a_turn_is_409_with_the_reason(http: httpx.Client, service: GameService) -> None:
    game = new_game(service, ["ann", "bob"])
    ann, bob = join(http, game, 0), join(http, game, 1)
    mover, other = (ann, bob) if ann.view()["to_move"] == 0 else (bob, ann)
    played = mover.play(mover.view()["legal"][0])
    assert played.status_code == 200, played.text
    refused = other.play("abort")
    assert refused.status_code == 409, refused.text
    assert "a turn has been played: only a game nobody has moved in can be aborted" in refused.text
    assert other.view()["status"] == "playing"


def test_an_abort_signed_by_another_seat_is_refused_before_it_is_stored(
    http: httpx.Client, service: GameService
) -> None:
    game = new_game(service, ["ann", "bob"])
    ann, bob = join(http, game, 0), join(http, game, 1)
    forged = bob.turn_body("abort")
    forged["seat"] = 0  # bob's signature over bob's seat, sent as ann's
    assert http.post(f"/api/games/{game}/turns", json=forged).status_code == 401
    assert ann.view()["status"] == "playing"
