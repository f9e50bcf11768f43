"""The gateway's limits, in a module of their own: the CLI reads their defaults at
start-up without importing the web framework."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limits"]


@dataclass(frozen=True)
class Limits:
    """The gateway's limits (``red7 gateway --rate ...``); 0 turns one off."""

    rate: int = 200  # requests per client address per window
    seat_rate: int = 100  # requests per seat per window, once signed by its token
    window: float = 10.0  # seconds
    streams: int = 16  # open streams per client address, in one gateway process

    @classmethod
    def off(cls) -> Limits:
        return cls(rate=0, seat_rate=0, streams=0)
