"""Commands for hosting and playing: new, join, games, show, moves, move, watch."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import io
import uuid
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

import click
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from red7es.bots.base import BOT_NAMES, BotError, make_bot
from red7es.deal import SeedError, make_seed
from red7es.durations import DurationError, parse_clock, parse_duration
from red7es.service.client import JoinRefused, NoAnswer, TurnTooLarge, seat_index
from red7es.service.codec import seat_data
from red7es.service.connection import UNREACHABLE_ERRORS
from red7es.service.events import BOT, PERSON, SeatSpec
from red7es.service.http_client import COMMAND_ID, MOST_LISTED, GatewayUnreachable
from red7es.service.names import name_problem, shown
from red7es.service.store import TOURNAMENT_GAMES, valid_game_id
from red7es.service.tokens import TokenError, public_key
from red7es.service.transport import GameClient
from red7es.steps import ABORT, RESIGN, StepError, Turn
from red7es.variant import Variant, VariantError

from .options import (
    Seconds,
    console,
    emit_json,
    error_line,
    json_option,
    pass_session,
    player_url_option,
    red7_line,
    reserved_keys,
    seat_link,
    token_option,
    typed_url,
    web_option,
)
from .outage import riding_out
from .render import SAID_BY_FINAL_VIEW, cards_text, describe_events, no_winner_text, render_view, view_parts
from .session import Session, live_workers

__all__ = [
    "COMMANDS",
    "bot_entry",
    "check_bot",
    "check_game_id",
    "check_token",
    "refuse_seed_over_http",
    "given_name",
    "seat_for",
    "seat_specs",
    "split_bots",
    "time_options",
    "timed",
    "variant_from",
    "variant_options",
]


def variant_options(fn: Any) -> Any:
    """The variant flags shared by ``new``, ``play`` and ``tournament create``."""
    for decorator in reversed(
        [
            click.option("--scoring", is_flag=True, help="Advanced scoring: play to a target score."),
            click.option("--draw", is_flag=True, help="Advanced draw after discarding a high card."),
            click.option("--actions", is_flag=True, help="Actions of the odd cards (1, 3, 5, 7)."),
            click.option(
                "--rounds",
                type=click.IntRange(1, 99),
                default=1,
                show_default=True,
                help="Basic game: round wins needed.",
            ),
            click.option(
                "--target", type=click.IntRange(1, 999), help="Scoring: points that end the game (default 40/35/30)."
            ),
        ]
    ):
        fn = decorator(fn)
    return fn


def _duration(parse: Any) -> Any:
    """A click callback reading a duration with ``parse`` (a usage error, exit 2, if it is not one)."""

    def read(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
        if value is None:
            return None
        try:
            return parse(value)
        except DurationError as exc:
            raise click.BadParameter(str(exc)) from None

    return read


def time_options(fn: Any) -> Any:
    """``--clock`` and ``--turn-time`` (RULES.md, Time): a timed game's control, part of its variant."""
    for decorator in reversed(
        [
            click.option(
                "--clock",
                metavar="BASE[+INC]",
                callback=_duration(parse_clock),
                help="A game clock per seat, plus an increment after each turn (5m+5s); out of time forfeits.",
            ),
            click.option(
                "--turn-time",
                metavar="TIME",
                callback=_duration(parse_duration),
                help="A limit on each turn (30s; 2d for correspondence); out of time folds the round.",
            ),
            click.option(
                "--join-time",
                metavar="TIME",
                callback=_duration(parse_duration),
                help="With --clock or --turn-time: a seat nobody takes within TIME of creation forfeits (10m).",
            ),
        ]
    ):
        fn = decorator(fn)
    return fn


def timed(
    variant: Variant, clock: tuple[int, int] | None, turn_time: int | None, join_time: int | None = None
) -> Variant:
    """``variant`` with the time control the options say (none: unchanged)."""
    if clock is None and turn_time is None and join_time is None:
        return variant
    try:
        return dataclasses.replace(variant, clock=clock, turn_time=turn_time, join_time=join_time)
    except VariantError as exc:
        words = str(exc).replace("a clock or a turn time", "--clock or --turn-time")
        raise click.UsageError(words.replace("a join deadline", "--join-time")) from None


def variant_from(players: int, scoring: bool, draw: bool, actions: bool, rounds: int, target: int | None) -> Variant:
    """The variant the options say; options that contradict the rules (``--target`` without
    ``--scoring``, five seats) are a usage error, exit 2, like any other bad option."""
    try:
        return Variant(players, scoring, draw, actions, rounds, target)
    except VariantError as exc:
        raise click.UsageError(str(exc)) from None


