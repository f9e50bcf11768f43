"""``red7 gateway``: the HTTP gateway, so players, spectators and bots never need Redis."""

from __future__ import annotations

import click

from red7es.service.connection import is_cluster_url

from .options import pass_session, url_option
from .session import Session

__all__ = ["COMMANDS"]


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
@url_option
@pass_session
def gateway(session: Session, host: str, port: int, log_level: str) -> None:
    """Serve the HTTP API (docs/gateway.md) in front of Redis, in the foreground.

    Players sign their turns and their reads with their seat's token, which never
    leaves them; spectators read public views and streams. Stateless: run as many
    as you like on one Redis. Ctrl-C stops it. The API's interactive docs are at
    http://HOST:PORT/docs. A preview: no TLS, rate limits or tournaments yet.

    \b
    Example:
        red7 gateway --url redis://localhost:6379/0 --port 8007
    """
    import uvicorn

    from red7es.gateway import create_app

    url = session.endpoint.url
    if is_cluster_url(url):
        raise click.ClickException("the gateway does not serve a Redis Cluster yet: give it one Redis server's URL")
    session.connection.ping()
    click.echo(f"red7es gateway on http://{host}:{port} for {session.endpoint.shown}. Ctrl-C to stop.")
    uvicorn.run(create_app(url), host=host, port=port, log_level=log_level, lifespan="on")


COMMANDS = [gateway]
