"""Authenticated reads: a request signed with a seat's key, fresh and never seen before.

A seat's view, its legal turns and its stream show its hand, so the gateway serves them
only to a request signed by the seat's token (the same Ed25519 key that signs its turns;
the gateway knows only the public key, from the game's view).  The signed bytes are
:func:`request_message`; the signature, the time and a nonce travel in headers:

    X-Red7-Timestamp: <milliseconds since the Unix epoch>
    X-Red7-Nonce:     <16 to 64 characters of A-Z a-z 0-9 _ ->
    X-Red7-Signature: <128 hex digits>

The time must be within :data:`SKEW_MS` of Redis's clock (``TIME``: every gateway
process agrees, whatever its own clock), and the nonce unused: it is stored with
``SET NX`` for twice that window, so a captured request cannot be sent again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import redis.asyncio as aioredis

from red7es.service.store import Keys
from red7es.service.tokens import NONCE, SIGNATURE, TIMESTAMP, request_message, sign_request, signed_headers, verify

from .errors import GatewayError

__all__ = [
    "NONCE",
    "SKEW_MS",
    "TIMESTAMP",
    "SIGNATURE",
    "authenticate",
    "request_message",
    "sign_request",
    "signed_headers",
]

SKEW_MS = 30_000
# fullmatch only: `$` also matches before a final newline
_NONCE = re.compile(r"[A-Za-z0-9_-]{16,64}")
_TIMESTAMP = re.compile(r"[0-9]{1,15}")
_SIGNATURE = re.compile(r"[0-9a-f]{128}")


def _verifies(key: str | None, signature: str, message: bytes) -> bool:
    return bool(key) and verify(str(key), signature, message)


async def authenticate(
    connection: aioredis.Redis,
    headers: Mapping[str, str],
    method: str,
    path: str,
    game_id: str,
    seat: int,
    keys: Sequence[str | None],
) -> None:
    """Check that the request is signed by seat ``seat``'s key (``keys[seat]``), fresh
    and not seen before; :class:`GatewayError` (401, 403 or 409) otherwise.

    The signature is checked first (no Redis write for a request anyone could forge);
    then Redis's clock and the nonce, in one round trip.
    """
    stamp, nonce, signature = headers.get(TIMESTAMP, ""), headers.get(NONCE, ""), headers.get(SIGNATURE, "")
    if not (stamp and nonce and signature):
        raise GatewayError(401, f"this request must be signed by the seat's key ({TIMESTAMP}, {NONCE}, {SIGNATURE})")
    if not _TIMESTAMP.fullmatch(stamp):
        raise GatewayError(401, f"{TIMESTAMP} must be milliseconds since the Unix epoch")
    if not _NONCE.fullmatch(nonce):
        raise GatewayError(401, f"{NONCE} must be 16 to 64 characters of A-Z a-z 0-9 _ -")
    if not _SIGNATURE.fullmatch(signature.lower()):
        raise GatewayError(401, f"{SIGNATURE} must be 128 hex digits")
    message = request_message(method, path, int(stamp), nonce)
    raw = signature.lower()
    if keys[seat] is None:
        raise GatewayError(403, f"seat {seat} of game {game_id} has no key: it is open (join it first) or a bot's")
    if not _verifies(keys[seat], raw, message):
        other = next((n for n, key in enumerate(keys) if n != seat and _verifies(key, raw, message)), None)
        if other is not None:
            raise GatewayError(403, f"signed by seat {other}'s key, not seat {seat}'s")
        raise GatewayError(401, "bad signature: not made by this seat's key over this request")
    await _fresh(connection, game_id, seat, int(stamp), nonce)


async def _fresh(connection: aioredis.Redis, game_id: str, seat: int, stamp: int, nonce: str) -> None:
    """The timestamp within SKEW_MS of Redis's clock, and the nonce used for the first time."""
    pipe = connection.pipeline(transaction=False)
    pipe.time()
    pipe.set(nonce_key(game_id, seat, nonce), 1, nx=True, px=2 * SKEW_MS + 5_000)
    replies: list[Any] = await pipe.execute()
    now, first = replies
    now_ms = int(now[0]) * 1000 + int(now[1]) // 1000
    if abs(now_ms - stamp) > SKEW_MS:
        off = (stamp - now_ms) / 1000
        raise GatewayError(401, f"{TIMESTAMP} is {off:+.0f} s from the server's clock (±{SKEW_MS // 1000} s allowed)")
    if not first:
        raise GatewayError(409, "this request was already received (its nonce was used): sign a new one")


def nonce_key(game_id: str, seat: int, nonce: str) -> str:
    """Where a seat's used nonce is remembered: with the game's hash tag, expiring on its
    own; per seat, so one seat cannot spend another's nonces."""
    return f"red7:{{{Keys(game_id).game_id}}}:nonce:{seat}:{nonce}"
