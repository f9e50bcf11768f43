"""Replay, export, import and audit: games as records anyone can check.

Commands that take a FILE read it without Redis (they never open a connection),
so an exported game can be replayed and audited on any machine.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
import redis
from rich.console import Console
from rich.progress import Progress
from rich.text import Text

from red7es.service.audit import INCOMPLETE, PASS, AuditReport, audit_as, audit_game, audit_record, unexportable
from red7es.service.client import UnreadableKey
from red7es.service.codec import decode_log
from red7es.service.connection import UNREACHABLE_ERRORS
from red7es.service.events import SeatJoined
from red7es.service.record_files import FORMATS, Unreadable, detect_format, read_all, read_each, write_all
from red7es.service.records import Record, RecordError, import_record
from red7es.service.replay import Replay, ReplayError, view_of
from red7es.service.store import Keys, valid_game_id
from red7es.service.tokens import public_key
from red7es.wording import counted

from .commands_game import check_token
from .options import (
    STDIN,
    STDOUT,
    console,
    emit_json,
    error_line,
    json_option,
    pass_session,
    player_url_option,
    red7_line,
    token_option,
    typed_url,
    url_option,
)
from .render import describe_events, render_view
from .session import Session

__all__ = ["COMMANDS"]

_T = TypeVar("_T")


def is_file(source: str) -> bool:
    """Whether GAME|FILE names a file: a path, a name with an extension, or an existing file that is no game id.

    A game id is lower-case letters, digits and dashes: ``game.jsonl``, ``foo.txt`` or
    ``records/g1`` can only be file names, so a missing one is "cannot read foo.txt:
    No such file or directory", not "no game 'foo.txt'".
    """
    if source == STDIN or "." in source or os.sep in source or (os.altsep and os.altsep in source):
        return True
    return os.path.isfile(source) and not valid_game_id(source)


def _read_each(file: str, fmt: str | None) -> Iterator[Record | Unreadable]:
    """The records of FILE, or of the standard input for ``-`` (named ``<stdin>`` in messages)."""
    return read_each(_named(file), fmt, data=_piped(file))


def _read_all(file: str, fmt: str | None = None) -> list[Record]:
    """:func:`_read_each`, refusing a file that holds any record that cannot be read (replay, import)."""
    return _holding(read_all(_named(file), fmt, data=_piped(file)), file)


def _named(file: str) -> str:
    """FILE as messages name it: ``-`` is ``<stdin>``."""
    return "<stdin>" if file == STDIN else file


def _piped(file: str) -> bytes | None:
    """The bytes on stdin when FILE is ``-`` (None: read the file itself)."""
    return sys.stdin.buffer.read() if file == STDIN else None


def _holding(records: list[_T], file: str) -> list[_T]:
    """The records of a file; a file with none is an error, not an empty success."""
    if not records:
        raise click.ClickException(f"{_named(file)} holds no game")
    return records


def _pick(records: list[Record], game_id: str | None, source: str) -> Record:
    if game_id is not None:
        for record in records:
            if record.game_id == game_id:
                return record
        raise click.ClickException(f"{source} holds no game {game_id!r}")
    if len(records) != 1:
        ids = ", ".join(r.game_id for r in records[:5]) + (", ..." if len(records) > 5 else "")
        raise click.ClickException(f"{source} holds {len(records)} games ({ids}): choose one with --game")
    return records[0]


# ---------------------------------------------------------------------------- replay


def format_option(fn: Any) -> Any:
    """``--format`` of a record FILE that is read (replay, audit, import): the same option everywhere."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        help="Record format of FILE (default: from its name, else from its first bytes).",
    )(fn)


def _format_for_files(fmt: str | None, source: str | None) -> None:
    if fmt is not None and not (source is not None and is_file(source)):
        raise click.UsageError("--format is for a record FILE")


