"""``red7 archive``: move finished games out of Redis into record files (red7es.service.archive)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from red7es.service.archive import ArchiveError, archive_game, candidates, parse_age
from red7es.service.connection import data_dir
from red7es.service.record_files import FORMATS
from red7es.service.records import RecordError
from red7es.wording import counted

from .options import emit_json, json_option, pass_session, url_option
from .session import Session

__all__ = ["COMMANDS"]


def _age(_ctx: click.Context, _param: click.Parameter, value: str) -> float:
    try:
        return parse_age(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command()
@click.option(
    "--older-than",
    "older_than",
    required=True,
    metavar="AGE",
    callback=_age,
    help="Archive games finished longer ago than AGE: 7d, 12h, 30m, 90s (w, d, h, m, s).",
)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the record files go, one per game (default: the archive folder of the red7es data directory).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="msgpack",
    show_default=True,
    help="Record format of the files.",
)
@click.option("--dry-run", is_flag=True, help="Only say which games would be archived.")
@json_option
@url_option
@pass_session
def archive(
    session: Session, older_than: float, directory: Path | None, fmt: str, dry_run: bool, as_json: bool
) -> None:
    """Move finished games older than AGE out of Redis into record files.

    Each game is written to DIR/GAME.msgpack (the record `red7 export` writes), the
    file synced to disk and read back, and only then are the game's keys deleted; a
    small stub in Redis says where the file is, so `red7 games`, `show`, `replay`,
    `export` and `audit` read the game from it as before. Tournament games (t-...)
    stay in Redis. Run it again after a crash: it finishes the job.

    \b
    Examples:
        red7 archive --older-than 7d --dry-run
        red7 archive --older-than 30d --dir /srv/red7/archive
    """
    target = (directory or data_dir() / "archive").resolve()
    connection = session.connection
    before = int(time.time() * 1000 - older_than * 1000)
    found, tournament = candidates(connection, before)
    archived: list[dict[str, object]] = []
    failed: list[dict[str, object]] = []
    for candidate in found:
        path = target / f"{candidate.game_id}.{fmt}"
        if dry_run:
            archived.append({"game": candidate.game_id, "finished": candidate.finished, "file": str(path)})
            continue
        try:
            written = archive_game(connection, candidate.game_id, target, fmt)
        except (ArchiveError, RecordError) as exc:
            failed.append({"game": candidate.game_id, "error": str(exc)})
            continue
        except OSError as exc:
            raise click.ClickException(f"cannot write {path}: {exc.strerror}") from None
        archived.append({"game": candidate.game_id, "finished": candidate.finished, "file": str(written)})
    if as_json:
        emit_json(
            {
                "dir": str(target),
                "dry_run": dry_run,
                "archived": archived,
                "failed": failed,
                "tournament_games_kept": len(tournament),
            }
        )
    else:
        verb = "Would archive" if dry_run else "Archived"
        for item in archived:
            click.echo(f"{verb} {item['game']} to {item['file']}")
        for item in failed:
            click.echo(f"Not archived: {item['error']}", err=True)
        summary = f"{verb} {counted(len(archived), 'finished game')} older than the age to {target}"
        if tournament:
            summary += f"; {counted(len(tournament), 'tournament game')} kept in Redis"
        click.echo(summary + ".")
    if failed:
        raise SystemExit(1)


COMMANDS = [archive]
