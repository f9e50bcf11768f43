"""``red7 play``: an interactive game in the terminal, against bots or hosted players."""

from __future__ import annotations

import contextlib
import getpass
import sys
import termios
import time
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console
from rich.text import Text

from red7es.bots.base import BOT_NAMES
from red7es.service.client import Rejected
from red7es.service.connection import UNREACHABLE_ERRORS
from red7es.service.names import MAX_NAME, shown, unshowable
from red7es.service.store import new_game_id, whole_number
from red7es.service.transport import GameClient

from .clocked_input import ClockedInput
from .commands_game import (
    given_name,
    refuse_seed_over_http,
    seat_for,
    seat_specs,
    seat_view,
    split_bots,
    variant_from,
    variant_options,
)
from .options import console, exit_on_ctrl_c, pass_session, player_url_option, red7_line, typed_url
from .outage import wait_for_redis
from .render import SAID_BY_FINAL_VIEW, card_text, clock_text, describe_events, render_view
from .session import Session

__all__ = ["COMMANDS", "play"]

HELP = """Choose a number from the menu: a card to play or discard, then what follows
(0 goes back). Or type a whole turn in notation:
  p:R7  play R7 to your palette     c:B3  discard B3: its colour is the rule
  p:R7 c:B3  both      draw  the Advanced draw, after a discard (if allowed)
  7c:G2 7d:G2 1:O4     actions of 7 and 1 (actions variant)
  fold  give up this round   ...  at the end keeps the turn open (a 3's draw)
  resign  give up the whole game (you are out for good; the others play on)
  abort   end the game with no winner, while nobody has moved yet
Enter or l: the menu again    q: quit (the game stays open)"""

Events = list[dict[str, Any]]

RESYNC_WAIT = 5.0  # seconds, after an outage, for a worker to answer a turn sent as Redis went away


@click.command()
@click.option(
    "--bots",
    default="greedy,greedy",
    show_default=True,
    help=f"Opponents, comma-separated: {', '.join(BOT_NAMES)}, with options: greedy,ismcts:time=0.05,belief=0.5.",
)
@click.option("--name", default=None, help="Your seat's name (default: your login name).")
@variant_options
@click.option("--seed", help="Seed text for a reproducible game.")
@click.option("--game", "game_id", metavar="GAME", help="Play an existing game instead (one you joined).")
@click.option("--as", "as_name", metavar="NAME", help="With --game: your seat.")
@player_url_option
@pass_session
def play(
    session: Session,
    bots: str,
    name: str | None,
    scoring: bool,
    draw: bool,
    actions: bool,
    rounds: int,
    target: int | None,
    seed: str | None,
    game_id: str | None,
    as_name: str | None,
) -> None:
    """Play interactively: the board, a menu of your next steps, the bots' moves as they happen.

    Without --game, starts a new game against --bots. The board stays on screen;
    under it, pick a card by number, then what follows (or type a whole turn in
    notation; ? for help). A rejected turn is explained in one line and you are
    asked again; nothing you mistype costs you the round.

    \b
    Examples:
        red7 play --bots greedy,random --scoring --draw --actions
        red7 play --game 3f9a2c1b --as bob
    """
    if as_name is not None and game_id is None:
        # Starting a new game anyway, under --name or the login name, would hide the
        # mistake while the game the player meant goes on waiting for them.
        raise click.UsageError(
            "--as needs --game GAME: it picks your seat in a game you joined (a new game's is --name)"
        )
    new = game_id is None
    if not new:
        _refuse_new_game_options()
    refuse_seed_over_http(session, seed)
    if name is None:
        name = default_name()
        if new and name in map(given_name, split_bots(bots)):  # "given twice" would blame a name never typed
            raise click.UsageError(
                f"a bot is named {name!r}, the name your seat takes by default (your login name): "
                "give yours with --name"
            )
    out = console()
    game = game_id or new_game_id()  # known before the game exists, for leave() below
    seat = name if new else as_name or ""  # "" until seat_for finds the one held
    # The seats are checked first: a mistake in --bots is a usage error, before any connection.
    specs = seat_specs((name,), split_bots(bots)) if new else []

    def leave() -> None:
        """Say what stays open. A new game holds the seat once its token is kept, which
        the service does before it waits for a worker: until then, nothing was created."""
        if new and not session.credentials.seats(game):
            out.print("\nStopped before the game was created.")
            return
        resume = red7_line("play", "--game", game, *(("--as", seat) if seat else ()), url=typed_url())
        out.print(f"\nLeft game {game}; it stays open: {resume}")

    # Ctrl-C anywhere, from the first connection to the prompt or while the others move.
    with exit_on_ctrl_c(leave):
        session.ensure_worker()
        if new:
            variant = variant_from(len(specs), scoring, draw, actions, rounds, target)
            token = session.client.create(variant, specs, seed=seed, join=[name], game_id=game).tokens[name]
            out.print(Text(f"New game {game}: {variant.describe()}. Type ? for help.", style="bold"))
        else:
            seat, token = seat_for(session, game, as_name, None)
        try:
            over = _loop(out, session, game, seat, token)
        except UNREACHABLE_ERRORS:
            leave()  # Redis stayed away too long (wait_for_redis): the game is safe in it, say how to come back
            raise
    if not over:  # q or Ctrl-D: a choice, not an interruption
        leave()