def bot_entry(entry: str) -> tuple[str, str]:
    """``(name, spec)`` of a ``--bot`` entry: ``SPEC`` or ``NAME=SPEC``.

    A spec's options contain ``=`` too (``ismcts:iterations=200``), so only an
    ``=`` before the spec's ``:`` names the seat; unnamed, a bot is named after its kind.
    """
    given = given_name(entry)
    if given is not None:
        return given, entry.partition("=")[2].strip()
    return entry.split(":")[0].strip(), entry.strip()


def given_name(entry: str) -> str | None:
    """The seat name a ``--bot`` entry gives (``g2=greedy``: ``g2``), or None when it gives none."""
    name, eq, _spec = entry.partition("=")
    return name.strip() if eq and ":" not in name else None


def split_bots(text: str) -> tuple[str, ...]:
    """The entries of a comma-separated bot list (``--bots greedy,ismcts:time=0.05,belief=0.5``).

    Commas also separate a spec's options: a ``key=value`` part right after a spec
    with options is one more option, unless its value is a bot (``bob=greedy``).
    """
    entries: list[str] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        is_option = eq and ":" not in key and value.split(":")[0].strip().lower() not in BOT_NAMES
        if is_option and entries and ":" in bot_entry(entries[-1])[1]:
            entries[-1] += f",{part}"
        else:
            entries.append(part)
    return tuple(entries)


def seat_specs(people: tuple[str, ...], bots: tuple[str, ...]) -> list[SeatSpec]:
    """People first, then bots (:func:`bot_entry`: ``--bot greedy``, ``--bot g2=greedy``).

    A name the user gives is meant for one seat: given twice (``-p a -p a``,
    ``-b x=random -b x=greedy``, or a person's name to a bot), it is a usage error rather
    than quietly renamed; so is a name no seat may have (:func:`name_problem`: spaces,
    control characters). Only an unnamed bot gets a number (``greedy``, ``greedy2``),
    past every name given.
    """
    taken: set[str] = set()
    for name in [*people, *(name for name in map(given_name, bots) if name is not None)]:
        problem = name_problem(name)
        if problem is not None:
            raise click.UsageError(f"seat name {name!r} {problem}")
        if name in taken:
            raise click.UsageError(f"the name {name!r} is given twice: each seat needs its own")
        taken.add(name)
    seats = [SeatSpec(name, PERSON) for name in people]
    for entry in bots:
        name, spec = bot_entry(entry)
        check_bot(spec)
        if given_name(entry) is None:
            base, n = name, 2
            while name in taken:
                name, n = f"{base}{n}", n + 1
            taken.add(name)
        seats.append(SeatSpec(name, BOT, spec))
    return seats


def check_bot(spec: str) -> None:
    """A bot spec no worker would take (an unknown bot, an option it has not) is a usage
    error, exit 2, said before anything is sent; the service's own cap on a bot's time is
    the operator's to set, so a bot over it is refused by the service (exit 1)."""
    try:
        make_bot(spec, new_game=True)
    except BotError as exc:
        raise click.UsageError(str(exc)) from None


def check_seed(seed: str | None) -> None:
    """A ``--seed`` that is no seed (empty) is a usage error, exit 2."""
    try:
        make_seed(seed)
    except SeedError as exc:
        raise click.UsageError(f"--seed: {exc}") from None


def refuse_seed_over_http(session: Session, seed: str | None) -> None:
    """A gateway draws every game's seed itself (no client may deal itself a known game:
    docs/gateway.md): ``--seed`` with a gateway's URL is a usage error, exit 2."""
    if seed is not None and session.remote:
        raise click.UsageError("--seed: a gateway draws every game's seed itself; leave --seed out over HTTP")


def check_game_id(game_id: str, flag: str = "--id") -> None:
    """A game id no game can have is a usage error, exit 2 (ids are lower-case letters, digits, dashes)."""
    if not valid_game_id(game_id):
        raise click.UsageError(f"{flag} {game_id!r} is not a valid game id (lower-case letters, digits, dashes)")


def check_token(token: str, keys: Sequence[str | None], name: str, game_id: str) -> None:
    """Refuse a token whose public key is none of ``keys`` (the keys seat ``name`` joined with)."""
    try:
        key = public_key(token)
    except TokenError as exc:
        raise click.ClickException(str(exc)) from None
    if key not in keys:
        raise click.ClickException(f"that token is not {name}'s in game {game_id}")


