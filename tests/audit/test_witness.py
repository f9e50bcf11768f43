"""``red7 audit --as``: a record rewritten whole passes the audit, not what its seat holder saw.

The attack of issue 24 (point 8): with write access to Redis, seat an attacker's key
for bob (the create command's joins and bob's SeatJoined) before bob's first move,
play bob's seat with it and re-chain. Every signature verifies, every event
re-executes, the chain is intact: the audit passes. Only bob can tell, from the key
his client created and the log heads it was shown.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner, Result

from red7es.cli.main import cli
from red7es.service.audit import FAIL, INCOMPLETE, PASS, audit_as, audit_record
from red7es.service.codec import event_hash
from red7es.service.events import CreateCommand, SeatJoined, TurnCommand
from red7es.service.record_files import write
from red7es.service.records import Record
from red7es.service.store import Keys
from red7es.service.tokens import new_token, public_key, sign_turn
from red7es.service.witness import _rolled_back, chain_divergence, live_divergence
from red7es.variant import Variant

from .conftest import ADVANCED, Games
from .tamper import edit_command, events_of, rechain

GAME = "witnessed"


@pytest.fixture(scope="module")
def genuine(module_games: Games) -> tuple[Record, dict[str, str]]:
    tokens = module_games.people(GAME, Variant(3, **ADVANCED), ("alice", "bob"), rng=random.Random(5), mischief=0.0)
    return module_games.record(GAME), tokens


def heads_of(record: Record) -> dict[int, str]:
    """Every head the record's log had: what a client watching the whole game was shown."""
    return {i + 1: event_hash(e.raw).hex() for i, e in enumerate(record.events)}


def seat_taken(record: Record, name: str, token: str) -> Record:
    """The attack: seat ``name`` joined with ``token``'s key from the start, its turns signed with it."""
    seat = [s.name for s in record.seats].index(name)
    key = public_key(token)

    def joins(c: CreateCommand) -> CreateCommand:
        return dataclasses.replace(c, joins=tuple((s, key if s == seat else k) for s, k in c.joins))

    forged = edit_command(record, 0, joins)
    for k in range(1, len(record.commands)):

        def resign(c: object) -> object:
            if isinstance(c, TurnCommand) and c.seat == seat and c.signature:
                return dataclasses.replace(
                    c, signature=sign_turn(token, record.game_id, c.id, c.seat, c.turn, record.commitment)
                )
            return c

        try:
            forged = edit_command(forged, k, resign)
        except ValueError:  # a corrupt command stays as it was
            continue
    events = [
        dataclasses.replace(e, key=key) if isinstance(e, SeatJoined) and e.seat == seat else e
        for e in events_of(forged)
    ]
    return rechain(forged, events)


def test_the_seat_taken_and_rechained_passes_the_audit_but_not_the_seat_holders(
    genuine: tuple[Record, dict[str, str]],
) -> None:
    record, tokens = genuine
    forged = seat_taken(record, "bob", new_token())
    assert audit_record(forged).result == PASS  # what the audit alone cannot see
    report = audit_as(forged, "bob", public_key(tokens["bob"]), heads_of(record))
    assert report.result == FAIL and report.divergence is not None
    joined = next(i for i, e in enumerate(events_of(forged)) if isinstance(e, SeatJoined) and e.name == "bob")
    assert (report.divergence.check, report.divergence.event) == ("seat-key", joined), report.line()
    # bob's heads alone tell it too, at the same event (alice, who holds no key of bob's, sees it so)
    alice = audit_as(forged, "alice", public_key(tokens["alice"]), heads_of(record))
    assert alice.divergence is not None
    assert (alice.divergence.check, alice.divergence.event) == ("rewritten", joined), alice.line()


def test_a_genuine_game_passes_as_each_seat(genuine: tuple[Record, dict[str, str]]) -> None:
    record, tokens = genuine
    for name, token in tokens.items():
        report = audit_as(record, name, public_key(token), heads_of(record))
        assert report.passed, report.line()
        assert f"as {name}: your seat's key and {len(record.events)} log heads you were shown match" in report.line()


def test_a_log_rolled_back_and_rechained_fails_at_the_first_event_gone(genuine: tuple[Record, dict[str, str]]) -> None:
    record, tokens = genuine
    cut = dataclasses.replace(rechain(record, events_of(record)[:20]), seed=None, status="playing")
    assert audit_record(cut).result == INCOMPLETE
    report = audit_as(cut, "bob", public_key(tokens["bob"]), heads_of(record))
    assert report.divergence is not None
    assert (report.result, report.divergence.check, report.divergence.event) == (FAIL, "rolled-back", 20)
    assert "events 20 to " in report.line()


def test_the_first_divergent_head_is_named() -> None:
    hashes = [bytes([i]) * 32 for i in range(5)]
    heads = {2: hashes[1].hex(), 4: "ff" * 32, 5: "ee" * 32}
    problem = chain_divergence(heads, hashes)
    assert problem is not None and (problem.check, problem.event) == ("rewritten", 3)
    assert chain_divergence({2: hashes[1].hex(), 9: "00"}, hashes) == chain_divergence({9: "00"}, hashes)


# ---------------------------------------------------------------------------- the command


@pytest.fixture
def home(genuine: tuple[Record, dict[str, str]], tmp_path: Path) -> Path:
    """Bob's data directory: his token and every head of the genuine game (genuine.jsonl beside it)."""
    record, tokens = genuine
    home = tmp_path / "home"
    home.mkdir()
    write(record, tmp_path / "genuine.jsonl")
    (home / "credentials.json").write_text(json.dumps({"games": {GAME: {"bob": tokens["bob"]}}}))
    heads = {str(v): h for v, h in heads_of(record).items()}
    (home / "seen.json").write_text(json.dumps({"games": {GAME: heads}}))
    return home


def audit(home: Path, *args: str) -> Result:
    env = {"RED7_HOME": str(home), "REDIS_URL": "redis://127.0.0.1:1/0", "NO_COLOR": "1"}
    return CliRunner().invoke(cli, ["audit", *args], env=env, catch_exceptions=False)


def test_audit_as_fails_the_attack_and_passes_the_genuine_file(
    genuine: tuple[Record, dict[str, str]], home: Path, tmp_path: Path
) -> None:
    write(seat_taken(genuine[0], "bob", new_token()), tmp_path / "forged.jsonl")

    plain = audit(home, str(tmp_path / "forged.jsonl"))
    assert plain.exit_code == 0 and plain.output.startswith(f"PASS {GAME}:"), plain.output
    as_bob = audit(home, str(tmp_path / "forged.jsonl"), "--as", "bob")
    assert as_bob.exit_code == 1, as_bob.output
    assert as_bob.output.startswith(f"FAIL {GAME}: event ") and ": seat-key: seat bob is held" in as_bob.output
    genuine_run = audit(home, str(tmp_path / "genuine.jsonl"), "--as", "bob", "--json")
    assert genuine_run.exit_code == 0, genuine_run.output
    assert json.loads(genuine_run.output)["witness"].startswith("as bob: your seat's key and ")


def test_audit_as_a_seat_not_held_is_refused_in_one_line(home: Path, tmp_path: Path) -> None:
    result = audit(home, str(tmp_path / "genuine.jsonl"), "--as", "alice")
    assert result.exit_code == 1
    assert result.output == (
        f"Error: you hold no seat 'alice' in game {GAME}: --as checks a game against what this machine "
        "remembers of a seat you took (its token in your credentials file)\n"
    )
    usage = audit(home, "--all", "--as", "bob")
    assert usage.exit_code == 2 and "--as checks one game" in usage.output


class _MovingLog:
    """A connection whose game gets one more event right after its first read of the log's
    newest entry: a move landing between the two reads of live_divergence."""

    def __init__(self, connection: redis.Redis, log: str, fields: dict[str, Any] | None = None) -> None:
        self.connection, self.log, self.moved = connection, log, False
        self.fields = fields or {"e": b"a move made meanwhile"}

    def xrevrange(self, key: str, **kwargs: Any) -> Any:
        rows = self.connection.xrevrange(key, **kwargs)
        if not self.moved:
            self.connection.xadd(self.log, self.fields)
            self.moved = True
        return rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connection, name)


def test_a_move_landing_between_the_reads_is_no_rewrite(real_redis: redis.Redis) -> None:
    """Was a false "the log was rewritten" warning (show, watch, play) whenever a move was
    appended between the log's length and its newest events being read."""
    log = Keys("moving").log
    events = [f"event {i}".encode() for i in range(6)]
    for raw in events:
        real_redis.xadd(log, {"e": raw})
    heads = {4: event_hash(events[3]).hex()}
    assert live_divergence(real_redis, "moving", heads) is None
    assert live_divergence(_MovingLog(real_redis, log), "moving", heads) is None  # type: ignore[arg-type]
    real_redis.delete(log)
    for raw in [*events[:3], b"another event 3", *events[4:]]:
        real_redis.xadd(log, {"e": raw})
    found = live_divergence(_MovingLog(real_redis, log), "moving", heads)  # type: ignore[arg-type]
    assert found is not None and found.check == "rewritten" and found.event == 3


def _grouped(connection: redis.Redis, log: str, raws: list[bytes], sizes: list[int]) -> None:
    """The log as red7es writes it: an entry per append (``sizes`` events each), fields
    ``v``, ``e``, ``e1``, … under the id of its last event."""
    connection.delete(log)
    done = 0
    for n, size in enumerate(sizes):
        fields: dict[str, Any] = {"v": done + size, "e": raws[done]}
        fields.update({f"e{j}": raws[done + j] for j in range(1, size)})
        connection.xadd(log, fields, id=f"{1000 + n}-{size - 1}")
        done += size
    assert done == len(raws)


def test_a_log_of_entries_holding_several_events_is_read_by_event(real_redis: redis.Redis) -> None:
    """An entry holds an append's events: the head at version v is event v - 1's hash,
    wherever in its entry it is, and a move landing between the reads is no rewrite."""
    log = Keys("grouped").log
    events = [f"event {i}".encode() for i in range(7)]
    _grouped(real_redis, log, events, [1, 3, 2, 1])
    for version in range(1, 8):
        heads = {version: event_hash(events[version - 1]).hex()}
        assert live_divergence(real_redis, "grouped", heads) is None
        moving = _MovingLog(real_redis, log, {"v": 8, "e": b"a move made meanwhile"})
        assert live_divergence(moving, "grouped", heads) is None  # type: ignore[arg-type]
        _grouped(real_redis, log, events, [1, 3, 2, 1])
    assert live_divergence(real_redis, "grouped", {8: "00"}) == _rolled_back(8, "00", 7)
    _grouped(real_redis, log, [*events[:2], b"another event 2", *events[3:]], [1, 3, 2, 1])
    found = live_divergence(real_redis, "grouped", {3: event_hash(events[2]).hex()})
    assert found is not None and found.check == "rewritten" and found.event == 2
