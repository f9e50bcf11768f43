"""``red7 ... | head -1``: a reader that stops early ends the command quietly, with exit 0.

These run the installed ``red7`` in a subprocess with stdout on a real pipe, since a
closed pipe (EPIPE, and the interpreter's own flush at exit) is what CliRunner cannot show.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support import Red7, new_id, wait_for

from .conftest import RED7

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def finished(service_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Red7, str, Path]:
    """A user, a finished bot game, its record file, and a tournament (for standings)."""
    user = Red7(service_url, tmp_path_factory.mktemp("pipes-home"))
    game = user.json("new", "-b", "greedy", "-b", "random")["game"]
    wait_for(lambda: user.json("show", game)["status"] == "over", "the bots to finish")
    record = user.home / "game.jsonl"
    user.ok("export", game, "-o", str(record))
    return user, game, record


def _env(user: Red7) -> dict[str, str]:
    """The user's environment, with stdout block-buffered as in a shell (not PYTHONUNBUFFERED)."""
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}, **user.env}


def _closed_at_once(user: Red7, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``red7 ARGS`` with stdout on a pipe whose reader has already gone."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [str(RED7), *args],
            stdout=write,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=_env(user),
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize(
    "args",
    [
        ("replay", "{game}"),  # rich's console
        ("show", "{game}", "--json"),  # click.echo
        ("tournament", "standings", "{tournament}"),
        ("tournament", "standings", "{tournament}", "--csv", "-"),  # csv leaves its output buffered until exit
        ("--help",),  # printed while the options are parsed, before any command runs
    ],
)
def test_a_closed_pipe_ends_quietly_with_exit_0(finished: tuple[Red7, str, Path], args: tuple[str, ...]) -> None:
    user, game, _record = finished
    tournament = new_id("p")
    if "{tournament}" in args:
        user.ok("tournament", "create", tournament, "-b", "greedy", "-b", "random")
    filled = [a.format(game=game, tournament=tournament) for a in args]
    result = _closed_at_once(user, *filled)
    assert (result.returncode, result.stderr) == (0, "")


def test_head_reads_one_line_then_the_rest_goes_nowhere(finished: tuple[Red7, str, Path]) -> None:
    """``red7 replay FILE --step | head -1``: the reader leaves after the first line, the walk goes on."""
    user, _game, record = finished
    process = subprocess.Popen(
        [str(RED7), "replay", str(record), "--step"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(user),
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdin is not None and process.stderr is not None
        assert process.stdout.readline().startswith("Game created for")
        process.stdout.close()  # as head does once it has its line
        process.stdin.write("\n" * 100)  # Enter for every turn: the next one is written into the closed pipe
        process.stdin.close()
        assert process.wait(60) == 0
        assert process.stderr.read() == ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_watch_on_a_pipe_stays_line_by_line(service_url: str, tmp_path: Path) -> None:
    """Piped, watch prints the board once and then one line per event: no cursor moves, no redraws."""
    user = Red7(service_url, tmp_path / "home")
    game = user.json("new", "-p", "me", "-b", "greedy", "--seed", "piped")["game"]
    watcher = subprocess.Popen(
        [str(RED7), "watch", game, "--as", "me", "--timeout", "30"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env={**_env(user), "TERM": "xterm-256color"},
        text=True,
    )
    try:
        assert watcher.stdout is not None
        lines = [watcher.stdout.readline()]  # the board, printed as soon as watch starts
        while not lines[-1].startswith("Your hand: "):
            lines.append(watcher.stdout.readline())
        wait_for(lambda: (v := user.json("show", game, "--as", "me"))["to_move"] == v["seat"], "my turn")
        user.ok("move", game, "--fold")  # the end of the game: watch ends on it
        out, err = watcher.communicate(timeout=30)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()
    assert watcher.returncode == 0, err
    text = "".join(lines) + out
    assert "\x1b" not in text, "no colour and no cursor moves on a pipe"
    assert "me folds.\n" in out and "me is out of the round (folded).\n" in out
    assert text.count("Rule: ") == 2, text  # the board as watch started, and the final one
    assert out.count("Game over:") == 1, out
