"""Tournaments: create, run, standings, report, audit, list, show (``red7 tournament ...``).

The tournament package is imported inside each command, not here: every ``red7``
command loads this module, and none but these needs the tournament code (or openskill).
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from red7es.service.codec import seat_data
from red7es.service.connection import UNREACHABLE_ERRORS
from red7es.service.http_client import HttpGameService
from red7es.service.names import shown
from red7es.service.tokens import public_key
from red7es.service.transport import TournamentReader
from red7es.wording import cannot_write, counted

from .commands_game import seat_specs, time_options, timed, variant_from, variant_options
from .credentials import Credentials
from .options import (
    STDOUT,
    Red7Group,
    console,
    emit_json,
    error_line,
    exit_on_ctrl_c,
    json_option,
    pass_session,
    player_url_option,
    red7_line,
    reserved_keys,
    typed_url,
    url_option,
)
from .session import Session

if TYPE_CHECKING:
    from red7es.tournament import RoundPaired, TournamentState

__all__ = ["COMMANDS", "FORMATS", "report_tournament_audit"]

FORMATS = ("round-robin", "swiss")  # red7es.tournament.events.FORMATS (a test keeps them equal)


@click.group(cls=Red7Group)
def tournament() -> None:
    """Round-robin and Swiss tournaments of people and bots, played on the workers.

    \b
    Example:
        red7 tournament create cup -b greedy -b random -b ismcts -p alice --format swiss
        red7 tournament run cup          # Ctrl-C is safe: run it again to resume
        red7 tournament standings cup
        red7 tournament report cup -o cup.html
        red7 tournament audit cup

    The pairing, points and tie-break rules: red7 help tournaments.
    """


def _reader(session: Session) -> TournamentReader:
    """The tournament reads of list/show/standings/report: on Redis, or from a gateway."""
    if session.remote:
        return cast(HttpGameService, session.client)
    from red7es.tournament.views import RedisTournaments

    return RedisTournaments(session.connection)


def _state(session: Session, name: str) -> TournamentState:
    from red7es.tournament import load

    return load(session.connection, name)


# ---------------------------------------------------------------------------- create


@tournament.command()
@click.argument("name", metavar="TOURNAMENT")
@click.option("--title", help="A title for standings and reports (default: the id).")
@click.option("--player", "-p", "people", multiple=True, metavar="NAME", help="A person entrant (repeatable).")
@click.option(
    "--bot",
    "-b",
    "bots",
    multiple=True,
    metavar="[NAME=]BOT",
    help="A bot entrant: random, greedy, ismcts or any bot spec (repeatable).",
)
@click.option("--table-size", "-k", type=click.IntRange(2, 4), default=2, show_default=True, help="Players per game.")
@variant_options
@time_options
@click.option(
    "--format",
    "-f",
    "fmt",
    type=click.Choice(FORMATS),
    default="round-robin",
    show_default=True,
    help="Round robin: every group of TABLE-SIZE entrants meets once. Swiss: tables within score groups.",
)
@click.option(
    "--tournament-rounds",
    "-n",
    "rounds_count",
    type=click.IntRange(1, 999),
    metavar="N",
    help="Rounds to play (default: one full round-robin cycle; Swiss: max(3, ceil(log2 entrants))).",
)
@click.option("--seed", help="Seed text: the same seed gives the same pairings and deals (default: random).")
@click.option(
    "--reserve",
    "reserved",
    multiple=True,
    metavar="NAME=KEY",
    help="Seat person entrant NAME with public key KEY (64 hex digits) in every game of theirs, at creation:"
    " no joins, and playable over the gateway (repeatable).",
)
@json_option
@url_option
@pass_session
def create(
    session: Session,
    name: str,
    title: str | None,
    people: tuple[str, ...],
    bots: tuple[str, ...],
    table_size: int,
    scoring: bool,
    draw: bool,
    actions: bool,
    rounds: int,
    target: int | None,
    clock: tuple[int, int] | None,
    turn_time: int | None,
    join_time: int | None,
    fmt: str,
    rounds_count: int | None,
    seed: str | None,
    reserved: tuple[str, ...],
    as_json: bool,
) -> None:
    """Create tournament TOURNAMENT (an id: 1-24 lower-case letters, digits, dashes).

    Entrants are people (-p NAME) and bots (-b SPEC, named after the bot unless
    given as NAME=SPEC). --rounds is the variant's round wins per game; the
    number of tournament rounds is --tournament-rounds. --clock or
    --turn-time times every game (RULES.md, Time). --reserve NAME=KEY
    registers a person entrant's own public key: its seats are its key's in
    every game at creation, so it plays them with its token (over a gateway,
    too) and never joins.

    \b
    Example:
        red7 tournament create cup -b greedy -b random -b g2=greedy -b ismcts:iterations=200 -n 3 --format swiss
    """
    from red7es.tournament import create_tournament
    from red7es.tournament.ids import MAX_ID, valid_tournament_id
    from red7es.tournament.lifecycle import count_problem, title_problem
    from red7es.tournament.pairing import total_games

    if not valid_tournament_id(name):  # typed wrong: a usage error, like a bad game --id
        raise click.UsageError(f"{name!r} is not a valid tournament id (1-{MAX_ID} lower-case letters, digits, dashes)")
    problem = title_problem((title or name).strip())
    if problem is not None:
        raise click.UsageError(problem)
    entrants = seat_specs(people, bots)
    keys = reserved_keys(reserved, people, whose="person entrant")
    variant = timed(variant_from(table_size, scoring, draw, actions, rounds, target), clock, turn_time, join_time)
    problem = count_problem(len(entrants), table_size)
    if problem is not None:  # like one seat or five for `new`: the options contradict the rules
        raise click.UsageError(problem)
    created = create_tournament(
        session.connection, name, entrants, variant, fmt, rounds=rounds_count, seed=seed, name=title, keys=keys
    ).event
    games = total_games(created)
    if as_json:
        emit_json(
            {
                "tournament": created.tournament,
                "name": created.name,
                "format": created.format,
                "table_size": created.table_size,
                "variant": created.variant.to_dict(),
                "rounds": created.rounds,
                "games": games,
                "entrants": [seat_data(e) for e in created.entrants],
                "keys": dict(created.keys),
                "commitment": created.commitment,
            }
        )
        return
    out = console()
    out.print(
        Text(
            f"Tournament {created.tournament} created: {created.format}, {len(created.entrants)} entrants, "
            f"{counted(created.rounds, 'round')}, {counted(games, 'game')} of {created.variant.describe()}.",
            style="bold",
        )
    )
    out.print(f"Seed commitment (SHA-256): {created.commitment}")
    out.print(f"Run it: {red7_line('tournament', 'run', created.tournament, url=typed_url())}")


# ---------------------------------------------------------------------------- run


class _ProgressReporter:
    """Draws the run on a rich progress bar and says which people must play where."""

    def __init__(self, bar: Progress, names: list[str], credentials: Credentials, url: str | None) -> None:
        self.bar = bar
        self.names = names
        self.credentials = credentials  # the seats this user holds: they are played, not joined again
        self.url = url  # repeated in the commands printed (_red7)
        self.task = bar.add_task("starting", total=None)

    def paired(self, paired: RoundPaired) -> None:
        byes = ", ".join(shown(self.names[e]) for e in paired.byes)
        self.bar.console.print(
            f"Round {paired.round} paired: {len(paired.tables)} table(s)" + (f", bye: {byes}" if byes else "")
        )

    def progress(self, done: int, total: int, round_number: int) -> None:
        description = f"round {round_number}" if round_number else "starting"
        self.bar.update(self.task, completed=done, total=total, description=description)

    def needs_people(self, game: str, people: list[str], joined: dict[str, str | None]) -> None:
        held = self.credentials.seats(game)
        for person in people:
            self.bar.console.print(self._how_to_play(game, person, held.get(person), joined))

    def _how_to_play(self, game: str, person: str, token: str | None, joined: dict[str, str | None]) -> str:
        """One line: what gets ``person`` playing ``game`` from where the seat stands.

        ``token`` is this user's for the seat, if any: it holds the seat only if the seat
        was taken with it (a join that was refused or timed out leaves one behind too).
        """
        play = red7_line("play", "--game", game, "--as", person, url=self.url)
        who = shown(person)
        if person not in joined:  # open (`red7 join` also settles a token left by an earlier try)
            return f"{who} plays game {game}: {red7_line('join', game, person, url=self.url)} && {play}"
        key = joined[person]
        if token is not None and (key is None or key == public_key(token)):  # held here: joining again would fail
            return f"{who} plays game {game}: {play}"
        return f"{who} plays game {game} (joined elsewhere: play where its token is): {play}"


@tournament.command()
@click.argument("name", metavar="TOURNAMENT")
@click.option(
    "--parallel",
    type=click.IntRange(1, 1000),
    default=32,
    show_default=True,
    help="All-bot games in flight at once (people's games always start when paired).",
)
@click.option("--wait/--no-wait", default=True, show_default=True, help="--no-wait: start what can start, then exit.")
@json_option
@url_option
@pass_session
def run(session: Session, name: str, parallel: int, wait: bool, as_json: bool) -> None:
    """Play TOURNAMENT: pair rounds, start their games on the workers, record results.

    Safe to stop (Ctrl-C) and to run again: it resumes where the tournament is,
    never replays or double-counts a game. Swiss rounds are paired when the round
    before is complete. People's games wait for their moves; for each open game the
    command prints what its people run: `red7 join` then `red7 play` for a seat not
    taken yet, `red7 play` alone for a seat already joined (games over are skipped).

    \b
    Example:
        red7 tournament run cup --parallel 64
    """
    from red7es.tournament import TournamentRunner

    service = session.service  # connects: an unreachable Redis is one line before any progress bar
    session.ensure_worker()
    err = console(stderr=True)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("games"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    runner: TournamentRunner | None = None
    url = typed_url()
    resume = red7_line("tournament", "run", name, url=url)

    def stopped() -> None:
        done = len(runner.state.results) if runner else 0
        click.echo(f"Stopped with {counted(done, 'game')} recorded. Resume with: {resume}", err=True)

    try:
        with exit_on_ctrl_c(stopped):
            # Loaded before the bar starts: a bar stopped unused still ends its line, which
            # would put a blank line before the error of an unknown tournament.
            runner = TournamentRunner(service, name, parallel=parallel)
            with Progress(*columns, console=err, disable=as_json) as progress:
                names = [e.name for e in runner.state.spec.entrants]
                runner.reporter = _ProgressReporter(progress, names, session.credentials, url)
                report = runner.run(wait=wait)
    except UNREACHABLE_ERRORS as exc:
        raise click.ClickException(f"{error_line(exc)}; nothing is lost, resume with: {resume}") from None
    if as_json:
        emit_json(
            {
                "tournament": name,
                "finished": report.finished,
                "done": report.done,
                "total": report.total,
                "waiting_for_people": report.waiting_for_people,
            }
        )
        return
    if report.finished:
        games = counted(report.done, "game")
        standings = red7_line("tournament", "standings", name, url=url)
        click.echo(f"Tournament {name} finished: {games}. Standings: {standings}")
    else:
        click.echo(f"Tournament {name}: {report.done} of {counted(report.total, 'game')} recorded.")
        for game, people in report.waiting_for_people.items():
            click.echo(f"  game {game} waits for {', '.join(people)}")
        click.echo(f"Continue with: {resume}")


# ---------------------------------------------------------------------------- standings


@tournament.command("standings")
@click.argument("name", metavar="TOURNAMENT")
@click.option("--csv", "csv_path", metavar="FILE", help="Also write the standings as CSV to FILE ('-': stdout).")
@json_option
@player_url_option
@pass_session
def standings_command(session: Session, name: str, csv_path: str | None, as_json: bool) -> None:
    """Show the standings: points, rounds won, tie-breaks, OpenSkill rating.

    Points per game are the share of the other players at the table an entrant
    finished ahead of (ties count half); ties in the standings are broken by
    Buchholz (Swiss), head-to-head, rounds won, then rating (red7 help tournaments).
    The table prints points, tie-breaks and ratings to two decimals; --json and
    --csv give them as numbers.
    Forfeits counts the games an entrant went out of: out of time on its clock,
    resigned, or withdrawn; an entrant withdrawn from the tournament is marked
    (withdrawn).

    \b
    Example:
        red7 tournament standings cup --csv cup.csv
    """
    if csv_path == STDOUT and as_json:
        raise click.UsageError("--csv - writes the standings to stdout, where --json would go too")
    from red7es.tournament import SWISS
    from red7es.tournament.standings import standing_figures

    data = _reader(session).tournament_standings(name)
    if csv_path:
        _write_csv(csv_path, data["standings"])
    if as_json:
        emit_json(data)
        return
    if csv_path == STDOUT:
        return
    out = console()
    played = f"{data['games_played']} of {counted(data['games_total'], 'game')} played"
    status = "finished" if data["finished"] else played
    out.print(Text(f"{shown(data['name'])} ({shown(str(data['format']))}, {status})", style="bold"))
    table = Table(box=None, pad_edge=False)
    swiss = data["format"] == SWISS
    headers = ["#", "entrant", "games", "wins", "points", "round wins", "byes", "forfeits"]
    headers += ["buchholz"] if swiss else []
    headers += ["h2h", "mu", "sigma", "ordinal"]
    for h in headers:
        table.add_column(h, justify="left" if h == "entrant" else "right")
    for row in data["standings"]:
        name = shown(row["name"]) + (" (withdrawn)" if row.get("withdrawn") else "")
        table.add_row(str(row["rank"]), name, *standing_figures(row, swiss))
    out.print(table)


def _write_csv(path: str, lines: list[dict[str, Any]]) -> None:
    fields = list(lines[0]) if lines else []
    if path == STDOUT:  # outside _writing: a closed pipe (| head) is Red7Group's quiet exit, not a failed write
        writer = csv.DictWriter(sys.stdout, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(lines)
        return
    with _writing(path), open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(lines)


@contextlib.contextmanager
def _writing(path: str | Path) -> Iterator[None]:
    """A file that cannot be written fails in one line naming it, the way ``red7 export``
    says it (``cannot write PATH: No such file or directory``), not as Python's
    ``[Errno 2] No such file or directory: 'PATH'``."""
    try:
        yield
    except OSError as exc:
        raise click.ClickException(cannot_write(path, exc)) from None


# ---------------------------------------------------------------------------- report


@tournament.command()
@click.argument("name", metavar="TOURNAMENT")
@click.option("--output", "-o", metavar="FILE", help="The HTML file to write (default: TOURNAMENT.html; - for stdout).")
@player_url_option
@pass_session
def report(session: Session, name: str, output: str | None) -> None:
    """Write a self-contained HTML page: standings, rating chart, every game.

    No external resources (inline CSS and SVG): open it anywhere, offline.

    \b
    Example:
        red7 tournament report cup -o cup.html
    """
    reader = _reader(session)
    page = reader.tournament_report(name)
    data = reader.tournament(name)  # (over HTTP a second request: the summary line's counts)
    summary = f"{len(data['entrants'])} entrants, {counted(data['games_played'], 'game')}"
    if output == STDOUT:  # the page on stdout (red7 tournament report cup -o - | ssh host 'cat > cup.html')
        click.echo(page, nl=False)
        click.echo(f"Wrote the report to stdout ({summary}).", err=True)
        return
    path = Path(output or f"{data['tournament']}.html")
    with _writing(path):
        path.write_text(page, encoding="utf-8")
    click.echo(f"Wrote {path} ({summary}).")


# ---------------------------------------------------------------------------- audit


@tournament.command()
@click.argument("name", metavar="TOURNAMENT")
@json_option
@url_option
@pass_session
def audit(session: Session, name: str, as_json: bool) -> None:
    """Audit every game, re-derive every pairing, recompute the standings from the logs.

    Prints PASS, or the first divergence in one line. Exit code 0 on PASS, 1 otherwise.

    \b
    Example:
        red7 tournament audit cup
    """
    report_tournament_audit(session, name, as_json)


def report_tournament_audit(session: Session, name: str, as_json: bool) -> None:
    """Audit tournament ``name`` and print the verdict; exit code 1 unless it passes.

    Shared by ``red7 tournament audit`` and ``red7 audit --tournament``.
    """
    from red7es.tournament.audit import audit_tournament

    err = console(stderr=True)
    show = not as_json and err.is_terminal
    with Progress(console=err, transient=True, disable=not show) as progress:
        task = progress.add_task("auditing games", total=None)
        result = audit_tournament(
            session.service, name, progress=lambda done, total: progress.update(task, completed=done, total=total)
        )
    if as_json:
        emit_json(result.to_dict())
    else:
        click.echo(result.line())
    if not result.ok:
        raise SystemExit(1)


# ---------------------------------------------------------------------------- list


@tournament.command("list")
@click.option(
    "--limit", default=50, show_default=True, type=click.IntRange(min=1), help="How many tournaments, newest first."
)
@json_option
@player_url_option
@pass_session
def list_command(session: Session, limit: int, as_json: bool) -> None:
    """List tournaments, newest first, with their games played and status.

    The status is "not started" (created, never run), "in progress" or "finished".

    \b
    Example:
        red7 tournament list
    """
    items = _reader(session).tournaments(limit)
    if as_json:
        emit_json(items)
        return
    if not items:
        click.echo("No tournaments yet. Create one: red7 tournament create cup -b greedy -b random")
        return
    table = Table(box=None, pad_edge=False)
    for column in ("tournament", "created", "format", "entrants", "games", "status"):
        table.add_column(column)
    for item in items:
        if "error" in item:
            table.add_row(shown(str(item["tournament"])), "", "", "", "", f"unreadable: {shown(str(item['error']))}")
            continue
        # every field as text (shown): over HTTP these are a gateway's answer, not this machine's
        when = datetime.datetime.fromtimestamp(item["created"] / 1000).strftime("%Y-%m-%d %H:%M")
        games = f"{item['games_played']}/{item['games_total']}"
        fields = (item["tournament"], when, item["format"], item["entrants"], games, item["status"])
        table.add_row(*(shown(str(field)) for field in fields))
    console().print(table)


# ---------------------------------------------------------------------------- withdraw


@tournament.command()
@click.argument("name", metavar="TOURNAMENT")
@click.argument("entrant")
@click.option("--reason", required=True, metavar="TEXT", help="Why: recorded in the tournament and its games.")
@json_option
@url_option
@pass_session
def withdraw(session: Session, name: str, entrant: str, reason: str, as_json: bool) -> None:
    """Withdraw ENTRANT from TOURNAMENT: an organiser's act, recorded and audited.

    Swiss pairs the entrant no more (no table, no bye). Every game of theirs not
    recorded yet has their seat withdrawn by the operator (red7 withdraw): it forfeits
    as if they resigned, and the others play on. Games of a round robin not started
    yet are forfeited as the run starts them. Results already recorded stand; the
    standings mark the entrant (withdrawn). Exit 1 for a finished tournament or an
    entrant withdrawn already.

    \b
    Example:
        red7 tournament withdraw cup bob --reason "bob had to leave"
    """
    from red7es.tournament.withdrawal import withdraw_entrant

    if not reason.strip():
        raise click.UsageError("--reason: say why (it is recorded)")
    done = withdraw_entrant(session.service, name, entrant, reason)
    if as_json:
        emit_json({"tournament": name, "entrant": entrant, "reason": reason, "games": done.games})
        return
    games = f"; withdrawn from {counted(len(done.games), 'game')} under way: {', '.join(done.games)}"
    click.echo(f"{entrant} withdrawn from tournament {name}{games if done.games else ''}.")


# ---------------------------------------------------------------------------- show


@tournament.command()
@click.argument("name", metavar="TOURNAMENT")
@json_option
@player_url_option
@pass_session
def show(session: Session, name: str, as_json: bool) -> None:
    """Show a tournament: its entrants and every round's tables, games and results.

    \b
    Example:
        red7 tournament show cup
    """
    from red7es.tournament.events import VOID_WORDS
    from red7es.variant import Variant

    data = _reader(session).tournament(name)
    rounds: list[dict[str, Any]] = data["paired"]
    if as_json:
        emit_json(data)
        return
    out = console()
    title = shown(data["name"])
    tid = shown(str(data["tournament"]))  # (a gateway's answer, like every field here: shown() as text)
    out.print(Text(title if data["name"] == data["tournament"] else f"{title} [{tid}]", style="bold"))
    out.print(
        f"{shown(str(data['format']))}, {len(data['entrants'])} entrants, {counted(data['rounds'], 'round')}, "
        f"{Variant.from_dict(data['variant']).describe()}; "
        f"{data['games_played']} of {counted(data['games_total'], 'game')} played"
        + ("; finished" if data["finished"] else "")
    )
    withdrawn = data.get("withdrawn") or {}
    out.print(
        "Entrants: "
        + ", ".join(
            shown(e["name"])
            + (f" ({shown(e.get('bot') or '')})" if e["kind"] == "bot" else " (person)")
            + (" withdrawn" if e["name"] in withdrawn else "")
            for e in data["entrants"]
        )
    )
    for who, why in withdrawn.items():
        out.print(f"Withdrawn: {shown(who)}: {shown(why)}")
    for r in rounds:
        out.print(Text(f"Round {r['round']}", style="bold"))
        for t in r["tables"]:
            if t["winners"]:
                result = f"won by {' and '.join(map(shown, t['winners']))}"
            elif t.get("reason") in VOID_WORDS and t["winners"] == []:
                result = f"{VOID_WORDS[t['reason']]} (a loss for every seat)"
            else:
                result = shown(str(t["status"]))
            out.print(f"  {shown(str(t['game']))}: {', '.join(map(shown, t['seats']))} — {result}")
        if r["byes"]:
            out.print(f"  bye: {', '.join(map(shown, r['byes']))}")
    if len(rounds) < data["rounds"]:
        first, last = len(rounds) + 1, data["rounds"]
        out.print(f"Round {last} not paired yet." if first == last else f"Rounds {first}-{last} not paired yet.")


COMMANDS = [tournament]
