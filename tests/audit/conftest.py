"""Games for the audit tests, played in-process by the real worker code (no processes).

``Games.bots`` plays an all-bot game; ``Games.people`` seats people who pick legal
turns from their seat views and, with ``mischief``, also submit what a real service
sees now and then: illegal turns, turns out of order, wrong tokens, a client posing
as a bot, a corrupt command, a second create and a join of a taken seat, so every
way of being rejected is in the logs the audit re-executes.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import fakeredis
import pytest
from support import wait_for

from red7es.service.client import GameService
from red7es.service.codec import encode_command
from red7es.service.deadlines import redis_now
from red7es.service.events import BOT, PERSON, CreateCommand, JoinCommand, SeatSpec, TurnCommand
from red7es.service.records import Record, export
from red7es.service.store import now_ms
from red7es.service.tokens import new_token, public_key
from red7es.variant import Variant
from red7es.workers.context import WorkerContext

ADVANCED = {"scoring": True, "draw": True, "actions": True}


@dataclass
class Games:
    """Plays games on one Redis connection with the worker's own code."""

    connection: Any
    service: GameService = field(init=False)
    worker: WorkerContext = field(init=False)
    views: dict[str, list[tuple[int, int | None, dict[str, Any]]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.service = GameService(self.connection)
        self.worker = WorkerContext(self.connection)

    def settle(self, game_id: str) -> None:
        """Fold until nothing is pending (bots move meanwhile)."""
        for _ in range(100_000):
            self.worker.advance(game_id)
            if not self.worker.folder.pending(game_id):
                return
        raise AssertionError(f"game {game_id} never settled")

    def over(self, game_id: str) -> bool:
        return self.service.store.meta(game_id).get("status") == "over"

    def bots(self, game_id: str, variant: Variant, specs: Sequence[str] = ("random",), seed: str | None = None) -> str:
        seats = [SeatSpec(f"bot{i}", BOT, specs[i % len(specs)]) for i in range(variant.players)]
        self.service.create(variant, seats, seed=seed or f"seed-{game_id}", game_id=game_id, wait=None)
        while not self.over(game_id):
            self.settle(game_id)
        return game_id

    def people(
        self,
        game_id: str,
        variant: Variant,
        people: Sequence[str] = ("alice", "bob"),
        bot: str = "random",
        *,
        seed: str | None = None,
        mischief: float = 0.15,
        rng: random.Random | None = None,
        capture: bool = False,
        stop_after: int | None = None,
        mid_fold: float = 0.0,
    ) -> dict[str, str]:
        """A game where ``people`` (then bots) sit; returns the people's tokens.

        ``mid_fold``: how often a person gives up after the first step of the turn it
        picked (``p:R7 fold``), which a fold takes back (batch rules 4: TurnTakenBack).
        """
        rng = rng or random.Random(game_id)
        seats = [SeatSpec(name) for name in people]
        seats += [SeatSpec(f"bot{i}", BOT, bot) for i in range(variant.players - len(people))]
        created = self.service.create(
            variant, seats, seed=seed or f"seed-{game_id}", join=list(people), game_id=game_id, wait=None
        )
        tokens = created.tokens
        turns = 0
        while True:
            self.settle(game_id)
            if capture:
                self._capture(game_id, len(seats))
            view = self.service.view(game_id)
            if view["status"] == "over" or (stop_after is not None and turns >= stop_after):
                return tokens
            seat = view["to_move"]
            name = view["seats"][seat]["name"]
            legal = self.service.view(game_id, seat)["legal"]
            if rng.random() < mischief:
                self._mischief(game_id, view, name, tokens, rng)
                self.settle(game_id)
            turn = rng.choice(legal)
            if mid_fold and rng.random() < mid_fold and " " in turn and not turn.endswith("..."):
                turn = f"{turn.split()[0]} fold"
            self.service.submit(game_id, name, tokens[name], turn)
            turns += 1

    def _capture(self, game_id: str, seats: int) -> None:
        """Remember the views the service published at this version (public and every seat)."""
        store = self.service.store
        version = int(store.meta(game_id)["version"])
        shots = self.views.setdefault(game_id, [])
        if shots and shots[-1][0] == version:
            return
        shots.append((version, None, self.service.view(game_id)))
        for seat in range(seats):
            shots.append((version, seat, self.service.view(game_id, seat)))

    def _mischief(
        self, game_id: str, view: dict[str, Any], name: str, tokens: dict[str, str], rng: random.Random
    ) -> None:
        """One command a real service must reject (and an audit must find rightly rejected)."""
        store = self.service.store
        seat = view["to_move"]
        kind = rng.randrange(7)
        others = [p for p in tokens if p != name]
        if kind == 0:  # a card from a palette is not in the hand
            card = next(c for s in view["seats"] for c in (s.get("palette") or []))
            self.service.submit(game_id, name, tokens[name], f"p:{card}")
        elif kind == 1 and others:  # out of turn
            self.service.submit(game_id, others[0], tokens[others[0]], "fold")
        elif kind == 2:  # wrong token
            self.service.submit(game_id, name, new_token(), "fold")
        elif kind == 3:  # a client posing as a bot
            command = TurnCommand(f"fake-{rng.randrange(10**9)}", seat, "fold", BOT, "")
            store.submit(game_id, command.id, encode_command(command, now_ms()))
        elif kind == 4:  # bytes that are no command
            store.submit(game_id, f"junk-{rng.randrange(10**9)}", b"\xc1 not msgpack")
        elif kind == 5:  # a second create
            command = CreateCommand(f"again-{rng.randrange(10**9)}", Variant(2), (), "", ())
            store.submit(game_id, command.id, encode_command(command, now_ms()))
        else:  # a join of a taken seat
            command = JoinCommand(f"join-{rng.randrange(10**9)}", seat, public_key(new_token()))
            store.submit(game_id, command.id, encode_command(command, now_ms()))
        self.service.schedule(game_id)

    def record(self, game_id: str) -> Record:
        return export(self.service, game_id)

    def _past(self, deadline: int) -> None:
        wait_for(lambda: redis_now(self.connection) > deadline, "the deadline to pass", timeout=10, every=0.005)

    def no_show(
        self, game_id: str, variant: Variant, person: str, bot: str = "random", absent: str | None = None
    ) -> None:
        """A timed game of bots and ``person``, who joins and never moves: they time out
        when their time is up by Redis's clock, and the bots play on to the end.  With
        ``absent``, a second person's seat nobody takes (a join deadline closes it)."""
        people = [SeatSpec(person)] + ([SeatSpec(absent)] if absent else [])
        seats = people + [SeatSpec(f"bot{i}", BOT, bot) for i in range(len(people), variant.players)]
        self.service.create(variant, seats, join=[person], seed=f"seed-{game_id}", game_id=game_id, wait=None)
        while not self.over(game_id):
            self.settle(game_id)
            table = self.worker.folder.tables.get(game_id)
            due = None if table is None else table.deadline
            if due is not None and not self.over(game_id):
                self._past(due)


@pytest.fixture
def games(fake_redis: fakeredis.FakeRedis) -> Games:
    return Games(fake_redis)


@pytest.fixture(scope="module")
def module_games() -> Iterator[Games]:
    """One in-memory Redis for a whole module's games (they are expensive to play)."""
    connection = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    yield Games(connection)
    connection.close()


__all__ = ["ADVANCED", "PERSON", "Games"]
