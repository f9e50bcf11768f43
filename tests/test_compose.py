"""docker-compose.yml runs only commands the red7 CLI really has, with options it accepts, and
does not hand out its Redis: a password with no default, published on loopback only, and
RQ's queues (whoever writes them runs code on the workers) on a Redis published nowhere."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import redis
import yaml
from support import wait_for

from red7es.cli.main import cli
from red7es.service.redis_server import free_port, redis_binary

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
    assert "--appendonly yes" in " ".join(redis["command"])
    assert any(v.endswith(":/data") for v in redis["volumes"])
    worker = spec["services"]["worker"]
    assert worker["environment"]["REDIS_URL"].endswith("@redis:6379/0")
    assert "healthcheck" in worker and "healthcheck" in redis


def test_redis_needs_a_password_with_no_default() -> None:
    """`docker compose up` published Redis on every interface without a password: whoever
    reached port 6379 read every hand and ran code on the workers."""
    text = COMPOSE.read_text()
    uses = re.findall(r"\$\{REDIS_PASSWORD([^}]*)\}", text)
    assert uses and all(use.startswith(":?") for use in uses), "compose refuses to start without it"
    services = yaml.safe_load(text)["services"]
    assert services["redis"]["environment"]["REDIS_PASSWORD"].startswith("${REDIS_PASSWORD:?")
    assert "requirepass $$REDIS_PASSWORD" in services["redis"]["command"][-1]
    for name in ("worker", "red7"):
        assert services[name]["environment"]["REDIS_URL"].startswith("redis://:${REDIS_PASSWORD:?")


def test_nothing_is_published_beyond_this_machine_and_rq_nowhere() -> None:
    """Only the gateway may be opened to other machines, and only when asked to."""
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    for name, service in services.items():
        for port in service.get("ports", []):
            default = "${RED7_GATEWAY_ADDRESS:-127.0.0.1}:" if name == "gateway" else "127.0.0.1:"
            assert str(port).startswith(default), (name, port)
    assert "ports" not in services["rq"]
    for name in ("worker", "red7"):
        assert services[name]["environment"]["RED7_RQ_URL"] == "redis://rq:6379/0"


GATEWAY_MD = COMPOSE.with_name("docs") / "gateway.md"


def test_the_gateway_is_served_with_its_own_redis_user_and_nothing_else() -> None:
    """``docker compose up`` gives a gateway on a published port that logs in to Redis as
    red7-gateway (a password of its own, with no default), never as the administrator,
    and knows nothing of RQ's Redis."""
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    gateway = services["gateway"]
    assert gateway["command"][:2] == ["red7", "gateway"] and "0.0.0.0" in gateway["command"]
    assert gateway["ports"] == ["${RED7_GATEWAY_ADDRESS:-127.0.0.1}:8007:8007"]
    assert gateway["environment"] == {
        "REDIS_URL": "redis://red7-gateway:${RED7_GATEWAY_PASSWORD:?set RED7_GATEWAY_PASSWORD (e.g. in .env), "
        "see docker-compose.yml}@redis:6379/0"
    }
    assert gateway["depends_on"]["redis"] == {"condition": "service_healthy"}
    assert "healthcheck" in gateway
    uses = re.findall(r"\$\{RED7_GATEWAY_PASSWORD([^}]*)\}", COMPOSE.read_text())
    assert len(uses) == 2 and all(use.startswith(":?") for use in uses)


def test_the_compose_redis_gives_the_gateway_user_the_documented_rule() -> None:
    """The rule in docs/gateway.md is the one tests/gateway/test_acl.py tests: compose uses it word for word."""
    documented = re.findall(r"^ACL SETUSER red7-gateway (.*)$", GATEWAY_MD.read_text(encoding="utf-8"), re.M)
    config = yaml.safe_load(COMPOSE.read_text())["services"]["redis"]["command"][-1]
    in_compose = re.findall(r"^user red7-gateway (.*)$", config, re.M)
    assert len(documented) == len(in_compose) == 1
    assert in_compose[0] == documented[0].replace("GATEWAY_PASSWORD", "$$RED7_GATEWAY_PASSWORD")


@pytest.fixture
def compose_redis(tmp_path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """The compose file's Redis command run by the real redis-server 7 (as compose runs it:
    ``$$`` is ``$``), behind a stand-in for the image's entrypoint that adds what the real one
    adds (``--protected-mode no``) and a port and directory of the test's own."""
    if not os.access(redis_binary(prefer_system=True), os.X_OK):
        pytest.skip("no redis-server")
    port = free_port()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    entrypoint = bin_dir / "docker-entrypoint.sh"
    entrypoint.write_text(
        f'#!/bin/sh\ncmd=$1; shift\nexec "$cmd" --port {port} --dir {tmp_path} --protected-mode no "$@"\n'
    )
    entrypoint.chmod(0o755)
    (bin_dir / "redis-server").symlink_to(redis_binary(prefer_system=True))
    env = dict(
        os.environ,
        PATH=f"{bin_dir}:{os.environ['PATH']}",
        REDIS_PASSWORD="s3cret0in0compose",
        RED7_GATEWAY_PASSWORD="g4teway0in0compose",
    )
    command = [word.replace("$$", "$") for word in yaml.safe_load(COMPOSE.read_text())["services"]["redis"]["command"]]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port, password=env["REDIS_PASSWORD"], socket_connect_timeout=1)
    try:
        wait_for(lambda: _answers(client), "the compose Redis", timeout=20)
        yield port, env
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(20)
        client.close()


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.exceptions.ConnectionError:
        return False


@pytest.mark.integration
def test_the_compose_redis_wants_its_password_and_keeps_it_out_of_ps(compose_redis: tuple[int, dict[str, str]]) -> None:
    port, env = compose_redis
    with redis.Redis(port=port) as anonymous, pytest.raises(redis.exceptions.AuthenticationError):
        anonymous.ping()
    for password in (env["REDIS_PASSWORD"], env["RED7_GATEWAY_PASSWORD"]):
        for entry in Path("/proc").iterdir():
            try:
                cmdline = (entry / "cmdline").read_bytes() if entry.name.isdigit() else b""
            except OSError:
                continue
            assert password.encode() not in cmdline, f"a password is in the arguments of process {entry.name}"
    with redis.Redis(port=port, username="red7-gateway", password=env["RED7_GATEWAY_PASSWORD"]) as gateway:
        assert gateway.ping() and gateway.get("red7:{g1}:view:public") is None
        with pytest.raises(redis.exceptions.NoPermissionError):
            gateway.hget("red7:{g1}:secret", "seed")
        with pytest.raises(redis.exceptions.NoPermissionError):
            gateway.config_get("*")
    health = yaml.safe_load(COMPOSE.read_text())["services"]["redis"]["healthcheck"]["test"]
    assert health[0] == "CMD-SHELL"
    script = health[1].replace("$$", "$").replace("redis-cli", f"redis-cli -p {port}")
    assert subprocess.run(["sh", "-c", script], env=env).returncode == 0
    wrong = subprocess.run(["sh", "-c", script], env={**env, "REDIS_PASSWORD": "wrong"}, stderr=subprocess.DEVNULL)
    assert wrong.returncode != 0, "a healthcheck that passes without the password checks nothing"
