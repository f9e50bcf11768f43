"""``red7 replay|export|import|audit``: every command, and every error as one line."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner, Result
from support import one_event_per_entry

from red7es.cli.main import cli
from red7es.facts import GameOver
from red7es.game import Game
from red7es.service.codec import GENESIS, decode_event, encode_command, encode_event
from red7es.service.events import CreateCommand, SeatSpec
from red7es.service.record_files import read, read_all, write, write_all
from red7es.service.records import Record
from red7es.service.redis_server import RedisServer
from red7es.service.replay import Replay
from red7es.service.table import Table
from red7es.variant import Variant

from .conftest import ADVANCED, Games
from .tamper import edit_event, events_of, flip_byte, raws_of, with_raws
from .test_replay import CARD, hidden_from

UNREACHABLE = "redis://127.0.0.1:1/0"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A private data directory (credentials) and a Redis URL nothing listens on."""
    return {"RED7_HOME": str(tmp_path / "home"), "REDIS_URL": UNREACHABLE, "NO_COLOR": "1"}


@pytest.fixture(scope="module")
def record(module_games: Games) -> Record:
    module_games.people("clirec", Variant(3, **ADVANCED), ("alice", "bob"), rng=random.Random(11), mischief=0.2)
    return module_games.record("clirec")


@pytest.fixture
def record_file(record: Record, tmp_path: Path) -> Path:
    path = tmp_path / "game.jsonl"
    write(record, path)
    return path


@pytest.fixture
def served(real_redis: redis.Redis, redis_server: RedisServer) -> Iterator[tuple[Games, str]]:
    """Games on the session's real Redis, and its URL for ``--url``."""
    yield Games(real_redis), redis_server.url


def run(env: dict[str, str], *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env, input=input, catch_exceptions=False)


def fails(result: Result, code: int = 1) -> str:
    """The one-line error of a failed command."""
    assert result.exit_code == code, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


# ---------------------------------------------------------------------------- help


@pytest.mark.parametrize("command", ["replay", "export", "import", "audit"])
def test_every_command_has_help_with_an_example(env: dict[str, str], command: str) -> None:
    result = run(env, command, "--help")
    assert result.exit_code == 0
    assert "Example" in result.output and f"red7 {command}" in result.output


# ---------------------------------------------------------------------------- replay


def test_replay_a_file_without_redis(env: dict[str, str], record_file: Path, record: Record) -> None:
    result = run(env, "replay", str(record_file))
    assert result.exit_code == 0, result.output
    assert f"after event {len(record.events) - 1} (SeedRevealed" in result.output
    assert "Game over" in result.output and "Seed revealed" in result.output


def test_replay_json_is_the_service_view(env: dict[str, str], record_file: Path, module_games: Games) -> None:
    result = run(env, "replay", str(record_file), "--json")
    assert result.exit_code == 0
    assert json.loads(result.output) == module_games.service.view("clirec")
    result = run(env, "replay", str(record_file), "--json", "--as", "bob")
    assert json.loads(result.output) == module_games.service.view("clirec", 1)