# What applies to a game that exists; every other option of play makes a new game.
GAME_OPTIONS = ("game_id", "as_name", "url")


def _refuse_new_game_options() -> None:
    """With --game, the options that make a new game would be silently ignored: a usage
    error naming them, as --as without --game is."""
    ctx = click.get_current_context()
    given = [
        param.opts[0]
        for param in ctx.command.params
        if param.name not in GAME_OPTIONS and ctx.get_parameter_source(param.name) is not ParameterSource.DEFAULT
    ]
    if given:
        seat = "; your seat in it is --as NAME" if "--name" in given else ""
        raise click.UsageError(
            f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for a new game: "
            f"--game GAME plays a game that exists{seat}"
        )


def default_name() -> str:
    """The login name, made a valid seat name (no spaces or control characters, at most 40 characters)."""
    try:
        login = getpass.getuser()
    except (OSError, KeyError):
        login = ""
    cleaned = "".join(ch for ch in login if not ch.isspace() and not unshowable(ch))[:MAX_NAME]
    return cleaned or "player"


def _loop(out: Console, session: Session, game_id: str, name: str, token: str) -> bool:
    """Play until the game is over (True) or the player leaves with q or Ctrl-D (False).

    Losing Redis is waited out (:func:`wait_for_redis`); once it is back, play tells what
    happened since the last change seen and reads the seat's view again before asking.
    """
    service = session.client
    cursor = service.last_change_id(game_id)
    view = seat_view(service, game_id, name, token)
    session.witness(game_id)  # a game rolled back since this user last saw it is said first
    names = [s["name"] for s in view["seats"]]
    render_view(out, view, you=view["seat"])
    menu: TurnMenu | None = None
    resync = False
    while view["status"] != "over":
        before = view
        try:
            if resync:
                # A turn sent as Redis went away may be stored: its answer first, so the view
                # read below is not the one it changes. Then what happened since the last
                # change seen (the changes stream keeps its ids across a restart).
                session.service.answered(game_id, RESYNC_WAIT)  # (only Redis is waited out: UNREACHABLE_ERRORS)
                seen, events = _changes(service, game_id, cursor, 0.001)
                resync = False
            elif view.get("to_move") != view["seat"]:
                seen, events = _changes(service, game_id, cursor, 30.0)
            else:
                if menu is None:  # a new view on screen: its menu under it
                    _discard_typeahead()
                    clock = view.get("clock") or {}
                    deadline = clock.get("deadline") if clock.get("seat") == view["seat"] else None
                    menu = TurnMenu(out, view.get("legal", []), deadline)
                    menu.show()
                turn = menu.ask()
                if turn is None:
                    return False
                mark = service.last_change_id(game_id)
                refusal = None
                try:
                    answer = service.play(game_id, name, token, turn)
                    if not answer.applied:
                        refusal = str(answer.reason)
                except Rejected as exc:  # malformed text (or the game over): say why and ask again
                    refusal = str(exc)
                if refusal is not None:
                    menu.show(Text(f"Not allowed: {shown(refusal)}", style="bold red"), menu=False)
                    if not _moved_on(service, game_id, name, token, view):
                        continue
                    # The turn passed while the player chose (their time ran out: RULES.md,
                    # Time): what happened, and the board as it is now.
                    mark = cursor
                menu = None
                # This turn, and the bots' replies the worker may already have folded in.
                seen, events = _changes(service, game_id, mark, 0.001)
            # Views and change notices are written together: a view read after the
            # cursor is at least as new, so if it is not our turn the change that makes
            # it so is still ahead of the cursor and wait_change will see it.
            view = seat_view(service, game_id, name, token)
            session.witness(game_id)
            to_show = view.get("to_move") == view["seat"] or view["status"] == "over"
            if to_show:
                seen, later = _changes(service, game_id, seen, 0.001)  # what led to this view
                events += later
        except UNREACHABLE_ERRORS as lost:
            # Anything typed meanwhile is dropped before the next menu is shown.
            wait_for_redis(session, lost)  # or gives up: the caller says how to come back
            resync = True
            menu = None  # shown again, with the view, once Redis is back
            view = before
            continue
        cursor = seen  # moved on only once told: after an outage, the resync tells from here
        _say(out, _own_draw_named(events, before, view), names)
        if to_show:
            render_view(out, view, you=view["seat"])
    return True


