"""The gateway's ASGI app: the HTTP API in front of Redis (docs/gateway.md).

Stateless: everything it knows is in Redis, so any number of processes may serve one
Redis behind a load balancer.  One-shot reads and writes go through the same
:class:`~red7es.service.client.GameService` the CLI uses, in a thread pool (each holds
a pooled connection for one short command); waiting — streams, and a submitted turn's
answer — goes through the process's one :class:`~red7es.gateway.hub.Hub`, so no client
ever holds a blocking Redis connection.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from functools import partial
from typing import Annotated, Any, TypeVar

import anyio
from fastapi import Depends, FastAPI, Header, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr
from starlette.concurrency import run_in_threadpool

from red7es.service.client import Answer, GameService, answer_in
from red7es.service.connection import client_for, is_cluster_url
from red7es.service.record_files import record_bytes
from red7es.service.records import export, stream_order
from red7es.service.store import TOURNAMENT_GAMES, NoSuchGame, new_game_id, valid_game_id, whole_number
from red7es.service.tokens import key_problem

from . import auth, errors, tournaments, web
from .creation import CreateBody, asked_game
from .hub import Hub, Subscriber
from .limits import ClientRate, Limiter, Limits, RateLimit, client_address, too_many
from .settings import Creation
from .streams import HEARTBEAT, StreamResponse, change_lines, frames, told_changes
from .turns import SeatKeys, TurnBody, appended_turn, known_turn, remembered_turn

__all__ = ["create_app", "ANSWER_WAIT"]

T = TypeVar("T")
ANSWER_WAIT = 10.0  # seconds a submit waits for the referee's answer
_CHANGE_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")  # fullmatch only: `$` matches before a final newline


class JoinBody(BaseModel):
    """The public key of a token the client made for itself; the token never leaves it."""

    model_config = ConfigDict(extra="forbid")
    key: StrictStr = Field(description="hex Ed25519 public key (64 lower-case hex digits)")


def create_app(
    url: str,
    *,
    heartbeat: float = HEARTBEAT,
    queue_size: int | None = None,
    limits: Limits | None = None,
    creation: Creation | None = None,
) -> FastAPI:
    """The gateway for the Redis at ``url`` (not a cluster: see docs/gateway.md), with
    ``limits`` (default :class:`Limits`'s: ``Limits.off()`` for none) and ``creation``
    saying who may create games (default: anyone)."""
    if is_cluster_url(url):
        raise ValueError("the gateway does not serve a Redis Cluster yet: give it one Redis server's URL")
    creation = creation or Creation()
    # Games are created with a transaction, not create.lua: the gateway's Redis user may
    # write a new game's seed but never read one (docs/gateway.md, Its Redis user).
    service = GameService(client_for(url), scripted_create=False)
    hub = Hub(url) if queue_size is None else Hub(url, queue_size=queue_size)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        hub.start()
        try:
            yield
        finally:
            await hub.stop()

    app = FastAPI(
        title="red7es gateway",
        summary="Play, watch and audit Red7 games without Redis access (docs/gateway.md).",
        version="1",
        lifespan=lifespan,
        # No Swagger UI or ReDoc page: FastAPI's load their scripts from a CDN, by a moving
        # version tag and without an integrity hash, into the origin where the web table
        # keeps seats' tokens (localStorage). The OpenAPI document stays at /openapi.json.
        docs_url=None,
        redoc_url=None,
    )
    # A path with a slash too many is a 404 like any other, not a 307 to a Location built
    # from the client's own Host header (which an open redirect would send anywhere).
    app.router.redirect_slashes = False
    app.state.hub = hub
    app.state.service = service
    limiter = Limiter(hub.redis, limits or Limits())
    seat_keys = SeatKeys()  # the keys of seats whose turns passed here: their next turns need no read
    app.state.seat_keys = seat_keys
    app.state.limiter = limiter
    errors.install(app)

    @app.exception_handler(RateLimit)
    async def rate_limited(_request: Request, exc: RateLimit) -> Response:
        return too_many(exc)

    app.add_middleware(errors.BodyLimit)
    app.add_middleware(ClientRate, limiter=limiter)  # outermost: counted before any body is read

    async def blocking(fn: Callable[..., T], *args: Any) -> T:
        return await run_in_threadpool(fn, *args)

    async def public_view(game_id: str) -> dict[str, Any]:
        if not valid_game_id(game_id):
            raise NoSuchGame(game_id)
        return await blocking(service.view, game_id)

    async def seat_in(view: dict[str, Any], game_id: str, seat: str) -> int:
        number = _seat_number(view, seat)
        if number is None:
            raise errors.GatewayError(404, f"no seat {seat!r} in game {game_id}")
        return number

    async def signed_seat(request: Request, game_id: str, seat_name: str) -> tuple[int, dict[str, Any]]:
        """The seat a signed request is for, once its signature, time and nonce pass."""
        view = await public_view(game_id)
        seat = await seat_in(view, game_id, seat_name)
        keys = [s.get("key") for s in view["seats"]]
        await auth.authenticate(hub.redis, request.headers, request.method, _signed_path(request), game_id, seat, keys)
        await limiter.seat(game_id, seat)  # only once it is the seat's own request
        return seat, view

    @app.get("/api/games", summary="The newest games")
    async def list_games(limit: Annotated[int, Query(ge=1, le=500)] = 50) -> list[dict[str, Any]]:
        return [summary.as_json() for summary in await blocking(service.games, limit)]

    async def may_create(request: Request) -> None:
        """403 unless this gateway lets the request create a game; then count it against the
        client's creation allowance (the client's own allowance counted it already)."""
        refusal = creation.refusal(request.headers)
        if refusal is not None:
            raise errors.GatewayError(403, refusal)
        await limiter.create(client_address(request.scope))

    @app.post(
        "/api/games",
        status_code=201,
        summary="Create a game (open, operator key, or closed: red7 gateway --create)",
        dependencies=[Depends(may_create)],
    )
    async def create_game(body: CreateBody) -> dict[str, Any]:
        asked = asked_game(body, await blocking(service.store.max_bot_time))
        game_id = asked.game_id or new_game_id()
        # Subscribed before the game exists: its first change (GameCreated) cannot be missed.
        async with subscribed(game_id) as subscriber:
            create = partial(
                service.create, asked.variant, asked.seats, keys=asked.keys, game_id=game_id, wait=None
            )  # the seed: drawn by the service (make_seed), never the client's
            await blocking(create)
            try:
                await first_event(subscriber, game_id, lambda e: e.get("type") == "GameCreated")
            except errors.GatewayError as exc:
                if exc.status != 503:
                    raise
                raise errors.GatewayError(
                    503,
                    f"game {game_id} is created, but no worker has dealt it within {ANSWER_WAIT:g} s: "
                    f"GET /api/games/{game_id} once a worker runs",
                    game=game_id,
                ) from None
        return {"game": game_id, "view": await public_view(game_id)}

    @app.get("/api/games/{game_id}", summary="A game's public view")
    async def game(game_id: str) -> dict[str, Any]:
        return await public_view(game_id)

    @app.get("/api/games/{game_id}/seats/{seat}", summary="A seat's view, with its hand (signed request)")
    async def seat_view(request: Request, game_id: str, seat: str) -> dict[str, Any]:
        number, _view = await signed_seat(request, game_id, seat)
        return await blocking(service.view, game_id, number)

    @app.get("/api/games/{game_id}/seats/{seat}/legal", summary="A seat's legal turns (signed request)")
    async def legal(request: Request, game_id: str, seat: str) -> dict[str, Any]:
        number, _view = await signed_seat(request, game_id, seat)
        view = await blocking(service.view, game_id, number)
        return {
            "game": game_id,
            "seat": number,
            "version": view.get("version"),
            "to_move": view.get("to_move"),
            "legal": view.get("legal") or [],
        }

    @app.post("/api/games/{game_id}/seats/{seat}/join", summary="Take an open seat with a public key")
    async def join(game_id: str, seat: str, body: JoinBody) -> dict[str, Any]:
        view = await public_view(game_id)
        number = await seat_in(view, game_id, seat)
        if problem := key_problem(body.key):
            raise errors.GatewayError(400, f"key {problem}")
        _check_joinable(view, game_id, number, body.key)
        entry = view["seats"][number]
        if entry.get("kind") == "bot":
            raise errors.GatewayError(409, f"seat {entry['name']} is a bot")
        if entry.get("key"):
            raise errors.GatewayError(409, f"seat {entry['name']} is taken")

        def matches(event: dict[str, Any], command_id: str) -> bool:
            return (event.get("type") == "SeatJoined" and event.get("key") == body.key) or (
                event.get("type") == "CommandRejected" and event.get("id") == command_id
            )

        async with subscribed(game_id) as subscriber:  # before the join is stored: its answer is told to it
            command_id = await blocking(service.submit_join, game_id, number, body.key)
            event = await first_event(subscriber, game_id, lambda e: matches(e, command_id))
        if event.get("type") == "CommandRejected":
            reason = event.get("reason") or "the join was refused"
            raise errors.GatewayError(409, f"rejected: {reason}", id=command_id)
        return {"game": game_id, "seat": number, "name": entry["name"], "key": body.key}

    @app.post("/api/games/{game_id}/turns", summary="Submit a signed turn; the referee's answer")
    async def submit(game_id: str, body: TurnBody, response: Response) -> dict[str, Any]:
        # The checks first (turns.py: on the loop for a seat whose key is known here, else
        # with a read, in a hop of their own), then, subscribed (the change answering it is
        # told to the subscriber), the seat's count and the append in one hop.  Nothing
        # before the signature passed subscribes or counts.  A command stored before (sent
        # again) may have its answer already: read from the start.
        if not valid_game_id(game_id):
            raise NoSuchGame(game_id)
        checked = known_turn(seat_keys, game_id, body) or await blocking(
            remembered_turn, service, seat_keys, game_id, body
        )
        async with subscribed(game_id) as subscriber:
            duplicate = await blocking(appended_turn, service, seat_keys, limiter, game_id, checked)
            answer = await wait_answer(subscriber, game_id, "0-0" if duplicate else None, body.id)
        if not answer.applied:
            seat_keys.forget(game_id, body.seat)  # its next turn reads the game again (SeatKeys)
            if not answer.reason:  # only a rejection reads its reason
                answer = await blocking(service.with_reason, game_id, answer)
            raise errors.GatewayError(409, f"rejected: {answer.reason}", id=body.id, applied=False)
        return {"id": body.id, "applied": True, "events": answer.events}

    @app.get("/api/games/{game_id}/record", summary="A finished game's record, as `red7 export` writes it")
    async def record(game_id: str, format: Annotated[str, Query(pattern="^(jsonl|msgpack)$")] = "jsonl") -> Response:
        if (await public_view(game_id)).get("status") != "over":  # before reading the whole game
            raise errors.GatewayError(409, f"game {game_id} is not over: its record would reveal every hand")
        exported = await blocking(export, service, game_id)
        if not exported.over:
            raise errors.GatewayError(409, f"game {game_id} is not over: its record would reveal every hand")
        body = await blocking(record_bytes, [exported], format)
        media = "application/x-ndjson" if format == "jsonl" else "application/x-msgpack"
        disposition = f'attachment; filename="{game_id}.{format}"'
        return Response(body, media_type=media, headers={"Content-Disposition": disposition})

    @app.get("/api/games/{game_id}/stream", summary="The game live: public view, then each change")
    async def stream(
        request: Request,
        game_id: str,
        after: Annotated[str | None, Query(description="resume after this change id")] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> Response:
        await public_view(game_id)
        return await open_stream(request, game_id, None, after, last_event_id)

    @app.get("/api/games/{game_id}/seats/{seat}/stream", summary="The game live as a seat sees it (signed request)")
    async def seat_stream(
        request: Request,
        game_id: str,
        seat: str,
        after: Annotated[str | None, Query(description="resume after this change id")] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> Response:
        number, _view = await signed_seat(request, game_id, seat)
        return await open_stream(request, game_id, number, after, last_event_id)

    async def open_stream(
        request: Request, game_id: str, seat: int | None, after: str | None, last_event_id: str | None
    ) -> Response:
        resume = last_event_id or after
        if resume is not None and not _is_change_id(resume):
            raise errors.GatewayError(400, f"{resume!r} is not a change id (such as 1764800000000-0)")
        sse = "text/event-stream" in request.headers.get("accept", "")
        address = client_address(request.scope)
        limiter.open_stream(address)
        try:
            subscriber = await hub.subscribe(game_id)
        except BaseException:
            limiter.close_stream(address)
            raise
        items = change_lines(hub, subscriber, game_id, seat, resume, heartbeat)

        async def lines() -> AsyncGenerator[bytes, None]:
            async with contextlib.aclosing(items):  # closed with the response: the subscriber is let go at once
                async for batch in items:
                    yield frames(batch, sse)

        media = "text/event-stream" if sse else "application/x-ndjson"
        return StreamResponse(lines(), subscriber, media, on_close=lambda: limiter.close_stream(address))

    tournaments.install(app, service, hub, limiter, heartbeat)

    @contextlib.asynccontextmanager
    async def subscribed(game_id: str) -> AsyncIterator[Subscriber]:
        subscriber = await hub.subscribe(game_id)
        try:
            yield subscriber
        finally:
            hub.unsubscribe(subscriber)

    async def wait_answer(subscriber: Subscriber, game_id: str, mark: str | None, command_id: str) -> Answer:
        """The referee's answer to ``command_id``: from the changes told to ``subscriber``
        (``mark`` None), or read from the changes after ``mark``."""
        found: list[Answer] = []

        def look(batch: list[dict[str, Any]]) -> bool:
            answer = answer_in(batch, command_id)
            if answer is not None:
                found.append(answer)
            return answer is not None

        await follow(subscriber, game_id, mark, look)
        return found[0]

    async def first_event(
        subscriber: Subscriber, game_id: str, match: Callable[[dict[str, Any]], bool]
    ) -> dict[str, Any]:
        """The first event ``match`` accepts among the changes told to ``subscriber``."""
        found: list[dict[str, Any]] = []

        def look(batch: list[dict[str, Any]]) -> bool:
            found.extend(e for e in batch if match(e))
            return bool(found)

        await follow(subscriber, game_id, None, look)
        return dict(found[0])

    async def follow(
        subscriber: Subscriber, game_id: str, mark: str | None, look: Callable[[list[dict[str, Any]]], bool]
    ) -> None:
        """Take the game's changes until ``look`` accepts a batch of events; 503 after
        ANSWER_WAIT seconds (the command stays stored: send it again to get its answer).

        With ``mark`` None the changes are the hub's notices to ``subscriber`` (subscribed
        before the command was stored, so its answer is among them: no read of Redis); with
        a mark (a command stored earlier, sent again) they are read from after it."""
        deadline = anyio.current_time() + ANSWER_WAIT
        items = (
            told_changes(subscriber, game_id, ANSWER_WAIT)
            if mark is None
            else change_lines(hub, subscriber, game_id, None, mark, heartbeat=ANSWER_WAIT)
        )
        async with contextlib.aclosing(items):
            async for batch in items:
                for item in batch or ():
                    if item["type"] == "change" and look(item["events"]):
                        return
                    if item["type"] in ("broken", "error"):
                        raise errors.GatewayError(
                            409 if item["type"] == "broken" else 503,
                            item.get("reason") or item.get("error") or "the game broke",
                        )
                if batch is None or anyio.current_time() > deadline:
                    break
        raise errors.GatewayError(
            503, "no answer from a worker yet: the command is stored; send the same request again for its answer"
        )

    web.install(app)  # the lobby and table pages (docs/web.md)
    return app


def _signed_path(request: Request) -> str:
    """The path a client signed: as sent on the request line, query string included."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    query = request.scope.get("query_string", b"")
    return (raw + (b"?" + query if query else b"")).decode("latin-1")


