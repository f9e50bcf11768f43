"""Options and helpers shared by every ``red7`` command."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import shlex
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, TypeVar

import click
import redis
from click.core import ParameterSource
from rich.console import Console

from red7es.bots.base import BotError
from red7es.cards import CardError
from red7es.service.client import NoWorker, ServiceError
from red7es.service.codec import CorruptEvent
from red7es.service.connection import UNREACHABLE_ERRORS, UnreachableError, masked_url
from red7es.service.http_client import is_http_url
from red7es.service.names import escaped, shown, unshowable
from red7es.service.records import RecordError
from red7es.service.replay import ReplayError
from red7es.service.store import NoSuchGame
from red7es.service.tokens import key_problem
from red7es.steps import StepError
from red7es.variant import VariantError

from .session import Session

__all__ = [
    "reserved_keys",
    "STDIN",
    "STDOUT",
    "Red7Group",
    "Seconds",
    "closed_pipe_ends_quietly",
    "console",
    "error_line",
    "emit_json",
    "exit_on_ctrl_c",
    "json_option",
    "pass_session",
    "player_url_option",
    "secret_option",
    "token_option",
    "url_option",
    "web_option",
    "seat_link",
]

F = TypeVar("F", bound=Callable[..., Any])

STDOUT = "-"  # an output FILE of "-" is stdout (docs/cli.md)
STDIN = "-"  # and an input FILE of "-" is stdin

_FRIENDLY = (
    CorruptEvent,
    RecordError,
    ReplayError,
    ServiceError,
    UnreachableError,
    BotError,
    VariantError,
    CardError,
    StepError,
    OSError,
)


def _tournament_error(exc: Exception) -> str | None:
    """The one line for a tournament error, or None. Tournament code is only imported
    by tournament commands (`red7 tournament ...`, `red7 audit --tournament`): if it
    is not loaded, the error cannot be one of its own."""
    if "red7es.tournament" not in sys.modules:
        return None
    from red7es.tournament import NoSuchTournament, TournamentCorrupt, TournamentError

    if isinstance(exc, NoSuchTournament):
        return f"no tournament {exc.tournament!r} (list them with: red7 tournament list)"
    if isinstance(exc, TournamentError | TournamentCorrupt):
        return str(exc)
    return None


def stop_writing() -> NoReturn:
    """Whoever read stdout has gone (``red7 replay G | head -1``): end quietly with exit 0.

    The reader chose to stop, so it is not a failure to report: nothing is said, and
    the exit code is 0 rather than the 141 of a program killed by SIGPIPE (docs/cli.md).
    As in Python's "Note on SIGPIPE" (signal module docs), stdout is pointed at
    /dev/null first, or the interpreter's last flush of it would fail again and print
    "Exception ignored ... BrokenPipeError" on the way out.
    """
    with contextlib.suppress(OSError, ValueError):  # no file descriptor (e.g. CliRunner's capture)
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    raise SystemExit(0)


@contextlib.contextmanager
def closed_pipe_ends_quietly() -> Iterator[None]:
    """A BrokenPipeError inside the block ends the program as :func:`stop_writing` does."""
    try:
        yield
    except BrokenPipeError:
        stop_writing()


class Red7Group(click.Group):
    """Turns the service's errors into one clear line and exit code 1, Ctrl-C into 130.

    A closed stdout ends the command quietly (:func:`stop_writing`), also while the
    options are parsed (``--help`` prints then): click would say nothing and exit 1.
    """

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        with closed_pipe_ends_quietly():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            stop_writing()
        except KeyboardInterrupt:
            # click would print "Aborted!" and exit 1, as if the command had failed;
            # play and tournament run say what stays open first (exit_on_ctrl_c)
            click.echo("\nInterrupted.", err=True)
            raise SystemExit(130) from None
        except click.ClickException as exc:
            # An error line can quote a seat name, or a reason a worker wrote for a turn
            # another client sent: nothing in it may drive the terminal (red7es.service.names).
            exc.message = shown(exc.message)  # type: ignore[misc]  # Final only in click's annotations
            raise
        except Exception as exc:
            line = error_line(exc)
            if line is None:  # not the service's to say in a line: a bug, with its traceback
                raise
            raise click.ClickException(shown(line)) from None


def error_line(exc: Exception) -> str | None:
    """The one line ``red7`` reports an error in (after ``Error:``), or None for an
    error that is none of the service's: a bug, to be shown with its traceback."""
    if isinstance(exc, click.ClickException):
        return exc.format_message()
    # The commands a line gives to paste reach the same Redis: with the --url typed, if one was
    if isinstance(exc, NoSuchGame):
        return f"no game {exc.game_id!r} (list games with: {red7_line('games', url=typed_url())})"
    if isinstance(exc, NoWorker):
        return exc.starting(red7_line("worker", url=typed_url()))
    if isinstance(exc, _FRIENDLY):
        return str(exc)
    if isinstance(exc, UNREACHABLE_ERRORS):
        ctx = click.get_current_context(silent=True)
        session = ctx.meta.get("red7.session") if ctx is not None else None  # set by --url in the command's context
        where = session.endpoint.shown if session is not None and "endpoint" in session.__dict__ else "Redis"
        return f"lost the connection to Redis at {where}: {str(exc).splitlines()[0]}"
    if isinstance(exc, redis.exceptions.ResponseError):
        return f"Redis refused a command: {exc}"
    if isinstance(exc, redis.exceptions.RedisError):  # e.g. a reply that is not Redis protocol
        return f"Redis failed: {(str(exc).strip() or type(exc).__name__).splitlines()[0]}"
    return _tournament_error(exc)