def test_replay_as_a_seat_never_shows_a_hidden_card(env: dict[str, str], record_file: Path, record: Record) -> None:
    replay = Replay([decode_event(e.raw) for e in record.events])
    for at in range(5, len(record.events), max(1, len(record.events) // 12)):
        for name, seat in (("alice", 0), ("bot0", 2)):
            result = run(env, "replay", str(record_file), "--at", str(at), "--as", name, "--json")
            assert result.exit_code == 0, result.output
            view = json.loads(result.output)
            assert view["seat"] == seat and view["version"] == at + 1
            leaked = set(CARD.findall(result.output)) & hidden_from(replay.table(at), seat)
            assert not leaked, (at, name, leaked)
            assert set(view["hand"]) == {str(c) for c in replay.table(at).game.hand(seat)}


def test_replay_steps_turn_by_turn(env: dict[str, str], record_file: Path) -> None:
    result = run(env, "replay", str(record_file), "--step", "--as", "alice", input="\n\n\nq\n")
    assert result.exit_code == 0, result.output
    assert result.output.count("Enter: next turn") == 4
    assert "Round 1 dealt" in result.output and "Your hand" in result.output
    # from the third-last event the walk has one turn left: shown, no prompt, the end
    result = run(env, "replay", str(record_file), "--step", "--at", "-3", input="")
    assert result.exit_code == 0
    assert "Enter: next turn" not in result.output
    assert result.output.rstrip().endswith("End of the log.") and "Game over" in result.output


def test_replay_position_prints_the_game_in_one_line(env: dict[str, str], record_file: Path, record: Record) -> None:
    """docs/positions.md: the whole game once over; a seat's view (hidden cards ?) with --as."""
    replay = Replay([decode_event(e.raw) for e in record.events])
    at = len(record.events) // 2
    game = replay.table(at).game
    result = run(env, "replay", str(record_file), "--at", str(at), "--position")
    assert result.exit_code == 0, result.output
    assert result.output == game.position() + "\n" and "?" not in result.output
    assert Game.from_position(result.output).position() == game.position()
    result = run(env, "replay", str(record_file), "--at", str(at), "--position", "--as", "bob")
    assert result.output == game.view_position(1) + "\n"
    assert not set(CARD.findall(result.output)) & hidden_from(replay.table(at), 1)
    result = run(env, "replay", str(record_file), "--at", str(at), "--position", "--json")
    assert json.loads(result.output) == {"position": game.position()}
    assert run(env, "replay", str(record_file), "--step", "--position").exit_code == 2


def test_replay_errors(env: dict[str, str], record_file: Path, record: Record, tmp_path: Path) -> None:
    n = len(record.events)
    assert f"there is no event {n}" in fails(run(env, "replay", str(record_file), "--at", str(n)))
    assert "no seat 'zed'" in fails(run(env, "replay", str(record_file), "--as", "zed"))
    assert "cannot be combined" in run(env, "replay", str(record_file), "--step", "--json").output
    assert run(env, "replay", str(record_file), "--step", "--json").exit_code == 2
    assert "cannot read" in fails(run(env, "replay", str(tmp_path / "none.jsonl")))
    many = tmp_path / "many.msgpack"
    write_all([record, record], many)
    assert "holds 2 games" in fails(run(env, "replay", str(many)))
    assert run(env, "replay", str(many), "--game", "clirec", "--json").exit_code == 0
    assert "holds no game 'x'" in fails(run(env, "replay", str(many), "--game", "x"))


def test_replay_a_running_game_as_a_seat_needs_its_token(
    served: tuple[Games, str], env: dict[str, str], tmp_path: Path
) -> None:
    games, url = served
    tokens = games.people("live", Variant(3, rounds=9), ("alice", "bob"), stop_after=4, mischief=0)
    assert run(env, "replay", "live", "--url", url, "--json").exit_code == 0
    assert "bot0 is a bot, whose hand nobody sees until the end" in fails(
        run(env, "replay", "live", "--url", url, "--as", "bot0")
    )
    assert "needs alice's token" in fails(run(env, "replay", "live", "--url", url, "--as", "alice"))
    assert "not alice's" in fails(run(env, "replay", "live", "--url", url, "--as", "alice", "--token", tokens["bob"]))
    result = run(env, "replay", "live", "--url", url, "--as", "alice", "--token", tokens["alice"], "--json")
    assert result.exit_code == 0
    assert json.loads(result.output) == games.service.view("live", 0)


def test_replay_a_game_in_redis(served: tuple[Games, str], env: dict[str, str]) -> None:
    games, url = served
    games.bots("done", Variant(3, scoring=True), ("random",))
    result = run(env, "replay", "done", "--url", url, "--at", "10", "--as", "bot1", "--json")
    assert result.exit_code == 0
    assert json.loads(result.output)["version"] == 11
    assert "no game 'nothing'" in fails(run(env, "replay", "nothing", "--url", url))


def test_replay_counts_events_by_seq_and_says_a_log_with_a_gap_does_not_verify(
    served: tuple[Games, str], env: dict[str, str]
) -> None:
    """After XDEL of event k, --at k+1 showed what is really event k+2, and nothing said the log was cut."""
    games, url = served
    games.bots("gap", Variant(3, scoring=True), ("random",))
    events = games.service.log("gap")
    k = next(i for i, r in enumerate(events) if i > 5 and type(r.event).__name__ == "CommandApplied")
    before = json.loads(run(env, "replay", "gap", "--url", url, "--at", str(k + 1), "--json").stdout)
    before_text = run(env, "replay", "gap", "--url", url, "--at", str(k + 1)).stdout
    log = "red7:{gap}:log"
    games.connection.xdel(log, one_event_per_entry(games.connection, "gap")[k][0])
    warning = f"this log does not verify (event {k - 1} is followed by event {k + 1}): run red7 audit gap --url {url}"
    result = run(env, "replay", "gap", "--url", url, "--at", str(k + 1), "--json")
    assert result.exit_code == 1 and result.stderr == f"Error: {warning}\n"
    assert json.loads(result.stdout) == before, "event k+1 is still event k+1"
    result = run(env, "replay", "gap", "--url", url, "--at", str(k + 1), "--allow-unverified")
    assert result.exit_code == 0 and result.stderr == f"warning: {warning}\n"
    assert result.stdout.splitlines()[1:] == before_text.splitlines()[1:], "the same view of event k+1"
    n = len(events) - 1
    assert f"after event {k + 1} (" in result.stdout and f"events 0-{k - 1}, {k + 1}-{n})" in result.stdout
    assert fails(run(env, "replay", "gap", "--url", url, "--at", str(k))) == (
        f"Error: there is no event {k}: game gap has events 0-{k - 1}, {k + 1}-{n}; {warning}"
    )


def _replayed(env: dict[str, str], path: Path, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["replay", str(path), *args], env=env, input=input)


def test_replay_says_when_a_logged_fact_is_not_what_the_rules_give(
    env: dict[str, str], record: Record, tmp_path: Path
) -> None:
    """A rechained record whose GameOver names another winner replayed the rules' winner without a word."""
    events = events_of(record)
    over = next(i for i, e in enumerate(events) if isinstance(e, GameOver))
    winner = events[over].outcome.winners[0]
    claimed = (winner + 1) % 3

    def other_winner(event: GameOver) -> GameOver:
        return dataclasses.replace(event, outcome=dataclasses.replace(event.outcome, winners=(claimed,)))

    path = tmp_path / "winner.jsonl"
    write(edit_event(record, over, other_winner), path)
    result = _replayed(env, path)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: this log does not verify (event {over} says GameOver winners[0] = {claimed}, the rules give "
        f"GameOver winners[0] = {winner}): run red7 audit {path}\n"
    )
    assert f"Game over: {record.seats[winner].name} wins" in result.stdout, "what can be shown is shown"
    allowed = _replayed(env, path, "--allow-unverified", "--json")
    assert allowed.exit_code == 0 and allowed.stderr.startswith("warning: this log does not verify (")
    assert json.loads(allowed.stdout)["outcome"]["winners"] == [winner]
    write(record, path)
    clean = _replayed(env, path)
    assert clean.exit_code == 0 and clean.stderr == ""


def test_replay_says_when_the_hash_chain_is_broken(env: dict[str, str], record: Record, tmp_path: Path) -> None:
    k = len(record.events) // 2
    raws = raws_of(record)
    kept = decode_event(raws[k])
    raws[k] = encode_event(kept.event, k, kept.prev, kept.at + 1)  # a valid event, but not the bytes chained
    path = tmp_path / "chain.msgpack"
    write(with_raws(record, raws), path)
    result = _replayed(env, path, "--at", "3", "--step", input="q\n")
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: this log does not verify (event {k + 1} does not follow event {k} (its prev is not that "
        f"event's hash)): run red7 audit {path}\n"
    )
    assert "Round 1 dealt" in result.stdout


def test_replay_step_stops_where_a_damaged_log_cannot_be_folded(
    env: dict[str, str], record: Record, tmp_path: Path
) -> None:
    """--step folded past a gap into a step the rules refuse: an IllegalStep traceback."""
    raws = raws_of(record)
    dealt = next(i for i, raw in enumerate(raws) if decode_event(raw).type == "RoundDealt")
    del raws[dealt]
    path = tmp_path / "nodeal.jsonl"
    write(with_raws(record, raws, version=len(raws)), path)
    result = _replayed(env, path, "--step", input="\n" * 1000)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.stderr == (
        f"Error: this log does not verify (event {dealt - 1} is followed by event {dealt + 1}): run red7 audit {path}\n"
    )
    stop = re.search(r"The walk stops here: game clirec cannot be replayed past event (\d+): (.*)\.\n", result.stdout)
    assert stop and int(stop[1]) > dealt and stop[2].endswith("but seat -1 is to move"), result.stdout


def _unfoldable_without(events: list[Any], gone: int) -> bool:
    """Whether the event after ``gone`` cannot be folded once ``gone`` is deleted."""
    try:
        Table.rebuild(events[:gone] + events[gone + 1 : gone + 2], None)
    except ValueError:
        return True
    return False


def test_replay_shows_a_damaged_log_up_to_the_last_event_it_can_fold(
    env: dict[str, str], record: Record, tmp_path: Path
) -> None:
    """With a step deleted, replay printed no view and exited 1 even with --allow-unverified, and said it could not
    go "past event N" for the event asked for (the last), not for the event where folding stopped."""
    events = events_of(record)
    gone = next(i for i, e in enumerate(events) if type(e).__name__ == "StepApplied" and _unfoldable_without(events, i))
    raws = raws_of(record)
    del raws[gone]
    path = tmp_path / "nostep.jsonl"
    write(with_raws(record, raws, version=len(raws)), path)
    last = gone - 1  # the event before the gap: the one after it cannot be folded without the deleted step
    line = (
        f"game clirec cannot be replayed past event {last}: "
        f"{_fold_error(events[:gone] + events[gone + 1 : gone + 2])}; this log does not verify "
        f"(event {last} is followed by event {gone + 1}): run red7 audit {path}"
    )
    full = len(events) - 1
    for at in ([], ["--at", str(full)], ["--at", str(gone + 3)]):
        result = _replayed(env, path, *at)
        assert result.exit_code == 1 and result.stderr == f"Error: {line}\n", at
        header = f"Replay of game clirec after event {last} ({type(events[last]).__name__}; "
        assert result.stdout.startswith(f"{header}events 0-{last}, {gone + 1}-{full})\n"), result.stdout
        assert len(result.stdout.splitlines()) > 3, "the view is shown"
    allowed = _replayed(env, path, "--allow-unverified", "--json")
    assert allowed.exit_code == 0 and allowed.stderr == f"warning: {line}\n"
    before = json.loads(_replayed(env, path, "--at", str(last), "--json").stdout)
    assert json.loads(allowed.stdout) == before and before["version"] == last + 1
    earlier = _replayed(env, path, "--at", str(last - 1))
    assert earlier.exit_code == 1 and "cannot be replayed" not in earlier.stderr, "no stop before it is reached"


def _fold_error(events: list[Any]) -> str:
    try:
        Table.rebuild(events, None)
    except ValueError as exc:
        return str(exc)
    raise AssertionError("these events fold")


def test_replay_takes_format_like_audit_and_import(env: dict[str, str], record: Record, tmp_path: Path) -> None:
    """A compact msgpack record named .jsonl was "not JSON ('utf-16-le' codec can't decode ...)"."""
    misnamed = tmp_path / "v1b.jsonl"
    write(record, misnamed, "msgpack")
    line = f"{misnamed} line 1: the file does not look like JSON Lines (its first line is no JSON object): "
    line += "if it is a compact msgpack record, give --format msgpack"
    for command in ("replay", "import"):
        assert fails(run(env, command, str(misnamed))) == f"Error: {line}"
    assert fails(run(env, "audit", str(misnamed))).startswith(f"FAIL (game unknown): record: unreadable: {line};")
    result = run(env, "replay", str(misnamed), "--format", "msgpack", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["game"] == "clirec"
    usage = run(env, "replay", "somegame", "--format", "msgpack")
    assert usage.exit_code == 2 and "Error: --format is for a record FILE" in usage.output
    helps = {c: run(env, c, "--help").output for c in ("replay", "audit", "import")}
    option = "--format [jsonl|msgpack] Record format of FILE (default: from its name, else from its first bytes)."
    assert all(option in " ".join(h.split()) for h in helps.values()), "one option, shared"


# ---------------------------------------------------------------------------- export


def test_export_both_formats(served: tuple[Games, str], env: dict[str, str], tmp_path: Path) -> None:
    games, url = served
    games.bots("e1", Variant(2), ("random",))
    games.bots("e2", Variant(4, **ADVANCED), ("random",))
    result = run(env, "export", "e1", "--url", url, "-o", str(tmp_path / "one.jsonl"))
    assert result.exit_code == 0 and "Exported game e1 (over" in result.output
    assert read(tmp_path / "one.jsonl") == games.record("e1")
    result = run(
        env, "export", "e1", "e2", "--url", url, "-o", str(tmp_path / "two.bin"), "--format", "msgpack", "--json"
    )
    assert result.exit_code == 0
    assert [g["game"] for g in json.loads(result.output)["games"]] == ["e1", "e2"]
    assert run(env, "audit", str(tmp_path / "two.bin")).exit_code == 0
    result = run(env, "export", "e1", "e2", "e1", "--url", url, "-o", str(tmp_path / "once.jsonl"), "--json")
    assert [g["game"] for g in json.loads(result.output)["games"]] == ["e1", "e2"], "a game named twice is written once"


def test_export_errors(served: tuple[Games, str], env: dict[str, str], tmp_path: Path) -> None:
    games, url = served
    games.people("live", Variant(2, rounds=9), ("alice", "bob"), stop_after=2, mischief=0)
    out = str(tmp_path / "x.jsonl")
    assert "no game 'nothing'" in fails(run(env, "export", "nothing", "--url", url, "-o", out))
    assert "is not over" in fails(run(env, "export", "live", "--url", url, "-o", out))
    assert run(env, "export", "live", "--url", url, "-o", out, "--unfinished").exit_code == 0
    assert "cannot tell the format" in fails(run(env, "export", "live", "--url", url, "-o", str(tmp_path / "x.txt")))
    missing = str(tmp_path / "no-such-dir" / "x.jsonl")
    assert f"cannot write {missing}: No such file or directory" in fails(
        run(env, "export", "live", "--url", url, "-o", missing, "--unfinished")
    )
    assert "cannot reach Redis" in fails(run(env, "export", "live", "-o", out))


def test_export_of_a_game_whose_create_failed_says_it_is_broken_and_why(
    served: tuple[Games, str], env: dict[str, str], tmp_path: Path
) -> None:
    """A create the worker cannot start leaves no log and marks the game broken: export says so, not 'no log yet'."""
    games, url = served
    seats = (SeatSpec("a"), SeatSpec("b"))
    command = CreateCommand("create-nocreate", Variant(2), seats, "00" * 32, ())  # not the seed's commitment
    assert games.service.store.create("nocreate", command.id, encode_command(command, 1), b"seed", 1, GENESIS)
    assert "cannot create the game" in games.worker.advance("nocreate")["error"]
    for unfinished in ((), ("--unfinished",)):
        line = fails(run(env, "export", "nocreate", "--url", url, "-o", str(tmp_path / "x.jsonl"), *unfinished))
        assert line == (
            "Error: game nocreate is broken: cannot create the game: "
            "the stored seed does not match the published commitment"
        )


@pytest.mark.parametrize(("fmt", "name"), [((), "same.jsonl"), (("--format", "msgpack"), "same.msgpack")])
def test_export_to_stdout(
    served: tuple[Games, str],
    env: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fmt: tuple[str, ...],
    name: str,
) -> None:
    """``-o -`` is stdout (it wrote a file named "-"): the same bytes as a file, jsonl unless --format says."""
    games, url = served
    games.bots("s1", Variant(2), ("random",))
    monkeypatch.chdir(tmp_path)
    result = run(env, "export", "s1", "--url", url, "-o", "-", *fmt)
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "-").exists()
    assert result.stderr.startswith("Exported game s1 (over, ") and result.stderr.endswith(" to stdout.\n")
    same = tmp_path / name
    assert run(env, "export", "s1", "--url", url, "-o", str(same)).exit_code == 0
    piped = tmp_path / f"piped-{name}"
    piped.write_bytes(result.stdout_bytes)
    assert read(piped) == read(same) == games.record("s1")


@pytest.mark.parametrize("fmt", [(), ("--format", "msgpack")], ids=["jsonl", "msgpack"])
def test_a_record_on_stdin_is_read_with_dash(
    served: tuple[Games, str], env: dict[str, str], fmt: tuple[str, ...], real_redis: redis.Redis
) -> None:
    """``red7 export G -o - | red7 import -``: audit, replay and import read a record from stdin."""
    games, url = served
    games.bots("pipe1", Variant(2), ("random",))
    piped = CliRunner().invoke(cli, ["export", "pipe1", "--url", url, "-o", "-", *fmt], env=env).stdout_bytes
    audited = CliRunner().invoke(cli, ["audit", "-"], input=piped, env=env)
    assert audited.exit_code == 0 and audited.stdout.startswith("PASS pipe1"), audited.output
    replayed = CliRunner().invoke(cli, ["replay", "-", "--json"], input=piped, env=env)
    assert replayed.exit_code == 0 and json.loads(replayed.stdout)["game"] == "pipe1", replayed.output
    real_redis.delete(*real_redis.keys("red7:{pipe1}:*"))
    real_redis.zrem("red7:games", "pipe1")
    imported = CliRunner().invoke(cli, ["import", "-", "--url", url], input=piped, env=env)
    assert imported.exit_code == 0 and "Imported game pipe1" in imported.output, imported.output
    assert games.record("pipe1").events == _record_of(piped).events
    broken = CliRunner().invoke(cli, ["replay", "-"], input=b"{oops\n", env=env)
    assert broken.exit_code == 1 and broken.stderr.strip() == (
        "Error: <stdin> line 1: not JSON (Expecting property name enclosed in double quotes)"
    )


@pytest.mark.parametrize("command", ["replay", "audit", "import"])
def test_empty_stdin_holds_no_game(env: dict[str, str], command: str) -> None:
    result = CliRunner().invoke(cli, [command, "-"], input=b"", env=env)
    assert fails(result) == "Error: <stdin> holds no game"


def test_replay_step_needs_stdin_for_its_keys(env: dict[str, str], record_file: Path) -> None:
    """``--step`` reads Enter from stdin: a record piped there would be read as keys, one turn shown."""
    result = CliRunner().invoke(cli, ["replay", "-", "--step"], input=record_file.read_bytes(), env=env)
    assert result.exit_code == 2 and "Error: --step reads Enter from stdin" in result.stderr


def _record_of(data: bytes) -> Record:
    (record,) = read_all("<stdin>", data=data)
    return record


def test_export_to_stdout_leaves_no_room_for_json(served: tuple[Games, str], env: dict[str, str]) -> None:
    games, url = served
    games.bots("s2", Variant(2), ("random",))
    result = run(env, "export", "s2", "--url", url, "-o", "-", "--json")
    assert result.exit_code == 2 and result.stdout == ""
    assert "Error: -o - writes the record to stdout, where --json would go too" in result.stderr


# ---------------------------------------------------------------------------- import


def test_import_then_audit_and_replay_in_redis(
    served: tuple[Games, str], env: dict[str, str], record_file: Path, record: Record
) -> None:
    games, url = served
    result = run(env, "import", str(record_file), "--url", url)
    assert result.exit_code == 0, result.output
    assert "Imported game clirec" in result.output
    assert games.record("clirec") == record
    assert run(env, "audit", "clirec", "--url", url).output.startswith("PASS clirec")
    assert run(env, "show", "clirec", "--url", url, "--json").exit_code == 0
    assert "already exists" in fails(run(env, "import", str(record_file), "--url", url))


def test_import_refuses_a_tampered_file(
    served: tuple[Games, str], env: dict[str, str], record: Record, tmp_path: Path
) -> None:
    _games, url = served
    k = len(record.events) // 3
    path = tmp_path / "bad.msgpack"
    write(flip_byte(record, k, 12), path)
    line = fails(run(env, "import", str(path), "--url", url))
    assert line.startswith(f"Error: refusing to import game clirec: FAIL clirec: event {k}")
    assert "line 1" in fails(run(env, "import", __file__, "--url", url, "--format", "jsonl"))


def _forget(connection: redis.Redis, game: str) -> None:
    """The game gone from Redis, as if it had never been stored there."""
    connection.delete(*connection.keys(f"red7:{{{game}}}:*"))
    connection.zrem("red7:games", game)


def test_an_import_error_says_which_games_were_stored_before_it(
    served: tuple[Games, str], env: dict[str, str], record: Record, tmp_path: Path
) -> None:
    """Any error after some records were stored says which (only a failed audit said how many),
    and --json tells them too: {"file", "imported", "error"}."""
    games, url = served
    twice = tmp_path / "twice.jsonl"
    write_all([record, record], twice)
    line = "a game 'clirec' already exists: not importing over it (1 game imported before it: clirec)"
    assert fails(run(env, "import", str(twice), "--url", url)) == f"Error: {line}"
    _forget(games.connection, "clirec")
    result = run(env, "import", str(twice), "--url", url, "--json")
    assert result.exit_code == 1 and result.stderr == f"Error: {line}\n"
    assert json.loads(result.stdout) == {"file": str(twice), "imported": ["clirec"], "error": line}

    games.bots("imp2", Variant(2), ("random",))
    first = games.record("imp2")
    _forget(games.connection, "imp2")
    _forget(games.connection, "clirec")
    mixed = tmp_path / "mixed.msgpack"
    write_all([first, flip_byte(record, 5, 12)], mixed)
    line = fails(run(env, "import", str(mixed), "--url", url))
    assert line.startswith("Error: refusing to import game clirec: FAIL clirec: event 5")
    assert line.endswith(" (1 game imported before it: imp2)")
    _forget(games.connection, "imp2")
    result = run(env, "import", str(mixed), "--url", url, "--json")
    assert result.exit_code == 1 and json.loads(result.stdout)["imported"] == ["imp2"]
    _forget(games.connection, "imp2")
    clean = tmp_path / "clean.jsonl"
    write_all([first], clean)
    done = run(env, "import", str(clean), "--url", url, "--json")
    assert done.exit_code == 0 and json.loads(done.stdout) == {"file": str(clean), "imported": ["imp2"], "error": None}
    nothing = run(env, "import", str(twice), "--url", "redis://127.0.0.1:1/0", "--json")  # fails at the first record
    assert nothing.exit_code == 1 and json.loads(nothing.stdout)["imported"] == []


# ---------------------------------------------------------------------------- audit


def test_audit_a_file_passes_offline(env: dict[str, str], record_file: Path) -> None:
    result = run(env, "audit", str(record_file))
    assert result.exit_code == 0
    assert re.match(r"PASS clirec: \d+ events re-executed from the revealed seed", result.output)
    report = json.loads(run(env, "audit", str(record_file), "--json").output)
    assert report["result"] == "pass" and report["divergence"] is None and report["checked"]["signatures"] > 0


def test_audit_names_the_first_divergence(env: dict[str, str], record: Record, tmp_path: Path) -> None:
    k = len(record.events) // 2
    path = tmp_path / "bad.jsonl"
    write(flip_byte(record, k, 8), path)
    result = run(env, "audit", str(path))
    assert result.exit_code == 1
    assert result.output.startswith(f"FAIL clirec: event {k}")
    assert len(result.output.strip().splitlines()) == 1
    report: dict[str, Any] = json.loads(run(env, "audit", str(path), "--json").output)
    assert report["result"] == "fail" and report["divergence"]["event"] == k
    assert set(report["divergence"]) == {"check", "event", "command", "expected", "found", "reason"}


def test_a_fail_line_shows_what_the_record_holds_escaped(env: dict[str, str], record: Record, tmp_path: Path) -> None:
    """A FAIL line quotes the record (here a rejection reason someone rewrote with a
    terminal escape): quoted as JSON text, it never reaches the terminal raw."""
    from red7es.service.events import CommandRejected

    r = next(i for i, e in enumerate(events_of(record)) if isinstance(e, CommandRejected) and e.kind == "turn")
    path = tmp_path / "escaped.jsonl"
    write(edit_event(record, r, lambda e: dataclasses.replace(e, reason="\x1b]0;pwned\x07")), path)
    result = run(env, "audit", str(path))
    assert result.exit_code == 1 and result.output.startswith("FAIL clirec: ")
    assert "\x1b" not in result.output and '"\\u001b]0;pwned\\u0007"' in result.output


def test_audit_a_malformed_file(env: dict[str, str], record_file: Path) -> None:
    lines = record_file.read_text().splitlines()
    record_file.write_text("\n".join(lines[:3] + ["{oops"] + lines[3:]))
    line = fails(run(env, "audit", str(record_file)))
    assert line.startswith("FAIL clirec: record: unreadable:") and "line 4: not JSON" in line


def test_audit_a_file_that_is_no_record(env: dict[str, str], record_file: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("1 2 3 these are notes\n")  # not JSON, so read as msgpack: the int 1 comes first
    assert "not a red7es game record (it starts with no header, but an int)" in fails(run(env, "audit", str(notes)))
    copy = tmp_path / "game.record"
    copy.write_bytes(record_file.read_bytes())
    assert run(env, "audit", str(copy), "--format", "jsonl").exit_code == 0
    usage = run(env, "audit", "somegame", "--format", "jsonl")
    assert usage.exit_code == 2 and "Error: --format is for a record FILE" in usage.output


def _edit_data(lines: list[str], n: int) -> None:
    """Line ``n``'s readable copy of its data no longer matches its raw bytes."""
    entry = json.loads(lines[n])
    entry["data"] = {}
    lines[n] = json.dumps(entry)


def _swap(lines: list[str], n: int) -> None:
    lines[n], lines[n + 1] = lines[n + 1], lines[n]


@pytest.mark.parametrize(
    ("edit", "problem", "position"),
    [
        (
            lambda lines, record: _edit_data(lines, len(record.commands) + 5),
            "line {n}: event 4: field 'data' does not",
            {"event": 4, "command": None},
        ),
        (
            lambda lines, record: lines.__delitem__(slice(-5, None)),
            "line 1: the header announces {events} events",
            {"event": None, "command": None},
        ),
        (
            lambda lines, record: _swap(lines, 2),
            "line 3: expected command 1, found command 2",
            {"event": None, "command": 1},
        ),
    ],
    ids=["edited-copy", "cut-short", "commands-swapped"],
)
def test_audit_fails_a_record_that_cannot_be_read(
    env: dict[str, str], record_file: Path, record: Record, edit: Any, problem: str, position: dict[str, Any]
) -> None:
    """The JSON carries the event (or command) the reason names as a number: it said
    ``"event": null`` beside a reason naming event 4."""
    lines = record_file.read_text().splitlines()
    edit(lines, record)
    record_file.write_text("\n".join(lines))
    where = f"{record_file} " + problem.format(n=len(record.commands) + 6, events=len(record.events))
    line = fails(run(env, "audit", str(record_file)))
    assert line.startswith(f"FAIL clirec: record: unreadable: {where}")
    result = run(env, "audit", str(record_file), "--json")
    assert result.exit_code == 1 and not result.stderr
    report = json.loads(result.stdout)
    assert (report["game"], report["result"], report["passed"]) == ("clirec", "fail", False)
    assert report["divergence"]["check"] == "unreadable" and report["divergence"]["reason"].startswith(where)
    assert {key: report["divergence"][key] for key in position} == position
    assert report["line"] == line


def test_audit_goes_on_past_an_unreadable_record(env: dict[str, str], record: Record, tmp_path: Path) -> None:
    path = tmp_path / "three.jsonl"
    write_all([record, record, record], path)
    lines = path.read_text().splitlines()
    second = 1 + len(record.commands) + len(record.events)  # the second header's line index
    header = json.loads(lines[second])
    header["game"] = None
    lines[second] = json.dumps(header)
    path.write_text("\n".join(lines))
    result = run(env, "audit", str(path))
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"FAIL (game unknown): record: unreadable: {path} line {second + 1}: header field 'game' must be str, "
        "found None; expected a record as docs/records.md specifies, found one that cannot be read",
        "Audited 3 games: 2 passed, 1 failed, 0 incomplete.",
    ]
    result = run(env, "audit", str(path), "--json")
    assert result.exit_code == 1
    summary = json.loads(result.stdout)
    assert (summary["audited"], summary["passed"], summary["failed"]) == (3, 2, 1)
    assert [g["game"] for g in summary["games"]] == ["clirec", None, "clirec"]
    assert summary["games"][1]["divergence"]["check"] == "unreadable"


@pytest.mark.parametrize("content", ["", "\n\n"])
def test_audit_a_file_without_a_game(env: dict[str, str], tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(content)
    assert fails(run(env, "audit", str(path))) == f"Error: {path} holds no game"
    result = run(env, "audit", str(path), "--json")
    assert result.exit_code == 1 and not result.stdout
    for command in ("import", "replay"):  # they say the same
        assert fails(run(env, command, str(path))) == f"Error: {path} holds no game"


def test_audit_all_finished_games(served: tuple[Games, str], env: dict[str, str], record: Record) -> None:
    games, url = served
    for i in range(3):
        games.bots(f"a{i}", Variant(2 + i), ("random",))
    games.people("live", Variant(2, rounds=9), ("alice", "bob"), stop_after=2, mischief=0)
    result = run(env, "audit", "--all", "--url", url)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "Audited 3 games: 3 passed, 0 failed, 0 incomplete."
    # break one stored game: its first event's bytes no longer hash to event 1's prev
    key = "red7:{a1}:log"
    rows = one_event_per_entry(games.connection, "a1")
    games.connection.delete(key)
    for n, (stream_id, fields) in enumerate(rows):
        raw = fields[b"e"]
        games.connection.xadd(key, {"e": raw.replace(b"random", b"randon") if n == 0 else raw}, id=stream_id)
    result = run(env, "audit", "--all", "--url", url)
    assert result.exit_code == 1
    assert result.output.splitlines()[0].startswith("FAIL a1: event 0")
    assert result.output.splitlines()[-1] == "Audited 3 games: 2 passed, 1 failed, 0 incomplete."
    summary = json.loads(run(env, "audit", "--all", "--url", url, "--json").output)
    assert (summary["audited"], summary["failed"]) == (3, 1)


def test_audit_a_running_game(served: tuple[Games, str], env: dict[str, str]) -> None:
    games, url = served
    games.people("live", Variant(2, rounds=9), ("alice", "bob"), stop_after=3, mischief=0)
    result = run(env, "audit", "live", "--url", url)
    assert result.exit_code == 1
    assert result.output.startswith("INCOMPLETE live: the game is not over")


@pytest.mark.parametrize("command", ["audit", "replay"])
@pytest.mark.parametrize("name", ["foo.txt", "game.json", "game.JSONL", "notes.d"])
def test_a_missing_file_is_no_such_file_not_no_game(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, name: str
) -> None:
    """A name with a dot can be no game id (lower-case letters, digits, dashes): it is a file, and missing."""
    monkeypatch.chdir(tmp_path)
    assert fails(run(env, command, name)) == f"Error: cannot read {name}: No such file or directory"


def test_audit_errors(served: tuple[Games, str], env: dict[str, str]) -> None:
    _games, url = served
    assert run(env, "audit").exit_code == 2
    assert run(env, "audit", "x", "--all").exit_code == 2
    assert "no game 'nothing'" in fails(run(env, "audit", "nothing", "--url", url))
    assert "cannot read" in fails(run(env, "audit", "missing.jsonl"))


def test_audit_json_has_every_documented_count(env: dict[str, str], module_games: Games, tmp_path: Path) -> None:
    """``checked`` left out the counts that were 0 (a game of bots had no ``signatures`` key)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    example = json.loads(text.split("### `audit --json`", 1)[1].split("```json\n", 1)[1].split("```", 1)[0])
    documented = list(example["checked"])
    module_games.bots("countbots", Variant(2), ("random",))
    path = tmp_path / "bots.jsonl"
    write(module_games.record("countbots"), path)
    report = json.loads(run(env, "audit", str(path), "--json").output)
    assert sorted(report["checked"]) == sorted(documented)
    assert report["checked"]["signatures"] == 0 and report["checked"]["pending_commands"] == 0
    unreadable = tmp_path / "junk.jsonl"
    unreadable.write_text('{"record": "red7es-game"}\n')
    failed = json.loads(run(env, "audit", str(unreadable), "--json").output)
    assert failed["checked"] == dict.fromkeys(documented, 0)
