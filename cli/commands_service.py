"""Running the service: serve, worker, shutdown, completion."""

from __future__ import annotations

import logging
import signal
import subprocess
import time
from typing import Any

import click
import redis

from red7es.bots.ismcts import MAX_TIME
from red7es.service.client import QUEUE_NAME
from red7es.service.connection import (
    UNREACHABLE_ERRORS,
    UnreachableError,
    backoff,
    client_for,
    embedded_server,
    is_cluster_url,
    masked_url,
)
from red7es.service.names import shown
from red7es.service.store import DEFAULT_MAX_BOT_TIME, KEEP_CHANGES_MS

from .options import IN_PS, emit_json, has_password, json_option, pass_session, secret_option, url_option
from .session import Session, live_workers, spawn_worker

__all__ = ["COMMANDS"]

rq_url_option = secret_option(
    "--rq-url",
    envvar="RED7_RQ_URL",
    file_envvar="RED7_RQ_URL_FILE",
    metavar="URL",
    what="RQ Redis URL",
    help="A separate Redis for RQ's queues (default: $RED7_RQ_URL, else the --url one); "
    f"a password in it is {IN_PS}: a warning says so.",
    secret=has_password,
)


@click.command()
@click.option("--burst", is_flag=True, help="Serve one shift (10 s of games), then stop.")
@click.option("--max-idle", type=int, metavar="SECONDS", help="Stop after this many idle seconds.")
@click.option("--name", help="Worker name (default: random).")
@click.option(
    "--max-bot-time",
    type=click.FloatRange(0, MAX_TIME, min_open=True),
    default=DEFAULT_MAX_BOT_TIME,
    show_default=True,
    envvar="RED7_MAX_BOT_TIME",
    metavar="SECONDS",
    help="The longest a bot may think on one turn: new games asking more are refused, older ones cut short.",
    callback=lambda _ctx, _param, value: _a_number(value),
)
@click.option(
    "--slow-bots/--no-slow-bots",
    default=True,
    show_default=True,
    envvar="RED7_SLOW_BOTS",
    help="Whether to play bots that think long (ismcts:time=2); a worker without keeps people's moves quick.",
)
@click.option(
    "--keep-changes",
    type=click.IntRange(0),
    default=KEEP_CHANGES_MS // 1000,
    show_default=True,
    envvar="RED7_KEEP_CHANGES",
    metavar="SECONDS",
    help="How long a finished game keeps every change, for watchers resuming a dropped stream, before"
    " it is compacted (0: at once).",
)
@click.option("--verbose", "-v", is_flag=True, help="Log every job.")
@rq_url_option
@url_option
@pass_session
def worker(
    session: Session,
    burst: bool,
    max_idle: int | None,
    name: str | None,
    max_bot_time: float,
    slow_bots: bool,
    keep_changes: int,
    verbose: bool,
    rq_url: str | None,
) -> None:
    """Run one worker: folds submitted commands into games and plays bots.

    Start as many as you like, on any machine that reaches the Redis; a worker
    killed at any moment loses nothing (another picks its games up). A worker
    started before its Redis says so once and waits for it.

    Bots that think long (over half a second a turn) are played only by workers
    with --slow-bots: run at least one with --no-slow-bots, and people's moves are
    never kept waiting behind a bot's search.

    \b
    Example:
        REDIS_URL=redis://localhost:6379/0 red7 worker
        red7 worker --no-slow-bots        # a worker kept for people's moves
    """
    from red7es.workers.worker import run_worker

    if is_cluster_url(session.endpoint.url) and not rq_url:
        raise click.ClickException(
            f"{session.endpoint.shown} is a Redis Cluster and RQ needs a single Redis server:"
            " give it one with --rq-url (or RED7_RQ_URL)"
        )
    if rq_url and is_cluster_url(rq_url):
        raise click.ClickException(f"--rq-url {masked_url(rq_url)} is a Redis Cluster: RQ needs a single Redis server")
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    redis_down = False
    try:
        session.endpoint.connect().close()
    except UnreachableError as exc:
        click.echo(f"{exc}; waiting for it (Ctrl-C to stop)", err=True)
        redis_down = True
    run_worker(
        # Not session.connection, which refuses to start while Redis is down: a worker
        # started before its Redis waits for it (run_worker reconnects).
        _client_when_reachable(session.endpoint.url),
        redis.Redis.from_url(rq_url, socket_connect_timeout=5, socket_timeout=None) if rq_url else None,
        burst=burst,
        max_idle=max_idle,
        name=name,
        logging_level="INFO" if verbose else "WARNING",
        redis_down=redis_down,
        slow_bots=slow_bots,
        max_bot_time=max_bot_time,
        keep_changes_ms=keep_changes * 1000,
    )


def _a_number(value: float) -> float:
    """``value`` unless it is nan, which click's FloatRange lets through (no comparison is true of it)."""
    if value != value:
        raise click.BadParameter("nan is not a number of seconds")
    return value


def _client_when_reachable(url: str) -> redis.Redis:
    """A client for ``url``, waiting as long as it takes for a cluster to answer.

    A plain client connects lazily, but the cluster client asks a node for the slot
    map as it is made; a worker started before its cluster must wait for that.
    """
    for delay in backoff():
        try:
            return client_for(url, socket_connect_timeout=5, socket_timeout=None)
        except UNREACHABLE_ERRORS:
            time.sleep(delay)
    raise AssertionError("unreachable: backoff() never ends")  # pragma: no cover


