"""Tournament ids, the ids of their games, and the seeds and lots derived from the seed.

A tournament's games have fixed ids, ``t-<T>-r<round>-<table>``: creating a game with a
chosen id fails if it exists, which is what makes ``red7 tournament run`` safe to stop
and start again.  Every game seed is derived from the tournament seed, so the whole
tournament replays from one secret; pairing lots are derived from the seed's public
commitment, so anyone can re-derive the pairings without the secret.
"""

from __future__ import annotations

import hashlib
import re

from ..service.store import TOURNAMENT_GAMES

__all__ = [
    "MAX_ID",
    "TournamentError",
    "NoSuchTournament",
    "valid_tournament_id",
    "check_tournament_id",
    "game_id",
    "game_seed",
    "lot",
]

MAX_ID = 24  # leaves room for "t-" + id + "-r999-99" within the 40 characters of a game id
_ID = re.compile(rf"^[a-z0-9][a-z0-9-]{{0,{MAX_ID - 1}}}$")


class TournamentError(ValueError):
    """A tournament request that cannot be done, said in one line."""


class NoSuchTournament(LookupError):
    def __init__(self, tournament: str) -> None:
        super().__init__(f"no tournament {tournament!r}")
        self.tournament = tournament


def valid_tournament_id(tournament: str) -> bool:
    return bool(_ID.fullmatch(tournament))  # (fullmatch: `$` would let a final newline through)


def check_tournament_id(tournament: str) -> str:
    if not valid_tournament_id(tournament):
        raise TournamentError(
            f"{tournament!r} is not a valid tournament id (1-{MAX_ID} lower-case letters, digits, dashes)"
        )
    return tournament


def game_id(tournament: str, round_number: int, table: int) -> str:
    """The id of a tournament game: ``t-<T>-r<round>-<table>`` (``t-`` is kept for them)."""
    return f"{TOURNAMENT_GAMES}{tournament}-r{round_number}-{table}"


def game_seed(seed: bytes, game: str) -> bytes:
    """The secret seed of one game: SHA-256("red7es/tournament/game/v1" ‖ seed ‖ game id)."""
    return hashlib.sha256(b"red7es/tournament/game/v1" + seed + game.encode()).digest()


def lot(commitment: str, *parts: object) -> bytes:
    """A public, reproducible draw: SHA-256 of the commitment and ``parts`` (sort keys)."""
    text = "\n".join(["red7es/tournament/lot/v1", commitment, *map(str, parts)])
    return hashlib.sha256(text.encode()).digest()
