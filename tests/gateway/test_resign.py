"""Resigning over the HTTP gateway (docs/gateway.md, Turns): the same signed ``POST …/turns``
with ``"turn": "resign"``, no endpoint of its own; real Redis, a real worker, uvicorn."""

from __future__ import annotations

import httpx
import pytest

from red7es.service.client import GameService

from .conftest import join, new_game

pytestmark = pytest.mark.integration


def test_a_signed_resign_over_http_ends_the_game_and_a_second_is_409(http: httpx.Client, service: GameService) -> None:
    game = new_game(service, ["ann", "bob"])
    ann, bob = join(http, game, 0), join(http, game, 1)
    waiting = ann if ann.view()["to_move"] != 0 else bob  # out of turn: accepted all the same
    answer = waiting.play("resign")
    assert answer.status_code == 200, answer.text
    events = answer.json()["events"]
    assert events[0]["type"] == "CommandApplied" and events[0]["turn"] == "resign"
    assert {"type": "Forfeited", "seat": waiting.seat, "reason": "resigned"} in events
    over = next(e for e in events if e["type"] == "GameOver")
    assert over["reason"] == "resigned" and over["winners"] == [1 - waiting.seat]
    again = waiting.play("resign")
    assert again.status_code == 409, again.text
    assert http.get(f"/api/games/{game}/record").status_code == 200  # over: the record is served


def test_a_resign_signed_by_another_seat_or_misspelt_is_refused_before_it_is_stored(
    http: httpx.Client, service: GameService
) -> None:
    game = new_game(service, ["ann", "bob"])
    ann, bob = join(http, game, 0), join(http, game, 1)
    forged = bob.turn_body("resign")
    forged["seat"] = 0  # bob's signature over bob's seat, sent as ann's
    assert http.post(f"/api/games/{game}/turns", json=forged).status_code == 401
    assert ann.play("resign now").status_code == 400
    assert ann.view()["status"] == "playing"
