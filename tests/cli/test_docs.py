"""docs/cli.md says what ``red7`` does: the exit codes ``red7 --help`` lists, how ``--seed`` is read,
the ``--json`` of ``new``, ``games``, ``tournament create`` and ``tournament list`` (field
tables and examples), and every option of every command where that command is described.

Each JSON section shows the command line its example came from; the test runs that line
(with a fresh tournament id) and compares the example's shape, key by key, with the output.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from support import Red7, new_id, wait_for

from red7es.cli.main import cli
from red7es.workers.worker import SHIFT_SECONDS

pytestmark = pytest.mark.integration

CLI_MD = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_top_level_help_and_docs_list_the_same_exit_codes() -> None:
    """130 (Ctrl-C) was in docs/cli.md but not in ``red7 --help``: both list every code."""
    result = CliRunner().invoke(cli, ["--help"], prog_name="red7")
    sentence = " ".join(result.output.split("Exit codes:", 1)[1].split(")", 1)[0].split())
    assert sentence.startswith("0 ok, 1 rejected or failed, 2 usage, 130 interrupted (Ctrl-C; watch, serve and worker")
    in_help = [int(code) for code in re.findall(r"(?:^|, )(\d+) ", sentence)]
    table = CLI_MD.read_text(encoding="utf-8").split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    assert in_help == [int(code) for code in re.findall(r"^\| (\d+) \|", table, re.M)] == [0, 1, 2, 130]


def section(heading: str) -> str:
    text = CLI_MD.read_text(encoding="utf-8")
    start = text.index(f"### `{heading}`\n")
    end = text.find("\n#", start + 1)
    return text[start : end if end >= 0 else None]


def documented(heading: str) -> tuple[list[str], list[str], Any]:
    """The section's field names (its table), its command line (without ``red7``) and its example."""
    text = section(heading)
    fields = re.findall(r"^\| `(\w+)` \|", text, re.M)
    command = re.search(r"`red7 ([^`]+)` prints:\n```json\n(.*?)```", text, re.S)
    assert command, f"no command and example under {heading!r} in {CLI_MD}"
    return fields, shlex.split(command.group(1)), json.loads(command.group(2))


def shape(value: Any) -> Any:
    """Keys and JSON types, not values: ids, times and tokens differ from run to run."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value[:1]]
    return type(value).__name__


def keys_of(data: Any) -> list[str]:
    return sorted(data[0] if isinstance(data, list) else data)


def run(user: Red7, args: list[str], tournament: str) -> Any:
    return json.loads(user.ok(*(tournament if a == "cup" else a for a in args)).stdout)


def test_new_and_games_json_are_documented_as_they_are(alice: Red7) -> None:
    new_fields, new_args, new_example = documented("new --json")
    created = run(alice, new_args, "")
    # The games example is of that game once a worker has dealt it (status playing, a seat to move).
    wait_for(lambda: alice.json("games", "--limit", "1")[0]["status"] == "playing", "the deal")
    games_fields, games_args, games_example = documented("games --json")
    listed = run(alice, games_args, "")
    assert listed[0]["game"] == created["game"]
    for fields, example, real in ((new_fields, new_example, created), (games_fields, games_example, listed)):
        assert sorted(fields) == keys_of(example) == keys_of(real)
        assert shape(example) == shape(real)


def test_tournament_create_and_list_json_are_documented_as_they_are(alice: Red7) -> None:
    tournament = new_id("docs")
    create_fields, create_args, create_example = documented("tournament create --json")
    created = run(alice, create_args, tournament)
    list_fields, list_args, list_example = documented("tournament list --json")
    listed = run(alice, list_args, tournament)
    assert listed[0]["tournament"] == created["tournament"] == tournament
    for fields, example, real in ((create_fields, create_example, created), (list_fields, list_example, listed)):
        assert sorted(fields) == keys_of(example) == keys_of(real)
        assert shape(example) == shape(real)


def test_seeds_are_read_as_the_page_says(alice: Red7) -> None:
    """64 hex digits are the seed's bytes, other text (trimmed) is hashed: the commitment shows which."""
    text = CLI_MD.read_text(encoding="utf-8").split("\n## Seeds\n", 1)[1].split("\n## ", 1)[0]
    assert '`--seed docs` is the seed `sha256(b"docs")`' in text
    assert '`sha256(sha256(b"docs"))`' in text
    digits = "0123456789abcdef" * 4
    for given, seed in ((" docs ", hashlib.sha256(b"docs").digest()), (digits, bytes.fromhex(digits))):
        created = json.loads(
            alice.ok("new", "-p", "carol", "-b", "random", "--no-join", "--seed", given, "--json").stdout
        )
        assert created["commitment"] == hashlib.sha256(seed).hexdigest(), given


