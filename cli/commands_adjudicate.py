"""The operator's acts on a game, recorded in its log: ``red7 adjudicate`` ends a game stuck
for good with a result (RULES.md, Adjudication), ``red7 withdraw`` puts a seat out of it
(RULES.md, Withdrawal); docs/trust.md says what the audit makes of each."""

from __future__ import annotations

from typing import Any

import click

from red7es.service.events import LogEvent
from red7es.service.table import public_event

from .options import console, emit_json, json_option, pass_session, url_option
from .render import describe_events
from .session import Session

__all__ = ["COMMANDS"]


@click.command()
@click.argument("game")
@click.option("--winner", "winners", multiple=True, metavar="NAME", help="A seat that wins (repeat for a shared win).")
@click.option("--no-winner", is_flag=True, help="End the game with no winner.")
@click.option("--reason", required=True, metavar="TEXT", help="Why: recorded in the log, shown to every reader.")
@json_option
@url_option
@pass_session
def adjudicate(
    session: Session, game: str, winners: tuple[str, ...], no_winner: bool, reason: str, as_json: bool
) -> None:
    """End GAME now with the winners you decide: an operator's act, recorded in the log.

    For a game stuck for good (a player gone for ever in a game without a clock, a
    dispute). It is appended like a worker's answer, so a turn folded meanwhile is
    never lost: the adjudication then applies after it, or finds the game over (exit
    1). Every reader sees it: show and watch say the game was adjudicated and why,
    and red7 audit passes the play before it but says the game did NOT end by play.
    Give --winner NAME (repeat it for a shared win) or --no-winner, and --reason.

    \b
    Examples:
        red7 adjudicate 3f9a2c1b --winner ann --reason "bob left the club"
        red7 adjudicate 3f9a2c1b --no-winner --reason "played on a broken deck"
    """
    if bool(winners) == no_winner:
        raise click.UsageError("give --winner NAME (one or more) or --no-winner, not both")
    if not reason.strip():
        raise click.UsageError("--reason: say why (it is recorded in the log)")
    events = session.service.adjudicate(game, list(winners), reason)
    _show(session, game, events, {"game": game, "winners": list(winners), "reason": reason}, as_json)


@click.command()
@click.argument("game")
@click.argument("name")
@click.option("--reason", required=True, metavar="TEXT", help="Why: recorded in the log, shown to every reader.")
@json_option
@url_option
@pass_session
def withdraw(session: Session, game: str, name: str, reason: str, as_json: bool) -> None:
    """Withdraw seat NAME from GAME: an operator's act, recorded in the log.

    The seat forfeits the game as if it had resigned (out for good, ranked below every
    seat still in), and the others play on; with one seat left, that seat wins. For a
    seat whose player is gone for good (a tournament entrant withdrawn: red7 tournament
    withdraw does this for every open game of theirs). A time-out already due is
    recorded first. Exit 1 if the game is over or the seat is out already. red7 audit
    checks the withdrawal's time and consequences and names it as the operator's act.

    \b
    Example:
        red7 withdraw 3f9a2c1b bob --reason "bob left the club"
    """
    if not reason.strip():
        raise click.UsageError("--reason: say why (it is recorded in the log)")
    events = session.service.withdraw(game, name, reason)
    _show(session, game, events, {"game": game, "seat": name, "reason": reason}, as_json)


def _show(session: Session, game: str, events: list[LogEvent], summary: dict[str, Any], as_json: bool) -> None:
    """Print the events an operator's act appended: described, or ``summary`` with them as JSON."""
    names = [s["name"] for s in session.service.view(game)["seats"]]
    public = [p for p in (public_event(e, len(names)) for e in events) if p is not None]
    if as_json:
        emit_json({**summary, "events": public})
        return
    out = console()
    for line in describe_events(public, names):
        out.print(line)


COMMANDS = [adjudicate, withdraw]