@click.command()
@click.argument("source", metavar="GAME|FILE")
@click.option("--at", "at", type=int, metavar="N", help="Right after event N (default: the last; -1 is the last).")
@click.option("--as", "as_name", metavar="NAME", help="What this seat saw: its own hand, no other.")
@token_option("The seat's token, for --as on a game that is not over")
@click.option("--step", is_flag=True, help="Walk turn by turn: Enter for the next turn, q to quit.")
@click.option(
    "--position",
    "as_position",
    is_flag=True,
    help="Print the position in one line (red7 help positions): the whole game once it is over, else the view.",
)
@click.option("--game", "game_id", metavar="GAME", help="Which game of a FILE that holds several.")
@format_option
@click.option(
    "--allow-unverified",
    is_flag=True,
    help="Exit 0 even when the log does not verify (the warning is printed all the same).",
)
@json_option
@player_url_option
@pass_session
def replay(
    session: Session,
    source: str,
    at: int | None,
    as_name: str | None,
    token: str | None,
    step: bool,
    as_position: bool,
    game_id: str | None,
    fmt: str | None,
    allow_unverified: bool,
    as_json: bool,
) -> None:
    """Show a game as it was after any event, from its log alone.

    GAME is a game in Redis; FILE an exported record (read without Redis; - is stdin).
    With --as, the view is that seat's: its own hand and nothing hidden from it,
    even once the game is over (no token needed then; a running game needs the
    seat's token). --json prints the same view the service publishes.

    A log that does not verify (an event missing, a broken hash chain, a fact the
    rules do not give) is still shown as far as it can be folded (at most up to the
    last event that folds), after a line on stderr saying why; the exit code is then
    1, unless --allow-unverified.

    --position prints the position in the notation of red7 help positions instead of
    the view: the whole game once the game is over, else what --as's seat (or a
    spectator) sees, hidden cards as ?.

    \b
    Examples:
        red7 replay 3f9a2c1b --at 40 --as alice
        red7 replay game.jsonl --step
        red7 replay game.jsonl --at 12 --position
    """
    if step and as_json:
        raise click.UsageError("--step walks in the terminal; it cannot be combined with --json")
    if step and as_position:
        raise click.UsageError("--step walks in the terminal; --position prints one position")
    if step and source == STDIN:
        raise click.UsageError("--step reads Enter from stdin, so the record cannot come from there: give a FILE")
    _format_for_files(fmt, source)
    game = _load(session, source, game_id, fmt)
    seat = None if as_name is None else game.seat_of(as_name)
    if seat is not None and not game.over:
        _check_token(session, game, seat, token)
    problem = game.problem()
    unverified = None
    if problem is not None:
        audit_it = red7_line("audit", source, url=None if is_file(source) else typed_url())
        unverified = f"this log does not verify ({problem}): run {audit_it}"
    try:
        # A damaged log is shown as far as it can be folded: up to event `at`, or to the last event before it that folds
        place, table, stopped = (game.point(at), None, None) if step else game.fold(at)
    except ReplayError as exc:
        raise click.ClickException(str(exc) if unverified is None else f"{exc}; {unverified}") from None
    if stopped is not None:
        unverified = stopped if unverified is None else f"{stopped}; {unverified}"
    _warn(unverified, allow_unverified)
    if table is None:
        _step(game, at, seat)
    elif as_position:
        # the whole game only once its seed is out: before, the log's hidden cards stay hidden
        text = table.game.position() if game.over and seat is None else table.game.view_position(seat)
        if as_json:
            emit_json({"position": text})
        else:
            click.echo(text)
    else:
        _show_replay(game, place, view_of(table, game.seqs[place] + 1, seat), seat, as_json)
    if unverified is not None and not allow_unverified:
        raise SystemExit(1)


def _warn(unverified: str | None, allowed: bool) -> None:
    """The one line for a log that does not verify: an error (exit 1 once shown) unless allowed."""
    if unverified is not None:
        click.echo(f"{'warning' if allowed else 'Error'}: {unverified}", err=True)


def _show_replay(game: Replay, place: int, view: dict[str, Any], seat: int | None, as_json: bool) -> None:
    if as_json:
        emit_json(view)
        return
    out = console()
    event = type(game.events[place]).__name__
    out.print(
        Text(
            f"Replay of game {game.game_id} after event {game.seqs[place]} ({event}; events {game.numbers()})",
            style="dim",
        )
    )
    render_view(out, view, you=seat)


def _load(session: Session, source: str, game_id: str | None, fmt: str | None) -> Replay:
    if is_file(source):
        record = _pick(_read_all(source, fmt), game_id, _named(source))
    elif game_id is not None:
        raise click.UsageError(f"--game picks a game of a FILE; {source} is a game in Redis already")
    else:
        record = session.client.record(source)  # one consistent read, with the store's version and head
    return Replay(decode_log(e.raw for e in record.events), version=record.version, head=record.head)


def _check_token(session: Session, game: Replay, seat: int, token: str | None) -> None:
    """A running game's seat view shows a hand: only its holder may see it."""
    name = game.names[seat]
    if game.created.seats[seat].is_bot:
        raise click.ClickException(
            f"game {game.game_id} is not over: {name} is a bot, whose hand nobody sees until the end"
        )
    token = token or session.credentials.token(game.game_id, name)
    if not token:
        raise click.ClickException(
            f"game {game.game_id} is not over: replaying it as {name} needs {name}'s token (--token, or hold the seat)"
        )
    check_token(token, [e.key for e in game.events if isinstance(e, SeatJoined) and e.seat == seat], name, game.game_id)


def _step(game: Replay, at: int | None, seat: int | None) -> None:
    out = console()
    names = game.names
    try:
        for n, (turn, table) in enumerate(game.walk(at)):
            if n and not _next(out):
                return
            for line in describe_events(game.visible_events(turn, seat), names):
                out.print(line)
            last = game.seqs[turn.last]
            out.print(Text(f"after event {last} (events {game.numbers()})", style="dim"))
            render_view(out, view_of(table, last + 1, seat), you=seat)
    except ReplayError as exc:  # a log that does not verify, as the line before the walk said
        out.print(Text(f"The walk stops here: {exc}.", style="bold"))
        return
    out.print(Text("End of the log.", style="bold"))


def _next(out: Console) -> bool:
    """Wait for Enter (go on) or q (stop); end of input stops too."""
    out.print(Text("Enter: next turn · q: quit", style="dim"))
    if sys.stdin.isatty():
        key = click.getchar()
        return key not in ("q", "Q", "\x1b", "\x03", "\x04")
    line = sys.stdin.readline()
    return bool(line) and not line.strip().lower().startswith("q")


# ---------------------------------------------------------------------------- export


@click.command()
@click.argument("games", nargs=-1, required=True, metavar="GAME...")
@click.option(
    "--output", "-o", required=True, metavar="FILE", help="The record file to write (.jsonl or .msgpack; '-': stdout)."
)
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), help="Record format (default: from FILE's extension; stdout: jsonl)."
)
@click.option("--unfinished", is_flag=True, help="Also export games not over (their records show every hand).")
@json_option
@player_url_option
@pass_session
def export(
    session: Session, games: tuple[str, ...], output: str, fmt: str | None, unfinished: bool, as_json: bool
) -> None:
    """Write games from Redis to a record file that anyone can audit offline.

    The record holds every command and every log event byte for byte, so the
    hash chain, the signatures and the deals (from the revealed seed) can be
    checked without Redis (red7 help records). Several games go into one file.
    With -o -, the record goes to stdout and what was exported is said on stderr.

    \b
    Examples:
        red7 export 3f9a2c1b -o game.jsonl
        red7 export 3f9a2c1b -o - | gzip > game.jsonl.gz
    """
    to_stdout = output == STDOUT
    if to_stdout and as_json:
        raise click.UsageError("-o - writes the record to stdout, where --json would go too: give one of them")
    fmt = fmt or ("jsonl" if to_stdout else None)
    if detect_format(output, fmt) is None:
        raise click.ClickException(f"cannot tell the format of {output}: name it .jsonl or .msgpack, or give --format")
    if unfinished and session.remote:
        raise click.UsageError("--unfinished: a gateway serves the records of finished games only")
    for game in dict.fromkeys(games) if session.remote else ():  # said as on Redis, before the gateway's 409
        if session.client.view(game).get("status") != "over":
            _not_over(game)
    records = [session.client.record(game) for game in dict.fromkeys(games)]  # each game once
    for record in records:
        if not record.over and not unfinished:
            _not_over(record.game_id)
    if to_stdout:
        _write_stdout(records, fmt)
    else:
        write_all(records, output, fmt)
    summary = [
        {"game": r.game_id, "status": r.status, "events": len(r.events), "commands": len(r.commands)} for r in records
    ]
    if as_json:
        emit_json({"file": output, "format": detect_format(output, fmt), "games": summary})
        return
    for s in summary:
        click.echo(
            f"Exported game {s['game']} ({s['status']}, {s['events']} events, {s['commands']} commands) "
            f"to {'stdout' if to_stdout else output}.",
            err=to_stdout,  # stdout holds the record
        )


def _not_over(game_id: str) -> NoReturn:
    raise click.ClickException(
        f"game {game_id} is not over: its record would reveal every hand (export it anyway with --unfinished)"
    )


