"""Seat tokens: the secret a player holds, and the signatures that prove it.

A token is the 32-byte seed of an Ed25519 key, written as 64 hex digits.  The service
stores only the public key derived from it (a one-way function of the token, like a
hash), so reading Redis never reveals a token; every turn a person submits is signed,
the worker checks the signature before applying it, and an audit can check every
signature of a finished game offline.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

__all__ = [
    "NONCE",
    "SIGNATURE",
    "TIMESTAMP",
    "TokenError",
    "request_message",
    "sign_request",
    "signed_headers",
    "is_public_key",
    "is_weak_key",
    "key_problem",
    "WEAK_KEY",
    "new_token",
    "public_key",
    "sign",
    "sign_turn",
    "TURN_V1",
    "TURN_V2",
    "turn_commitment",
    "verify",
    "verify_turn",
    "turn_message",
]


class TokenError(ValueError):
    """A token that is not 64 hex digits."""


def new_token() -> str:
    """A fresh secret seat token."""
    return os.urandom(32).hex()


def _private(token: str) -> Ed25519PrivateKey:
    try:
        raw = bytes.fromhex(token.strip())
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise TokenError("a seat token is 64 hex digits")
    return Ed25519PrivateKey.from_private_bytes(raw)


def public_key(token: str) -> str:
    """The public key (hex) of a token: what the service stores for the seat."""
    return _private(token).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()


_PUBLIC_KEY = re.compile(r"[0-9a-f]{64}")


def is_public_key(text: str) -> bool:
    """Whether ``text`` is written as a public key is: 64 lower-case hex digits (the raw
    32 bytes), matched whole, so one key has one spelling."""
    return bool(_PUBLIC_KEY.fullmatch(text))


_P = 2**255 - 19  # the field Ed25519's coordinates are in
# The y coordinates of the eight points of small order (the curve's torsion): the identity
# (1), the point of order 2 (p - 1), those of order 4 (0) and of order 8 (two values, each
# other's negatives), as libsodium lists them to refuse them.
_SMALL_ORDER_Y = frozenset(
    {
        0,
        1,
        _P - 1,
        int.from_bytes(bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"), "little"),
        int.from_bytes(bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"), "little"),
    }
)
WEAK_KEY = "anyone can sign for it (an Ed25519 point of small order, or one not written canonically)"


def is_weak_key(text: str) -> bool:
    """Whether the public key ``text`` (64 hex digits) binds no signature to its holder:
    a point of small order (OpenSSL's verification, which ``cryptography`` uses, takes a
    signature made with no secret for it: ``01`` then 63 zero bytes, for any message, under
    the identity) or an encoding of y not below p, which libsodium refuses too. A seat
    joined with such a key could have its turns signed by anyone, the operator included,
    so its holder could disown them; new games refuse it (batch rules 7), and so does every
    way in (gateway, client, CLI, tournaments)."""
    y = int.from_bytes(bytes.fromhex(text), "little") & ((1 << 255) - 1)
    return y >= _P or y in _SMALL_ORDER_Y


def key_problem(text: str) -> str | None:
    """Why ``text`` cannot be a seat's public key, as the end of a sentence naming it; None
    when it can."""
    if not is_public_key(text):
        return "must be 64 lower-case hex digits (an Ed25519 public key)"
    if is_weak_key(text):
        return f"is refused: {WEAK_KEY}"
    return None


TURN_V1 = "red7es/turn/v1"
TURN_V2 = "red7es/turn/v2"  # a view's "signs" for a game created under batch rules 6 or later


def turn_message(game: str, command_id: str, seat: int, turn: str, commitment: str | None = None) -> bytes:
    """The exact bytes a seat signs for a turn (docs/events.md, Commands: `sig`).

    With the game's seed ``commitment`` (``red7es/turn/v2``: games created under batch
    rules 6 on) the signature is good for that one game only: a game made again under
    the same id (its keys deleted by hand, a Redis restored from a snapshot taken before
    the game was created) has another seed, so the turns signed for the first cannot be
    replayed into it.  It names no position: a rollback of the same game keeps its seed.
    """
    if commitment is None:
        return f"{TURN_V1}\n{game}\n{command_id}\n{seat}\n{turn}".encode()
    return f"{TURN_V2}\n{game}\n{commitment}\n{command_id}\n{seat}\n{turn}".encode()


def turn_commitment(view: Mapping[str, Any]) -> str | None:
    """What a seat's turn signature must name besides the game id, from any view of the
    game: its commitment when the view says it ``signs`` turn/v2, else None (turn/v1)."""
    commitment = view.get("commitment")
    return commitment if view.get("signs") == TURN_V2 and isinstance(commitment, str) else None


def sign(token: str, message: bytes) -> str:
    """The hex Ed25519 signature of ``message`` by ``token``."""
    return _private(token).sign(message).hex()


def verify(key: str, signature: str, message: bytes) -> bool:
    """True when ``signature`` (hex) of ``message`` was made by the token whose public key is ``key``."""
    try:
        public = Ed25519PublicKey.from_public_bytes(bytes.fromhex(key))
        public.verify(bytes.fromhex(signature), message)
    except (ValueError, InvalidSignature):
        return False
    return True


def sign_turn(token: str, game: str, command_id: str, seat: int, turn: str, commitment: str | None = None) -> str:
    """The seat's signature of a turn (:func:`turn_message`; ``commitment``: turn/v2)."""
    return sign(token, turn_message(game, command_id, seat, turn, commitment))


def verify_turn(
    key: str, signature: str, game: str, command_id: str, seat: int, turn: str, commitment: str | None = None
) -> bool:
    """True when ``signature`` was made by the token whose public key is ``key`` over this
    turn (turn/v2, naming ``commitment``, when it is given; turn/v1 otherwise)."""
    return verify(key, signature, turn_message(game, command_id, seat, turn, commitment))


# A signed request (docs/gateway.md, Signed requests): a seat's reads over HTTP carry the
# time, a fresh nonce and the seat's signature over both, the method and the path.  Made
# here, beside the turns' signatures, for every client (the CLI over HTTP among them);
# the gateway checks them (red7es.gateway.auth).
TIMESTAMP = "X-Red7-Timestamp"
NONCE = "X-Red7-Nonce"
SIGNATURE = "X-Red7-Signature"


def request_message(method: str, path: str, timestamp_ms: int, nonce: str) -> bytes:
    """The exact bytes a seat signs for one request (docs/gateway.md): ``path`` is the
    request's path as sent, with its query string (``/api/games/g1/seats/0?x=1``)."""
    return f"red7es/request/v1\n{method.upper()}\n{path}\n{timestamp_ms}\n{nonce}".encode()


def sign_request(token: str, method: str, path: str, timestamp_ms: int, nonce: str) -> str:
    """The hex signature of a request by a seat's token (what a client computes)."""
    return sign(token, request_message(method, path, timestamp_ms, nonce))


def signed_headers(token: str, method: str, path: str, timestamp_ms: int, nonce: str) -> dict[str, str]:
    """The three headers of a signed request."""
    return {
        TIMESTAMP: str(timestamp_ms),
        NONCE: nonce,
        SIGNATURE: sign_request(token, method, path, timestamp_ms, nonce),
    }
