"""The web table: the lobby (``/``), a game's table (``/g/<game>``) and a tournament's
page (``/t/<tournament>``), as static pages.

Plain HTML, CSS and JavaScript from ``static/`` (shipped in the wheel), with no build
step.  The pages hold no game logic of their own: they read the same API as any other
client (docs/gateway.md), follow the public stream with ``EventSource``, and a seat's
stream with ``fetch()``, signing requests and turns in the browser with WebCrypto's
Ed25519 (docs/web.md): the seat's token never leaves the browser.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from red7es.service.store import NoSuchGame, valid_game_id
from red7es.tournament.ids import NoSuchTournament, valid_tournament_id

__all__ = ["REPORT_HEADERS", "STATIC", "install"]

STATIC = Path(__file__).parent / "static"

# The pages load only their own files and talk only to this gateway: a name or any other
# text a player chose is set as text by the scripts, and this policy stops any script
# that got into a page some other way from running or sending anything elsewhere.
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # a seat link carries its token after '#': never sent, but be sure
    "Cache-Control": "no-cache",
}


# A page with no script of its own (the tournament's HTML report: styles inline).
REPORT_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _page(name: str) -> FileResponse:
    return FileResponse(STATIC / name, media_type="text/html; charset=utf-8", headers=_HEADERS)


class _Static(StaticFiles):
    """The pages' own files, under the same policy as the pages (``/web/table.html`` is a page too)."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update(_HEADERS)
        return response


def install(app: FastAPI) -> None:
    """Add the lobby, the table, the tournament page and their static files to the gateway's ``app``."""

    @app.get("/", include_in_schema=False)
    async def lobby() -> FileResponse:
        return _page("lobby.html")

    @app.get("/g/{game_id}", include_in_schema=False)
    async def table(game_id: str) -> FileResponse:
        if not valid_game_id(game_id):
            raise NoSuchGame(game_id)
        return _page("table.html")

    @app.get("/t/{tournament}", include_in_schema=False)
    async def tournament(tournament: str) -> FileResponse:
        if not valid_tournament_id(tournament):
            raise NoSuchTournament(tournament)
        return _page("tournament.html")

    app.mount("/web", _Static(directory=STATIC), name="web")
