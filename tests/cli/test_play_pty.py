"""``red7 play`` on a real pseudo-terminal (pexpect): prompts, mistakes, help, colour."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pyte
import pytest
import redis
from click.testing import CliRunner
from support import Red7, WorkerPool, fails, wait_for

from red7es.cli.main import cli
from red7es.facts import CardDrawn, StepApplied
from red7es.service.client import GameService
from red7es.service.redis_server import RedisServer, free_port
from red7es.steps import StepKind

from .conftest import RED7

pytestmark = pytest.mark.integration

PROMPT = "Your turn > "
ANY_PROMPT = r"Your turn(?:: [^>\r\n]+)? > "  # a deeper menu's prompt names the steps chosen
ANSI = re.compile(r"\x1b\[[\d;]*m")
# An SGR sequence that sets a foreground colour (plain, bright, 256 or true colour).
COLOUR = re.compile(r"\x1b\[(?:\d+;)*(?:3[0-7]|9[0-7]|38;5;\d+|38;2;\d+;\d+;\d+)(?:;\d+)*m")
ALL_CARDS = [c + str(n) for n in range(1, 8) for c in "ROYGBIV"]


def spawn(
    home: Path,
    url: str,
    *args: str,
    no_color: bool = False,
    red7: tuple[str, ...] = (str(RED7),),
    dimensions: tuple[int, int] = (50, 120),
) -> pexpect.spawn:
    """``red7 ARGS --url URL`` on a terminal; ``red7`` is the command that runs it."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "REDIS_URL", "FORCE_COLOR")}
    env.update(RED7_HOME=str(home), TERM="xterm-256color", PYTHONUNBUFFERED="1")
    if no_color:
        env["NO_COLOR"] = "1"
    program, *words = red7
    return _Spawned(
        program,
        [*words, *args, "--url", url],
        env=env,
        encoding="utf-8",
        timeout=30,
        dimensions=dimensions,
        preexec_fn=_ctrl_c_as_at_a_terminal,
    )


class _Spawned(pexpect.spawn):  # type: ignore[misc]
    """pexpect's child, whose ``close(force=True)`` waits for a killed child to be gone.

    ptyprocess gives each signal 0.1 s, SIGKILL too, then raises "Could not terminate the
    child": on a loaded machine (a CI run beside a CPU hog) the dying process was not yet
    reaped when it looked, and a test whose every check had passed failed in its cleanup."""

    def close(self, force: bool = True) -> None:
        try:
            super().close(force=force)
        except pexpect.ExceptionPexpect:
            if not force:
                raise
            gone = time.monotonic() + 20
            while self.isalive() and time.monotonic() < gone:
                time.sleep(0.05)
            super().close(force=force)  # (gone now: this only marks it closed)


