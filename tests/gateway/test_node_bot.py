"""A bot in another language: docs/examples/bot.mjs (Node.js, built-ins only) plays a whole
game over HTTP against a red7es bot, and the game's record audits PASS."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
from support import Red7

from red7es.service.client import GameService
from red7es.service.redis_server import RedisServer

from .conftest import Gateway, new_game

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
]

BOT = Path(__file__).resolve().parents[2] / "docs" / "examples" / "bot.mjs"


def run_bot(base: str, game: str, seat: str) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    assert node is not None
    return subprocess.run([node, str(BOT), base, game, seat], capture_output=True, text=True, timeout=180)


def test_the_node_bot_plays_a_whole_game_that_audits(
    served: Gateway, service: GameService, redis_server: RedisServer, tmp_path: Path
) -> None:
    game = new_game(service, ["node"], {"greedy": "greedy"})
    done = run_bot(served.base, game, "node")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert f"joined {game} as seat 0 node" in done.stdout
    played = [line for line in done.stdout.splitlines() if line.startswith("200 ")]
    assert played, done.stdout
    assert "over:" in done.stdout

    with httpx.Client(base_url=served.base, timeout=20) as http:
        view = http.get(f"/api/games/{game}").json()
        record = http.get(f"/api/games/{game}/record", params={"format": "jsonl"})
    assert view["status"] == "over"
    assert view["seats"][0]["key"]  # the key the bot made: its token never left it
    assert record.status_code == 200, record.text
    path = tmp_path / f"{game}.jsonl"
    path.write_bytes(record.content)
    entries = [json.loads(line) for line in record.content.splitlines()]
    events = [e["data"] for e in entries if "event" in e and e["type"] == "CommandApplied"]
    assert len([e for e in events if e["seat"] == 0 and e["by"] == "person"]) == len(played)
    signed = [e["data"] for e in entries if "command" in e and (e["data"] or {}).get("sig")]
    assert len(signed) >= len(played)  # every turn it played was signed by its own key (the audit checks them)

    audited = Red7(redis_server.url, tmp_path / "home").ok("audit", str(path))
    assert audited.stdout.startswith(f"PASS {game}"), audited.stdout


def test_the_node_bot_fails_cleanly_on_a_taken_seat(served: Gateway, service: GameService) -> None:
    game = new_game(service, ["node"], {"greedy": "greedy"})
    done = run_bot(served.base, game, "greedy")
    assert done.returncode == 1
    assert done.stderr.strip() == "error: join: 409 seat greedy is a bot", done.stderr
