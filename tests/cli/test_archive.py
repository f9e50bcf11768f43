"""``red7 archive``: finished games moved to record files, read back transparently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import redis
from support import Red7, fails, new_id, one_line_error, wait_for

from red7es.service import archive as archive_module
from red7es.service.archive import ARCHIVED, parse_age
from red7es.service.record_files import read_all
from red7es.service.store import GameStore, Keys


def _finished(alice: Red7, *args: str) -> str:
    game = new_id("a")
    alice.json("new", "--id", game, "-b", "greedy", "-b", "random", "--seed", game, *args)
    wait_for(lambda: alice.json("show", game)["status"] == "over", "the bots to finish")
    return game


def _keys(url: str, game: str) -> list[str]:
    """The game's lasting keys: a worker's lease and nudge come and go on their own (a lease
    taken to look at a finished game expires or is released at any moment), so they are left out."""
    transient = {Keys(game).lease, Keys(game).nudge}
    with redis.Redis.from_url(url) as connection:
        found = (k.decode() for k in connection.scan_iter(match=f"red7:{{{game}}}:*"))
        return sorted(k for k in found if k not in transient)


def _readings(alice: Red7, game: str, tmp: Path) -> dict[str, Any]:
    """What every reader says of a game: show (public and a seat), replay, audit, export, games."""
    out = tmp / f"{game}-{len(list(tmp.iterdir()))}.msgpack"
    alice.ok("export", game, "-o", str(out))
    [record] = read_all(out)
    listed = [g for g in alice.json("games", "--limit", "1000") if g["game"] == game]
    return {
        "show": alice.json("show", game),
        "seat": alice.json("replay", game, "--as", record.seats[0].name),
        "replay": alice.json("replay", game, "--at", "5"),
        "audit": alice.json("audit", game),
        "record": (record.header() | {"exported": None}, record.commands, record.events),
        "games": listed,
    }


def test_archive_moves_finished_games_to_files_and_every_reader_reads_them_there(
    alice: Red7, service_url: str, tmp_path: Path
) -> None:
    one, two = _finished(alice), _finished(alice, "--rounds", "2")
    playing = alice.json("new", "--id", new_id("p"), "-p", "ann", "-b", "greedy")["game"]
    (tmp_path / "exports").mkdir()
    before = {g: _readings(alice, g, tmp_path / "exports") for g in (one, two)}
    archive_dir = tmp_path / "archive"

    kept = alice.json("archive", "--older-than", "1h", "--dir", str(archive_dir))
    assert kept["archived"] == [] and not archive_dir.exists()  # not old enough

    dry = alice.json("archive", "--older-than", "0s", "--dir", str(archive_dir), "--dry-run")
    assert {one, two} <= {g["game"] for g in dry["archived"]} and playing not in {g["game"] for g in dry["archived"]}
    assert not archive_dir.exists() and _keys(service_url, one)  # a dry run moves nothing

    done = alice.json("archive", "--older-than", "0s", "--dir", str(archive_dir))
    files = {g["game"]: g["file"] for g in done["archived"]}
    assert files[one] == str((archive_dir / f"{one}.msgpack").resolve()) and two in files and playing not in files
    assert done["failed"] == []
    for game in (one, two):
        assert _keys(service_url, game) == []  # nothing of it left in Redis but its stub
        assert [r.game_id for r in read_all(files[game])] == [game]
        after = _readings(alice, game, tmp_path / "exports")
        assert after["games"] == before[game]["games"], json.dumps([after["games"], before[game]["games"]])
        assert after == before[game]
    assert _keys(service_url, playing)  # not over: stays
    again = alice.json("archive", "--older-than", "0s", "--dir", str(archive_dir))
    assert not {one, two} & {g["game"] for g in again["archived"]}


@pytest.mark.parametrize("step", ["check_file", "_delete_script"])
def test_a_crash_between_writing_the_file_and_deleting_the_keys_loses_nothing_and_a_rerun_finishes(
    alice: Red7, service_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    """The process dies (KeyboardInterrupt: nothing after it runs) once the file is written
    and synced: before the stub (check_file) or before the keys are deleted (_delete_script).
    It dies at this game's step, whichever finished games (other tests') come before it."""
    game = _finished(alice)
    (tmp_path / "exports").mkdir()
    before = _readings(alice, game, tmp_path / "exports")
    keys = _keys(service_url, game)
    archive_dir = tmp_path / "archive"
    real_check, real_delete = archive_module.check_file, archive_module._delete_script

    def check_file(path: Path, record: Any) -> None:
        if record.game_id == game:
            raise KeyboardInterrupt
        real_check(path, record)

    def delete_script(connection: Any) -> Any:
        script = real_delete(connection)

        def run(*, keys: list[str], args: list[Any]) -> Any:
            if any(f"{{{game}}}" in key for key in keys):
                raise KeyboardInterrupt
            return script(keys=keys, args=args)

        return run

    with monkeypatch.context() as patch:
        patch.setattr(archive_module, step, {"check_file": check_file, "_delete_script": delete_script}[step])
        result = alice("archive", "--older-than", "0s", "--dir", str(archive_dir))
    assert result.exit_code == 130  # the CLI says an interrupt so
    assert (archive_dir / f"{game}.msgpack").exists()  # written, synced, renamed into place
    assert _keys(service_url, game) == keys  # the game is whole in Redis
    assert _readings(alice, game, tmp_path / "exports") == before
    done = alice.json("archive", "--older-than", "0s", "--dir", str(archive_dir))
    assert game in {g["game"] for g in done["archived"]} and done["failed"] == []
    assert _keys(service_url, game) == []
    assert _readings(alice, game, tmp_path / "exports") == before
    assert not [p for p in archive_dir.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_a_game_that_moved_on_while_it_was_written_is_not_deleted(
    alice: Red7, service_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = _finished(alice)
    keys = _keys(service_url, game)
    real = archive_module.check_file

    def then_an_append(path: Path, record: Any) -> None:
        real(path, record)
        with redis.Redis.from_url(service_url) as connection:  # what a worker answering a late command does
            connection.hincrby(Keys(game).meta, "version", 0)
            connection.hset(Keys(game).meta, "head", "0" * 64)

    monkeypatch.setattr(archive_module, "check_file", then_an_append)
    result = alice("archive", "--older-than", "0s", "--dir", str(tmp_path / "archive"), "--json")
    assert result.exit_code == 1
    failed = json.loads(result.stdout)["failed"]
    assert [f["game"] for f in failed] == [game]
    assert "changed while it was archived" in failed[0]["error"]
    assert _keys(service_url, game) == keys


def test_an_archived_game_whose_file_is_gone_says_so_in_one_line(alice: Red7, tmp_path: Path) -> None:
    game = _finished(alice)
    done = alice.json("archive", "--older-than", "0s", "--dir", str(tmp_path / "archive"))
    [path] = [g["file"] for g in done["archived"] if g["game"] == game]
    Path(path).unlink()
    line = fails(alice("export", game, "-o", str(tmp_path / "x.msgpack")))
    assert line == f"Error: game {game} is archived: cannot read {path}: No such file or directory\n"


def test_tournament_games_stay_in_redis(alice: Red7, service_url: str, tmp_path: Path) -> None:
    game = f"t-{new_id('cup')}-r1-1"
    with redis.Redis.from_url(service_url) as connection:  # a finished tournament game, as candidates read it
        connection.hset(Keys(game).meta, mapping={"status": "over", "cursor": "0-0", "updated": 1, "created": 1})
        connection.zadd("red7:games", {game: 1})
    try:
        out = alice.json("archive", "--older-than", "0s", "--dir", str(tmp_path / "a"), "--dry-run")
        assert game not in {g["game"] for g in out["archived"]} and out["tournament_games_kept"] >= 1
        text = alice.ok("archive", "--older-than", "0s", "--dir", str(tmp_path / "a"), "--dry-run").stdout
        assert "tournament game" in text and "kept in Redis" in text
    finally:
        with redis.Redis.from_url(service_url) as connection:
            connection.delete(Keys(game).meta)
            connection.zrem("red7:games", game)


@pytest.mark.parametrize("age", ["soon", "-1d", "7y", ""])
def test_a_bad_age_is_a_usage_error(alice: Red7, age: str) -> None:
    result = alice("archive", "--older-than", age)
    assert result.exit_code == 2
    assert "is not an age" in result.output


def test_ages() -> None:
    assert parse_age("7d") == 7 * 86400 and parse_age("12h") == 43200 and parse_age("90") == 90
    assert parse_age("1.5m") == 90 and parse_age("2w") == 14 * 86400


def test_the_stub_is_all_an_archived_game_keeps(alice: Red7, service_url: str, tmp_path: Path) -> None:
    game = _finished(alice)
    alice.json("archive", "--older-than", "0s", "--dir", str(tmp_path / "archive"))
    with redis.Redis.from_url(service_url) as connection:
        assert connection.hexists(ARCHIVED, game) and connection.zscore("red7:games", game) is not None
        assert len(connection.hget(ARCHIVED, game) or b"") < 400


def test_an_archived_games_id_is_never_taken_again(alice: Red7, service_url: str, tmp_path: Path) -> None:
    """Its keys are gone, but its record names the id, and its turns, public in that
    record, are signed for it: a game made again under the id would take them (a seat
    kept for the same key resigned by anyone replaying the old resign).  Both ways of
    creating refuse it: create.lua, and the transaction of the gateway's Redis user."""
    game = _finished(alice)
    alice.json("archive", "--older-than", "0s", "--dir", str(tmp_path / "archive"))
    err = one_line_error(alice("new", "--id", game, "-p", "ann", "-b", "greedy"))
    assert f"a game {game!r} already exists" in err
    with redis.Redis.from_url(service_url) as connection:
        for scripted in (True, False):
            store = GameStore(connection, scripted_create=scripted)
            assert not store.create(game, f"create-{game}", b"create", b"seed", 1000, bytes(32))
        assert _keys(service_url, game) == []  # nothing written under it
        connection.hdel(ARCHIVED, game)  # an id never archived (or its stub removed by hand) is free
        assert GameStore(connection, scripted_create=False).create(game, f"create-{game}", b"c", b"s", 1000, bytes(32))


