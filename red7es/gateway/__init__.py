"""The HTTP gateway: the only part of red7es an untrusted client talks to (docs/gateway.md).

``app`` builds the ASGI app, ``auth`` checks signed reads, ``hub`` fans each game's
changes out to its subscribers from one reader per process, ``streams`` writes them
as NDJSON or Server-Sent Events, ``errors`` maps every failure to a JSON error.
"""

from __future__ import annotations

from .app import create_app

__all__ = ["create_app"]
