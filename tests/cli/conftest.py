"""Fixtures for the ``red7`` CLI tests.

Every test runs with ``RED7_HOME`` in a temporary directory (so the user's data
directory and credentials are never touched) and with ``REDIS_URL`` pointing at the
session's private test Redis (so the embedded server is never started by accident).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner, Result

from red7es.cli.main import cli
from red7es.cli.session import live_workers
from red7es.service.redis_server import RedisServer, free_port

RED7 = Path(sys.executable).with_name("red7")


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 20.0, every: float = 0.05) -> Any:
    """Poll ``condition`` until it returns something truthy, or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(every)


def new_id(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class WorkerPool:
    """Real ``red7 worker`` processes on one Redis URL."""

    def __init__(self, url: str, log_dir: Path) -> None:
        self.url = url
        self.log_dir = log_dir
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, count: int) -> None:
        connection = redis.Redis.from_url(self.url)
        before = len(live_workers(connection))
        for _ in range(count):
            log = open(self.log_dir / f"cli-worker{len(self.processes)}.log", "wb")  # noqa: SIM115
            self.processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "red7es.cli", "worker", "--url", self.url],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=dict(os.environ, PYTHONUNBUFFERED="1"),
                )
            )
            log.close()
        wait_for(lambda: len(live_workers(connection)) >= before + count, "the workers to report", timeout=30)
        connection.close()

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + 10
        for process in self.processes:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="module")
def service_url(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The test Redis, flushed, with two real worker processes for this module's tests."""
    connection = redis.Redis.from_url(redis_server.url)
    connection.flushall()
    connection.close()
    pool = WorkerPool(redis_server.url, tmp_path_factory.mktemp("cli-workers"))
    pool.start(2)
    yield redis_server.url
    pool.stop()


@dataclass
class Red7:
    """Runs ``red7`` in-process with CliRunner, as one user (one RED7_HOME)."""

    url: str
    home: Path
    runner: CliRunner = field(default_factory=CliRunner)

    @property
    def env(self) -> dict[str, str]:
        return {"REDIS_URL": self.url, "RED7_HOME": str(self.home), "NO_COLOR": "1"}

    def __call__(self, *args: str, input: str | None = None) -> Result:
        return self.runner.invoke(cli, list(args), env=self.env, input=input, prog_name="red7")

    def ok(self, *args: str) -> Result:
        result = self(*args)
        assert result.exit_code == 0, (args, result.output, result.exception)
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "--json").stdout)

    def credentials(self) -> dict[str, Any]:
        path = self.home / "credentials.json"
        return json.loads(path.read_text()) if path.exists() else {"games": {}}


def fails(result: Result, code: int = 1) -> str:
    """Assert a clean failure: the exit code, no traceback; returns stderr."""
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result.stderr


def one_line_error(result: Result) -> str:
    """A rejected command: exit 1 and exactly one ``Error: ...`` line on stderr."""
    err = fails(result, 1)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("Error: "), err
    return lines[0]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never the user's data directory, never the embedded Redis by accident.

    RED7_HOME is a temporary directory, and REDIS_URL points at a closed port unless a
    test sets it (a command that forgot --url fails fast instead of starting Redis).
    """
    monkeypatch.setenv("RED7_HOME", str(tmp_path / "default-home"))
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.fixture
def homes(tmp_path: Path) -> Callable[[str], Path]:
    """Data directories of separate users (one RED7_HOME each)."""

    def home(user: str) -> Path:
        path = tmp_path / f"home-{user}"
        path.mkdir(exist_ok=True)
        return path

    return home


@pytest.fixture
def alice(service_url: str, homes: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch) -> Red7:
    monkeypatch.setenv("REDIS_URL", service_url)
    return Red7(service_url, homes("alice"))


@pytest.fixture
def bob(service_url: str, homes: Callable[[str], Path]) -> Red7:
    return Red7(service_url, homes("bob"))