def seat_for(session: Session, game_id: str, as_name: str | None, token: str | None) -> tuple[str, str]:
    """The (seat name, token) a command acts as: ``--as``, else the one seat held here."""
    held = session.credentials.seats(game_id)
    if token:
        if not as_name:
            raise click.UsageError("--token needs --as NAME")
        view = session.client.view(game_id)
        check_token(token, [session.client.seat_key(game_id, seat_index(view, as_name), view)], as_name, game_id)
        return as_name, token
    if as_name:
        if as_name not in held:
            # An unknown game or seat says so first; the hint fits the seat.
            view = session.client.view(game_id)
            seat = view["seats"][seat_index(view, as_name)]
            if seat["kind"] == BOT:
                replay = red7_line("replay", game_id, "--as", as_name, url=typed_url())
                hint = (
                    f"; the game is over: {replay} shows its hand"
                    if view["status"] == "over"
                    else f", and nobody sees its hand until the game is over (then: {replay})"
                )
                raise click.ClickException(f"seat {as_name!r} in game {game_id} is a bot: it has no token{hint}")
            join = red7_line("join", game_id, as_name, url=typed_url())
            hint = f"join it: {join}" if not seat.get("joined") else "give its token with --token"
            raise click.ClickException(f"you hold no token for seat {as_name!r} in game {game_id} ({hint})")
        return as_name, held[as_name]
    if not held:
        session.client.view(game_id)  # an unknown game says so
        join = red7_line("join", game_id, url=typed_url())
        raise click.ClickException(f"you hold no seat in game {game_id} (join one: {join} NAME)")
    if len(held) == 1:
        name = next(iter(held))
        return name, held[name]
    view = session.client.view(game_id)
    to_move = view.get("to_move")
    if to_move is not None and view["seats"][to_move]["name"] in held:
        name = view["seats"][to_move]["name"]
        return name, held[name]
    if view["status"] == "over":
        # Nobody is to move and never will be: any seat held tells the same story (the game
        # is over), which is worth more than a request to choose one.
        name = sorted(held)[0]
        return name, held[name]
    raise click.ClickException(f"you hold seats {', '.join(sorted(held))} in game {game_id}: choose one with --as")


def seat_view(client: GameClient, game_id: str, name: str, token: str) -> dict[str, Any]:
    return client.seat_view(game_id, name, token)


# ---------------------------------------------------------------------------- new


@click.command()
@click.option("--player", "-p", "people", multiple=True, metavar="NAME", help="A person's seat (repeatable).")
@click.option(
    "--bot",
    "-b",
    "bots",
    multiple=True,
    metavar="[NAME=]BOT",
    help=f"A bot's seat: {', '.join(BOT_NAMES)} (repeatable).",
)
@variant_options
@time_options
@click.option("--seed", help="Seed text for reproducible deals (default: 32 random bytes).")
@click.option(
    "--id", "game_id", metavar="GAME", help="Choose the game id (default: random; ids starting t- are tournaments')."
)
@click.option("--join/--no-join", default=True, show_default=True, help="Take the first player's seat yourself.")
@click.option("--join-all", is_flag=True, help="Take every player's seat (hot seat, or to hand out tokens).")
@click.option(
    "--reserve",
    "reserved",
    multiple=True,
    metavar="NAME=KEY",
    help="Seat person NAME at creation with public key KEY (64 hex digits; its token stays with its owner).",
)
@web_option
@json_option
@player_url_option
@pass_session
def new(
    session: Session,
    people: tuple[str, ...],
    bots: tuple[str, ...],
    scoring: bool,
    draw: bool,
    actions: bool,
    rounds: int,
    target: int | None,
    clock: tuple[int, int] | None,
    turn_time: int | None,
    join_time: int | None,
    seed: str | None,
    game_id: str | None,
    join: bool,
    join_all: bool,
    reserved: tuple[str, ...],
    web: str | None,
    as_json: bool,
) -> None:
    """Create a game for 2-4 seats of people and bots.

    Prints the game id and the tokens of the seats you took (kept in your
    credentials file, readable only by you). --reserve NAME=KEY seats a person
    at once for whoever holds the token of public key KEY (red7 join prints
    none: the seat is theirs alone); --join and --join-all pass over such seats.

    \b
    Example:
        red7 new -p alice -p bob --bot greedy --scoring --draw --actions
        red7 new -p alice -p bob --clock 5m+5s
    """
    if join_all and not join:
        raise click.UsageError("--join-all takes every seat, --no-join none: give one of them")
    _web_without_json(web, as_json)
    if game_id is not None and not game_id:
        raise click.UsageError("--id needs a game id (leave it out for a random one)")
    if game_id is not None:
        check_game_id(game_id)
    if game_id is not None and game_id.startswith(TOURNAMENT_GAMES):
        # A tournament creates its games under fixed ids when it pairs them: a game
        # taken earlier under such an id would stop it (docs/tournaments.md).
        raise click.UsageError(
            f"game ids starting {TOURNAMENT_GAMES} are kept for tournament games: choose another --id"
        )
    check_seed(seed)
    refuse_seed_over_http(session, seed)
    seats = seat_specs(people, bots)
    variant = timed(variant_from(len(seats), scoring, draw, actions, rounds, target), clock, turn_time, join_time)
    keys = reserved_keys(reserved, people)
    joins = [s.name for s in seats if not s.is_bot and s.name not in keys]
    joins = joins if join_all else (joins[:1] if join else [])
    session.ensure_worker()
    created = session.client.create(variant, seats, seed=seed, join=joins, keys=keys, game_id=game_id)  # tokens kept
    session.witness(created.game_id)
    if as_json:
        emit_json(
            {
                "game": created.game_id,
                "commitment": created.commitment,
                "seats": [seat_data(s) for s in seats],
                "tokens": created.tokens,
            }
        )
        return
    out = console()
    url = typed_url()
    out.print(Text(f"Game {created.game_id} created: {variant.describe()}.", style="bold"))
    out.print(f"Seed commitment (SHA-256): {created.commitment}")
    for s in seats:
        seat_token = created.tokens.get(s.name)
        joining = red7_line("join", created.game_id, s.name, url=url)
        status = f"bot ({s.bot})" if s.is_bot else (f"yours, token {seat_token}" if seat_token else f"open: {joining}")
        if s.name in keys:
            status = f"reserved for key {keys[s.name]}"
        out.print(f"  {shown(s.name)}: {status}")
    if created.tokens:
        out.print(f"Play it: {red7_line('play', '--game', created.game_id, url=url)}")
    for number, s in enumerate(seats):
        if web is not None and s.name in created.tokens:  # one line each, never wrapped: it is copied whole
            click.echo(
                f"In a browser, {shown(s.name)}: {seat_link(web, created.game_id, number, created.tokens[s.name])}"
            )


def _web_without_json(web: str | None, as_json: bool) -> None:
    if web is not None and as_json:
        raise click.UsageError(
            "--web prints a line of text: with --json, build the link from the token (red7 help web)"
        )


# ---------------------------------------------------------------------------- join


ANSWER_WAIT = 10.0  # seconds a join waits for a worker to answer an earlier join of the seat


def _earlier_join(session: Session, game: str, name: str) -> str | None:
    """The token of an earlier join of seat ``name`` from here, if it took the seat just now; None to join afresh.

    A join saves its token before a worker answers, so a join that timed out leaves
    a token behind whatever the answer turns out to be.  The seat's public key tells:
    ours means the seat is held (refused, so its good token is never overwritten);
    someone else's means the earlier join was refused (its token is forgotten); none
    means it was refused or is not answered yet, so wait for the answer first.
    """
    held = session.credentials.token(game, name)
    if held is None:
        return None
    view = session.client.view(game)
    seat = seat_index(view, name)
    key = session.client.seat_key(game, seat, view)
    if key is None:
        session.ensure_worker()
        if not session.client.join_answered(game, name, held, ANSWER_WAIT):
            # a gateway's workers are its operator's: none to start from here
            start = (
                "the gateway's operator runs them"
                if session.remote
                else f"start one: {red7_line('worker', url=typed_url())}"
            )
            raise click.ClickException(
                f"your earlier join of seat {name} in game {game} is not answered yet: is a worker running? "
                f"({start}; your token is kept)"
            )
        key = session.client.seat_key(game, seat)
        if key == public_key(held):
            return held  # the earlier join has just been answered: it took the seat
    if key == public_key(held):
        if view["status"] == "over":  # nothing left to play: point at what there is to see
            see = red7_line("show", game, "--as", name, url=typed_url())
            raise click.ClickException(f"you already hold seat {name} in game {game}, which is over: see it with {see}")
        play = red7_line("play", "--game", game, "--as", name, url=typed_url())
        raise click.ClickException(f"you already hold seat {name} in game {game}: play it with {play}")
    session.credentials.forget(game, name, held)
    if key is not None:
        raise click.ClickException(
            f"cannot join: seat {name} has already been taken (your earlier join of it was refused; "
            "its saved token is forgotten)"
        )
    return None


@click.command()
@click.argument("game")
@click.argument("name")
@web_option
@json_option
@player_url_option
@pass_session
def join(session: Session, game: str, name: str, web: str | None, as_json: bool) -> None:
    """Take the open seat NAME in GAME; its secret token is saved for you.

    \b
    Example:
        red7 join 3f9a2c1b bob
    """
    _web_without_json(web, as_json)
    token = _earlier_join(session, game, name)
    if token is None:
        session.ensure_worker()
        try:
            token = session.client.join(game, name)  # the token is kept before the wait for a worker
        except JoinRefused as exc:
            session.credentials.forget(game, name, exc.token)
            raise click.ClickException(f"cannot join: {exc}") from None
    session.witness(game)
    if as_json:
        emit_json({"game": game, "seat": name, "token": token})
    else:
        click.echo(f"You are {shown(name)} in game {game}. Token: {token}")
        click.echo(f"Play it: {red7_line('play', '--game', game, '--as', name, url=typed_url())}")
        if web is not None:
            seat = seat_index(session.client.view(game), name)
            click.echo(f"In a browser: {seat_link(web, game, seat, token)}")


# ---------------------------------------------------------------------------- games


@click.command()
@click.option(
    "--limit", default=50, show_default=True, type=click.IntRange(min=1), help="How many games, newest first."
)
@json_option
@player_url_option
@pass_session
def games(session: Session, limit: int, as_json: bool) -> None:
    """List games, newest first, with their status.

    \b
    Example:
        red7 games --limit 10
    """
    summaries = session.client.games(limit)
    if as_json:
        emit_json([s.as_json() for s in summaries])
        return
    if not summaries:
        click.echo("No games yet. Start one: red7 play --bots greedy")
        return
    table = Table(box=None, pad_edge=False)
    for column in ("game", "created", "players", "status", "events"):
        table.add_column(column)
    for s in summaries:
        names = [shown(x["name"]) for x in s.seats]
        if s.status == "over" and s.winners == []:
            status = no_winner_text(s.reason)
        elif s.status == "over" and s.winners is not None:
            status = "won by " + " and ".join(names[w] for w in s.winners)
        elif s.status == "playing" and s.to_move is not None and s.to_move < len(names):
            status = f"{names[s.to_move]} to move"
        else:
            status = shown(s.status)
        when = (
            "?" if s.created is None else datetime.datetime.fromtimestamp(s.created / 1000).strftime("%Y-%m-%d %H:%M")
        )
        # the id and status as text (shown): over HTTP they are a gateway's answer, not this machine's
        table.add_row(shown(s.game_id), when, ", ".join(names), status, "?" if s.version is None else str(s.version))
    out = console()
    out.print(table)
    for s in summaries:
        if s.unreadable is not None:
            out.print(Text(shown(s.unreadable), style="dim"))
    # full (a gateway lists MOST_LISTED at most): maybe more
    total = session.client.count_games() if len(summaries) in (limit, MOST_LISTED) else len(summaries)
    if total is None:  # more than a gateway lists at once
        more = red7_line("games", "--limit", str(MOST_LISTED), url=typed_url())
        out.print(Text(f"The newest {len(summaries)} games of more than {MOST_LISTED}; more: {more}", style="dim"))
    elif total > len(summaries):
        more = red7_line("games", "--limit", str(total), url=typed_url())
        out.print(Text(f"The newest {len(summaries)} of {total} games; all of them: {more}", style="dim"))


# ---------------------------------------------------------------------------- show


@click.command()
@click.argument("game")
@click.option(
    "--as", "as_name", metavar="NAME", help="Show what this seat sees (default: the one seat you hold, if only one)."
)
@token_option("The seat's token, if it is not in your credentials file")
@click.option("--public", is_flag=True, help="Show the public view even if you hold a seat.")
@json_option
@player_url_option
@pass_session
def show(session: Session, game: str, as_name: str | None, token: str | None, public: bool, as_json: bool) -> None:
    """Show a game as your seat when you hold exactly one (as `red7 moves`
    acts), else the public view; --as NAME picks a seat, --public the public view.

    \b
    Example:
        red7 show 3f9a2c1b --as alice
    """
    if public and (as_name or token):
        raise click.UsageError("--public shows no seat's view: leave out --as and --token")
    held = {} if public or as_name or token else session.credentials.seats(game)
    if as_name or token or len(held) == 1:
        name, seat_token = seat_for(session, game, as_name, token)
        view = seat_view(session.client, game, name, seat_token)
    else:
        view = session.client.view(game)
    session.witness(game)
    if as_json:
        emit_json(view)
        return
    render_view(console(), view, you=view.get("seat"))
    if len(held) > 1:
        choose = red7_line("show", game, "--as", "NAME", url=typed_url())
        console().print(
            Text(f"You hold seats {', '.join(map(shown, sorted(held)))}: see one with {choose}", style="dim")
        )


# ---------------------------------------------------------------------------- moves


@click.command()
@click.argument("game")
@click.option("--as", "as_name", metavar="NAME", help="Your seat (default: the one you hold).")
@token_option("The seat's token, if it is not in your credentials file")
@json_option
@player_url_option
@pass_session
def moves(session: Session, game: str, as_name: str | None, token: str | None, as_json: bool) -> None:
    """List your legal turns in GAME (empty when it is not your turn).

    Each line is a turn as you would type it to `red7 move`; `end` is implied.
    A turn ending in `...` stops after a 3 draws you a card: you choose the rest
    once you have seen it.

    \b
    Example:
        red7 moves 3f9a2c1b
    """
    name, seat_token = seat_for(session, game, as_name, token)
    view = seat_view(session.client, game, name, seat_token)
    legal = view.get("legal", [])
    if as_json:
        emit_json({"game": game, "seat": name, "to_move": view.get("to_move"), "legal": legal})
        return
    if not legal:
        mover = view.get("to_move")
        if view["status"] == "over":
            click.echo(f"The game is over: see {red7_line('show', game, url=typed_url())}")
        elif mover is None:
            click.echo("Nobody is to move.")
        else:
            click.echo(f"It is not your turn ({shown(view['seats'][mover]['name'])} to move).")
        return
    for i, turn in enumerate(legal, 1):
        click.echo(f"{i:3}. {turn}")


# ---------------------------------------------------------------------------- move


def build_turn(
    turn: str | None, play: tuple[str, ...], canvas: tuple[str, ...], draw: bool, fold: bool, keep_open: bool
) -> str:
    """Turn text from the TURN argument or the friendly options.

    Every option given becomes a step (a second ``--canvas`` too): the rules, not
    the option parser, say what a turn may hold, so nothing typed is silently dropped.
    """
    if turn and (play or canvas or draw or fold):
        raise click.UsageError("give the turn either as TURN or with --play/--canvas/--draw/--fold, not both")
    if fold:
        if play or canvas or draw or keep_open:
            raise click.UsageError("--fold stands alone")
        return "fold"
    if not turn:
        parts = [f"p:{c}" for c in play] + [f"c:{c}" for c in canvas] + (["draw"] if draw else [])
        if not parts:
            raise click.UsageError('give a turn, e.g. red7 move GAME "p:R7 c:B3" or --play R7 --canvas B3')
        turn = " ".join(parts)
    if keep_open and not turn.rstrip().endswith("..."):
        turn += " ..."
    try:  # notation that is no turn at all is a typing mistake (exit 2); an illegal turn, the referee's refusal (1)
        Turn.parse(turn)
    except StepError as exc:
        raise click.UsageError(str(exc)) from None
    return turn


@click.command()
@click.argument("game")
@click.argument("turn", required=False)
@click.option(
    "--play", "-P", "play", multiple=True, metavar="CARD", help="Play CARD to your palette (twice after a 5)."
)
@click.option("--canvas", "-c", multiple=True, metavar="CARD", help="Discard CARD to the Canvas.")
@click.option("--draw", is_flag=True, help="Take the Advanced draw after discarding.")
@click.option("--fold", is_flag=True, help="Give up this round.")
@click.option("--open", "keep_open", is_flag=True, help="Keep the turn open (to see a card a 3 draws).")
@click.option("--as", "as_name", metavar="NAME", help="Your seat (default: the one you hold).")
@token_option("The seat's token, if it is not in your credentials file")
@click.option("--id", "command_id", metavar="ID", help="Command id: resubmitting the same id has its effect once.")
@json_option
@player_url_option
@pass_session
def move(
    session: Session,
    game: str,
    turn: str | None,
    play: tuple[str, ...],
    canvas: tuple[str, ...],
    draw: bool,
    fold: bool,
    keep_open: bool,
    as_name: str | None,
    token: str | None,
    command_id: str | None,
    as_json: bool,
) -> None:
    """Play a turn in GAME: steps in notation, `end` implied.

    Steps: p:R7 (play to palette), c:B3 (discard to Canvas), draw, 7c:G2 / 7d:G2
    (a 7's action), 1:O4 (a 1's action), fold. The whole turn is applied or
    nothing is; a rejected turn exits with code 1 and says why. Notation that
    is no turn, or a turn too large for any referee (about 16 KB), is refused
    before it is sent (exit 2).

    \b
    Examples:
        red7 move 3f9a2c1b "p:R7 c:B3"
        red7 move 3f9a2c1b --play R7 --canvas B3
        red7 move 3f9a2c1b p:G3 --open      # see the card the 3 draws first
    """
    text = build_turn(turn, play, canvas, draw, fold, keep_open)
    send_command(session, game, ("move", game, text), text, as_name, token, command_id, as_json)