TYPED_URL = "red7.typed_url"
TYPED_URL_FILE = "red7.typed_url_file"  # set by secret_option

# Secrets given on the command line are in every process listing (`ps`, /proc/PID/cmdline),
# which every local user can read while the command runs; a process's environment and
# a file readable by its owner only are not.
IN_PS = "seen by every local user in ps while red7 runs"


def has_password(url: str) -> bool:
    """Whether ``url`` holds a password (``redis://:secret@host``, ``?password=secret``)."""
    return masked_url(url) != url


def secret_option(
    *decls: str, envvar: str, file_envvar: str, metavar: str, what: str, help: str, secret: Callable[[str], bool]
) -> Callable[[F], F]:
    """``--NAME VALUE`` (or ``$envvar``) and ``--NAME-file FILE`` (or ``$file_envvar``), for a
    value that may be a secret: the command receives the one given as ``NAME``.

    ``--NAME-file -`` reads stdin. Typed on the command line, the value is in ``ps`` for
    every local user to read, so a value that ``secret()`` finds secret is warned about
    in one line on stderr; the environment and a file are not. A value typed on the
    command line beats one from the environment; two given the same way are a usage error.
    """
    flag = decls[0]
    name = flag.lstrip("-").replace("-", "_")
    file_flag = f"{flag}-file"
    file_name = f"{name}_file"

    def decorate(fn: F) -> F:
        @click.option(*decls, name, envvar=envvar, metavar=metavar, help=help)
        @click.option(
            file_flag,
            file_name,
            envvar=file_envvar,
            metavar="FILE",
            help=f"Read the {what} from FILE's first line, - for stdin (or ${file_envvar}): unlike {flag}, "
            f"not {IN_PS}.",
        )
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            ctx = click.get_current_context()
            value, path = kwargs.pop(name), kwargs.pop(file_name)
            typed = ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
            typed_file = ctx.get_parameter_source(file_name) is ParameterSource.COMMANDLINE
            if value is not None and path is not None and typed == typed_file:
                given = f"{flag} and {file_flag}" if typed else f"${envvar} and ${file_envvar}"
                raise click.UsageError(f"{given} both give the {what}: give one")
            if path is not None and not typed:
                value = read_secret(path, file_flag, what)
                if typed_file:  # repeated in the command lines printed to paste (red7_line)
                    ctx.meta[f"red7.typed_{file_name}"] = path
            elif typed and value is not None and secret(value):
                click.echo(f"Warning: the {what} in {flag} is {IN_PS}: use ${envvar} or {file_flag}.", err=True)
            kwargs[name] = value
            return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def read_secret(path: str, flag: str, what: str) -> str:
    """The first line of file ``path`` (stdin for ``-``), stripped: a usage error if unreadable or empty."""
    try:
        if path == STDIN:
            line = sys.stdin.readline()
        else:
            with open(path, encoding="utf-8") as handle:
                line = handle.readline()
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(
            f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}", param_hint=flag
        ) from None
    if not line.strip():
        raise click.BadParameter(
            f"{'stdin' if path == STDIN else path} holds no {what} on its first line", param_hint=flag
        )
    return line.strip()