def _is_change_id(text: str) -> bool:
    """A stream id Redis accepts: two whole numbers below 2**64 (a larger one made XRANGE fail mid-stream)."""
    return bool(_CHANGE_ID.fullmatch(text)) and stream_order(text) != (-1, -1)


def _seat_number(view: dict[str, Any], seat: str) -> int | None:
    """The seat a path names, by one rule (docs/gateway.md): all digits is a seat number,
    anything else a name; so a seat named "0" never shadows seat 0."""
    seats = view.get("seats", [])
    number = whole_number(seat)
    if number is not None:
        return number if number < len(seats) else None
    return next((int(s["seat"]) for s in seats if s["name"] == seat), None)


def _check_joinable(view: dict[str, Any], game_id: str, seat: int, key: str) -> None:
    """The join policy (docs/gateway.md, Join): no tournament seats, one seat per key."""
    if game_id.startswith(TOURNAMENT_GAMES):
        raise errors.GatewayError(
            403, f"game {game_id} is a tournament's: its seats are the entrants', not joinable through the gateway"
        )
    held = next((s for s in view.get("seats", []) if s.get("key") == key and int(s["seat"]) != seat), None)
    if held is not None:
        raise errors.GatewayError(
            409, f"this key already holds seat {held['seat']} of game {game_id}: one seat per key"
        )