def send_command(
    session: Session,
    game: str,
    again_args: tuple[str, ...],
    text: str,
    as_name: str | None,
    token: str | None,
    command_id: str | None,
    as_json: bool,
) -> None:
    """Sign ``text`` (a turn, or ``resign``) for the seat, send it and show the referee's answer.

    ``again_args`` is the command line that sends it again (``--as`` and ``--id`` are added),
    shown when the answer is lost.  A refusal exits 1.
    """
    if command_id is not None and session.remote and not COMMAND_ID.fullmatch(command_id):
        raise click.UsageError("--id: a gateway takes 16 to 100 of A-Z a-z 0-9 _ - (a random one: leave --id out)")
    name, seat_token = seat_for(session, game, as_name, token)
    session.ensure_worker()
    command_id = command_id or uuid.uuid4().hex  # known here, so a lost answer can be asked for again
    again = red7_line(*again_args, "--as", name, "--id", command_id, url=typed_url())
    try:
        answer = session.client.play(game, name, seat_token, text, command_id=command_id)
    except UNREACHABLE_ERRORS + (GatewayUnreachable,) as exc:  # Redis, or the gateway, lost on the way
        raise click.ClickException(
            f"{error_line(exc)}; the turn may or may not be stored; "
            f"send it again with its id, which takes effect once: {again}"
        ) from None
    except TurnTooLarge as exc:
        raise click.UsageError(str(exc)) from None  # refused before it was sent: nothing is stored
    except NoAnswer:
        if session.remote:  # the gateway's workers are its operator's: none of them can be counted from here
            why = "no worker of the gateway answered in time"
        else:
            workers = len(live_workers(session.connection))
            start = red7_line("worker", url=typed_url())
            why = f"all {workers} worker(s) are busy" if workers else f"no worker is running (start one with: {start})"
        raise click.ClickException(
            f"no answer yet for game {game}: {why}; the turn is stored and will be answered, "
            f"so do not play another: ask for its answer with {again}"
        ) from None
    session.witness(game)
    if as_json:
        emit_json(
            {
                "game": game,
                "seat": name,
                "command": answer.command_id,
                "applied": answer.applied,
                "reason": answer.reason,
                "events": answer.events,
            }
        )
        if not answer.applied:
            raise SystemExit(1)
        return
    if not answer.applied:
        raise click.ClickException(f"rejected: {shown(answer.reason or '')}")
    out = console()
    mine = seat_view(session.client, game, name, seat_token)
    for line in describe_events(answer.events, [s["name"] for s in mine["seats"]]):
        out.print(line)
    if mine.get("turn_steps") and mine.get("to_move") == mine.get("seat"):
        # An open turn: show the hand (with the card a 3 drew) before the rest of it.
        hand = Text("Your hand: ")
        hand.append_text(cards_text(mine.get("hand", [])))
        out.print(hand)
        moves = red7_line("moves", game, url=typed_url())
        out.print(f"Your turn continues after {' '.join(mine['turn_steps'])}: see {moves}")


# ---------------------------------------------------------------------------- resign


def seat_command(f: Callable[..., None]) -> click.Command:
    """The command line of a word a seat signs in a turn's place (``resign``, ``abort``):
    GAME, the seat (``--as``, ``--token``), ``--id``, ``--json`` and ``--url``."""
    for option in (
        pass_session,
        player_url_option,
        json_option,
        click.option(
            "--id", "command_id", metavar="ID", help="Command id: resubmitting the same id has its effect once."
        ),
        token_option("The seat's token, if it is not in your credentials file"),
        click.option("--as", "as_name", metavar="NAME", help="Your seat (default: the one you hold)."),
        click.argument("game"),
    ):
        f = option(f)
    return click.command()(f)


@seat_command
def resign(
    session: Session, game: str, as_name: str | None, token: str | None, command_id: str | None, as_json: bool
) -> None:
    """Give up the whole game GAME (a fold gives up only the round).

    Your seat is out for good and ranks last; the others play on, and when one seat
    is left it wins. You may resign at any time you are still in the game, your
    turn or not. The command is signed with your seat's token like a turn, so
    nobody else can resign for you. A refusal (the game is over, you are already
    out) exits with code 1.

    \b
    Example:
        red7 resign 3f9a2c1b
    """
    send_command(session, game, ("resign", game), RESIGN, as_name, token, command_id, as_json)


# ---------------------------------------------------------------------------- abort


@seat_command
def abort(
    session: Session, game: str, as_name: str | None, token: str | None, command_id: str | None, as_json: bool
) -> None:
    """End GAME, which nobody has moved in yet, with no winner.

    Any seat that has joined may abort, its turn or not (say, when the other
    player never comes), but only before anyone has moved: no play, discard or
    fold yet. The command is signed with your seat's token like a turn. A refusal
    (a turn has been played, the game is over) exits with code 1.

    \b
    Example:
        red7 abort 3f9a2c1b
    """
    send_command(session, game, ("abort", game), ABORT, as_name, token, command_id, as_json)


# ---------------------------------------------------------------------------- watch


