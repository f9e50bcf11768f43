"""Secrets stay out of ``ps``: a seat token and a Redis URL with a password can come from
the environment or a file (or stdin) instead of the command line, a password typed in
``--url`` is warned about, and the workers ``red7 serve`` starts get their URLs in their
environment (every local user reads every process's arguments, not its environment).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner, Result
from support import Red7, fails, one_line_error, wait_for

from red7es.cli.main import cli
from red7es.cli.session import live_workers
from red7es.service.redis_server import RedisServer

from .conftest import RED7

pytestmark = pytest.mark.integration

PASSWORD = "s3cret-in-ps"
WARNING = (
    "Warning: the Redis URL in --url is seen by every local user in ps while red7 runs: use $REDIS_URL or --url-file."
)


def invoke(args: list[str], env: Mapping[str, str | None], input: str | None = None) -> Result:
    return CliRunner().invoke(cli, args, env=env, input=input, prog_name="red7")


def secret_file(tmp_path: Path, text: str, name: str = "secret") -> Path:
    path = tmp_path / name
    path.write_text(text + "\n")
    path.chmod(0o600)
    return path


# ---------------------------------------------------------------------------- seat tokens


@pytest.fixture
def alices_game(alice: Red7) -> tuple[str, str]:
    """A dealt game of alice against a bot, and alice's token."""
    created = alice.json("new", "-p", "alice", "--bot", "greedy")
    game = created["game"]
    wait_for(lambda: alice.json("show", game)["status"] == "playing", "the deal")
    return game, created["tokens"]["alice"]


def as_bob(bob: Red7, args: list[str], input: str | None = None, **env: str | None) -> Result:
    """``red7`` as bob, who holds no seat: alice's view needs her token from elsewhere."""
    return invoke(args, {**bob.env, **env}, input=input)


def test_a_token_from_the_environment_a_file_or_stdin(alices_game: tuple[str, str], bob: Red7, tmp_path: Path) -> None:
    game, token = alices_game
    show = ["show", game, "--as", "alice", "--json"]
    assert "you hold no token" in one_line_error(as_bob(bob, show))
    path = secret_file(tmp_path, token)
    for result in (
        as_bob(bob, show, RED7_TOKEN=token),
        as_bob(bob, [*show, "--token-file", str(path)]),
        as_bob(bob, show, RED7_TOKEN_FILE=str(path)),
        as_bob(bob, [*show, "--token-file", "-"], input=token + "\n"),
        as_bob(bob, ["moves", game, "--as", "alice", "--json"], RED7_TOKEN=token),
        as_bob(bob, ["replay", game, "--as", "alice", "--json", "--token-file", str(path)]),
    ):
        assert result.exit_code == 0, result.output
        assert result.stderr == ""
    assert json.loads(as_bob(bob, show, RED7_TOKEN=token).stdout)["hand"], "alice's hand, shown to her token"
    # Typed beats the environment: a wrong typed token is refused though the file holds the right one.
    wrong = "ab" * 32
    line = one_line_error(as_bob(bob, [*show, "--token", wrong], RED7_TOKEN_FILE=str(path)))
    assert line == f"Error: that token is not alice's in game {game}"
    assert as_bob(bob, [*show, "--token-file", str(path)], RED7_TOKEN=wrong).exit_code == 0


def test_a_token_given_twice_or_unreadable_is_a_usage_error(
    alices_game: tuple[str, str], bob: Red7, tmp_path: Path
) -> None:
    game, token = alices_game
    show = ["show", game, "--as", "alice"]
    path = secret_file(tmp_path, token)
    both = fails(as_bob(bob, [*show, "--token", token, "--token-file", str(path)]), 2)
    assert "--token and --token-file both give the seat token: give one" in both
    both_env = fails(as_bob(bob, show, RED7_TOKEN=token, RED7_TOKEN_FILE=str(path)), 2)
    assert "$RED7_TOKEN and $RED7_TOKEN_FILE both give the seat token: give one" in both_env
    missing = fails(as_bob(bob, [*show, "--token-file", str(tmp_path / "nope")]), 2)
    assert f"Invalid value for --token-file: cannot read {tmp_path / 'nope'}: No such file or directory" in missing
    empty = secret_file(tmp_path, "", "empty")
    nothing = fails(as_bob(bob, [*show, "--token-file", str(empty)]), 2)
    assert f"{empty} holds no seat token on its first line" in nothing
    assert "stdin holds no seat token" in fails(as_bob(bob, [*show, "--token-file", "-"], input=""), 2)


# ---------------------------------------------------------------------------- Redis URLs


@pytest.fixture
def locked_redis(private_redis: Callable[..., RedisServer]) -> Iterator[str]:
    """A Redis that needs a password; yields its URL with the password in it."""
    server = private_redis()
    with redis.Redis.from_url(server.url) as connection:
        connection.config_set("requirepass", PASSWORD)
    url = server.url.replace("redis://", f"redis://:{PASSWORD}@")
    yield url
    with redis.Redis.from_url(url) as connection:
        connection.config_set("requirepass", "")  # so the fixture can shut it down


def test_a_url_from_a_file_or_stdin_and_a_warning_for_a_typed_password(locked_redis: str, tmp_path: Path) -> None:
    url = locked_redis
    home = {"RED7_HOME": str(tmp_path / "home")}
    path = secret_file(tmp_path, url)
    for args, env, stdin in (
        (["status", "--url-file", str(path)], {}, None),
        (["status"], {"REDIS_URL": None, "RED7_URL_FILE": str(path)}, None),
        (["status", "--url-file", "-"], {}, url + "\n"),
        (["status"], {"REDIS_URL": url}, None),
    ):
        result = invoke([*args, "--json"], {**home, **env}, input=stdin)
        assert result.exit_code == 0, (args, result.output)
        assert result.stderr == "", "no warning: the password is not on the command line"
        assert PASSWORD not in result.stdout
    typed = invoke(["status", "--url", url], home)
    assert typed.exit_code == 0 and typed.stderr == WARNING + "\n"
    plain = invoke(["status", "--url", url.replace(f":{PASSWORD}@", "@"), "--json"], home)
    assert "WRONGPASS" in plain.stderr or "NOAUTH" in plain.stderr or "Authentication" in plain.stderr
    assert "Warning" not in plain.stderr, "no password typed, nothing to warn about"
    # A typed --url-file is repeated in the commands printed to paste, like a typed --url.
    line = one_line_error(invoke(["show", "nosuch", "--url-file", str(path)], home))
    assert line == f"Error: no game 'nosuch' (list games with: red7 games --url-file {path})"
    both = fails(invoke(["status", "--url", url, "--url-file", str(path)], home), 2)
    assert "--url and --url-file both give the Redis URL: give one" in both


def test_the_rq_url_from_a_file(locked_redis: str, tmp_path: Path) -> None:
    path = secret_file(tmp_path, locked_redis)
    env: dict[str, str | None] = {"RED7_HOME": str(tmp_path / "home"), "REDIS_URL": None, "RED7_URL_FILE": str(path)}
    result = invoke(["status", "--rq-url-file", str(path), "--json"], env)
    assert result.exit_code == 0 and result.stderr == "", result.output
    assert '"queued_jobs": 0' in result.stdout
    typed = invoke(["status", "--rq-url", locked_redis], env)
    assert typed.exit_code == 0
    assert typed.stderr.startswith("Warning: the RQ Redis URL in --rq-url is seen by every local user in ps")


def cmdlines() -> Iterator[tuple[int, str]]:
    """Every process's arguments, as any local user reads them (``ps``)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                yield int(entry.name), (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue


def test_workers_that_serve_starts_get_the_url_out_of_ps(locked_redis: str, tmp_path: Path) -> None:
    """`red7 serve` handed its workers `--url redis://:password@…` on their command lines:
    readable by every local user for as long as they ran."""
    path = secret_file(tmp_path, locked_redis)
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update(RED7_HOME=str(tmp_path / "home"), RED7_URL_FILE=str(path), RED7_RQ_URL_FILE=str(path))
    serve = subprocess.Popen(
        [str(RED7), "serve", "--workers", "1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    connection = redis.Redis.from_url(locked_redis)
    try:
        wait_for(lambda: live_workers(connection), "serve's worker, connected with the password", timeout=30)
        shown: list[Any] = [(pid, line) for pid, line in cmdlines() if PASSWORD in line]
        assert shown == [], "a password in ps"
    finally:
        serve.send_signal(signal.SIGTERM)
        out, err = serve.communicate(timeout=30)
        connection.close()
    assert serve.returncode == 0, err
    assert PASSWORD not in out + err
