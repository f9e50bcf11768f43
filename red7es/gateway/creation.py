"""Creating a game over HTTP: who may (``red7 gateway --create``), and what a request asks for.

The request body is :class:`CreateBody` (docs/gateway.md, Create a game); it becomes the
same :class:`~red7es.variant.Variant` and :class:`~red7es.service.events.SeatSpec` seats
``red7 new`` builds, and :meth:`GameService.create` checks and stores them, as for the
CLI.  The client never chooses the seed: the gateway draws it (``make_seed``), so no
HTTP client can deal itself a known game.

Who may create is the operator's choice: :class:`~red7es.gateway.settings.Creation`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from red7es.bots.base import BotError, make_bot
from red7es.durations import DurationError, parse_clock, parse_duration
from red7es.service.events import BOT, PERSON, SeatSpec
from red7es.service.names import name_problem
from red7es.service.store import TOURNAMENT_GAMES, valid_game_id
from red7es.service.tokens import key_problem
from red7es.variant import Variant, VariantError

from .errors import GatewayError

__all__ = ["CreateBody", "PlayerBody", "asked_game"]


class PlayerBody(BaseModel):
    """One seat: a person (open, or reserved for ``key``), or a bot (``bot``)."""

    model_config = ConfigDict(extra="forbid")
    name: StrictStr = Field(min_length=1, max_length=100, description="the seat's name, unique in the game")
    bot: StrictStr | None = Field(
        default=None, min_length=1, max_length=200, description="a bot's spec, as `red7 new --bot` takes it"
    )
    key: StrictStr | None = Field(
        default=None,
        description="a person's public key (64 lower-case hex digits): the seat is joined at creation, "
        "for that key alone; without it the seat is open",
    )


class CreateBody(BaseModel):
    """A game to create: 2-4 seats and the variant, with `red7 new`'s defaults."""

    model_config = ConfigDict(extra="forbid")
    players: list[PlayerBody] = Field(min_length=2, max_length=4, description="2 to 4 seats, in seat order")
    scoring: StrictBool = Field(default=False, description="Advanced scoring: play to a target score")
    draw: StrictBool = Field(default=False, description="the Advanced draw after discarding a high card")
    actions: StrictBool = Field(default=False, description="the actions of the odd cards (1, 3, 5, 7)")
    rounds: StrictInt = Field(default=1, ge=1, le=99, description="basic game: round wins needed")
    target: StrictInt | None = Field(
        default=None, ge=1, le=999, description="scoring: the points that end the game (default 40/35/30)"
    )
    clock: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=40,
        description="a game clock per seat, BASE[+INCREMENT] as `red7 new --clock` takes it (5m+5s)",
    )
    turn_time: StrictStr | None = Field(
        default=None,
        min_length=1,
        max_length=40,
        description="a limit on each turn, as `red7 new --turn-time` takes it (30s, 2d)",
    )
    id: StrictStr | None = Field(
        default=None, max_length=40, description="the game id (default: random); ids starting t- are tournaments'"
    )


@dataclass(frozen=True)
class AskedGame:
    """What a valid body asks for, in the service's terms."""

    variant: Variant
    seats: list[SeatSpec]
    keys: dict[str, str]  # seat name -> public key, for the seats reserved at creation
    game_id: str | None


def asked_game(body: CreateBody, max_bot_time: float | None = None) -> AskedGame:
    """The game ``body`` asks for; a 400 naming the field for what the schema cannot say
    (a seat both a bot and a person, a name or bot no seat may have, a bad key or id, rules
    that contradict each other; a bot thinking longer than ``max_bot_time``, the workers'
    cap).  :meth:`GameService.create` checks the seats again, as for `red7 new`."""
    seats: list[SeatSpec] = []
    keys: dict[str, str] = {}
    names: set[str] = set()
    for i, player in enumerate(body.players):
        where = f"players.{i}"
        problem = name_problem(player.name)
        if problem is not None:
            raise GatewayError(400, f"{where}.name: seat name {player.name!r} {problem}")
        if player.name in names:
            raise GatewayError(400, f"{where}.name: seat names must be different ({player.name} appears twice)")
        names.add(player.name)
        if player.bot is not None:
            try:
                make_bot(player.bot, new_game=True, max_time=max_bot_time)
            except BotError as exc:
                raise GatewayError(400, f"{where}.bot: {exc}") from None
        if player.bot is not None and player.key is not None:
            raise GatewayError(400, f"{where}: a bot's seat takes no key (give bot or key, not both)")
        if player.key is not None:
            if problem := key_problem(player.key):
                raise GatewayError(400, f"{where}.key: {problem}")
            if player.key in keys.values():
                raise GatewayError(400, f"{where}.key: this key already holds another seat: one seat per key")
            keys[player.name] = player.key
        bot = player.bot is not None
        seats.append(SeatSpec(player.name, BOT, player.bot) if bot else SeatSpec(player.name, PERSON))
    if body.id is not None:
        if not valid_game_id(body.id):
            raise GatewayError(400, f"id: {body.id!r} is not a valid game id (lower-case letters, digits, dashes)")
        if body.id.startswith(TOURNAMENT_GAMES):
            raise GatewayError(400, f"id: game ids starting {TOURNAMENT_GAMES} are kept for tournament games")
    if body.clock is not None and body.turn_time is not None:
        raise GatewayError(400, "clock, turn_time: a game has a clock or a turn time, not both")
    try:
        clock = None if body.clock is None else parse_clock(body.clock)
    except DurationError as exc:
        raise GatewayError(400, f"clock: {exc}") from None
    try:
        turn_time = None if body.turn_time is None else parse_duration(body.turn_time)
    except DurationError as exc:
        raise GatewayError(400, f"turn_time: {exc}") from None
    try:
        rules = (body.scoring, body.draw, body.actions, body.rounds, body.target)
        variant = Variant(len(seats), *rules, clock=clock, turn_time=turn_time)
    except VariantError as exc:
        raise GatewayError(400, f"variant: {exc}") from None
    return AskedGame(variant, seats, keys, body.id)
