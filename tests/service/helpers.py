"""Shared helpers for the service tests: games without workers, and log checks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import msgpack

from red7es.deal import commitment
from red7es.service.client import GameService
from red7es.service.codec import GENESIS, CorruptEvent, Recorded, decode_command, decode_log, event_hash
from red7es.service.events import (
    CommandApplied,
    CommandRejected,
    CreateCommand,
    GameCreated,
    JoinCommand,
    SeatJoined,
    SeatSpec,
    TurnCommand,
)
from red7es.service.folding import Folder, Progress
from red7es.service.store import GameStore
from red7es.service.table import Table
from red7es.service.tokens import new_token, public_key, sign_turn
from red7es.variant import Variant


class Wakes:
    """Stands in for waking workers: records the games that would have been woken."""

    def __init__(self) -> None:
        self.games: list[str] = []

    def __call__(self, game_id: str) -> None:
        self.games.append(game_id)


def offline_service(connection: Any) -> GameService:
    """A GameService that wakes no worker: tests drive a Folder themselves."""
    return GameService(connection, wake=Wakes())


def person(name: str) -> SeatSpec:
    return SeatSpec(name)


def bot(name: str, spec: str = "greedy") -> SeatSpec:
    return SeatSpec(name, "bot", spec)


def fold(folder: Folder, game_id: str, limit: int = 10_000) -> Progress:
    """Advance a game until nothing is pending (bots included); returns the last progress."""
    for _ in range(limit):
        progress = folder.advance(game_id, max_seconds=5.0)
        if not progress.more and not folder.pending(game_id):
            return progress
    raise AssertionError(f"game {game_id} never settled")


def decoded_log(store: GameStore, game_id: str) -> list[Recorded]:
    return decode_log(store.log(game_id))


def check_chain(raws: Sequence[bytes]) -> list[Recorded]:
    """The log is a gapless hash chain from the genesis head; returns it decoded."""
    recorded = decode_log(raws)
    head = GENESIS
    for i, r in enumerate(recorded):
        assert r.seq == i, f"event {i} has seq {r.seq}"
        assert r.prev == head, f"event {i} does not chain to event {i - 1}"
        head = r.hash
    assert len({event_hash(raw) for raw in raws}) == len(raws), "an event is duplicated"
    return recorded


def check_game(store: GameStore, game_id: str) -> list[Recorded]:
    """Everything that must hold for a game's stored state, at rest; returns the log.

    * the log is a hash chain, its length is the meta version, its last hash the head;
    * every command in the commands stream is answered exactly once, in stream order
      (a turn by CommandApplied/CommandRejected with its id, a join by SeatJoined with
      its key or CommandRejected, a corrupt command by a rejection named by stream id);
    * the meta cursor is the last command.
    """
    raws = store.log(game_id)
    recorded = check_chain(raws)
    meta = store.meta(game_id)
    assert int(meta["version"]) == len(raws)
    assert meta["head"] == (recorded[-1].hash.hex() if recorded else GENESIS.hex())
    assert meta["cursor"] == store.last_command_id(game_id)

    answers: list[str] = []  # answers to commands, in log order
    for r in recorded:
        e = r.event
        if isinstance(e, CommandApplied | CommandRejected):
            answers.append(f"id:{e.id}")
        elif isinstance(e, SeatJoined):
            answers.append(f"key:{e.key}")
    expected: list[str] = []
    rows = store.commands(game_id)
    assert rows, "a game has at least its create command"
    for i, (stream_id, raw) in enumerate(rows):
        try:
            command, _at = decode_command(raw)
        except CorruptEvent:
            expected.append(f"id:{stream_id}")
            continue
        if i == 0:
            assert isinstance(command, CreateCommand)
            assert isinstance(recorded[0].event, GameCreated)
            expected.extend(f"key:{key}" for _seat, key in command.joins)
        elif isinstance(command, JoinCommand):
            rejected = f"id:{command.id}" in answers
            expected.append(f"id:{command.id}" if rejected else f"key:{command.key}")
        else:
            assert isinstance(command, TurnCommand | CreateCommand)
            expected.append(f"id:{command.id}")
    assert answers == expected, "commands and their answers differ"
    counts = Counter(answers)
    assert all(n == 1 for n in counts.values()), f"answered twice: {[a for a, n in counts.items() if n > 1]}"
    return recorded


def events_of(recorded: Sequence[Recorded]) -> list[Any]:
    """The events of a log without GameCreated's creation time (which differs per run)."""
    return [r.event for r in recorded[1:]]


def public_changes(store: GameStore, game_id: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _id, _v, payload in store.changes(game_id):
        out.extend(msgpack.unpackb(payload, raw=False)["events"])
    return out


def all_bot_game(
    service: GameService, game_id: str, players: int = 3, bots: Sequence[str] = ("greedy",), **variant: Any
) -> None:
    seats = [bot(f"b{i}", bots[i % len(bots)]) for i in range(players)]
    service.create(Variant(players, **variant), seats, seed=f"seed-{game_id}", game_id=game_id, wait=None)


def seated_table(
    variant: Variant, seed: bytes, at: int = 10_000, joined: int | None = None
) -> tuple[Table, SeatTokens]:
    """A referee for game ``g`` with person seats p0, p1, ...; the first ``joined`` of them
    (all by default) joined at creation, whose clocks start at stream time ``at``.  Returns
    the table and every seat's token."""
    tokens = SeatTokens(new_token() for _ in range(variant.players))
    seats = tuple(SeatSpec(f"p{i}") for i in range(variant.players))
    joins = tuple((i, public_key(t)) for i, t in enumerate(tokens))[:joined]
    command = CreateCommand("create-g", variant, seats, commitment(seed), joins)
    table, _events = Table.start("g", command, seed, 0, stream_at=at)
    tokens.signed_over = table.signed_over
    return table, tokens


class SeatTokens(list[str]):
    """Every seat's token of a game, and what its turns are signed over besides its id."""

    signed_over: str | None = None


def signed(tokens: SeatTokens, seat: int, text: str, command_id: str, token: str | None = None) -> TurnCommand:
    """A person's command in game ``g`` (a turn, ``resign``, ``abort``), signed with the
    seat's token, or with ``token`` to forge it."""
    signature = sign_turn(token or tokens[seat], "g", command_id, seat, text, tokens.signed_over)
    return TurnCommand(command_id, seat, text, "person", signature)