def url_option(fn: F) -> F:
    """``--url`` on every command that talks to Redis (rq's convention), and ``--url-file``:
    an operator's command, which a gateway's ``http(s)://`` URL cannot serve (a usage error)."""
    return _url_option(fn, gateway=False)


def player_url_option(fn: F) -> F:
    """``--url`` for a player's command: a Redis URL, or a gateway's ``http(s)://`` URL,
    whose scheme makes the command talk HTTP (docs/cli.md, red7es.service.transport)."""
    return _url_option(fn, gateway=True)


def _url_option(fn: F, *, gateway: bool) -> F:
    @secret_option(
        "--url",
        "-u",
        envvar="REDIS_URL",
        file_envvar="RED7_URL_FILE",
        metavar="URL",
        what="Redis URL",
        help="Redis URL, e.g. redis://localhost:6379/0 (default: $REDIS_URL, else the embedded Redis); "
        f"a password in it is {IN_PS}: a warning says so."
        + (" A player's commands also take a gateway's http(s)://HOST:PORT URL." if gateway else ""),
        secret=has_password,
    )
    @click.pass_context
    @functools.wraps(fn)
    def wrapper(ctx: click.Context, url: str | None, *args: Any, **kwargs: Any) -> Any:
        if not gateway and is_http_url(url):
            raise click.UsageError(
                f"{ctx.command_path} is an operator's command: it needs a Redis URL (redis://...), "
                f"not a gateway's ({masked_url(url or '')}); players' commands take one"
            )
        ctx.obj = ctx.meta["red7.session"] = Session(url)
        ctx.meta[TYPED_URL] = typed_url()  # for the command lines of its error, said once its context is gone
        return ctx.invoke(fn, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def token_option(help: str) -> Callable[[F], F]:
    """``--token`` and ``--token-file`` (``$RED7_TOKEN``, ``$RED7_TOKEN_FILE``): a seat's token."""
    return secret_option(
        "--token",
        envvar="RED7_TOKEN",
        file_envvar="RED7_TOKEN_FILE",
        metavar="TOKEN",
        what="seat token",
        help=f"{help} (default: $RED7_TOKEN); {IN_PS}.",
        secret=lambda token: False,  # a seat's, not the whole Redis: the help says it
    )


class Seconds(click.FloatRange):
    """A finite number of seconds, 0 to ``max``: a usage error otherwise (exit 2).

    click's FloatRange lets ``nan`` through (no comparison with it is true), and a
    huge value or ``inf`` would overflow a wait's milliseconds.
    """

    def __init__(self, max: float = 365 * 24 * 3600) -> None:  # a year
        super().__init__(min=0, max=max)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return super().convert(number, param, ctx)


def _web_url(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """An http(s) address of a gateway, without a fragment (the link adds its own)."""
    if value is None:
        return None
    scheme, _, rest = value.partition("://")
    if scheme not in ("http", "https") or not rest.strip("/") or "#" in value or any(c.isspace() for c in value):
        raise click.BadParameter(f"{value!r} is not a gateway's address such as http://127.0.0.1:8007")
    return value.rstrip("/")


def web_option(fn: F) -> F:
    """``--web URL``: also print the link that opens a seat taken here in the web table."""
    return click.option(
        "--web",
        metavar="URL",
        envvar="RED7_WEB",
        callback=_web_url,
        help="Also print a link that opens each seat you take in the web table of the gateway at URL "
        "(e.g. http://127.0.0.1:8007); the token is in the link's #fragment, which browsers never send.",
    )(fn)


def seat_link(web: str, game_id: str, seat: int, token: str) -> str:
    """The web table's link for a seat held with ``token`` (docs/web.md): the page keeps the token."""
    return f"{web}/g/{game_id}#seat={seat}&token={token}"


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON (its shape: red7 help json-outputs).")(fn)


pass_session = click.make_pass_decorator(Session)


PIPE_WIDTH = 200  # columns for output that is not a terminal (rich would assume 80)


class _Console(Console):
    """rich's Console, but a closed pipe ends the command like every other output does.

    rich catches the BrokenPipeError itself and exits 1, as if the command had failed.
    """

    def on_broken_pipe(self) -> None:
        stop_writing()


def console(stderr: bool = False) -> Console:
    """A console on stdout (or stderr): colour only on a terminal and without NO_COLOR.

    Lines are never wrapped, and output that is not a terminal (a pipe, a file) gets
    room for wide tables, so a game id or a column heading is not cut to fit 80 columns.
    """
    # Names and titles are printed as typed: never read as markup ("[/]") or emoji codes.
    out = _Console(highlight=False, soft_wrap=True, stderr=stderr, markup=False, emoji=False)
    if not out.is_terminal and "COLUMNS" not in os.environ:
        out.width = PIPE_WIDTH
    return out


@contextlib.contextmanager
def exit_on_ctrl_c(farewell: Callable[[], None]) -> Iterator[None]:
    """Ctrl-C inside the block: ``farewell()`` says what is left, then exit code 130.

    130 (128 + SIGINT) is what shells report for a program stopped by Ctrl-C, so a
    script can tell an interrupted command from one that finished (0) or failed (1);
    left to click, Ctrl-C would print "Aborted!" and exit 1.
    """
    try:
        yield
    except KeyboardInterrupt:
        farewell()
        raise SystemExit(130) from None


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True, default=str))