def _ctrl_c_as_at_a_terminal() -> None:
    """In the child, before ``red7`` starts: SIGINT back to its default action.

    A non-interactive shell starts a background job (``pytest &``) with SIGINT ignored,
    and an ignored signal stays ignored across exec: Python then never installs its
    Ctrl-C handler, and every test that presses Ctrl-C waited out its timeout."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Transcript:
    """Everything the child printed, for assertions at the end, and the screen it makes
    (a terminal emulator of the child's size: what is visible, cursor moves included)."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.parts: list[str] = []
        rows, columns = child.getwinsize()
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.Stream(self.screen)

    def expect(self, pattern: object, timeout: float = -1) -> int:
        index: int = self.child.expect(pattern, timeout=timeout)
        part = self.child.before + (self.child.after if isinstance(self.child.after, str) else "")
        self.parts.append(part)
        self.stream.feed(part)
        return index

    def until(self, condition: Callable[[], object], what: str, timeout: float = 20.0) -> None:
        """Read what the child prints until ``condition()`` holds of the screen, or fail after ``timeout``."""
        deadline = time.monotonic() + timeout
        if self.child.buffer:  # read by an expect beyond its match
            self._feed(self.child.buffer)
            self.child.buffer = ""
        while not condition():
            if time.monotonic() > deadline:
                pytest.fail(f"{what}: not on the screen after {timeout:g}s:\n{self.visible}")
            with contextlib.suppress(pexpect.TIMEOUT):
                self._feed(self.child.read_nonblocking(65536, timeout=0.2))

    def _feed(self, part: str) -> None:
        self.parts.append(part)
        self.stream.feed(part)

    @property
    def visible(self) -> str:
        """The terminal's screen now, one line per row, trailing blanks dropped."""
        return "\n".join(line.rstrip() for line in self.screen.display)

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def plain(self) -> str:
        return ANSI.sub("", self.text)


def last_hand(plain: str) -> list[str]:
    lines = [line for line in plain.splitlines() if line.startswith("Your hand: ")]
    return lines[-1].split(": ", 1)[1].split()


def choose_first(t: Transcript, name: str) -> None:
    """Take the first choice of each menu until ``name``'s turn is sent and told."""
    for _ in range(10):
        t.child.sendline("1")
        if t.expect([ANY_PROMPT, rf"{name} (plays|discards|folds)"]) == 1:
            return
    pytest.fail("no turn after ten choices")


def play_to_the_end(t: Transcript, answer: str = "1", limit: int = 200) -> None:
    for _ in range(limit):
        if t.expect([ANY_PROMPT, "Game over"]) == 1:
            t.expect(pexpect.EOF)
            return
        t.child.sendline(answer)
    pytest.fail("the game did not end")


def test_play_a_whole_game(tmp_path: Path, service_url: str) -> None:
    child = spawn(tmp_path, service_url, "play", "--bots", "greedy", "--seed", "demo", "--name", "you")
    t = Transcript(child)
    try:
        t.expect(r"New game ([0-9a-f]{8}): 2 players, basic\. Type \? for help\.")
        game = child.match.group(1)
        t.expect(PROMPT)
        screen = t.plain
        assert f"Game {game}" in screen and "Rule: Red" in screen and "you (you)" in screen
        assert "Your turn." in screen
        legal = re.findall(r"\s(\d+)\. (\S+(?: \S+)*?)(?=\s{2,}|\s*$)", screen, re.M)
        assert legal and legal[0][0] == "1", screen
        hand = last_hand(screen)

        # A malformed card: explained, and the prompt comes back.
        child.sendline("p:R9")
        t.expect(r"Not allowed: (.*)\r?\n")
        assert "not a card" in child.match.group(1)
        t.expect(PROMPT)

        # A card not in hand: the engine's reason, and the prompt comes back.
        missing = next(c for c in ALL_CARDS if c not in hand)
        child.sendline(f"p:{missing}")
        t.expect(rf"Not allowed: {missing} is not in your hand")
        t.expect(PROMPT)

        child.sendline("?")
        t.expect("Choose a number from the menu")
        t.expect(PROMPT)
        assert "fold  give up this round" in t.plain
        assert "resign  give up the whole game" in t.plain

        child.sendline("999")
        t.expect(r"Choose 1 to \d+, or type a turn\.")
        t.expect(PROMPT)

        child.sendline("l")
        t.expect(r"\s1\. ")
        t.expect(PROMPT)

        child.sendline("1")
        play_to_the_end(t)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, t.plain[-2000:]
    assert "Traceback" not in t.plain
    plain = t.plain
    assert "you plays" in plain or "you discards" in plain or "you folds" in plain
    assert re.search(r"Game over: (you|greedy) wins", plain)
    # The bot's replies are told, not just seen in the next view: every play and
    # discard in the log is narrated exactly once, in order.
    assert re.search(r"^greedy (plays|discards|folds)", plain, re.M), plain
    told = re.findall(r"^(you|greedy) (?:plays|discards) (\w\d)\b", plain, re.M)
    service = GameService(redis.Redis.from_url(service_url))
    names = ["you", "greedy"]
    logged = [
        (names[r.event.seat], str(r.event.step.card))
        for r in service.log(game)
        if isinstance(r.event, StepApplied) and r.event.step.kind in (StepKind.PLAY, StepKind.CANVAS)
    ]
    assert told == logged, plain
    # The end is said once, by the final view (not also by the events before it).
    assert plain.count("Game over:") == 1 and plain.count("Seed revealed:") == 1, plain[-2000:]
    # On a terminal, cards and rules are in colour.
    assert COLOUR.search(t.text), "no colour on a terminal"


def test_no_color_on_a_terminal(tmp_path: Path, service_url: str) -> None:
    child = spawn(tmp_path, service_url, "play", "--bots", "greedy", "--seed", "demo", "--name", "you", no_color=True)
    t = Transcript(child)
    try:
        t.expect(PROMPT)
        child.sendline("fold")
        play_to_the_end(t, answer="fold")
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert "you folds." in t.plain and "Game over: greedy wins" in t.plain
    assert not COLOUR.search(t.text), "NO_COLOR=1 must turn colour off"


def test_quit_and_resume(tmp_path: Path, service_url: str) -> None:
    child = spawn(tmp_path, service_url, "play", "--bots", "greedy,random", "--name", "ann", "--scoring")
    t = Transcript(child)
    try:
        t.expect(r"New game ([0-9a-f]{8}): 3 players, scoring")
        game = child.match.group(1)
        t.expect(PROMPT)
        child.sendline("q")
        t.expect(rf"Left game {game}; it stays open: red7 play --game {game} --as ann")
        t.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0

    again = spawn(tmp_path, service_url, "play", "--game", game)
    t = Transcript(again)
    try:
        t.expect(PROMPT)
        assert f"Game {game}" in t.plain and "ann (you)" in t.plain
        again.sendeof()  # Ctrl-D at the prompt also leaves the game open
        t.expect(rf"Left game {game}; it stays open")
        t.expect(pexpect.EOF)
    finally:
        again.close(force=True)
    assert again.exitstatus == 0

    third = spawn(tmp_path, service_url, "play", "--game", game, "--as", "ann")
    t = Transcript(third)
    try:
        t.expect(PROMPT)
        third.sendintr()  # and so does Ctrl-C
        t.expect(rf"Left game {game}; it stays open")
        t.expect(pexpect.EOF)
    finally:
        third.close(force=True)
    assert third.exitstatus == 130  # interrupted, as shells report Ctrl-C (q and Ctrl-D above are 0)
    assert "Aborted" not in t.plain and "Traceback" not in t.plain


def test_what_is_typed_while_others_move_is_not_played_later(tmp_path: Path, service_url: str) -> None:
    """A "1" typed while the bot thinks was meant for the old list: it must not pick from the next one."""
    bots = "slow=ismcts:time=1.5,iterations=1000000"
    child = spawn(tmp_path, service_url, "play", "--bots", bots, "--name", "ann", "--seed", "typeahead")
    t = Transcript(child)
    try:
        t.expect(PROMPT)
        choose_first(t, "ann")  # ann's turn; then the bot thinks for 1.5 s
        child.sendline("fold")  # typed ahead while the bot thinks: a turn that is always legal
        # the seed fixes a deal where the bot moves after ann's first turn (a deal that ends
        # there would test nothing: fail, so a change of the deal is noticed)
        assert t.expect([r"slow (plays|discards|folds)", "Game over"]) == 0, "the deal ended before the bot's turn"
        t.expect(PROMPT)
        played = child.expect([r"ann (plays|discards|folds)", pexpect.TIMEOUT], timeout=2)
        assert played == 1, "the 1 typed ahead was played against the new list"
        child.sendline("q")
        t.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_redis_lost_too_long_mid_game_says_how_to_come_back(tmp_path: Path, private_redis: Any) -> None:
    """play waits for a lost Redis up to OUTAGE_LIMIT (1.5 s here), then the one-line error comes
    with the way back, as after Ctrl-C: the game is safe in Redis."""
    server = private_redis()
    (tmp_path / "workers").mkdir()
    pool = WorkerPool(server.url, tmp_path / "workers", name="lost")
    pool.start(1, wait=True)
    patched = (
        "import sys, red7es.cli.outage as outage; outage.OUTAGE_LIMIT = 1.5; "
        "from red7es.cli.main import main; sys.argv[0] = 'red7'; main()"
    )
    red7 = (sys.executable, "-c", patched)
    child = spawn(tmp_path, server.url, "play", "--bots", "greedy", "--name", "ann", "--seed", "lost", red7=red7)
    t = Transcript(child)
    try:
        t.expect(r"New game ([0-9a-f]{8})")
        game = child.match.group(1)
        t.expect(PROMPT)
        server.stop()
        child.sendline("fold")
        t.expect(rf"Redis at {server.url} is unreachable; waiting for it")
        t.expect(rf"Left game {game}; it stays open: red7 play --game {game} --as ann --url {server.url}")
        t.expect(r"Error: lost the connection to Redis")
        t.expect(pexpect.EOF)
    finally:
        child.close(force=True)
        pool.stop()
    assert child.exitstatus == 1 and "Traceback" not in t.plain


def _interrupted_while_waiting(tmp_path: Path, redis_server: RedisServer, *args: str) -> tuple[Transcript, str]:
    """Run ``red7 ARGS`` on a database no worker serves, so it waits for one, and press Ctrl-C
    once its seat's token is kept (the service keeps it before the wait); (transcript, game)."""
    idle = redis_server.url.rsplit("/", 1)[0] + "/4"
    connection = redis.Redis.from_url(idle)
    child = spawn(tmp_path, idle, *args)
    t = Transcript(child)
    credentials = tmp_path / "credentials.json"
    try:
        game: str = wait_for(
            lambda: credentials.exists() and next(iter(json.loads(credentials.read_text())["games"])), "the seat"
        )
        child.sendintr()
        t.expect(pexpect.EOF)
    finally:
        child.close(force=True)
        connection.flushdb()
        connection.close()
    assert child.exitstatus == 130
    assert "Aborted" not in t.plain and "Traceback" not in t.plain
    assert json.loads(credentials.read_text())["games"][game]["ann"], "the token is kept"
    return t, game


def test_ctrl_c_while_the_game_is_being_created(tmp_path: Path, redis_server: RedisServer) -> None:
    """Ctrl-C before the first prompt (play waits for a worker to create the game) is 130 too, not 1."""
    t, game = _interrupted_while_waiting(tmp_path, redis_server, "play", "--bots", "greedy", "--name", "ann")
    assert f"Left game {game}; it stays open: red7 play --game {game} --as ann" in t.plain


def test_ctrl_c_in_new_is_130_as_in_play_and_keeps_the_token(tmp_path: Path, redis_server: RedisServer) -> None:
    """Not only play: new waiting for a worker, stopped by Ctrl-C, says so and exits 130, not 'Aborted!' and 1."""
    t, _game = _interrupted_while_waiting(tmp_path, redis_server, "new", "-p", "ann", "-b", "greedy")
    assert "Interrupted." in t.plain


def test_play_a_game_you_do_not_hold(tmp_path: Path, service_url: str) -> None:
    child = spawn(tmp_path, service_url, "play", "--game", "nosuchgame")
    try:
        child.expect(pexpect.EOF)
        output = ANSI.sub("", child.before)
    finally:
        child.close(force=True)
    assert child.exitstatus == 1
    assert output.strip() == f"Error: no game 'nosuchgame' (list games with: red7 games --url {service_url})"


def test_your_own_draws_are_named(tmp_path: Path, service_url: str) -> None:
    """The card a 3 or the Advanced draw gives you is named to you; the others' stay hidden."""
    args = ("play", "--bots", "greedy", "--seed", "a", "--name", "ann", "--actions", "--draw")
    child = spawn(tmp_path, service_url, *args)
    t = Transcript(child)
    try:
        t.expect(r"New game ([0-9a-f]{8}): ")
        game = child.match.group(1)
        play_to_the_end(t)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, t.plain[-2000:]
    told = re.findall(r"^(ann|greedy) draws (\w\d|a card)( \(action of a 3\))?\.\r?$", t.plain, re.M)
    names = ["ann", "greedy"]
    logged = [
        (
            names[e.seat],
            str(e.card) if e.seat == 0 or e.public else "a card",
            " (action of a 3)" if e.cause == "3" else "",
        )
        for e in (r.event for r in GameService(redis.Redis.from_url(service_url)).log(game))
        if isinstance(e, CardDrawn)
    ]
    # greedy moves first: its first turn is told only if play started before the worker
    # played it. Everything after is told, ann's draws (all after her first prompt) included.
    assert told == logged[len(logged) - len(told) :], t.plain
    # This seed has both kinds of draw for ann, and hidden and public ones for greedy.
    assert {(who, cause) for who, _, cause in told} >= {("ann", ""), ("ann", " (action of a 3)"), ("greedy", "")}
    assert ("greedy", "a card", "") in told and any(w == "greedy" and c != "a card" for w, c, _ in told)


def test_as_needs_a_game(alice: Red7) -> None:
    """--as picks a seat in an existing game; without --game it is a mistake, not a new game."""
    err = fails(alice("play", "--as", "bob", "--bots", "greedy", input=""), 2)
    assert "--as needs --game" in err
    assert alice.credentials() == {"games": {}}


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (
            ("--bots", "random", "--scoring", "--seed", "x", "--name", "bob", "--target", "5", "--rounds", "3"),
            "Error: --bots, --name, --scoring, --rounds, --target, --seed are for a new game: "
            "--game GAME plays a game that exists; your seat in it is --as NAME",
        ),
        (("--draw", "--actions"), "Error: --draw, --actions are for a new game: --game GAME plays a game that exists"),
        (("--rounds", "1"), "Error: --rounds is for a new game: --game GAME plays a game that exists"),
    ],
)
def test_new_game_options_do_not_apply_with_game(tmp_path: Any, options: tuple[str, ...], named: str) -> None:
    """They were silently ignored; like --as without --game, a usage error naming them (before Redis)."""
    env = {"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0", "RED7_HOME": str(tmp_path)}
    result = CliRunner().invoke(cli, ["play", "--game", "g1", *options], env=env, prog_name="red7")
    assert fails(result, 2).strip().splitlines()[-1] == named


