"""A submitted turn's checks, in one thread hop and one Redis round trip.

POST /api/games/{game}/turns used to read the view, the seat's key and the last change
id in three thread-pool hops and three round trips before it appended (issue #23: each
hop and each round trip is a wait on every turn).  :func:`checked_turn` does it in one
blocking call the route runs in the thread pool: one pipelined read (view and broken;
the answer needs no mark: the hub tells the route's subscriber of it), then the checks
on the body and the signature, in the order
the route always made them, so every error and status stays as it was.  Nothing is
written here: the seat's rate limit is counted, and the command appended, only after
the signature passed.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from red7es.service.client import GameService
from red7es.service.events import TurnCommand
from red7es.service.tokens import verify_turn
from red7es.steps import StepError, command_text

from . import errors

__all__ = ["TurnBody", "checked_turn"]

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
    sig: StrictStr = Field(description="hex Ed25519 signature of red7es/turn/v1\\n{game}\\n{id}\\n{seat}\\n{turn}")


def checked_turn(service: GameService, game_id: str, body: TurnBody) -> TurnCommand:
    """The command ``body`` asks for, once the game, the seat, the body and the signature
    pass; the route's
    :class:`~red7es.gateway.errors.GatewayError` (or the service's error) otherwise.

    Blocking: run it in the thread pool.  The caller must have checked ``game_id``'s
    form (an invalid id is never read)."""
    view = service.view(game_id)
    if body.seat >= len(view["seats"]):
        raise errors.GatewayError(404, f"no seat {body.seat} in game {game_id}")
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
    key = service.seat_key(game_id, body.seat, view)  # from the view: no read (the log only for old views)
    if key is None:
        raise errors.GatewayError(403, f"seat {body.seat} of game {game_id} is open or a bot: it takes no signed turns")
    if not verify_turn(key, body.sig, game_id, body.id, body.seat, body.turn):
        raise errors.GatewayError(401, "bad signature: not made by this seat's token over this turn")
    return TurnCommand(body.id, body.seat, body.turn, "person", body.sig)
