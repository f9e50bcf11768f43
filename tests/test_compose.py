"""docker-compose.yml runs only commands the red7 CLI really has, with options it accepts."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from red7es.cli.main import cli

COMPOSE = Path(__file__).resolve().parent.parent / "docker-compose.yml"


def _red7_invocations(command: Any) -> list[list[str]]:
    """Every `red7 ...` argument list in a compose command (exec form or sh -c)."""
    if isinstance(command, str):
        command = shlex.split(command)
    words: list[str] = list(command)
    if words[:2] == ["sh", "-c"] or words[:3] == ["CMD", "sh", "-c"]:
        script = words[-1].replace("$$", "$")
        found = []
        for part in script.split("&&"):
            tokens = shlex.split(part.strip())
            if tokens and tokens[0] == "exec":
                tokens = tokens[1:]
            if tokens and tokens[0] == "red7":
                found.append([t if not t.startswith("$(") else "value" for t in tokens[1:]])
        return found
    if words and words[0] == "CMD":
        words = words[1:]
    return [words[1:]] if words and words[0] == "red7" else []


def _all_invocations() -> list[tuple[str, list[str]]]:
    spec = yaml.safe_load(COMPOSE.read_text())
    out = []
    for name, service in spec["services"].items():
        entry = service.get("entrypoint")
        command = service.get("command")
        if entry == ["red7"] and command is not None:
            out.append((f"{name}.command", list(command)))
        elif command is not None:
            out.extend((f"{name}.command", args) for args in _red7_invocations(command))
        health = service.get("healthcheck", {}).get("test")
        if health:
            out.extend((f"{name}.healthcheck", args) for args in _red7_invocations(health))
    return out


def test_compose_runs_red7_commands() -> None:
    names = {label for label, _ in _all_invocations()}
    assert {"worker.command", "worker.healthcheck", "red7.command"} <= names


@pytest.mark.parametrize(("where", "args"), _all_invocations(), ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_compose_command_exists_and_parses(where: str, args: list[str]) -> None:
    ctx = click.Context(cli)
    command = cli.get_command(ctx, args[0])
    assert command is not None, f"{where}: red7 has no command {args[0]!r}"
    # Parsing (without running) rejects unknown options and missing arguments.
    command.make_context(args[0], args[1:], parent=ctx)


def test_compose_has_persistent_redis_and_scalable_workers() -> None:
    spec = yaml.safe_load(COMPOSE.read_text())
    redis = spec["services"]["redis"]
    assert redis["image"].startswith("redis:7")
    assert "--appendonly" in redis["command"] and "yes" in redis["command"]
    assert any(v.endswith(":/data") for v in redis["volumes"])
    worker = spec["services"]["worker"]
    assert worker["environment"]["REDIS_URL"].startswith("redis://redis:")
    assert "healthcheck" in worker and "healthcheck" in redis
