"""A submitted turn: its checks, then its seat's count and its append.

POST /api/games/{game}/turns used to read the view, the seat's key and the last change
id in three thread-pool hops and three round trips before it appended, and a fourth hop
to append (issues #23, #17: each hop is a hand-off between the event loop and a thread,
and each round trip a wait, on every turn).  Now a seat whose key this process knows
(:class:`SeatKeys`) has its turn checked on the event loop (:func:`known_turn`: the body
and one Ed25519 verification, no read), and only then does the route subscribe to the
game's changes and append, counting the seat's rate limit in the same script
(:func:`appended_turn`: one hop, one round trip).  Any other turn is checked first in a
hop of its own (:func:`remembered_turn`: one pipelined read of the view, the checks in
the route's order, so every error and status stays as it was).  Nothing reaches the hub
or the seat's count before the signature passed: a stranger's request costs no
subscription (each restarts the hub's read of every streamed game) and no count.  The
answer needs no mark read: the hub tells the route's subscriber of it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from red7es.service.client import GameService
from red7es.service.events import TurnCommand
from red7es.service.store import GameRemade, OverLimit
from red7es.service.tokens import turn_commitment, verify_turn
from red7es.steps import StepError, command_text

from . import errors
from .limits import Limiter

__all__ = ["SeatKeys", "TurnBody", "appended_turn", "checked_turn", "known_turn", "remembered_turn"]

_SIGNATURE = re.compile(r"[0-9a-f]{128}")
# Command ids through the gateway: long enough that nobody guesses another seat's next one.
_COMMAND_ID = re.compile(r"[A-Za-z0-9_-]{16,100}")


class TurnBody(BaseModel):
    """A turn signed by its seat's token exactly as ``red7 move`` signs it."""

    model_config = ConfigDict(extra="forbid")
    id: StrictStr = Field(
        min_length=1, max_length=100, description="command id, chosen by the client, unique in the game"
    )
    seat: StrictInt = Field(ge=0, description="the seat's number")
    turn: StrictStr = Field(min_length=1, max_length=1000, description="the turn in notation, e.g. 'p:R7 c:B3'")
    sig: StrictStr = Field(
        description="hex Ed25519 signature of red7es/turn/v2\\n{game}\\n{commitment}\\n{id}\\n{seat}\\n{turn} "
        'when the game\'s view says "signs": "red7es/turn/v2", '
        "else of red7es/turn/v1\\n{game}\\n{id}\\n{seat}\\n{turn}"
    )


class Signer(NamedTuple):
    """Who signs a seat's turns: its public key, and the game's commitment the signature
    names besides the game id (turn/v2), or None (turn/v1: a game created before); and the
    game's ``created``, which the append compares with the game's (``submit.lua``): a
    game made again under the id since takes no turn checked against the first."""

    key: str
    signed_over: str | None
    created: int


class SeatKeys:
    """Who signs the turns of the seats whose turns this gateway process has checked: each
    seat's public key and what its game's turns are signed over (:class:`Signer`).

    A seat's key never changes once it is joined (a seat is never taken again: RULES.md,
    and the audit checks it), nor does its game's commitment, so a turn whose signature
    verifies under what a seat had
    needs no read of the game before its append: a broken, finished or vanished game
    refuses the append itself (submit.lua).  Whatever fails under the known key (a
    malformed body, a bad signature) takes the full path, which reads the game, so every
    refusal is what it always was; the worker checks every signature again anyway.
    A game id is never used by two games (an archived game's stays taken:
    ``create.lua``), but keys written by hand or a Redis that lost its last second can
    still make a seat's key another: a turn the referee refuses drops its seat's entry
    (:meth:`forget`), so the next one reads the game again.  Bounded: emptied when full,
    a miss costing one read.
    """

    def __init__(self, size: int = 100_000) -> None:
        self.size = size
        self._keys: dict[tuple[str, int], Signer] = {}

    def get(self, game_id: str, seat: int) -> Signer | None:
        return self._keys.get((game_id, seat))

    def put(self, game_id: str, seat: int, signer: Signer) -> None:
        if len(self._keys) >= self.size:
            self._keys.clear()
        self._keys[(game_id, seat)] = signer

    def forget(self, game_id: str, seat: int) -> None:
        self._keys.pop((game_id, seat), None)