def _moved_on(service: GameClient, game_id: str, name: str, token: str, view: dict[str, Any]) -> bool:
    """Whether the game moved on from ``view`` without the player (a time-out): a refused
    turn then is no reason to ask again from the same menu."""
    fresh = seat_view(service, game_id, name, token)
    return any(fresh.get(key) != view.get(key) for key in ("status", "to_move", "round", "legal"))


def _changes(service: GameClient, game_id: str, cursor: str, timeout: float) -> tuple[str, Events]:
    """The events after ``cursor`` (waiting up to ``timeout``) and the new cursor."""
    change = service.wait_change(game_id, cursor, timeout)
    return (cursor, []) if change is None else change


def _say(out: Console, events: Events, names: list[str]) -> None:
    """Print events as they happen; the end of the game is left to the final view,
    which the loop always shows and which says it in full."""
    for line in describe_events((e for e in events if e.get("type") not in SAID_BY_FINAL_VIEW), names):
        out.print(line)


def _own_draw_named(events: Events, before: dict[str, Any], after: dict[str, Any]) -> Events:
    """``events``, with the card of the player's own unseen draw filled in when their hand tells it.

    The changes stream hides a drawn card from everyone (docs/events.md), the drawer
    included, and play reads nothing else of the log. The seat's own views do show
    its hand, and a hand only ever gains cards by drawing: one unseen draw between two
    views of the same round is the one card the hand gained. Anything less clear-cut
    (two unseen draws, a new deal in between, the card gone again at once) stays
    "a card" rather than a guess; the view that follows shows the hand anyway.
    """
    seat = after["seat"]
    own = [e for e in events if e.get("type") == "CardDrawn" and e.get("seat") == seat]
    unseen = [e for e in own if "card" not in e]
    gained = set(after.get("hand", [])) - set(before.get("hand", [])) - {e["card"] for e in own if "card" in e}
    if len(unseen) != 1 or len(gained) != 1 or after.get("round") != before.get("round"):
        return events
    return [dict(e, card=gained.pop()) if e is unseen[0] else e for e in events]


def _discard_typeahead() -> None:
    """Drop what was typed while others moved: a "1" meant for the list shown before their
    turns would otherwise be played against this one, a turn the player never saw."""
    if sys.stdin.isatty():
        with contextlib.suppress(termios.error, OSError):
            termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)


