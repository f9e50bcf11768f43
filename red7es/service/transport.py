"""The one client interface the player's commands use, whatever carries it.

``red7`` reaches games in one of two ways: straight to Redis (:class:`~red7es.service.client.GameService`,
what the host and the workers share) or through the HTTP gateway
(:class:`~red7es.service.http_client.HttpGameService`, for a player who holds no Redis
credential: docs/gateway.md).  The commands are written once, against this protocol;
the ``--url``'s scheme picks the implementation (``cli/session.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ..steps import Turn
from ..variant import Variant
from .client import Answer, CreatedGame, GameSummary
from .events import SeatSpec
from .records import Record

__all__ = ["GameClient", "TournamentReader"]


class GameClient(Protocol):
    """What a player's command does with games: create, join, play, read, follow, fetch a record."""

    # Called with (game, seat name, token) as soon as a token is made and before any wait
    # for an answer: a wait that times out must not lose the token of a seat it may take.
    keep_token: Callable[[str, str, str], None] | None

    def create(
        self,
        variant: Variant,
        seats: Sequence[SeatSpec],
        *,
        seed: bytes | str | None = None,
        join: Sequence[str] = (),
        keys: Mapping[str, str] | None = None,
        game_id: str | None = None,
    ) -> CreatedGame: ...

    def join(self, game_id: str, name: str) -> str:
        """Take the open seat ``name``; the new token (kept through ``keep_token`` first)."""
        ...

    def join_answered(self, game_id: str, name: str, token: str, wait: float) -> bool:
        """Wait up to ``wait`` seconds for the answer to an earlier join of seat ``name``
        made here with ``token`` (one that timed out); whether it has come."""
        ...

    def play(
        self, game_id: str, name: str, token: str, turn: str | Turn, *, command_id: str | None = None
    ) -> Answer: ...

    def view(self, game_id: str) -> dict[str, Any]:
        """The public view."""
        ...

    def seat_view(self, game_id: str, name: str, token: str) -> dict[str, Any]:
        """Seat ``name``'s view, with its hand, read as the holder of ``token``."""
        ...

    def seat_of(self, game_id: str, name: str) -> int: ...

    def seat_key(self, game_id: str, seat: int, view: dict[str, Any] | None = None) -> str | None: ...

    def games(self, limit: int = 50) -> list[GameSummary]: ...

    def count_games(self) -> int | None:
        """How many games there are (None: the transport cannot tell beyond what it lists)."""
        ...

    def last_change_id(self, game_id: str) -> str:
        """The id of the game's last change ("0-0" before any): where following it starts."""
        ...

    def wait_change(self, game_id: str, after: str, timeout: float) -> tuple[str, list[dict[str, Any]]] | None: ...

    def record(self, game_id: str) -> Record:
        """The game's record, as ``red7 export`` writes it."""
        ...


class TournamentReader(Protocol):
    """What a player's tournament commands read: the JSON ``red7 tournament list/show/
    standings --json`` print and the report page (red7es.tournament.views builds them,
    on Redis here or in the gateway)."""

    def tournaments(self, limit: int) -> list[dict[str, Any]]: ...

    def tournament(self, tournament: str) -> dict[str, Any]: ...

    def tournament_standings(self, tournament: str) -> dict[str, Any]: ...

    def tournament_report(self, tournament: str) -> str: ...
