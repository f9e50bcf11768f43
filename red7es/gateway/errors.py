"""Every error the gateway answers: a JSON body ``{"error": "one line"}`` and its status.

The service's exceptions keep their one-line messages; each kind maps to one HTTP
status here, in one place, so no route decides a status of its own for them and no
traceback ever reaches a client.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from red7es.service.client import BadCreate, BrokenGame, GameExists, NoWorker, Rejected, ServiceError, UnreadableKey
from red7es.service.connection import UNREACHABLE_ERRORS
from red7es.service.records import RecordError
from red7es.service.store import NoSuchGame
from red7es.tournament.ids import NoSuchTournament, TournamentError

__all__ = ["GatewayError", "BodyLimit", "MAX_BODY", "error_response", "install"]

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024  # bytes: no request of the protocol is near it


class GatewayError(Exception):
    """An answer other than success: ``status`` and one line."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


def error_response(status: int, message: str, **extra: Any) -> JSONResponse:
    line = " ".join(message.split()) or "error"
    return JSONResponse({"error": line, **extra}, status_code=status)


def status_of(exc: Exception) -> int:
    """The HTTP status of a service exception."""
    if isinstance(exc, NoSuchGame | NoSuchTournament):
        return 404
    if isinstance(exc, BadCreate | TournamentError):
        return 400  # a create's seats, names or bots (said as red7 new says them); a tournament id of the wrong shape
    if isinstance(exc, GameExists):
        return 409
    if isinstance(exc, (NoWorker, *UNREACHABLE_ERRORS)):
        return 503
    if isinstance(exc, UnreadableKey):
        return 500
    if isinstance(exc, BrokenGame | Rejected | RecordError | ServiceError):
        return 409
    return 500


def install(app: FastAPI) -> None:
    """Register the handlers that turn every failure into a JSON error."""

    @app.exception_handler(GatewayError)
    async def gateway_error(_request: Request, exc: GatewayError) -> JSONResponse:
        return error_response(exc.status, exc.message, **exc.extra)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(400, _validation_line(exc))

    @app.exception_handler(HTTPException)
    async def http_error(_request: Request, exc: HTTPException) -> JSONResponse:
        if exc.status_code == 400 and exc.detail == _UNPARSED_BODY:
            # (FastAPI's words for a body its JSON parser gave up on otherwise than by a
            # syntax error: nested too deep, not UTF-8, an integer too long to read)
            return error_response(400, "the body is not valid JSON")
        return error_response(exc.status_code, str(exc.detail))

    async def known(request: Request, exc: Exception) -> JSONResponse:
        status = status_of(exc)
        if isinstance(exc, UNREACHABLE_ERRORS):
            return error_response(503, "Redis is unavailable: try again shortly")
        if status == 500 and not isinstance(exc, UnreadableKey):
            log.error("gateway: %s %s failed", request.method, request.url.path, exc_info=exc)
            return error_response(500, "internal error (logged by the gateway)")
        return error_response(status, str(exc))

    # Known kinds are answered here, quietly; anything else by the last handler, which
    # Starlette also re-raises so that the server logs it (and the client gets one line).
    for kind in (NoSuchGame, NoSuchTournament, TournamentError, ServiceError, RecordError, *UNREACHABLE_ERRORS):
        app.add_exception_handler(kind, known)
    app.add_exception_handler(Exception, known)


_UNPARSED_BODY = "There was an error parsing the body"


def _validation_line(exc: RequestValidationError) -> str:
    """The first problem of a request that does not fit its schema, in one line."""
    errors = exc.errors()
    if not errors:
        return "malformed request"
    first = errors[0]
    if first.get("type") == "json_invalid":
        return "the body is not valid JSON"
    where = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
    return f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg", "malformed request"))


class BodyLimit:
    """ASGI middleware: refuse a request body larger than ``limit`` bytes with 413,
    from its Content-Length or as soon as more arrives, without ever holding more."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await self._refuse(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message]), send)
                return
            body += message.get("body", b"")
            more = bool(message.get("more_body"))
            if len(body) > self.limit:
                await self._refuse(scope, receive, send)
                return
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": False}], receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(413, f"the request body is larger than {self.limit} bytes")
        await response(scope, receive, send)


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    """A receive that gives ``messages`` first, then what ``then`` gives (a disconnect)."""
    pending = list(messages)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive
