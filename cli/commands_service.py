"""Running the service: serve, worker, shutdown, completion."""

from __future__ import annotations

import logging
import signal
import subprocess
import time
from typing import Any

import click

from red7es.service.connection import embedded_server

from .options import pass_session, url_option
from .session import Session, spawn_worker

__all__ = ["COMMANDS"]


@click.command()
@click.option("--burst", is_flag=True, help="Stop when the queue is empty.")
@click.option("--max-idle", type=int, metavar="SECONDS", help="Stop after this many idle seconds.")
@click.option("--name", help="Worker name (default: random).")
@click.option("--verbose", "-v", is_flag=True, help="Log every job.")
@url_option
@pass_session
def worker(session: Session, burst: bool, max_idle: int | None, name: str | None, verbose: bool) -> None:
    """Run one worker: folds submitted commands into games and plays bots.

    Start as many as you like, on any machine that reaches the Redis; a worker
    killed at any moment loses nothing (another picks its games up).

    \b
    Example:
        REDIS_URL=redis://localhost:6379/0 red7 worker
    """
    from red7es.workers.worker import run_worker

    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    run_worker(
        session.connection,
        burst=burst,
        max_idle=max_idle,
        name=name,
        logging_level="INFO" if verbose else "WARNING",
    )


@click.command()
@click.option(
    "--workers", "-w", "count", type=click.IntRange(1, 64), default=2, show_default=True, help="Worker processes."
)
@url_option
@pass_session
def serve(session: Session, count: int) -> None:
    """Run the service in the foreground: Redis (embedded unless --url) and workers.

    Workers that die are restarted. Ctrl-C stops them (the embedded Redis keeps
    running for the next command; stop it with `red7 shutdown`).

    \b
    Example:
        red7 serve --workers 4
    """
    url = session.endpoint.url
    session.connection.ping()
    processes: list[subprocess.Popen[bytes]] = [spawn_worker(url, max_idle=None) for _ in range(count)]
    click.echo(f"red7es serving {url} with {count} worker(s). Ctrl-C to stop.")
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
                    processes[i] = spawn_worker(url, max_idle=None)
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
    server.stop()
    click.echo(f"Stopped the embedded Redis in {server.directory}.")


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


COMMANDS = [worker, serve, shutdown, completion]