@click.command()
@click.argument("game")
@click.option("--as", "as_name", metavar="NAME", help="Watch as your seat (shows your hand).")
@token_option("The seat's token, if it is not in your credentials file")
@click.option("--timeout", type=Seconds(), default=0, help="Stop after this many idle seconds (0: never).")
@json_option
@player_url_option
@pass_session
def watch(session: Session, game: str, as_name: str | None, token: str | None, timeout: float, as_json: bool) -> None:
    """Follow GAME live until it ends: every move as it happens (no polling).

    On a terminal the board is redrawn in place as the game moves, the last
    events under it; piped, the board is printed once and then one line per
    event. With --json, the first line is the current view ({"type": "View",
    ...}), then one JSON object per public event, one per line.

    \b
    Example:
        red7 watch 3f9a2c1b --as alice
    """
    service = session.client
    name, seat_token = seat_for(session, game, as_name, token) if (as_name or token) else (None, "")
    out = console()

    def read_view() -> dict[str, Any]:
        return seat_view(service, game, name, seat_token) if name else service.view(game)

    cursor = service.last_change_id(game)
    view = read_view()
    session.witness(game)
    names = [s["name"] for s in view["seats"]]
    if as_json:  # where the events start from: the first line, marked apart from the events
        emit_line({"type": "View", **view})
    over = view.get("status") == "over"
    table = LiveTable(out, view) if out.is_terminal and not as_json and not over else None
    if not as_json and table is None:
        render_view(out, view, you=view.get("seat"))
    if over:
        if as_json:  # no event will come: say so where it cannot be mistaken for one
            click.echo(f"Game {game} is over: nothing to follow (red7 export {game} has its events).", err=True)
        return
    limit = timeout or None  # how long to wait for Redis to come back: --timeout if given, else OUTAGE_LIMIT
    try:
        with table.running() if table else contextlib.nullcontext():
            while True:
                # Redis restarted (or the network dropped): wait for it, then read on from the
                # last change seen (a changes stream keeps its ids across a restart).
                change = riding_out(session, partial(service.wait_change, game, cursor, timeout or 30.0), limit)
                # after each change and each quiet spell (a restart that lost writes may bring none)
                riding_out(session, partial(session.witness, game), limit)
                if change is None:
                    if timeout:
                        click.echo(f"No change for {timeout:g}s; stopping.", err=True)
                        return
                    continue
                cursor, events = change
                if as_json:
                    for event in events:
                        emit_line(event)
                    if any(e.get("type") == "GameOver" for e in events):
                        return
                    continue
                told = describe_events((e for e in events if e.get("type") not in SAID_BY_FINAL_VIEW), names)
                if table is not None:  # the board read again after every change, redrawn in place
                    table.show(riding_out(session, read_view, limit), told)
                    if any(e.get("type") == "GameOver" for e in events):
                        return
                    continue
                for line in told:  # the end is said by the final view below
                    out.print(line)
                if any(e.get("type") == "GameOver" for e in events):
                    final = riding_out(session, read_view, limit)
                    render_view(out, final, you=final.get("seat"))
                    return
                if name and any(e.get("type") in ("CommandApplied", "RoundDealt") for e in events):
                    current = riding_out(session, read_view, limit)
                    if current.get("to_move") == current.get("seat"):
                        render_view(out, current, you=current.get("seat"))
    except KeyboardInterrupt:
        return


class LiveTable:
    """``watch`` on a terminal: the board redrawn in place as the game moves, the last
    events told under it (as many as the terminal has room for, at least three).
    Piped output stays line by line: a file or a pager has no place to redraw."""

    def __init__(self, out: Console, view: dict[str, Any]) -> None:
        self.out = out
        self.told: list[Text] = []
        self.live = Live(
            self._table(view), console=out, auto_refresh=False, vertical_overflow="visible", redirect_stderr=False
        )

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """The table on screen, and stderr printed above it meanwhile (see :class:`AboveTheTable`)."""
        stderr = AboveTheTable(self.out)
        with self.live, contextlib.redirect_stderr(stderr):
            try:
                yield
            finally:
                if stderr.pending:  # a last line without its newline
                    self.out.print(Text(stderr.pending))

    def _table(self, view: dict[str, Any]) -> Group:
        board = view_parts(view, you=view.get("seat"))
        rows = len(self.out.render_lines(Group(*board), pad=False))
        room = max(3, self.out.height - rows - 2)  # the separator, and the line the cursor waits on
        return Group(*board, Text("─" * min(self.out.width, 40), style="dim"), *self.told[-room:])

    def show(self, view: dict[str, Any], told: list[Text]) -> None:
        self.told = [*self.told, *told][-self.out.height :]
        self.live.update(self._table(view), refresh=True)


class AboveTheTable(io.TextIOBase):
    """stderr while the table is live: each line printed above the table, which is then
    drawn again under it. A raw write (what click.echo(err=True) does to rich's own
    proxy, by writing to the stream's binary buffer) would land inside the table, and
    the next redraw would start that many lines too low. A text stream click accepts as
    it is (an encoding, and bytes refused)."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, out: Console) -> None:
        self.out = out
        self.pending = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError("AboveTheTable takes text")
        *lines, self.pending = (self.pending + text).split("\n")
        for line in lines:
            self.out.print(Text(line))
        return len(text)


def emit_line(data: Any) -> None:
    import json

    click.echo(json.dumps(data, sort_keys=True))


COMMANDS = [new, join, games, show, moves, move, resign, abort, watch]