# Without scoring, three rounds to win: more prompts than one round gives with four players.
VARIANTS = {
    "basic": ("--rounds", "3"),
    "scoring": ("--scoring",),
    "draw": ("--draw", "--rounds", "3"),
    "actions": ("--actions", "--rounds", "3"),
    "all": ("--scoring", "--draw", "--actions"),
}


def _board_visible(t: Transcript, bots: list[str]) -> None:
    """The board is on the 80×24 screen: rule, canvas, every palette row, the hand."""
    screen = t.visible
    assert re.search(r"^Rule: \w+ — .*Canvas: ", screen, re.M), screen
    for who in ["ann (you)", *bots]:
        assert re.search(rf"^\s*▶?\s*{re.escape(who)}\s.*\s\d+\s*$", screen, re.M), (who, screen)
    assert re.search(r"leads under|Nobody leads", screen), screen
    assert re.search(r"^Your hand: ", screen, re.M), screen


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_board_stays_on_an_80x24_screen(tmp_path: Path, service_url: str, variant: str, players: int) -> None:
    """At every prompt (menus a step deep, after help, after a refused turn) the whole
    board is on the screen the player sees, for every variant, with 2 and 4 players."""
    bots = ["greedy", "random", "bob=greedy"][: players - 1]
    names = [b.partition("=")[0] for b in bots]
    seed = f"screen-{variant}-{players}"
    args = ("play", "--bots", ",".join(bots), "--name", "ann", "--seed", seed, *VARIANTS[variant])
    child = spawn(tmp_path, service_url, *args, dimensions=(24, 80))
    t = Transcript(child)
    prompts = 0
    try:
        t.expect(ANY_PROMPT)
        _board_visible(t, names)
        child.sendline("p:R9")  # refused: one line under the menu, the board still there
        t.expect(r"Not allowed: .*not a card")
        t.expect(ANY_PROMPT)
        _board_visible(t, names)
        assert t.visible.count("Not allowed") == 1
        child.sendline("?")
        t.expect(ANY_PROMPT)
        _board_visible(t, names)
        assert "Choose a number from the menu" in t.visible
        for _ in range(40):
            child.sendline("1")
            if t.expect([ANY_PROMPT, "Game over"]) == 1:
                break
            _board_visible(t, names)
            prompts += 1
        else:
            child.sendline("q")
    finally:
        child.close(force=True)
    assert prompts >= 5, t.plain[-2000:]
    assert "Traceback" not in t.plain