def _write_stdout(records: list[Record], fmt: str | None) -> None:
    """The records on stdout, byte for byte what a file would hold.

    ``write_all`` writes files only (atomically, through a temporary file), so the
    record is written to one in a temporary directory and copied out: one writer
    of the format, not a second one to keep in step with it.
    """
    with tempfile.TemporaryDirectory(prefix="red7-export-") as directory:
        path = Path(directory) / "record"
        write_all(records, path, fmt)
        sys.stdout.flush()  # anything written as text goes first
        with path.open("rb") as record:
            shutil.copyfileobj(record, sys.stdout.buffer)
        sys.stdout.buffer.flush()


# ---------------------------------------------------------------------------- import


@click.command("import")
@click.argument("file", metavar="FILE")
@format_option
@json_option
@url_option
@pass_session
def import_(session: Session, file: str, fmt: str | None, as_json: bool) -> None:
    """Store the games of a record file in Redis, after they pass their audit.

    A record that fails its audit (or a game not over) is refused, as is a game
    id that already exists. Imported games can be shown, replayed and audited.
    FILE - reads the record from stdin.

    \b
    Examples:
        red7 import game.jsonl
        red7 export g1 -o - | red7 import - --url redis://other:6379/0
    """
    records = _read_all(file, fmt)
    done: list[AuditReport] = []
    try:
        for record in records:
            done.append(import_record(session.connection, record))
    except Exception as exc:
        line = error_line(exc)
        if line is None:
            raise
        if done:  # they stay stored: whoever runs it again must know which
            line += f" ({counted(len(done), 'game')} imported before it: {', '.join(str(r.game) for r in done)})"
        if as_json:
            emit_json({"file": file, "imported": [r.game for r in done], "error": line})
        raise click.ClickException(line) from None
    if as_json:
        emit_json({"file": file, "imported": [r.game for r in done], "error": None})
        return
    for report in done:
        click.echo(f"Imported game {report.game} ({report.events} events; audit passed).")


# ---------------------------------------------------------------------------- audit


@click.command()
@click.argument("source", required=False, metavar="GAME|FILE")
@click.option("--all", "all_games", is_flag=True, help="Audit every finished game in Redis.")
@click.option(
    "--tournament", "tournament_id", metavar="T", help="Audit a whole tournament (as `red7 tournament audit T`)."
)
@click.option(
    "--as",
    "as_name",
    metavar="NAME",
    help="Also check the record against what you saw as seat NAME: your key, and the log heads your commands "
    "were shown (red7 help trust).",
)
@format_option
@json_option
@player_url_option
@pass_session
def audit(
    session: Session,
    source: str | None,
    all_games: bool,
    tournament_id: str | None,
    as_name: str | None,
    fmt: str | None,
    as_json: bool,
) -> None:
    """Prove a game fair: replay it from its revealed seed and compare every event.

    Prints PASS, or the first divergence in one line (event and command number,
    what was expected, what was found, why); a record its FILE does not hold
    readably fails as unreadable (FILE - is stdin). Exit code 0 on PASS, 1 otherwise;
    a game not over cannot be fully audited (its seed is secret), so its chain
    and signatures are checked and it reports INCOMPLETE with exit code 1.

    The audit proves a record consistent, not that it is the game you played:
    whoever can write to Redis could rewrite it whole. --as NAME checks it
    against what this machine remembers of your seat NAME: the seat's key is
    the one your token makes, and every log head you were shown is on its chain.

    \b
    Examples:
        red7 audit 3f9a2c1b
        red7 audit 3f9a2c1b --as bob
        red7 audit game.jsonl --json
        red7 audit --all
        red7 audit --tournament cup
    """
    if session.remote and (all_games or tournament_id is not None):
        # (both read every game of the Redis; over HTTP, audit each game: red7 audit GAME)
        raise click.UsageError(f"{'--all' if all_games else '--tournament'} audits games in Redis: give a Redis URL")
    if tournament_id is not None:
        if source or all_games or as_name is not None:
            raise click.UsageError("--tournament stands alone")
        from .commands_tournament import report_tournament_audit

        report_tournament_audit(session, tournament_id, as_json)
        return
    if bool(source) == all_games:
        raise click.UsageError("give one GAME or FILE, --all, or --tournament T")
    _format_for_files(fmt, source)
    if all_games and as_name is not None:
        raise click.UsageError("--as checks one game: give its GAME or FILE, not --all")
    if all_games:
        ids = _finished(session)
        reports = _run(ids, lambda game: _audit_stored(session, game), as_json)
    elif source is not None and is_file(source):
        # a record that cannot be read is one failed game: the others are still audited
        records = _holding(list(_read_each(source, fmt)), source)
        check = audit_record if as_name is None else _as_seat(session, as_name)
        reports = _run(records, check, as_json)
    else:
        assert source is not None
        if as_name is None:
            reports = [_audit_stored(session, source, one=True)]
        else:
            reports = [_as_seat(session, as_name)(_exported(session, source))]
    _report(reports, as_json, single=source is not None and len(reports) == 1)
    if not all(r.passed for r in reports):
        raise SystemExit(1)


