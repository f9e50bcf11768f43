"""Fixtures for the tournament tests: specs without Redis, in-process games, real workers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest
import redis
from support import WorkerPool

from red7es.service.client import GameService
from red7es.service.events import BOT, PERSON, SeatSpec
from red7es.service.redis_server import RedisServer
from red7es.tournament.events import GameFinished, TournamentCreated
from red7es.tournament.pairing import default_rounds
from red7es.variant import Variant
from red7es.workers.context import WorkerContext


def bots(n: int, kinds: tuple[str, ...] = ("greedy", "random")) -> list[SeatSpec]:
    """``n`` bot entrants alternating between ``kinds``, named e0, e1, ..."""
    return [SeatSpec(f"e{i}", BOT, kinds[i % len(kinds)]) for i in range(n)]


def people(*names: str) -> list[SeatSpec]:
    return [SeatSpec(name, PERSON) for name in names]


def spec(
    n: int, k: int = 2, fmt: str = "round-robin", rounds: int | None = None, commitment: str = "c0ffee"
) -> TournamentCreated:
    """A tournament's first event without Redis, for pairing and standings tests."""
    return TournamentCreated(
        "t", "t", tuple(bots(n)), Variant(k), fmt, rounds or default_rounds(fmt, n, k), commitment, 0
    )


def result(round_number: int, game: str, winners: tuple[int, ...], k: int = 2, **kwargs: Any) -> GameFinished:
    """A basic-game result: each winner won one round."""
    round_wins = kwargs.pop("round_wins", tuple(int(s in winners) for s in range(k)))
    scores = kwargs.pop("scores", (0,) * k)
    return GameFinished(round_number, game, winners, scores, round_wins, "rounds", 1, "00" * 32)


class Inline:
    """A GameService on fakeredis whose games are folded in-process (no worker processes)."""

    def __init__(self) -> None:
        self.connection = fakeredis.FakeRedis(server=fakeredis.FakeServer())
        self.service = GameService(self.connection)
        self.context = WorkerContext(self.connection)
        self.driven: list[str] = []

    def drive(self, game: str) -> None:
        """Fold a game until nothing is pending: it is over, or only a person can move."""
        self.driven.append(game)
        for _ in range(2000):
            if not self.context.folder.pending(game):
                return
            self.context.advance(game)
        raise AssertionError(f"game {game} never settled")


@pytest.fixture
def inline() -> Iterator[Inline]:
    env = Inline()
    yield env
    env.connection.close()


@pytest.fixture(scope="module")
def pool_url(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The session's test Redis, flushed once, with two real workers for the whole module."""
    connection = redis.Redis.from_url(redis_server.url)
    connection.flushall()
    connection.close()
    pool = WorkerPool(redis_server.url, tmp_path_factory.mktemp("tournament-workers"))
    pool.start(2, wait=True)
    yield redis_server.url
    pool.stop()


def tournament_games(connection: redis.Redis, tournament: str) -> list[str]:
    """Ids of the games a tournament created, from the game index."""
    return [g.decode() for g in connection.zrange("red7:games", 0, -1) if g.decode().startswith(f"t-{tournament}-")]