# The rows of the menu, in order: a label, and what each step of that kind is called in it.
MENU_ROWS: tuple[tuple[str, str], ...] = (
    ("p", "Play to palette"),
    ("c", "Discard to Canvas"),
    ("7c", "7: to Canvas"),
    ("7d", "7: onto deck"),
    ("1", "1: take to deck"),
)
OTHER_LABEL = "Or"
LABEL_WIDTH = 18
# What the steps without a card are called in the menu (the notation is the help's).
OTHER_NAMES = {"": "end turn", "draw": "draw a card", "...": "stop: see the draw", "end": "end turn", "fold": "fold"}
BACK = "back"


class TurnMenu:
    """The player's turn, chosen a step at a time below the board, which stays on screen.

    The legal turns (up to 123 with every variant) do not fit under the board in 80×24,
    so the menu shows only the next steps: the cards to play, to discard, the actions,
    ``end turn`` and ``fold``; a step that leaves one way to finish the turn sends it.
    The steps chosen so far are in the prompt, in notation. Typed notation is a whole
    turn, as before. On a terminal, the menu and the line under it are redrawn in place
    (a refused turn is one line, not the list again); otherwise lines are only added.
    """

    def __init__(self, out: Console, legal: list[str], deadline: int | None = None) -> None:
        self.out = out
        self.turns = [tuple(t.split()) for t in legal]
        # A timed game: when the player's time is up (Redis ms), for the time left in the prompt
        self.deadline = deadline
        self.terminal = out.is_terminal and sys.stdin.isatty()
        self.prefix: tuple[str, ...] = ()
        self.options: list[str] = []  # the next steps numbered on screen, in order
        self.drawn = 0  # lines of the terminal written below the board (menu, message, prompt)

    # ------------------------------------------------------------------ choices

    def _next_steps(self) -> list[str]:
        """The distinct steps that may follow the prefix ("" when the prefix is a whole turn)."""
        n = len(self.prefix)
        steps: list[str] = []
        for turn in self.turns:
            if turn[:n] == self.prefix:
                step = turn[n] if len(turn) > n else ""
                if step not in steps:
                    steps.append(step)
        return steps

    def _ordered(self, steps: list[str]) -> list[list[str]]:
        """The steps in the menu's rows: one row per kind of card step, then the others."""
        rows = [[s for s in steps if s.partition(":")[0] == kind and ":" in s] for kind, _ in MENU_ROWS]
        rows.append([s for s in steps if ":" not in s] + ([BACK] if self.prefix else []))
        return rows

    def _lines(self) -> list[Text]:
        """The menu, numbered in reading order; sets :attr:`options` to match."""
        rows = self._ordered(self._next_steps())
        labels = [label for _, label in MENU_ROWS] + [OTHER_LABEL]
        self.options = []
        head = f"After {' '.join(self.prefix)}: a number (0 goes back)" if self.prefix else "Choose a number"
        lines = [Text(f"{head}, or type a whole turn (? for help):", style="dim")]
        width = max(self.out.width - 1, 40)
        for label, row in zip(labels, rows, strict=True):
            line = Text(f"{label:<{LABEL_WIDTH}}")
            for step in row:
                self.options.append(step)
                item = self._item(len(self.options), step)
                if line.cell_len + item.cell_len > width:
                    lines.append(line)
                    line = Text(" " * LABEL_WIDTH)
                line.append_text(item)
            if row:
                lines.append(line)
        return lines

    def _item(self, number: int, step: str) -> Text:
        item = Text(f"{number:>2}. ")
        if ":" in step:
            item.append_text(card_text(step.partition(":")[2]))
        else:
            item.append("back (0)" if step == BACK else OTHER_NAMES.get(step, step))
        item.append("  ")
        return item

    def _choose(self, step: str) -> str | None:
        """Take a step of the menu: the whole turn once only one is left, else None (a deeper menu)."""
        if step == BACK:
            self.prefix = self.prefix[:-1]
            return None
        if step == "":  # end turn: the steps so far are a whole turn
            return " ".join(self.prefix)
        chosen = (*self.prefix, step)
        finishing = [t for t in self.turns if t[: len(chosen)] == chosen]
        if len(finishing) == 1:
            return " ".join(finishing[0])
        self.prefix = chosen
        return None

    # ------------------------------------------------------------------ screen

    def _rows(self, line: Text) -> int:
        """Rows a line takes on the terminal, which wraps it (the console never does: soft_wrap)."""
        return max(1, -(-line.cell_len // max(self.out.width, 1)))

    def _erase(self) -> None:
        """Move back over what this menu wrote below the board, and clear it (terminal only)."""
        if self.terminal and self.drawn:
            self.out.file.write(f"\x1b[{self.drawn}A\r\x1b[J")
            self.out.file.flush()
        self.drawn = 0

    def show(self, message: Text | None = None, *, menu: bool = True, lines: list[Text] | None = None) -> None:
        """Draw the menu (or ``lines``) and ``message`` under the board: in place on a terminal;
        elsewhere only what is new (the menu when asked for, the message)."""
        body = lines if lines is not None else self._lines()
        if self.terminal:
            self._erase()
            shown_lines = [*body, *([message] if message is not None else [])]
        else:
            shown_lines = [*(body if menu else []), *([message] if message is not None else [])]
        for line in shown_lines:
            self.out.print(line)
            self.drawn += self._rows(line)

    def ask(self) -> str | None:
        """The player's turn (a legal turn, or any text for the worker to judge); None to leave."""
        while True:
            if self.terminal and self.deadline is not None:
                reply = self._read_clocked(self.deadline)
            else:
                reply = self._read_line()
            if reply is None:
                return None
            turn = self._reply(reply.strip())
            if turn is not None:
                return None if turn == "q" else turn

    def _prompt(self, left: int | None) -> str:
        """``Your turn > ``, with the steps chosen so far and, in a timed game, the time left."""
        time_left = "" if left is None else f" ({clock_text(left)} left)"
        return f"Your turn{time_left}: {' '.join(self.prefix)} > " if self.prefix else f"Your turn{time_left} > "

    def _read_line(self) -> str | None:
        """A line with ``input()`` (the time left, if any, as the prompt is shown); None at end of input."""
        prompt = self._prompt(None if self.deadline is None else self.deadline - int(time.time() * 1000))
        # Not click.prompt: it turns both Ctrl-C and Ctrl-D into click.Abort, and
        # they end differently (Ctrl-C is an interruption, exit 130; Ctrl-D is q).
        try:
            reply = input(prompt)
        except EOFError:
            return None
        self.drawn += max(1, -(-(len(prompt) + len(reply)) // max(self.out.width, 1)))
        return reply

    def _read_clocked(self, deadline: int) -> str | None:
        """A line on a terminal while the player's clock runs: the prompt counts down in place,
        and at 10 s or less a warning is printed once above it, the line typed kept (issue #18)."""
        reader = ClockedInput(
            self.out.file,
            self.out.width,
            deadline,
            self._prompt,
            lambda left: f"Hurry: {clock_text(left)} left for your turn.",
            self._paint,
            sys.stdin.fileno(),
        )
        reply = reader.read()
        self.drawn += reader.rows
        return reply

    def _paint(self, text: str) -> str:
        """``text`` in bold red, as this console would print it (plain under NO_COLOR)."""
        with self.out.capture() as captured:
            self.out.print(Text(text, style="bold red"), end="")
        return captured.get()

    def _reply(self, reply: str) -> str | None:
        """What a reply does: a turn to send, "q" to leave, or None after redrawing the menu."""
        if reply in ("q", "quit", "exit"):
            return "q"
        if not reply or reply in ("l", "list"):
            self.show()
        elif reply in ("?", "h", "help"):
            self.show(lines=[Text(line) for line in HELP.splitlines()])
        elif reply in ("0", "b", BACK):
            self.prefix = self.prefix[:-1]
            self.show(menu=True)
        else:
            index = whole_number(reply)
            if index is None:
                return reply
            if not 1 <= index <= len(self.options):
                self.show(Text(f"Choose 1 to {len(self.options)}, or type a turn."), menu=False)
                return None
            turn = self._choose(self.options[index - 1])
            if turn is not None:
                return turn
            self.show()
        return None


COMMANDS = [play]
