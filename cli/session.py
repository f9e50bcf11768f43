"""A CLI command's connection to the service, and the local worker it may need."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from functools import cached_property

import click
import redis

from red7es.service.archive import archived_divergence
from red7es.service.client import GameService
from red7es.service.connection import Endpoint, UnreachableError, data_dir, resolve
from red7es.service.http_client import HttpGameService, is_http_url, server_key
from red7es.service.transport import GameClient
from red7es.service.witness import head_now, live_divergence

from .credentials import Credentials, Seen

__all__ = ["Session", "live_workers", "spawn_worker"]

WORKER_BEAT_PREFIX = "red7:worker:"


def live_workers(connection: redis.Redis) -> list[str]:
    """Names of red7es workers that reported within the last few seconds."""
    names = []
    for key in connection.scan_iter(match=f"{WORKER_BEAT_PREFIX}*", count=100):
        names.append(key.decode()[len(WORKER_BEAT_PREFIX) :])
    return sorted(names)


def spawn_worker(
    url: str, max_idle: int | None = 900, rq_url: str | None = None, *, slow_bots: bool = True
) -> subprocess.Popen[bytes]:
    """Start a background worker (that exits after ``max_idle`` idle seconds, if given;
    without ``slow_bots``, one kept for people's moves: ``red7 worker --no-slow-bots``).

    The URLs go in its environment, not on its command line, where a password in them
    would be in ``ps`` for every local user for as long as the worker runs.
    """
    log_path = data_dir() / "worker.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "ab")  # noqa: SIM115 - handed to the child process
    env = {k: v for k, v in os.environ.items() if k not in ("RED7_URL_FILE", "RED7_RQ_URL", "RED7_RQ_URL_FILE")}
    env.update(REDIS_URL=url, PYTHONUNBUFFERED="1", **({} if rq_url is None else {"RED7_RQ_URL": rq_url}))
    return subprocess.Popen(
        [sys.executable, "-m", "red7es.cli", "worker"]
        + ([] if max_idle is None else ["--max-idle", str(max_idle)])
        + ([] if slow_bots else ["--no-slow-bots"]),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=env,
        # `python -m` puts the working directory first on sys.path: started from a
        # checkout of red7es, its red7es/ folder (which has no cli/) would shadow the
        # installed package. The data directory holds no Python code.
        cwd=log_path.parent,
    )


@dataclass
class Session:
    """Lazily connects on first use, so ``--help`` never needs Redis.

    A ``url`` whose scheme is ``http`` or ``https`` names a gateway (docs/gateway.md):
    :attr:`client` then talks HTTP and nothing here ever opens a Redis connection; the
    seats' tokens and the heads seen are kept under the gateway's :func:`server_key`, so
    a game id on one server never meets the same id on another.
    """

    url: str | None
    credentials: Credentials = field(default_factory=Credentials)
    seen: Seen = field(default_factory=Seen)
    warned: set[str] = field(default_factory=set)  # games whose rollback this command has told

    def __post_init__(self) -> None:
        if self.remote:
            assert self.url is not None
            self.credentials = Credentials(self.credentials.path, server=server_key(self.url))
            self.seen = Seen(self.seen.path, server=server_key(self.url))

    @property
    def remote(self) -> bool:
        """Whether this command reaches games through a gateway (an http:// or https:// URL)."""
        return is_http_url(self.url)

    @cached_property
    def client(self) -> GameClient:
        """The player's commands' interface to games, on Redis or over HTTP (red7es.service.transport)."""
        if self.remote:
            assert self.url is not None
            http = HttpGameService(self.url)
            http.keep_token = self.credentials.save  # saved before any wait for a worker
            http.forget_token = self.credentials.forget
            return http
        return self.service

    @cached_property
    def endpoint(self) -> Endpoint:
        if self.remote:  # a bug: a command that needs Redis let a gateway's URL through
            raise AssertionError(f"a Redis endpoint asked of a gateway's URL: {self.url}")
        try:
            return resolve(self.url)
        except UnreachableError as exc:
            raise click.ClickException(str(exc)) from None

    @cached_property
    def connection(self) -> redis.Redis:
        try:
            return self.endpoint.connect()
        except UnreachableError as exc:
            raise click.ClickException(str(exc)) from None

    @cached_property
    def service(self) -> GameService:
        service = GameService(self.connection)
        service.keep_token = self.credentials.save  # saved before any wait for a worker
        if self.endpoint.embedded:
            # A local worker may have died (its heartbeat lingers a few seconds):
            # when an answer is slow, check again and start one if needed.
            service.on_slow = self.ensure_worker
        return service

    def ensure_worker(self) -> None:
        """On the embedded default, start a local worker if none is running."""
        if self.remote or not self.endpoint.embedded or live_workers(self.connection):
            return
        spawn_worker(self.endpoint.url)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if live_workers(self.connection):
                return
            time.sleep(0.1)
        raise click.ClickException(f"started a worker but it did not come up; see {data_dir() / 'worker.log'}")

    def witness(self, game_id: str) -> None:
        """Check the game in Redis against the heads this user was shown; remember its head now.

        A game rolled back (an OS crash lost Redis's last writes: docs/architecture.md)
        or rewritten is said in one line on stderr, once per command. Its heads are then
        not remembered any more, so every later command says it again and
        ``red7 audit --as`` fails it (docs/trust.md).  Over HTTP there is no log to check
        against: nothing is checked (docs/gateway.md, The CLI over HTTP).
        """
        if self.remote or game_id in self.warned:
            return
        try:
            heads = self.seen.heads(game_id)
            archived, problem = archived_divergence(self.connection, game_id, heads) if heads else (False, None)
            if not archived:
                problem = live_divergence(self.connection, game_id, heads)
            if problem is None:
                now = head_now(self.connection, game_id)
                if now is not None:
                    self.seen.remember(game_id, now.version, now.head)
                return
            line = f"game {game_id} is not what you were shown: {problem.reason}"
        except OSError as exc:  # the file of heads seen cannot be read or written: the game still shows
            line = str(exc)
        except redis.ResponseError:  # a key of the game holds what no worker writes: said by the workers
            return
        self.warned.add(game_id)
        click.echo(f"warning: {line} (red7 help trust)", err=True)