def _as_seat(session: Session, name: str) -> Callable[[Record | Unreadable], AuditReport]:
    """The audit of a record checked against what this user saw as seat ``name`` (audit --as)."""

    def check(record: Record | Unreadable) -> AuditReport:
        if isinstance(record, Unreadable):
            return audit_record(record)
        token = session.credentials.token(record.game_id, name)
        if token is None:
            raise click.ClickException(
                f"you hold no seat {name!r} in game {record.game_id}: --as checks a game against what "
                "this machine remembers of a seat you took (its token in your credentials file)"
            )
        return audit_as(record, name, public_key(token), session.seen.heads(record.game_id))

    return check


def _exported(session: Session, game_id: str) -> Record:
    """A game in Redis as a record; one line if it cannot be read."""
    try:
        return session.client.record(game_id)
    except (RecordError, UnreadableKey) as exc:
        raise click.ClickException(str(exc)) from None


def _finished(session: Session) -> list[str]:
    """The games ``--all`` audits: those over, and those whose meta cannot tell (missing,
    or not a hash): damage to report, not a reason to skip the game or stop."""
    store = session.service.store
    ids = store.all_games()
    pipe = store.redis.pipeline(transaction=False)  # one slot per game: not one command
    for game_id in ids:
        pipe.hget(Keys(game_id).meta, "status")
    statuses = pipe.execute(raise_on_error=False)
    return [
        g
        for g, status in zip(ids, statuses, strict=True)
        if status in (b"over", None) or isinstance(status, redis.ResponseError)
    ]


def _audit_stored(session: Session, game_id: str, *, one: bool = False) -> AuditReport:
    """:func:`audit_game` of a game in Redis, or of the record a gateway serves (GET
    .../record: audited here, whoever served it); for a game that cannot even be read as
    a record (its log deleted, a key of another type), a failed report saying why: one
    game's damage never stops ``--all``.  Only a lost connection does (no other game could
    be read either).  ``one``: the only game asked for, whose other errors are its one line."""
    if one:
        try:
            return audit_record(session.client.record(game_id))
        except UnreadableKey as exc:
            return unexportable(game_id, str(exc))
    try:
        return audit_game(session.service, game_id)
    except UNREACHABLE_ERRORS:
        raise
    except Exception as exc:
        line = error_line(exc)
        if line is None:  # a bug: its traceback
            raise
        return unexportable(game_id, line)


def _run(items: list[Any], fn: Callable[[Any], AuditReport], quiet: bool) -> list[AuditReport]:
    """Audit each item, with a progress bar on the terminal when there are several."""
    terminal = Console(stderr=True)
    if len(items) < 2 or quiet or not terminal.is_terminal:
        return [fn(item) for item in items]
    reports = []
    with Progress(console=terminal, transient=True) as progress:
        task = progress.add_task("auditing", total=len(items))
        for item in items:
            reports.append(fn(item))
            progress.advance(task)
    return reports


def _report(reports: list[AuditReport], as_json: bool, *, single: bool) -> None:
    if as_json:
        if single:
            emit_json(reports[0].to_dict())
        else:
            emit_json({**_summary(reports), "games": [r.to_dict() for r in reports]})
        return
    if single:
        click.echo(reports[0].line())
        return
    for report in reports:
        if not report.passed:
            click.echo(report.line())
    s = _summary(reports)
    click.echo(
        f"Audited {counted(s['audited'], 'game')}: "
        f"{s['passed']} passed, {s['failed']} failed, {s['incomplete']} incomplete."
    )


def _summary(reports: list[AuditReport]) -> dict[str, int]:
    return {
        "audited": len(reports),
        "passed": sum(r.result == PASS for r in reports),
        "failed": sum(r.result not in (PASS, INCOMPLETE) for r in reports),
        "incomplete": sum(r.result == INCOMPLETE for r in reports),
    }


COMMANDS = [replay, export, import_, audit]
