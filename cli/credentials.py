"""The per-user files of what this user holds and saw: seat tokens, and log heads seen.

Both live in the red7es data directory (``RED7_HOME`` overrides it), created readable
by their owner only (mode 0600): ``credentials.json`` holds the secret seat tokens of
this user's seats, ``seen.json`` the log heads this user's commands were shown of each
game (docs/trust.md), which let ``red7 audit --as`` and ``show``/``watch``/``play`` tell
a record or a game that is not what this user saw.
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

__all__ = ["Credentials", "Seen"]

_SHAPE = 'it does not hold {"games": {GAME: {SEAT NAME: TOKEN}}}'
_SEEN_SHAPE = 'it does not hold {"games": {GAME: {VERSION: HEAD}}}'


class _OwnFile:
    """A JSON file ``{"games": {GAME: {NAME: TEXT}}}`` of the data directory, readable by
    its owner only, changed under a lock."""

    what = "credentials file"
    shape = _SHAPE

    def __init__(self, path: Path, server: str | None = None) -> None:
        self.path = path
        self.server = server

    def _game(self, game_id: str) -> str:
        """The entry of a game: its id on Redis; ``SERVER/GAME`` for a game on a gateway
        (``http://host:8007/g1``: no game id holds a ``/``, so no two servers' games meet)."""
        return game_id if self.server is None else f"{self.server}/{game_id}"

    def _load(self) -> dict[str, Any]:
        try:
            data: Any = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {"games": {}}
        except (OSError, ValueError) as exc:
            raise OSError(f"cannot read the {self.what} {self.path}: {exc}") from None
        games = data.setdefault("games", {}) if isinstance(data, dict) else None
        if not isinstance(games, dict) or not all(
            isinstance(seats, dict) and all(isinstance(token, str) for token in seats.values())
            for seats in games.values()
        ):  # valid JSON of another shape: the same one line as a file that is not JSON
            raise OSError(f"cannot read the {self.what} {self.path}: {self.shape}")
        loaded: dict[str, Any] = data
        return loaded

    def _save(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.stem}.", dir=self.path.parent)
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


class Credentials(_OwnFile):
    """Seat tokens by game id and seat name."""

    def __init__(self, path: Path | None = None, server: str | None = None) -> None:
        super().__init__(path or data_dir() / "credentials.json", server)

    def save(self, game_id: str, name: str, token: str) -> None:
        with self._locked():
            data = self._load()
            data["games"].setdefault(self._game(game_id), {})[name] = token
            self._save(data)

    def forget(self, game_id: str, name: str, token: str) -> None:
        """Drop ``token`` for a seat it did not take (its join was refused).

        Only that token: if another join of the seat has saved a newer one meanwhile,
        it stays.
        """
        with self._locked():
            data = self._load()
            seats = data["games"].get(self._game(game_id), {})
            if seats.get(name) == token:
                del seats[name]
                if not seats:
                    del data["games"][self._game(game_id)]
                self._save(data)

    def seats(self, game_id: str) -> dict[str, str]:
        """Seat name -> token for the seats this user holds in a game."""
        seats: dict[str, str] = self._load()["games"].get(self._game(game_id), {})
        return dict(seats)

    def token(self, game_id: str, name: str) -> str | None:
        return self.seats(game_id).get(name)


class Seen(_OwnFile):
    """The log heads this user's commands were shown, by game id: ``version -> head``.

    The first head seen at a version stays: a game rolled back and played on has other
    heads at the same versions, and what the user saw is the evidence.
    """

    what = "file of heads seen"
    shape = _SEEN_SHAPE

    def __init__(self, path: Path | None = None, server: str | None = None) -> None:
        super().__init__(path or data_dir() / "seen.json", server)

    def remember(self, game_id: str, version: int, head: str) -> None:
        with self._locked():
            data = self._load()
            heads = data["games"].setdefault(self._game(game_id), {})
            if heads.get(str(version)) is None:
                heads[str(version)] = head
                self._save(data)

    def heads(self, game_id: str) -> dict[int, str]:
        """Version -> head for one game (entries whose version is not a number are left out)."""
        heads: dict[str, str] = self._load()["games"].get(self._game(game_id), {})
        return {int(v): h for v, h in heads.items() if v.isdigit()}
