"""Tournaments over HTTP, read only: list, show, standings, the report page, and an
entrant's event stream (docs/gateway.md, Tournaments).

The JSON is what `red7 tournament list/show/standings --json` prints
(:mod:`red7es.tournament.views`); the report is the page `red7 tournament report` writes.

The stream (``GET /api/tournaments/{t}/stream``) tells an entrant, person or bot, when
its games start, so it can play a whole tournament unattended.  Its lines::

    {"type": "state",          "id": C,   "tournament": {...}}   the tournament as /api/tournaments/{t} shows it
    {"type": "round_paired",   "id": C,   "round", "tables", "byes"}
    {"type": "game_started",   "id": C/T, "round", "table", "game", "seats" [, "seat"]}
    {"type": "game_finished",  "id": C,   "round", "table", "game", "winners", "scores", "round_wins", "reason"}
    {"type": "tournament_over","id": C,   "seed", "standings"}    the stream ends
    {"type": "error",          "error"}                           reconnect and resume

``C`` is the id of the tournament event the line comes from (red7:t:{T}:events).  A
round's games start when the runner creates them, after it pairs the round (all-bot
games may wait for a free slot), so each ``game_started`` comes once its game exists
(its first change is written: a seat's view and stream answer), in table order after
its ``round_paired``, and its id is ``C/T``: the round's event and the table.  Resuming
after ``C/T`` gives the round's later tables, then the events after ``C``; so nothing
is missed or told twice.  ``?entrant=NAME`` keeps the ``game_started`` and
``game_finished`` lines of that entrant's games (``seat`` is then its seat).  A fresh
stream starts with ``state``, then a ``game_started`` for each paired game not recorded
yet, as it starts.

One reader per process, as for games: the stream subscribes to the tournament's events
stream (and, while it waits for a game to start, to that game's changes) through the
:class:`~red7es.gateway.hub.Hub`; it never blocks a Redis connection of its own.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncGenerator, Callable
from typing import Annotated, Any, TypeVar

import redis.asyncio as aioredis
from fastapi import FastAPI, Header, Query, Request, Response
from fastapi.responses import HTMLResponse
from redis.exceptions import ResponseError
from starlette.concurrency import run_in_threadpool

from red7es.service.client import GameService
from red7es.service.connection import UNREACHABLE_ERRORS
from red7es.service.envelope import CorruptEvent
from red7es.service.records import stream_order
from red7es.service.store import Keys, start_after, text
from red7es.tournament.codec import decode
from red7es.tournament.events import EntrantWithdrew, GameFinished, RoundPaired, Seating, TournamentFinished
from red7es.tournament.ids import NoSuchTournament, valid_tournament_id
from red7es.tournament.lifecycle import load
from red7es.tournament.state import TournamentCorrupt, TournamentState
from red7es.tournament.store import TournamentKeys
from red7es.tournament.views import list_data, report_page, show_data, show_state, standings_data

from .errors import GatewayError
from .hub import Dropped, Hub, Subscriber
from .limits import Limiter, client_address
from .streams import StreamResponse, frame
from .web import REPORT_HEADERS

__all__ = ["install", "tournament_lines"]

T = TypeVar("T")
# C or C/T: a stream id, and a table of the round paired at C
_RESUME = re.compile(r"([0-9]{1,20}-[0-9]{1,20})(?:/([0-9]{1,4}))?")


def install(app: FastAPI, service: GameService, hub: Hub, limiter: Limiter, heartbeat: float) -> None:
    """Add the tournament routes to the gateway's ``app``."""
    connection = service.redis

    async def blocking(fn: Callable[..., T], *args: Any) -> T:
        return await run_in_threadpool(fn, *args)

    def loaded(tournament: str) -> TournamentState:
        """The tournament folded from its events; 404 for none, 500 naming what cannot be read."""
        if not valid_tournament_id(tournament):
            raise NoSuchTournament(tournament)
        try:
            return load(connection, tournament)
        except (CorruptEvent, TournamentCorrupt) as exc:
            raise GatewayError(500, f"tournament {tournament} cannot be read: {exc}") from None

    @app.get("/api/tournaments", summary="The newest tournaments")
    async def tournaments(limit: Annotated[int, Query(ge=1, le=500)] = 50) -> list[dict[str, Any]]:
        return await blocking(list_data, connection, limit)

    @app.get("/api/tournaments/{tournament}", summary="A tournament: entrants, rounds, games")
    async def show(tournament: str) -> dict[str, Any]:
        state = await blocking(loaded, tournament)
        return await blocking(show_state, connection, state)

    @app.get("/api/tournaments/{tournament}/standings", summary="A tournament's standings")
    async def standings(tournament: str) -> dict[str, Any]:
        return standings_data(await blocking(loaded, tournament))

    @app.get(
        "/api/tournaments/{tournament}/report",
        summary="The tournament's HTML report, as `red7 tournament report` writes it",
        response_class=HTMLResponse,
    )
    async def report(tournament: str) -> HTMLResponse:
        page = await blocking(report_page, await blocking(loaded, tournament))
        return HTMLResponse(page, headers=REPORT_HEADERS)

    @app.get("/api/tournaments/{tournament}/stream", summary="A tournament live: its state, then its events")
    async def stream(
        request: Request,
        tournament: str,
        entrant: Annotated[str | None, Query(description="only this entrant's games")] = None,
        after: Annotated[str | None, Query(description="resume after this line id")] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> Response:
        state = await blocking(loaded, tournament)
        names = [e.name for e in state.spec.entrants]
        if entrant is not None and entrant not in names:
            raise GatewayError(404, f"no entrant {entrant!r} in tournament {tournament}")
        resume = last_event_id or after
        if resume is not None and resume_point(resume) is None:
            raise GatewayError(400, f"{resume!r} is not a line id of this stream (such as 1764800000000-0 or …-0/2)")
        sse = "text/event-stream" in request.headers.get("accept", "")
        address = client_address(request.scope)
        limiter.open_stream(address)
        try:
            subscriber = await hub.subscribe_stream(TournamentKeys(tournament).events, tournament)
        except BaseException:
            limiter.close_stream(address)
            raise
        index = None if entrant is None else names.index(entrant)
        items = tournament_lines(hub, subscriber, tournament, index, resume, heartbeat)

        async def lines() -> AsyncGenerator[bytes, None]:
            async with contextlib.aclosing(items):
                async for item in items:
                    yield frame(item, sse)

        media = "text/event-stream" if sse else "application/x-ndjson"
        return StreamResponse(lines(), subscriber, media, on_close=lambda: limiter.close_stream(address))


def resume_point(text_id: str) -> tuple[str, int] | None:
    """``(C, T)`` of a line id ``C`` (T = 0) or ``C/T``; None for text that is neither."""
    match = _RESUME.fullmatch(text_id)
    if match is None or stream_order(match[1]) == (-1, -1):
        return None
    return match[1], int(match[2] or 0)


async def _events(redis: aioredis.Redis, key: str, after: str) -> list[tuple[str, bytes]]:
    """The tournament's events after stream id ``after``, oldest first."""
    start = start_after(after)
    if start is None:
        return []
    rows: Any = await redis.xrange(key, min=start, max="+")
    return [(text(i), fields.get(b"e", b"")) for i, fields in rows or []]


class _Entrant:
    """What one stream shows: every game, or one entrant's (by its index)."""

    def __init__(self, state: TournamentState, index: int | None) -> None:
        self.state = state
        self.index = index

    def plays(self, seating: Seating) -> bool:
        return self.index is None or self.index in seating.seats

    def names(self, entrants: tuple[int, ...] | list[int]) -> list[str]:
        spec = self.state.spec
        return [spec.entrants[e].name for e in entrants]

    def round_paired(self, change_id: str, paired: RoundPaired) -> dict[str, Any]:
        return {
            "type": "round_paired",
            "id": change_id,
            "round": paired.round,
            "tables": [{"table": t.table, "game": t.game, "seats": self.names(list(t.seats))} for t in paired.tables],
            "byes": self.names(list(paired.byes)),
        }

    def game_started(self, change_id: str, round_number: int, seating: Seating) -> dict[str, Any]:
        spec = self.state.spec
        line: dict[str, Any] = {
            "type": "game_started",
            "id": f"{change_id}/{seating.table}",
            "round": round_number,
            "table": seating.table,
            "game": seating.game,
            "seats": [
                {"seat": i, "entrant": entrant.name, "kind": entrant.kind, "bot": entrant.bot}
                for i, entrant in enumerate(spec.entrants[e] for e in seating.seats)
            ],
        }
        if self.index is not None:
            line["seat"] = seating.seats.index(self.index)
        return line

    def entrant_withdrew(self, change_id: str, withdrawal: EntrantWithdrew) -> dict[str, Any] | None:
        """The line of an entrant's withdrawal: on the tournament's stream, and on that
        entrant's own (no other entrant's stream is told)."""
        if self.index is not None and self.index != withdrawal.entrant:
            return None
        name = self.state.spec.entrants[withdrawal.entrant].name
        return {"type": "entrant_withdrew", "id": change_id, "entrant": name, "reason": withdrawal.reason}

    def game_finished(self, change_id: str, result: GameFinished) -> dict[str, Any]:
        _round, seating = self.state.seating(result.game)
        return {
            "type": "game_finished",
            "id": change_id,
            "round": result.round,
            "table": seating.table,
            "game": result.game,
            "winners": [self.state.spec.entrants[seating.seats[w]].name for w in result.winners],
            "scores": list(result.scores),
            "round_wins": list(result.round_wins),
            "reason": result.reason,
            # the entrants out of the game, first out first, and why (rules 3; none before)
            "forfeited": [self.state.spec.entrants[seating.seats[f]].name for f in result.forfeited],
            "forfeit_reasons": list(result.forfeit_reasons),
        }


async def _statuses(redis: aioredis.Redis, games: list[str]) -> dict[str, str | None]:
    pipe = redis.pipeline(transaction=False)
    for game in games:
        pipe.hget(Keys(game).meta, "status")
    values = await pipe.execute()
    return {g: (text(v) if v is not None else None) for g, v in zip(games, values, strict=True)}


async def _started(redis: aioredis.Redis, game: str) -> bool:
    """Whether a worker has written the game's first change (it is dealt: its views answer)."""
    return bool(await redis.xrevrange(Keys(game).changes, max="+", min="-", count=1))


async def tournament_lines(
    hub: Hub, subscriber: Subscriber, tournament: str, entrant: int | None, resume: str | None, heartbeat: float
) -> AsyncGenerator[dict[str, Any] | None, None]:
    """The stream's items (None: nothing for ``heartbeat`` seconds); ``subscriber`` is the
    tournament events stream's, registered with ``hub`` before the first read, and let go
    when this ends."""
    key = TournamentKeys(tournament).events
    redis = hub.redis
    state = TournamentState()
    shown = _Entrant(state, entrant)
    paired_at: dict[int, str] = {}  # round -> id of its RoundPaired event
    pending: list[tuple[str, int, Seating]] = []  # game_started lines to give, in order, once their games exist

    def fold(change_id: str, raw: bytes) -> Any:
        recorded = decode(raw, f"tournament event {state.length}")
        state.fold(recorded, change_id)
        if isinstance(recorded.event, RoundPaired):
            paired_at[recorded.event.round] = change_id
        return recorded.event

    def starts(change_id: str, paired: RoundPaired, after_table: int = 0) -> list[tuple[str, int, Seating]]:
        return [(change_id, paired.round, t) for t in paired.tables if t.table > after_table and shown.plays(t)]

    try:
        rows = await _events(redis, key, "0-0")
        if resume is None:
            for change_id, raw in rows:
                fold(change_id, raw)
            cursor = state.last_id
            games = [t.game for _r, t in state.paired_games]
            yield {"type": "state", "id": cursor, "tournament": show_data(state, await _statuses(redis, games))}
            if state.finished is not None:
                return
            # Every paired game not recorded yet (a round robin pairs all its rounds at
            # once), told as it starts: an entrant connecting late learns of its game.
            pending = [
                p
                for paired in state.paired_rounds
                for p in starts(paired_at[paired.round], paired)
                if p[2].game not in state.results
            ]
        else:
            point = resume_point(resume)
            assert point is not None  # (checked by the route)
            cursor, after_table = point
            for change_id, raw in rows:
                if stream_order(change_id) > stream_order(cursor):
                    break
                event = fold(change_id, raw)
                if change_id == cursor and isinstance(event, RoundPaired):
                    pending = starts(change_id, event, after_table)
        while True:
            while pending:
                change_id, round_number, seating = pending[0]
                if await _started(redis, seating.game):
                    yield shown.game_started(change_id, round_number, seating)
                    pending.pop(0)
                elif not await _wait_start(hub, subscriber, seating.game, heartbeat):
                    yield None
            rows = await _events(redis, key, cursor)
            for change_id, raw in rows:
                event = fold(change_id, raw)
                cursor = change_id
                if isinstance(event, RoundPaired):
                    yield shown.round_paired(change_id, event)
                    pending = starts(change_id, event)
                    break  # its games start before any later event is told
                if isinstance(event, GameFinished) and shown.plays(state.seating(event.game)[1]):
                    yield shown.game_finished(change_id, event)
                if isinstance(event, EntrantWithdrew) and (line := shown.entrant_withdrew(change_id, event)):
                    yield line
                if isinstance(event, TournamentFinished):
                    standings = standings_data(state)["standings"]
                    yield {"type": "tournament_over", "id": change_id, "seed": event.seed, "standings": standings}
                    return
            if rows:
                continue
            if state.finished is not None:
                return  # resumed after its last line: nothing more will ever come
            if not await subscriber.wait(cursor, heartbeat):
                yield None
    except Dropped as exc:
        yield {"type": "error", "error": str(exc)}
    except UNREACHABLE_ERRORS:
        yield {"type": "error", "error": "lost the connection to Redis: resume from your last line id"}
    except (ResponseError, CorruptEvent, TournamentCorrupt) as exc:
        yield {"type": "error", "error": f"tournament {tournament} cannot be read: {' '.join(str(exc).split())}"}
    finally:
        hub.unsubscribe(subscriber)


async def _wait_start(hub: Hub, tournament: Subscriber, game: str, heartbeat: float) -> bool:
    """Wait up to ``heartbeat`` seconds for ``game``'s first change; whether one came.

    The tournament's own notices are taken meanwhile (they are read again from the
    stream's cursor afterwards), so waiting on a slow game never overflows them."""
    waiter = await hub.subscribe(game)
    try:
        if await _started(hub.redis, game):
            return True
        tournament.drain()
        return await waiter.wait("0-0", heartbeat)
    finally:
        hub.unsubscribe(waiter)