def checked_turn(service: GameService, game_id: str, body: TurnBody) -> tuple[TurnCommand, Signer]:
    """The command ``body`` asks for and who signs its seat's turns, once the game, the
    seat, the body and the signature pass; the route's
    :class:`~red7es.gateway.errors.GatewayError` (or the service's error) otherwise.

    Blocking: run it in the thread pool.  The caller must have checked ``game_id``'s
    form (an invalid id is never read)."""
    view = service.view(game_id)
    if body.seat >= len(view["seats"]):
        raise errors.GatewayError(404, f"no seat {body.seat} in game {game_id}")
    _check_body(body)
    key = service.seat_key(game_id, body.seat, view)  # from the view: no read (the log only for old views)
    if key is None:
        raise errors.GatewayError(403, f"seat {body.seat} of game {game_id} is open or a bot: it takes no signed turns")
    signer = Signer(key, turn_commitment(view), int(view["created"]))
    if not _verified(signer, game_id, body):
        raise errors.GatewayError(401, "bad signature: not made by this seat's token over this turn")
    return _command(body), signer


def _check_body(body: TurnBody) -> None:
    """The checks that need nothing but the body, in the route's order."""
    try:
        command_text(body.turn)  # a turn, or resign (RULES.md, Resigning)
    except StepError as exc:
        raise errors.GatewayError(400, f"malformed turn: {exc}") from None
    if body.id.startswith("bot-"):
        raise errors.GatewayError(400, "command ids starting with bot- name bots' turns: choose another id")
    if not _COMMAND_ID.fullmatch(body.id):
        raise errors.GatewayError(400, "id must be 16 to 100 characters of A-Z a-z 0-9 _ - (random: 128 bits)")
    if not _SIGNATURE.fullmatch(body.sig):
        raise errors.GatewayError(401, "sig must be 128 lower-case hex digits")


def _command(body: TurnBody) -> TurnCommand:
    return TurnCommand(body.id, body.seat, body.turn, "person", body.sig)


def _verified(signer: Signer, game_id: str, body: TurnBody) -> bool:
    """Whether ``body``'s signature is the seat's over this turn of this game."""
    return verify_turn(signer.key, body.sig, game_id, body.id, body.seat, body.turn, signer.signed_over)


def _signed_by(signer: Signer, game_id: str, body: TurnBody) -> bool:
    """Whether ``body`` passes every check of its own and is signed by ``signer``."""
    try:
        _check_body(body)
    except errors.GatewayError:
        return False
    return _verified(signer, game_id, body)


def known_turn(seat_keys: SeatKeys, game_id: str, body: TurnBody) -> tuple[TurnCommand, Signer] | None:
    """The command ``body`` asks for and who signed it, if its seat's key is known here and
    signed it (and the body passes its own checks); None: check it with :func:`remembered_turn`.

    No I/O (one Ed25519 verification, about 0.1 ms): run on the event loop."""
    known = seat_keys.get(game_id, body.seat)
    return (_command(body), known) if known is not None and _signed_by(known, game_id, body) else None


def remembered_turn(
    service: GameService, seat_keys: SeatKeys, game_id: str, body: TurnBody
) -> tuple[TurnCommand, Signer]:
    """:func:`checked_turn`, its seat's signer remembered for the seat's next turns.  Blocking."""
    command, signer = checked_turn(service, game_id, body)
    seat_keys.put(game_id, body.seat, signer)
    return command, signer


def appended_turn(
    service: GameService, seat_keys: SeatKeys, limiter: Limiter, game_id: str, checked: tuple[TurnCommand, Signer]
) -> bool:
    """The seat's count and the append of a checked turn, in one round trip; whether the
    command was stored before (sent again: its answer may be in the changes already).

    The append is refused if the game is not the one the turn was checked against (its id
    made again since: :class:`~red7es.service.store.GameRemade`); the seat's signer is
    then forgotten and the turn checked again against the game as it is, which reads it
    (a signature for the first game gets the 401 it gets anywhere).  Blocking: run it in
    the thread pool."""
    command, signer = checked

    def append() -> bool:
        try:
            guard = limiter.seat_guard(game_id, command.seat)
            return service.submit_signed(game_id, command, guard, signer.created)[1]
        except OverLimit as refused:
            raise limiter.over(command.seat, refused) from None

    try:
        return append()
    except GameRemade:
        seat_keys.forget(game_id, command.seat)
        command, signer = remembered_turn(service, seat_keys, game_id, _body(command))
        return append()


def _body(command: TurnCommand) -> TurnBody:
    return TurnBody(id=command.id, seat=command.seat, turn=command.turn, sig=command.signature)
