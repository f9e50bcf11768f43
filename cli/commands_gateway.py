"""``red7 gateway``: the HTTP gateway, so players, spectators and bots never need Redis."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import click
from click.decorators import FC

from red7es.gateway.settings import CREATE_MODES, OPERATOR, Creation, Limits
from red7es.service.connection import is_cluster_url

from .options import pass_session, url_option
from .session import Session

__all__ = ["COMMANDS"]


def _limit(flag: str, default: int, envvar: str, what: str) -> Callable[[FC], FC]:
    """One of the gateway's limits: a whole number, 0 for none."""
    return click.option(
        flag,
        type=click.IntRange(0),
        default=default,
        show_default=True,
        envvar=envvar,
        help=f"{what} (then 429); 0: no limit.",
    )


@click.command()
@click.option(
    "--host", default="127.0.0.1", show_default=True, envvar="RED7_GATEWAY_HOST", help="Address to listen on."
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8007,
    show_default=True,
    envvar="RED7_GATEWAY_PORT",
    help="TCP port to listen on (0: any free one).",
)
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="info",
    show_default=True,
    help="uvicorn's log level (info logs every request).",
)
@_limit("--rate", Limits.rate, "RED7_GATEWAY_RATE", "Most requests one client address may make per --rate-window")
@_limit(
    "--seat-rate",
    Limits.seat_rate,
    "RED7_GATEWAY_SEAT_RATE",
    "Most requests signed by one seat's token per --rate-window",
)
@click.option(
    "--rate-window",
    type=click.FloatRange(0.001, 3600),
    default=Limits.window,
    show_default=True,
    envvar="RED7_GATEWAY_RATE_WINDOW",
    help="Seconds of the rate limits' window (counted in Redis, shared by every gateway).",
)
@_limit(
    "--max-streams",
    Limits.streams,
    "RED7_GATEWAY_MAX_STREAMS",
    "Most streams one client address may hold open on this process",
)
@_limit(
    "--max-connections",
    Limits.connections,
    "RED7_GATEWAY_MAX_CONNECTIONS",
    "Most connections one client address (IPv6: its /64) may hold open on this process;"
    " a reverse proxy $FORWARDED_ALLOW_IPS names has none",
)
@_limit(
    "--create-rate",
    Limits.create,
    "RED7_GATEWAY_CREATE_RATE",
    "Most games one client address may create per --rate-window",
)
@click.option(
    "--create",
    "create_mode",
    type=click.Choice(CREATE_MODES),
    default="open",
    show_default=True,
    envvar="RED7_GATEWAY_CREATE",
    help="Who may create games over HTTP: anyone, whoever sends the operator key, or nobody.",
)
@click.option(
    "--operator-key-file",
    type=click.Path(exists=True, dir_okay=False),
    envvar="RED7_OPERATOR_KEY_FILE",
    help="File holding the operator key for --create operator (or the key itself in $RED7_OPERATOR_KEY).",
)
@click.option(
    "--ssl-certfile",
    type=click.Path(exists=True, dir_okay=False),
    envvar="RED7_GATEWAY_SSL_CERTFILE",
    help="Serve HTTPS with this PEM certificate (chain); needs --ssl-keyfile.",
)
@click.option(
    "--ssl-keyfile",
    type=click.Path(exists=True, dir_okay=False),
    envvar="RED7_GATEWAY_SSL_KEYFILE",
    help="The PEM private key of --ssl-certfile (unencrypted).",
)
@url_option
@pass_session
def gateway(
    session: Session,
    host: str,
    port: int,
    log_level: str,
    rate: int,
    seat_rate: int,
    rate_window: float,
    max_streams: int,
    max_connections: int,
    create_rate: int,
    create_mode: str,
    operator_key_file: str | None,
    ssl_certfile: str | None,
    ssl_keyfile: str | None,
) -> None:
    """Serve the HTTP API (red7 help gateway) in front of Redis, in the foreground.

    Players sign their turns and their reads with their seat's token, which never
    leaves them; spectators read public views and streams. Stateless: run as many
    as you like on one Redis. Ctrl-C stops it. The API's OpenAPI document is at
    http://HOST:PORT/openapi.json. Requests are rate-limited per client address and per
    seat (429 past a limit); --ssl-certfile/--ssl-keyfile serve HTTPS.
    POST /api/games creates a game: for anyone (--create open), for whoever
    sends "Authorization: Bearer KEY" (--create operator, the key in
    --operator-key-file or $RED7_OPERATOR_KEY), or nobody (--create closed).

    \b
    Example:
        red7 gateway --url redis://localhost:6379/0 --port 8007
        red7 gateway --create operator --operator-key-file /etc/red7/operator.key
    """
    import uvicorn

    from red7es.gateway import create_app
    from red7es.gateway.serving import uvicorn_options

    if (ssl_certfile is None) != (ssl_keyfile is None):
        raise click.UsageError("--ssl-certfile and --ssl-keyfile go together")
    creation = _creation(create_mode, operator_key_file)
    url = session.endpoint.url
    if is_cluster_url(url):
        raise click.ClickException("the gateway does not serve a Redis Cluster yet: give it one Redis server's URL")
    session.connection.ping()
    limits = Limits(
        rate=rate,
        seat_rate=seat_rate,
        window=rate_window,
        streams=max_streams,
        connections=max_connections,
        create=create_rate,
    )
    scheme = "https" if ssl_certfile else "http"
    click.echo(f"red7es gateway on {scheme}://{host}:{port} for {session.endpoint.shown}. Ctrl-C to stop.")
    uvicorn.run(
        create_app(url, limits=limits, creation=creation),
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        ssl_certfile=ssl_certfile,
        ssl_keyfile=ssl_keyfile,
        # Slow clients (slowloris): each request must arrive whole within 10 s, idle
        # keep-alives end after 5 s, headers over 16 KiB are refused, one client address
        # holds at most --max-connections, and past 4,096 connections at once a new one is
        # answered 503 (red7es/gateway/serving.py).
        **uvicorn_options(max_connections=max_connections),
    )


def _creation(mode: str, key_file: str | None) -> Creation:
    """Who may create games; a usage error (exit 2) for a key without operator mode, or
    operator mode without a key (or one too short to protect anything)."""
    if key_file is not None and mode != OPERATOR:
        raise click.UsageError("--operator-key-file is for --create operator")
    key: str | None = None
    if mode == OPERATOR:
        if key_file is not None:
            try:
                key = Path(key_file).read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise click.UsageError(f"--operator-key-file {key_file}: {exc}") from None
        else:
            key = (os.environ.get("RED7_OPERATOR_KEY") or "").strip() or None
        if key is None:
            raise click.UsageError("--create operator needs --operator-key-file FILE (or $RED7_OPERATOR_KEY)")
    try:
        return Creation(mode, key)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


COMMANDS = [gateway]
