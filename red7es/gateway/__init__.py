"""The HTTP gateway: the only part of red7es an untrusted client talks to (docs/gateway.md).

``app`` builds the ASGI app, ``auth`` checks signed reads, ``hub`` fans each game's
changes out to its subscribers from one reader per process, ``streams`` writes them
as NDJSON or Server-Sent Events, ``limits`` counts requests and open streams,
``errors`` maps every failure to a JSON error.

``create_app`` is imported on first use: the CLI reads the gateway's default limits
at start-up, and must not pay for importing FastAPI on every command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
