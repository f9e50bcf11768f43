"""The record checker printed in docs/records.md works on real records, as the page says.

It is the one piece of code a reader copies to check a record without red7es, so it
is run here as printed: on the page's own example, on a file of several games whose
logs hold every kind of rejected command (corrupt bytes, wrong tokens, turns out of
turn), and on forgeries it must refuse.
"""

from __future__ import annotations

import dataclasses
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from red7es.service.events import PERSON, CommandApplied, TurnCommand
from red7es.service.record_files import write_all
from red7es.service.records import Record
from red7es.variant import Variant

from .conftest import ADVANCED, Games
from .tamper import command_index, edit_command, events_of, flip_byte

RECORDS_MD = Path(__file__).resolve().parents[2] / "docs" / "records.md"


def _block(after: str, language: str) -> str:
    """The first fenced ``language`` block after the heading ``after`` in records.md."""
    text = RECORDS_MD.read_text(encoding="utf-8")
    found = re.search(rf"```{language}\n(.*?)```", text[text.index(after) :], re.S)
    assert found, f"no {language} block after {after!r} in {RECORDS_MD}"
    return found.group(1)


@pytest.fixture(scope="module")
def checker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("docs") / "check.py"
    path.write_text(_block("### Checking a record without red7es", "python"), encoding="utf-8")
    return path


def _check(checker: Path, records: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(checker), str(records)], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def mischievous(module_games: Games) -> list[Record]:
    """Two games with people who also submit what must be rejected (conftest ``_mischief``)."""
    module_games.people("docs-a", Variant(3, **ADVANCED), ("alice", "bob"), rng=random.Random(5), mischief=0.4)
    module_games.people("docs-b", Variant(2), ("carol",), rng=random.Random(6), mischief=0.4)
    return [module_games.record("docs-a"), module_games.record("docs-b")]


def test_the_checker_passes_the_page_s_own_example_with_the_output_shown(checker: Path, tmp_path: Path) -> None:
    example = tmp_path / "demo.jsonl"
    example.write_text(_block("## Example", "jsonl"), encoding="utf-8")
    shown = _block("### Checking a record without red7es", "console").splitlines()
    assert shown[0] == "$ python check.py demo.jsonl"
    result = _check(checker, example)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == shown[1:]


def test_the_checker_passes_several_games_with_rejected_and_corrupt_commands(
    checker: Path, mischievous: list[Record], tmp_path: Path
) -> None:
    path = tmp_path / "games.jsonl"
    write_all(mischievous, path)
    result = _check(checker, path)
    assert result.returncode == 0, result.stderr
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["ok docs-a", "ok docs-b"]
    # the games really hold what the checker must step over
    raws = [c.raw for r in mischievous for c in r.commands]
    assert b"\xc1 not msgpack" in raws
    rejected = [e for r in mischievous for e in events_of(r) if type(e).__name__ == "CommandRejected"]
    assert {e.kind for e in rejected} >= {"turn", "corrupt"}


def test_the_checker_refuses_a_changed_event_byte(checker: Path, mischievous: list[Record], tmp_path: Path) -> None:
    path = tmp_path / "flipped.jsonl"
    write_all([mischievous[0], flip_byte(mischievous[1], 5, 20)], path)
    result = _check(checker, path)
    assert result.returncode != 0
    assert "ok docs-a" in result.stdout and "docs-b" in result.stderr


def test_the_checker_refuses_a_forged_signature_on_an_applied_turn(
    checker: Path, mischievous: list[Record], tmp_path: Path
) -> None:
    record = mischievous[1]
    answer = next(e for e in events_of(record) if isinstance(e, CommandApplied) and e.by == PERSON)
    k = command_index(record, answer.id)

    def forge(c: TurnCommand) -> TurnCommand:
        return dataclasses.replace(c, signature=("0" if c.signature[0] != "0" else "1") + c.signature[1:])

    path = tmp_path / "forged.jsonl"
    write_all([edit_command(record, k, forge)], path)
    result = _check(checker, path)
    assert result.returncode != 0
    assert "InvalidSignature" in result.stderr
