"""``red7 help [TOPIC]``: the manual's pages, printed from the installed package.

``red7 --help`` used to send readers to docs/cli.md, which only a checkout has: the
wheel ships the pages (``red7es/docs``, pyproject's package data), so the help can
point at something every installation holds.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

import red7es

__all__ = ["COMMANDS", "docs_dir", "topics"]


def docs_dir() -> Path:
    """Where the pages are: inside the installed package, or a checkout's docs/ (editable install)."""
    package = Path(red7es.__file__).resolve().parent
    for candidate in (package / "docs", package.parent / "docs"):
        if (candidate / "cli.md").is_file():
            return candidate
    raise click.ClickException(f"the manual's pages are not installed (looked in {package / 'docs'})")


def _slug(heading: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", heading.lower().replace("`", "")).strip("-")


def topics() -> dict[str, str]:
    """Topic -> its text: each page by name (``cli``, ``tournaments``), and each ``##``
    section of the command page by its heading (``exit-codes``, ``json-outputs``)."""
    found: dict[str, str] = {}
    for page in sorted(docs_dir().glob("*.md")):
        found[page.stem.lower()] = page.read_text(encoding="utf-8")
    cli_page = found["cli"]
    for part in re.split(r"(?m)^(?=## )", cli_page)[1:]:
        found.setdefault(_slug(part.splitlines()[0][3:]), part.rstrip() + "\n")
    return found


@click.command(name="help")
@click.argument("topic", required=False)
def help_command(topic: str | None) -> None:
    """Print a page of the manual, or with no TOPIC the list of topics.

    A topic is a page (cli, tournaments, gateway, records, trust, rules, ...) or
    a section of the command page (exit-codes, json-outputs, bots, ...); a
    unique beginning is enough (red7 help exit).

    \b
    Example:
        red7 help exit-codes
    """
    known = topics()
    if topic is None:
        click.echo("Topics (red7 help TOPIC):")
        for name in known:
            click.echo(f"  {name}")
        return
    wanted = topic.lower()
    matches = [name for name in known if name == wanted] or [name for name in known if name.startswith(wanted)]
    if len(matches) != 1:
        choices = ", ".join(matches or known)
        raise click.UsageError(f"{'ambiguous' if matches else 'no'} topic {topic!r}: choose one of {choices}")
    click.echo(known[matches[0]], nl=False)


COMMANDS = [help_command]
