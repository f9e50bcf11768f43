"""The gateway's limits and who may create games, in a module of their own: the CLI
reads them at start-up without importing the web framework."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["CREATE_MODES", "CLOSED", "Creation", "Limits", "OPEN", "OPERATOR"]

OPEN, OPERATOR, CLOSED = "open", "operator", "closed"
CREATE_MODES = (OPEN, OPERATOR, CLOSED)
MIN_OPERATOR_KEY = 16  # characters: a key anyone could guess protects nothing


@dataclass(frozen=True)
class Limits:
    """The gateway's limits (``red7 gateway --rate ...``); 0 turns one off."""

    rate: int = 200  # requests per client address per window
    seat_rate: int = 100  # requests per seat per window, once signed by its token
    window: float = 10.0  # seconds
    streams: int = 16  # open streams per client address, in one gateway process
    connections: int = 64  # open connections per client address (IPv6: per /64), in one gateway process
    create: int = 5  # games created per client address per window (each also counts against rate)

    @classmethod
    def off(cls) -> Limits:
        return cls(rate=0, seat_rate=0, streams=0, create=0)


@dataclass(frozen=True)
class Creation:
    """Who may create games through the gateway (``red7 gateway --create``): anyone
    (``open``), whoever sends ``Authorization: Bearer <operator key>`` (``operator``), or
    nobody (``closed``)."""

    mode: str = OPEN
    operator_key: str | None = None

    def __post_init__(self) -> None:
        if self.mode not in CREATE_MODES:
            raise ValueError(f"--create must be one of {', '.join(CREATE_MODES)}, not {self.mode!r}")
        if self.mode == OPERATOR and (self.operator_key is None or len(self.operator_key) < MIN_OPERATOR_KEY):
            raise ValueError(f"--create operator needs an operator key of at least {MIN_OPERATOR_KEY} characters")

    def refusal(self, headers: Mapping[str, str]) -> str | None:
        """Why a request with ``headers`` may not create a game (its 403), or None."""
        if self.mode == CLOSED:
            return "creating games is closed on this gateway (red7 gateway --create closed)"
        if self.mode == OPEN:
            return None
        given = headers.get("authorization", "")
        if not given:
            return "creating games needs the operator key: Authorization: Bearer <operator key>"
        scheme, _, credential = given.partition(" ")
        # Digests compared with compare_digest: no early exit that would time how much of
        # the key matched, nor a length check that would time its length.
        sent = hashlib.sha256(credential.strip().encode()).digest()
        right = hmac.compare_digest(sent, hashlib.sha256((self.operator_key or "").encode()).digest())
        return None if right and scheme.lower() == "bearer" else "wrong operator key"