def _palettes_on_screen(screen: str) -> dict[str, str]:
    """Each seat's palette as the board on the screen shows it."""
    rows = re.findall(r"^\s*▶?\s*(\S+) (?:\(you\)|\[\w+\])\s+\d+\s+(.*?)(?:  ← leads)?\s+\d+$", screen, re.M)
    return dict(rows)


def _palettes(view: dict[str, Any]) -> dict[str, str]:
    return {
        s["name"]: " ".join(s["palette"]) if s["palette"] is not None else "out of the round" for s in view["seats"]
    }


def test_watch_redraws_the_board_in_place(tmp_path: Path, service_url: str) -> None:
    """On a terminal, watch keeps one board on the screen and redraws it as moves happen,
    the moves told under it."""
    user = Red7(service_url, tmp_path / "u")
    game = user.json("new", "-p", "me", "-b", "greedy", "--seed", "live")["game"]
    # The watcher holds the seat's token in a home of its own: the user's moves below are
    # made by another process, and the two do not share the file of heads seen.
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "credentials.json").write_text((user.home / "credentials.json").read_text())
    child = spawn(tmp_path / "w", service_url, "watch", game, "--as", "me", dimensions=(24, 80))
    t = Transcript(child)
    seen = []

    def my_turn() -> dict[str, Any] | None:
        view: dict[str, Any] = user.json("show", game, "--as", "me")
        return view if view["status"] == "over" or view["to_move"] == view["seat"] else None

    try:
        t.expect("Your hand:")
        for _ in range(3):
            view: dict[str, Any] = wait_for(my_turn, "my turn")
            if view["status"] == "over":
                break
            t.until(lambda view=view: _palettes_on_screen(t.visible) == _palettes(view), "the palettes of the view")
            assert t.visible.count("Rule: ") == 1 and t.visible.count("Your hand: ") == 1, t.visible
            seen.append(_palettes(view))
            user.ok("move", game, view["legal"][0])
            t.until(lambda: re.search(r"^me (plays|discards|folds)", t.visible, re.M), "my move, told")
        child.sendintr()
        t.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, t.plain[-2000:]
    assert len(seen) >= 2 and seen[0] != seen[-1], seen
    assert "Traceback" not in t.plain
