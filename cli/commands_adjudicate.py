"""``red7 adjudicate``: an operator ends a game stuck for good, with a recorded result
(RULES.md, Adjudication; docs/trust.md, Adjudication)."""

from __future__ import annotations

import click

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
    service = session.service
    events = service.adjudicate(game, list(winners), reason)
    names = [s["name"] for s in service.view(game)["seats"]]
    public = [p for p in (public_event(e, len(names)) for e in events) if p is not None]
    if as_json:
        emit_json({"game": game, "winners": list(winners), "reason": reason, "events": public})
        return
    out = console()
    for line in describe_events(public, names):
        out.print(line)


COMMANDS = [adjudicate]