@click.command()
@click.option(
    "--workers", "-w", "count", type=click.IntRange(1, 64), default=2, show_default=True, help="Worker processes."
)
@rq_url_option
@url_option
@pass_session
def serve(session: Session, count: int, rq_url: str | None) -> None:
    """Run the service in the foreground: Redis (embedded unless --url) and workers.

    With two workers or more, the first plays no bot that thinks long (red7
    worker --no-slow-bots), so people's moves never wait on a bot's search.
    Workers that die are restarted. Ctrl-C stops them (the embedded Redis keeps
    running for the next command; stop it with `red7 shutdown`).

    \b
    Example:
        red7 serve --workers 4
    """
    url = session.endpoint.url
    if is_cluster_url(url) and not rq_url:
        raise click.ClickException(
            f"{session.endpoint.shown} is a Redis Cluster and RQ needs a single Redis server:"
            " give it one with --rq-url (or RED7_RQ_URL)"
        )
    session.connection.ping()

    def spawn(i: int) -> subprocess.Popen[bytes]:
        # With two or more, the first is kept for people's moves: no bot's search holds them up.
        return spawn_worker(url, None, rq_url, slow_bots=i > 0 or count == 1)

    processes: list[subprocess.Popen[bytes]] = [spawn(i) for i in range(count)]
    click.echo(f"red7es serving {session.endpoint.shown} with {count} worker(s). Ctrl-C to stop.")
    stopping = False

    def stop(*_: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    try:
        while not stopping:
            for i, process in enumerate(processes):
                if process.poll() is not None and not stopping:
                    click.echo(f"worker {process.pid} exited ({process.returncode}); restarting", err=True)
                    processes[i] = spawn(i)
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
    click.echo("stopped.")


@click.command()
def shutdown() -> None:
    """Stop the embedded Redis (data is kept in the data directory).

    \b
    Example:
        red7 shutdown
    """
    server = embedded_server()
    if not server.ping():
        click.echo("The embedded Redis is not running.")
        return
    _stop_workers(server.client())
    server.stop()
    click.echo(f"Stopped the embedded Redis in {server.directory}.")


def _stop_workers(connection: Any, timeout: float = 10.0) -> None:
    """Ask the workers on this Redis to stop: once it is gone they would retry it forever."""
    from rq import Worker
    from rq.command import send_shutdown_command

    names = set(live_workers(connection))
    for name in names:
        send_shutdown_command(connection, name)
    deadline = time.monotonic() + timeout
    while names and time.monotonic() < deadline:
        names &= {w.name for w in Worker.all(connection=connection)}
        time.sleep(0.1)


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script for SHELL.

    \b
    Example (bash):
        eval "$(red7 completion bash)"
    """
    from click.shell_completion import get_completion_class

    from .main import cli

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click ships all three
        raise click.ClickException(f"no completion for {shell}")
    click.echo(cls(cli, {}, "red7", "_RED7_COMPLETE").source())


@click.command()
@click.option(
    "--worker",
    "worker_name",
    metavar="NAME",
    help="Exit 1 unless the worker named NAME (red7 worker --name NAME) is alive (healthchecks).",
)
@click.option("--min-workers", type=int, default=0, help="Exit 1 with fewer live workers than this.")
@rq_url_option
@json_option
@url_option
@pass_session
def status(session: Session, worker_name: str | None, min_workers: int, rq_url: str | None, as_json: bool) -> None:
    """Show where the service runs and whether it is healthy.

    Redis URL and version, live workers, queued jobs, games. Exits 1 if Redis is
    unreachable or the --worker/--min-workers checks fail. --worker takes the
    name a worker was started with (--name; without it the name is random, see
    the list this command prints).

    \b
    Examples:
        red7 status
        red7 worker --name "$(hostname)" &      # in a container: name the worker
        red7 status --worker "$(hostname)"      # its healthcheck
    """
    connection = session.connection
    info = connection.info("server")
    workers = live_workers(connection)
    queued: int | None = None  # unknown: beside a cluster RQ has a Redis of its own
    if rq_url:
        with redis.Redis.from_url(rq_url, socket_connect_timeout=5) as rq_connection:
            queued = rq_connection.llen(f"rq:queue:{QUEUE_NAME}")
    elif not is_cluster_url(session.endpoint.url):
        queued = connection.llen(f"rq:queue:{QUEUE_NAME}")
    report = {
        "url": session.endpoint.shown,
        "embedded": session.endpoint.embedded,
        "redis_version": info.get("redis_version"),
        "workers": workers,
        "queued_jobs": queued,
        "games": session.service.store.count_games(),
        "active_games": connection.scard("red7:active"),
    }
    problems = []
    if worker_name is not None and worker_name not in workers:
        problems.append(f"worker {worker_name} is not alive")  # (escaped with the error line, if printed)
    if len(workers) < min_workers:
        problems.append(f"{len(workers)} live worker(s), fewer than {min_workers}")
    if as_json:
        emit_json({**report, "problems": problems})
    else:
        where = "embedded Redis" if report["embedded"] else "Redis"
        click.echo(f"{where} {report['redis_version']} at {report['url']}")
        # worker names are whatever `red7 worker --name` (or a key in Redis) says
        click.echo(f"workers: {len(workers)} live" + (f" ({', '.join(shown(w) for w in workers)})" if workers else ""))
        jobs = "unknown (RQ's Redis not given: --rq-url)" if queued is None else str(queued)
        click.echo(f"queued jobs: {jobs}; games: {report['games']} ({report['active_games']} not over)")
    if problems:
        raise click.ClickException("; ".join(problems))


COMMANDS = [worker, serve, shutdown, completion, status]
