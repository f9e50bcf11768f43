"""The per-user credentials file: the secret seat tokens of this user's seats.

It lives in the red7es data directory (``RED7_HOME`` overrides it) as
``credentials.json`` and is created readable by its owner only (mode 0600).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from red7es.service.connection import data_dir

__all__ = ["Credentials"]

_SHAPE = 'it does not hold {"games": {GAME: {SEAT NAME: TOKEN}}}'


class Credentials:
    """Seat tokens by game id and seat name."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / "credentials.json"

    def _load(self) -> dict[str, Any]:
        try:
            data: Any = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {"games": {}}
        except (OSError, ValueError) as exc:
            raise OSError(f"cannot read the credentials file {self.path}: {exc}") from None
        games = data.setdefault("games", {}) if isinstance(data, dict) else None
        if not isinstance(games, dict) or not all(
            isinstance(seats, dict) and all(isinstance(token, str) for token in seats.values())
            for seats in games.values()
        ):  # valid JSON of another shape: the same one line as a file that is not JSON
            raise OSError(f"cannot read the credentials file {self.path}: {_SHAPE}")
        loaded: dict[str, Any] = data
        return loaded

    def _save(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".credentials.", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w") as handle:
                json.dump(data, handle, indent=2, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the file's lock for a read-modify-write.

        The atomic replace in :meth:`_save` keeps the file whole, but two commands of one
        user at once (joining several games from a script) would each write what it read
        plus its own token, and the first token written would be lost.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def save(self, game_id: str, name: str, token: str) -> None:
        with self._locked():
            data = self._load()
            data["games"].setdefault(game_id, {})[name] = token
            self._save(data)

    def forget(self, game_id: str, name: str, token: str) -> None:
        """Drop ``token`` for a seat it did not take (its join was refused).

        Only that token: if another join of the seat has saved a newer one meanwhile,
        it stays.
        """
        with self._locked():
            data = self._load()
            seats = data["games"].get(game_id, {})
            if seats.get(name) == token:
                del seats[name]
                if not seats:
                    del data["games"][game_id]
                self._save(data)

    def seats(self, game_id: str) -> dict[str, str]:
        """Seat name -> token for the seats this user holds in a game."""
        seats: dict[str, str] = self._load()["games"].get(game_id, {})
        return dict(seats)

    def token(self, game_id: str, name: str) -> str | None:
        return self.seats(game_id).get(name)