def red7_line(*words: str, url: str | None) -> str:
    """A ``red7`` command line for people to paste: every word shell-quoted (a seat may be
    named ``o'neil`` or ``$(x)``), and ``--url`` (or ``--url-file``) when one was typed (:func:`typed_url`)."""
    return " ".join(map(_quoted, ["red7", *words, *_connection_words(url)]))


def _connection_words(url: str | None) -> tuple[str, ...]:
    """``--url URL`` when one was typed, else ``--url-file FILE`` when that was typed."""
    if url:
        return ("--url", url)
    ctx = click.get_current_context(silent=True)
    path: str | None = ctx.meta.get(TYPED_URL_FILE) if ctx is not None else None
    return ("--url-file", path) if path else ()


def _quoted(word: str) -> str:
    """A word shell-quoted; one holding characters a terminal acts on (a seat name another
    client chose) in ANSI-C quotes, ``$'\\x1bred'``: escaped on screen, itself once pasted
    into bash or zsh."""
    if not any(map(unshowable, word)):
        return shlex.quote(word)
    return "$'" + "".join(escaped(ch) if unshowable(ch) else "\\" + ch if ch in "\\'" else ch for ch in word) + "'"


def typed_url() -> str | None:
    """The ``--url`` typed on this command line, for the commands it prints to reach the same
    Redis when pasted. One taken from $REDIS_URL is not repeated: the shell has it already."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return None
    if "url" not in ctx.params:  # the group, saying a command's error: what the command found (meta is shared)
        typed: str | None = ctx.meta.get(TYPED_URL)
        return typed
    url: str | None = ctx.params.get("url")
    return url if ctx.get_parameter_source("url") is ParameterSource.COMMANDLINE else None


def reserved_keys(entries: tuple[str, ...], people: tuple[str, ...], whose: str = "person's seat") -> dict[str, str]:
    """``--reserve NAME=KEY`` entries as {name: key}; a usage error (exit 2) for an entry that
    names no person's seat, a seat twice, or a key that is not 64 lower-case hex digits."""
    keys: dict[str, str] = {}
    for entry in entries:
        name, eq, key = entry.rpartition("=")
        if not eq or not name:
            raise click.UsageError(f"--reserve {entry!r}: give NAME=KEY")
        if name not in people:
            raise click.UsageError(f"--reserve {entry!r}: {name!r} is no {whose} (give it with -p)")
        if name in keys:
            raise click.UsageError(f"--reserve: seat {name!r} is given twice")
        if problem := key_problem(key):
            raise click.UsageError(f"--reserve {name}=...: the key {problem}")
        if key in keys.values():
            raise click.UsageError(f"--reserve {name}=...: that key holds another seat already: one seat per key")
        keys[name] = key
    return keys