def commands(command: click.Command = cli, path: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    """Every command of ``red7`` by its words (``""`` for ``red7`` itself), groups' subcommands too."""
    yield " ".join(path), command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from commands(sub, (*path, name))


def places(text: str) -> list[str]:
    """A page cut into the places where something is described: each top-level bullet
    (with its indented lines), and the rest of each section (its heading, prose, tables)."""
    out: list[list[str]] = [[]]
    prose, item, fenced = out[0], None, False
    for line in text.splitlines():
        fenced ^= line.startswith("```")
        if line.startswith("#") and not fenced:
            prose, item = [line], None
            out.append(prose)
        elif line.startswith("* ") and not fenced:
            item = [line]
            out.append(item)
        elif item is not None and line.startswith("  "):
            item.append(line)
        else:
            item = None
            prose.append(line)
    return ["\n".join(place) for place in out]


def _names(place: str, words: str) -> bool:
    """Whether ``place`` names command ``words`` in backticks (``red7 CMD`` or ``CMD ...``)."""
    return bool(re.search(rf"`(?:red7 )?{re.escape(words)}(?=[ `])", place)) if words else True


def _about(place: str, words: str) -> bool:
    """Whether ``place`` describes command ``words``: it names it, and its first line (a
    heading, or a bullet's first line) names no other command, so a passing mention in
    another command's section (a table cell of ``### tournament create --json`` naming
    ``tournament audit``) does not count as describing its options."""
    if not _names(place, words):
        return False
    first = place.split("\n", 1)[0]
    if not words or _names(first, words):
        return True
    others = [w for w, _ in commands() if w and w != words and not words.startswith(w + " ")]
    return not any(_names(first, w) for w in others)


# Documented once for every command that has it, in the first bullet of "Connection and files".
EVERY_COMMAND = {
    "--url": "`-u URL`/`--url URL` on every command that talks to Redis, default `$REDIS_URL`",
    "--url-file": "`--url-file FILE` (or `RED7_URL_FILE`), on every command that talks to Redis",
}


@pytest.mark.parametrize(("words", "command"), [pytest.param(*c, id=c[0] or "red7") for c in commands()])
def test_every_option_of_every_command_is_described_with_its_command(words: str, command: click.Command) -> None:
    """Each option of each command and subcommand (``tournament run --parallel``, ``serve
    --workers``, ``replay --at``/``--step`` were only in --help) is on the page where that
    command is described: a bullet, or a section, that names the command in backticks
    (``red7 CMD`` or ``CMD ...``); a tournament command's may be in docs/tournaments.md.
    So is its environment variable, if it has one."""
    pages = [CLI_MD] + ([CLI_MD.with_name("tournaments.md")] if words.startswith("tournament") else [])
    texts = [place for page in pages for place in places(page.read_text(encoding="utf-8"))]
    line = f"red7 {words}".rstrip()
    for param in command.params:
        names = [*param.opts, *param.secondary_opts]
        if "--help" in names or not names[0].startswith("-"):
            continue
        if names[0] in EVERY_COMMAND:
            assert EVERY_COMMAND[names[0]] in CLI_MD.read_text(encoding="utf-8"), (line, names)
            continue
        found = [
            place
            for place in texts
            if _about(place, words) and any(re.search(rf"`[^`]*{re.escape(n)}(?![\w-])", place) for n in names)
        ]
        assert found, f"{line} {'/'.join(names)} is not described where {line} is"
        envvar = getattr(param, "envvar", None)
        if envvar:
            assert any(envvar in place for place in found), (line, names, envvar)


def test_worker_burst_is_one_shift() -> None:
    """--burst said 'Stop when the queue is empty'; a worker's next shift is always queued,
    so it serves one shift and stops, as docs/cli.md says."""
    result = CliRunner().invoke(cli, ["worker", "--help"], prog_name="red7")
    assert f"--burst Serve one shift ({SHIFT_SECONDS:g} s of games), then stop." in " ".join(result.output.split())
    assert f"shifts*\n  of {SHIFT_SECONDS:g} s" in CLI_MD.read_text(encoding="utf-8")


def test_help_points_at_pages_every_installation_has() -> None:
    """``red7 --help`` pointed at docs/cli.md, which an installed wheel does not have:
    no help names a docs/ path, and ``red7 help TOPIC`` prints the pages the wheel ships."""
    for words, command in commands():
        with click.Context(command, info_name=f"red7 {words}".strip()) as ctx:
            assert "docs/" not in command.get_help(ctx), words
    runner = CliRunner()
    listed = runner.invoke(cli, ["help"], prog_name="red7")
    assert listed.exit_code == 0 and "  exit-codes\n" in listed.output and "  tournaments\n" in listed.output
    section = runner.invoke(cli, ["help", "exit"], prog_name="red7")
    assert section.exit_code == 0 and section.output.startswith("## Exit codes\n")
    assert "| 130 |" in section.output and "## JSON outputs" not in section.output
    assert runner.invoke(cli, ["help", "cli"], prog_name="red7").output == CLI_MD.read_text(encoding="utf-8")
    unknown = runner.invoke(cli, ["help", "nosuch"], prog_name="red7")
    assert unknown.exit_code == 2 and "Error: no topic 'nosuch'" in unknown.output
    pyproject = (CLI_MD.parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"red7es.docs" = "docs"' in pyproject and '"red7es.docs" = ["*.md"]' in pyproject  # in the wheel


def test_every_command_starts_with_a_synopsis_and_an_example() -> None:
    """The page's ten-line bullets were hard to scan: before them, each command has a
    heading, one line saying what it is for, and an example that runs it."""
    text = CLI_MD.read_text(encoding="utf-8")
    glance = text.split("\n## Commands at a glance\n", 1)[1].split("\n## ", 1)[0]
    entries = dict(re.findall(r"^### `red7 ([^`]+)`\n(.+?)(?=^### |\Z)", glance, re.M | re.S))
    leaves = {words for words, command in commands() if words and not isinstance(command, click.Group)}
    assert set(entries) == leaves
    for words, body in entries.items():
        synopsis, rest = body.split("\n", 1)
        assert synopsis and not synopsis.startswith("```"), words
        example = re.match(r"```\n(.+?)```", rest, re.S)
        assert example and f"red7 {words}" in example.group(1), words


README = CLI_MD.parents[1] / "README.md"


def test_the_readmes_python_example_prints_what_the_readme_shows() -> None:
    """README.md, *From Python*: its code block, run, prints the block after "prints, every time"."""
    section = README.read_text().split("## From Python", 1)[1]
    code, printed = re.findall(r"```(?:python)?\n(.*?)```", section, re.S)[:2]
    assert "prints, every time" in section.split(printed, 1)[0].rsplit("```python", 1)[1]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == printed
