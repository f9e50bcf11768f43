"""The client interface (:mod:`red7es.service.transport`) over the HTTP gateway.

A player who holds no Redis credential reaches games through ``red7 gateway``
(docs/gateway.md): this client makes its seats' tokens itself and never sends one.
It joins with the token's public key, signs every turn as ``red7 move`` does on Redis
(``sign_turn``), and signs every read of a seat's view with the same key (method, path,
time and a fresh nonce: ``red7es.gateway.auth.signed_headers``).  What the gateway
refuses becomes the same errors :class:`~red7es.service.client.GameService` raises, so
the commands say the same lines and exit with the same codes on either transport.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import time
import uuid
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..durations import format_clock, format_duration
from ..steps import StepError, Turn, command_text
from ..variant import Variant
from .client import (
    Answer,
    BadCreate,
    BrokenGame,
    CreatedGame,
    GameExists,
    GameSummary,
    JoinRefused,
    NoAnswer,
    Rejected,
    ServiceError,
    Unchanging,
)
from .envelope import MAX_COMMAND_SIZE
from .events import SeatSpec, TurnCommand
from .record_files import read_all
from .records import Record, RecordError
from .store import NoSuchGame, new_game_id
from .tokens import TokenError, new_token, public_key, sign_turn, signed_headers

__all__ = ["COMMAND_ID", "GatewayNoAnswer", "GatewayUnreachable", "HttpGameService", "is_http_url", "server_key"]

HTTP_SCHEMES = ("http", "https")
# The command ids the gateway takes for a turn (docs/gateway.md, Turns; red7es/gateway/app.py):
# checked here so that a --id it would refuse is a usage error before anything is sent.
COMMAND_ID = re.compile(r"[A-Za-z0-9_-]{16,100}")
MOST_LISTED = 500  # the gateway's largest ?limit= (docs/gateway.md)
ANSWER_TIMEOUT = 30.0  # the gateway waits 10 s for a worker; room for the network on top


def is_http_url(url: str | None) -> bool:
    """Whether ``url`` names a gateway (``http://`` or ``https://``) rather than a Redis."""
    return url is not None and urlsplit(url.strip()).scheme.lower() in HTTP_SCHEMES


def server_key(url: str) -> str:
    """The gateway a URL names, written one way (``https://host:port/path``): the
    credentials file keeps seats per game under it, so the same game id on two servers
    are two entries.  Game ids hold no ``/``, so no key of a game on Redis equals one."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if scheme == "https" else 80)
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}{parts.path.rstrip('/')}"


class GatewayUnreachable(ServiceError):
    """The gateway could not be reached, or broke off (one line: where, and why)."""


class GatewayNoAnswer(NoAnswer):
    """No worker answered within the gateway's wait (503): the command is stored.  Its
    workers are the operator's, so the line names no ``red7 worker`` to start from here."""

    @staticmethod
    def _line(question: str, start: str) -> str:
        return question


class HttpGameService:
    """Games through one gateway at ``url`` (``http://host:port``, or with a path prefix)."""

    def __init__(self, url: str, *, timeout: float = ANSWER_TIMEOUT) -> None:
        self.url = url.strip().rstrip("/")
        self.prefix = urlsplit(self.url).path  # the signed path is the path as sent
        self.http = httpx.Client(base_url=self.url, timeout=timeout, follow_redirects=False)
        self.keep_token: Callable[[str, str, str], None] | None = None
        # Called with (game, seat name, token) for a token kept for a game the gateway then
        # refused to create (4xx): the tokens of a game that does not exist are not kept.
        self.forget_token: Callable[[str, str, str], None] | None = None
        self._unchanging = Unchanging(self.view)

    def close(self) -> None:
        self.http.close()

    # ------------------------------------------------------------------ requests

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise self._unreachable(exc) from None

    def _unreachable(self, exc: Exception) -> GatewayUnreachable:
        reason = (str(exc).strip() or type(exc).__name__).splitlines()[0]
        return GatewayUnreachable(f"cannot reach the gateway at {self.url}: {reason}")

    def _json(self, response: httpx.Response, game_id: str | None = None) -> Any:
        """The body of a 2xx answer; the gateway's one-line error as the client's errors otherwise."""
        if response.is_success:
            try:
                return response.json()
            except ValueError:
                raise ServiceError(f"the gateway at {self.url} answered what is not JSON") from None
        raise self._error(response, game_id)

    def _error(self, response: httpx.Response, game_id: str | None) -> ServiceError | NoSuchGame:
        try:
            body = response.json()
            message = str(body["error"]) if isinstance(body, dict) and "error" in body else None
        except ValueError:
            message = None
        if message is None:
            return ServiceError(f"the gateway at {self.url} answered {response.status_code} {response.reason_phrase}")
        if response.status_code == 404 and game_id is not None and message == f"no game {game_id!r}":
            return NoSuchGame(game_id)
        if response.status_code == 409 and game_id is not None and message.startswith(f"game {game_id} is broken: "):
            return BrokenGame(game_id, message.removeprefix(f"game {game_id} is broken: "))
        return ServiceError(message)

    def _get(self, path: str, game_id: str | None = None, **kwargs: Any) -> Any:
        return self._json(self._send("GET", path, **kwargs), game_id)

    def _signed_get(self, path: str, token: str, game_id: str) -> Any:
        nonce = secrets.token_urlsafe(24)
        try:
            headers = signed_headers(token, "GET", self.prefix + path, int(time.time() * 1000), nonce)
        except TokenError as exc:
            raise ServiceError(str(exc)) from None
        return self._get(path, game_id, headers=headers)

    # ------------------------------------------------------------------ lifecycle

    def create(
        self,
        variant: Variant,
        seats: Sequence[SeatSpec],
        *,
        seed: bytes | str | None = None,
        join: Sequence[str] = (),
        keys: Mapping[str, str] | None = None,
        game_id: str | None = None,
    ) -> CreatedGame:
        """``POST /api/games``: the seats joined here get tokens made here, sent as public
        keys only (a seat created with a key is joined at once: docs/gateway.md)."""
        if seed is not None:
            raise BadCreate("the gateway draws every game's seed itself: a seed cannot be given over HTTP")
        tokens = {name: new_token() for name in join}
        seat_keys = dict(keys or {})
        for name, token in tokens.items():
            seat_keys[name] = public_key(token)
        players: list[dict[str, Any]] = []
        for seat in seats:
            player: dict[str, Any] = {"name": seat.name}
            if seat.is_bot:
                player["bot"] = seat.bot
            elif seat.name in seat_keys:
                player["key"] = seat_keys[seat.name]
            players.append(player)
        body = {
            "players": players,
            "scoring": variant.scoring,
            "draw": variant.draw,
            "actions": variant.actions,
            "rounds": variant.rounds,
            "target": variant.target,
        }
        if variant.clock is not None:  # as text the gateway reads back exactly (red7es/durations.py)
            body["clock"] = format_clock(variant.clock)
        if variant.turn_time is not None:
            body["turn_time"] = format_duration(variant.turn_time)
        asked = body["id"] = game_id or new_game_id()
        for name, token in tokens.items():  # kept before the wait for a worker, as on Redis
            if self.keep_token is not None:
                self.keep_token(asked, name, token)
        response = self._send("POST", "/api/games", json=body)
        if response.is_client_error:  # refused: no game was made, so no seat of it is held
            for name, token in tokens.items():
                if self.forget_token is not None:
                    self.forget_token(asked, name, token)
        if response.status_code == 409 and "already exists" in response.text:
            raise GameExists(str(response.json().get("error")))
        if response.status_code == 400:
            raise BadCreate(str(self._error(response, None)))
        if response.status_code == 503 and "no worker" in response.text:
            raise GatewayNoAnswer(str(response.json().get("error")))
        created = self._json(response, asked)
        return CreatedGame(str(created["game"]), str(created["view"]["commitment"]), tokens)

    def join(self, game_id: str, name: str) -> str:
        """``POST .../seats/{seat}/join`` with a token made here: its public key only."""
        seat = self.seat_of(game_id, name)
        token = new_token()
        if self.keep_token is not None:
            self.keep_token(game_id, name, token)
        self._join(game_id, seat, token)
        return token

    def _join(self, game_id: str, seat: int, token: str) -> None:
        response = self._send("POST", f"/api/games/{game_id}/seats/{seat}/join", json={"key": public_key(token)})
        if response.status_code == 409:
            reason = str(self._error(response, game_id)).removeprefix("rejected: ")
            raise JoinRefused(_as_the_referee_says(reason), token)
        if response.status_code == 503:
            raise GatewayNoAnswer(f"no answer from a worker for game {game_id}: {self._error(response, game_id)}")
        self._json(response, game_id)

    def join_answered(self, game_id: str, name: str, token: str, wait: float) -> bool:
        """The earlier join is sent again with the same key: the gateway answers a join
        once a worker has (it takes the seat once; a second join with the seat's own key
        is answered by the first's SeatJoined).  Whether an answer came."""
        try:
            self._join(game_id, self.seat_of(game_id, name), token)
        except JoinRefused:
            return True
        except NoAnswer:
            return False
        return True

    def play(self, game_id: str, name: str, token: str, turn: str | Turn, *, command_id: str | None = None) -> Answer:
        """``POST .../turns``: the turn signed here, as ``red7 move`` signs it on Redis."""
        seat = self.seat_of(game_id, name)
        try:
            text = command_text(turn)  # a turn, or resign (RULES.md, Resigning)
        except StepError as exc:
            raise Rejected(str(exc)) from None
        command_id = command_id or uuid.uuid4().hex
        try:
            signature = sign_turn(token, game_id, command_id, seat, text, self._unchanging.signed_over(game_id))
        except TokenError as exc:
            raise ServiceError(str(exc)) from None
        _check_size(TurnCommand(command_id, seat, text, "person", signature))
        body = {"id": command_id, "seat": seat, "turn": text, "sig": signature}
        response = self._send("POST", f"/api/games/{game_id}/turns", json=body)
        if response.status_code == 409:
            data = response.json()
            if isinstance(data, dict) and data.get("applied") is False:
                reason = str(data.get("error", "rejected")).removeprefix("rejected: ")
                # the referee's CommandRejected, as GameService.with_reason gives it
                event = {"type": "CommandRejected", "id": command_id, "seat": seat, "kind": "turn", "reason": reason}
                return Answer(command_id, False, reason, [event])
            raise Rejected(str(self._error(response, game_id)))
        if response.status_code == 503:
            raise GatewayNoAnswer(f"no answer from a worker for game {game_id}: {self._error(response, game_id)}")
        answer = self._json(response, game_id)
        return Answer(command_id, True, None, list(answer.get("events", [])))

    # ------------------------------------------------------------------ reading

    def view(self, game_id: str) -> dict[str, Any]:
        view: dict[str, Any] = self._get(f"/api/games/{game_id}", game_id)
        self._unchanging.seen(game_id, view)
        return view

    def seat_view(self, game_id: str, name: str, token: str) -> dict[str, Any]:
        seat = self.seat_of(game_id, name)
        view: dict[str, Any] = self._signed_get(f"/api/games/{game_id}/seats/{seat}", token, game_id)
        self._unchanging.seen(game_id, view)
        return view

    def seat_of(self, game_id: str, name: str) -> int:
        """A seat's number by name (seats never change, so it is remembered)."""
        return self._unchanging.seat_of(game_id, name)

    def seat_key(self, game_id: str, seat: int, view: dict[str, Any] | None = None) -> str | None:
        key = (view or self.view(game_id))["seats"][seat].get("key")
        return key if isinstance(key, str) else None

    def games(self, limit: int = 50) -> list[GameSummary]:
        rows = self._get("/api/games", params={"limit": min(limit, MOST_LISTED)})
        return [_summary(row) for row in rows]

    def count_games(self) -> int | None:
        """How many games there are, when the gateway's longest list holds them all."""
        listed = len(self._get("/api/games", params={"limit": MOST_LISTED}))
        return listed if listed < MOST_LISTED else None

    def last_change_id(self, game_id: str) -> str:
        """The id of the first line of a fresh public stream: the game's last change."""
        with self._open(f"/api/games/{game_id}/stream", game_id, ANSWER_TIMEOUT) as lines:
            try:
                for line in lines:
                    if line.get("type") == "view":
                        return str(line.get("id") or "0-0")
            except httpx.ReadTimeout as exc:  # (the first line is sent at once)
                raise self._unreachable(exc) from None
        raise ServiceError(f"game {game_id}: the gateway's stream ended before its view")

    def wait_change(self, game_id: str, after: str, timeout: float) -> tuple[str, list[dict[str, Any]]] | None:
        """The public changes after ``after`` up to the next view (one batch), or None after
        ``timeout`` seconds; :class:`BrokenGame` once the game is broken."""
        events: list[dict[str, Any]] = []
        last = after
        with contextlib.closing(self._stream(f"/api/games/{game_id}/stream?after={after}", game_id, timeout)) as lines:
            for change in lines:
                if change is _BATCH_END:
                    if last != after:
                        return last, events
                    continue
                last = str(change["id"])
                events.extend(change.get("events", []))
        return (last, events) if last != after else None

    def _stream(self, path: str, game_id: str, timeout: float) -> Generator[dict[str, Any], None, None]:
        """The ``change`` lines of a stream (``_BATCH_END`` for each view), until the stream
        ends or ``timeout`` seconds pass."""
        deadline = time.monotonic() + timeout
        with self._open(path, game_id, timeout) as lines:
            try:
                for line in lines:
                    kind = line.get("type")
                    if kind == "change":
                        yield line
                    elif kind == "view":
                        yield _BATCH_END
                    elif kind == "broken":
                        raise BrokenGame(game_id, str(line.get("reason")))
                    elif kind == "error":
                        raise ServiceError(f"the gateway's stream of game {game_id} broke off: {line.get('error')}")
                    if time.monotonic() >= deadline:
                        return
            except httpx.ReadTimeout:
                return

    def _open(self, path: str, game_id: str, timeout: float) -> _Lines:
        return _Lines(self, path, game_id, timeout)

    def record(self, game_id: str) -> Record:
        """``GET .../record``: a finished game's record, the bytes ``red7 export`` writes."""
        response = self._send("GET", f"/api/games/{game_id}/record", params={"format": "jsonl"})
        if not response.is_success:
            raise self._error(response, game_id)
        records = read_all(f"{self.url}/api/games/{game_id}/record", "jsonl", data=response.content)
        if len(records) != 1 or records[0].game_id != game_id:
            raise RecordError(f"the gateway's record of game {game_id} holds another game")
        return records[0]

    # ------------------------------------------------------------------ tournaments (read only)

    def tournaments(self, limit: int) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self._get("/api/tournaments", params={"limit": min(limit, MOST_LISTED)})
        return rows

    def tournament(self, tournament: str) -> dict[str, Any]:
        return self._tournament_json(f"/api/tournaments/{tournament}", tournament)

    def tournament_standings(self, tournament: str) -> dict[str, Any]:
        return self._tournament_json(f"/api/tournaments/{tournament}/standings", tournament)

    def tournament_report(self, tournament: str) -> str:
        response = self._send("GET", f"/api/tournaments/{tournament}/report")
        if not response.is_success:
            raise self._tournament_error(response, tournament)
        return response.text

    def _tournament_json(self, path: str, tournament: str) -> dict[str, Any]:
        response = self._send("GET", path)
        if not response.is_success:
            raise self._tournament_error(response, tournament)
        data: dict[str, Any] = self._json(response)
        return data

    def _tournament_error(self, response: httpx.Response, tournament: str) -> Exception:
        """An unknown tournament as :class:`NoSuchTournament` (the CLI's line for it); else the gateway's line."""
        error = self._error(response, None)
        if response.status_code == 404 and str(error) == f"no tournament {tournament!r}":
            from ..tournament.ids import NoSuchTournament  # the tournament package only when one is read

            return NoSuchTournament(tournament)
        return error


_BATCH_END: dict[str, Any] = {"type": "view"}


def _as_the_referee_says(reason: str) -> str:
    """The gateway refuses a join of a taken seat or a bot's before it reaches a referee,
    in words of its own (``seat bob is taken``): said here as the referee says them on
    Redis (``Table._join`` in red7es.service.table), so ``red7 join`` says the same either way."""
    for ending, referee in ((" is taken", " has already been taken"), (" is a bot", " is played by a bot")):
        if reason.startswith("seat ") and reason.endswith(ending):
            return reason.removesuffix(ending) + referee
    return reason


class _Lines:
    """An open NDJSON stream as a context manager yielding its parsed lines (keep-alives skipped)."""

    def __init__(self, client: HttpGameService, path: str, game_id: str, timeout: float) -> None:
        self.client, self.path, self.game_id = client, path, game_id
        # A read waits for the caller's timeout, past a keep-alive's 15 s at most; and 1 s at
        # least, for the lines a fresh stream starts with (what is there now: play asks for
        # that with a timeout of a millisecond, which the gateway answers at once).
        self.timeout = httpx.Timeout(10.0, read=min(max(timeout, 1.0), 20.0))
        self._response: httpx.Response | None = None
        self._context: Any = None

    def __enter__(self) -> Iterator[dict[str, Any]]:
        try:
            self._context = self.client.http.stream("GET", self.path, timeout=self.timeout)
            response = self._context.__enter__()
        except httpx.HTTPError as exc:
            raise self.client._unreachable(exc) from None
        if not response.is_success:
            response.read()
            error = self.client._error(response, self.game_id)
            self._context.__exit__(None, None, None)
            raise error
        self._response = response
        return self._lines(response)

    def _lines(self, response: httpx.Response) -> Iterator[dict[str, Any]]:
        try:
            for raw in response.iter_lines():
                line = json.loads(raw) if raw.strip() else {}  # {}: a keep-alive
                if not isinstance(line, dict):
                    raise ValueError("not an object")
                yield line
        except httpx.ReadTimeout:
            raise
        except httpx.HTTPError as exc:
            raise self.client._unreachable(exc) from None
        except ValueError:  # JSONDecodeError too
            raise ServiceError(
                f"the gateway at {self.client.url} sent a stream line that is not a JSON object"
            ) from None

    def __exit__(self, *exc: object) -> None:
        if self._context is not None:
            self._context.__exit__(None, None, None)


def _check_size(command: TurnCommand) -> None:
    """A turn larger than any referee reads is refused before it is sent, as on Redis."""
    from .client import TurnTooLarge
    from .codec import encode_command
    from .store import now_ms

    raw = encode_command(command, now_ms())
    if len(raw) > MAX_COMMAND_SIZE:
        size = len(command.turn.encode())
        raise TurnTooLarge(size, MAX_COMMAND_SIZE - (len(raw) - size))


def _summary(row: dict[str, Any]) -> GameSummary:
    """One game of the gateway's list (``GameSummary.as_json``) as the summary it was made from."""
    return GameSummary(
        game_id=str(row["game"]),
        status=str(row["status"]),
        version=row.get("version"),
        to_move=row.get("to_move"),
        created=row.get("created"),
        seats=list(row.get("seats", [])),
        variant=dict(row.get("variant") or {}),
        winners=row.get("winners"),
        unreadable=row.get("unreadable"),
        reason=row.get("reason"),
    )