def test_a_player_reads_the_game_they_played_once_archived_without_a_warning(alice: Red7, tmp_path: Path) -> None:
    """Their client remembers the log heads it was shown: checked against the archived record."""
    for i in range(30):
        game = new_id("w")
        alice.json("new", "--id", game, "-p", "alice", "-b", "greedy", "--seed", f"{game}-{i}")
        view = wait_for(lambda g=game: (v := alice.json("show", g))["to_move"] is not None and v, "the first deal")
        if view["to_move"] == 0:
            break
    else:
        pytest.fail("no game where alice moves first")
    alice.ok("move", game, "fold", "--as", "alice")
    wait_for(lambda: alice.json("show", game)["status"] == "over", "the end")
    before = alice.ok("show", game, "--as", "alice")
    alice.json("archive", "--older-than", "0s", "--dir", str(tmp_path / "archive"))
    after = alice.ok("show", game, "--as", "alice")
    assert "warning" not in after.stderr and after.stdout == before.stdout
    assert alice.ok("audit", game, "--as", "alice").stdout.startswith("PASS")


def test_watch_and_audit_all_take_archived_games_too(alice: Red7, tmp_path: Path) -> None:
    game = _finished(alice)
    watched = alice.ok("watch", game, "--json")
    alice.json("archive", "--older-than", "0s", "--dir", str(tmp_path / "archive"))
    again = alice.ok("watch", game, "--json")
    assert again.stdout == watched.stdout and "is over: nothing to follow" in again.stderr
    # (other tests of this module leave games damaged on purpose: the exit code is theirs)
    reports = json.loads(alice("audit", "--all", "--json").stdout)
    [mine] = [r for r in reports["games"] if r["game"] == game]
    assert mine["result"] == "pass"
