"""Creating a tournament and reading one back: the entry points the CLI uses.

Creation validates everything a run could later trip over (entrant names usable as
seat names, bot specs that build, a format and number of rounds that make sense), so
a tournament that exists can always be run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import comb

import redis

from ..bots.base import BotError, make_bot
from ..deal import commitment, make_seed
from ..service.codec import GENESIS
from ..service.events import BOT, PERSON, SeatSpec
from ..service.names import name_problem, unshowable
from ..service.store import GameStore, now_ms
from ..service.tokens import key_problem
from ..variant import Variant
from .codec import encode
from .events import FORMATS, ROUND_ROBIN, TOURNAMENT_RULES, TournamentCreated
from .ids import TournamentError, check_tournament_id
from .pairing import default_rounds
from .state import TournamentState
from .store import TournamentStore

__all__ = [
    "MAX_CYCLE_GAMES",
    "MAX_ENTRANTS",
    "MAX_ROUNDS",
    "Created",
    "create_tournament",
    "load",
    "check_entrants",
    "count_problem",
    "title_problem",
]

MAX_ENTRANTS = 64
MAX_ROUNDS = 999
MAX_CYCLE_GAMES = 2500  # a round robin plays every group of k entrants: C(n, k) games


@dataclass(frozen=True)
class Created:
    event: TournamentCreated
    seed: bytes  # the secret seed (shown to whoever created it, never stored in the stream)


def title_problem(title: str) -> str | None:
    """What is wrong with a tournament's title (stripped), or None: the CLI says it as a usage error."""
    if not title or len(title) > 80 or any(unshowable(ch) for ch in title):
        return "a tournament name is 1-80 characters on one line, without control characters"
    return None


def count_problem(entrants: int, table_size: int) -> str | None:
    """What is wrong with this many entrants for tables of ``table_size``, or None."""
    if entrants < table_size:
        return f"a table of {table_size} needs at least {table_size} entrants, got {entrants}"
    if entrants > MAX_ENTRANTS:
        return f"at most {MAX_ENTRANTS} entrants, got {entrants}"
    return None


def check_entrants(entrants: Sequence[SeatSpec], table_size: int, max_bot_time: float | None = None) -> None:
    """Raise TournamentError unless every entrant can take a seat in a game (its bot within
    ``max_bot_time``, the workers' cap, which every game's creation will hold it to)."""
    problem = count_problem(len(entrants), table_size)
    if problem is not None:
        raise TournamentError(problem)
    names = [e.name for e in entrants]
    for e in entrants:
        problem = name_problem(e.name)
        if problem is not None:
            raise TournamentError(f"entrant name {e.name!r} {problem}")
        if e.kind not in (PERSON, BOT):
            raise TournamentError(f"entrant {e.name!r} must be a person or a bot")
        if e.kind == BOT:
            try:
                make_bot(e.bot or "", new_game=True, max_time=max_bot_time)
            except BotError as exc:
                raise TournamentError(f"entrant {e.name}: {exc}") from None
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise TournamentError(f"entrant names must be different ({', '.join(duplicates)} appears twice)")


def check_keys(entrants: Sequence[SeatSpec], keys: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The entrants' keys, sorted by name; TournamentError for a key of no person entrant,
    one that is no public key, or one key for two entrants."""
    people = {e.name for e in entrants if e.kind == PERSON}
    for name, key in keys.items():
        if name not in people:
            raise TournamentError(f"a key for {name!r}, who is no person entrant")
        if problem := key_problem(key):
            raise TournamentError(f"entrant {name}'s key {problem}")
    if len(set(keys.values())) < len(keys):
        raise TournamentError("one key for two entrants: each entrant needs a key of its own")
    return tuple(sorted(keys.items()))


def create_tournament(
    connection: redis.Redis,
    tournament: str,
    entrants: Sequence[SeatSpec],
    variant: Variant,
    format: str,
    *,
    rounds: int | None = None,
    seed: bytes | str | None = None,
    name: str | None = None,
    keys: Mapping[str, str] | None = None,
) -> Created:
    """Write a new tournament's first event (its games are created by the runner).

    ``keys``: entrant name -> Ed25519 public key (64 hex digits) of people entrants who
    hold their own token: each is seated with it in every game of theirs at creation."""
    check_tournament_id(tournament)
    if format not in FORMATS:
        raise TournamentError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
    check_entrants(entrants, variant.players, GameStore(connection).max_bot_time())
    n = len(entrants)
    if format == ROUND_ROBIN and comb(n, variant.players) > MAX_CYCLE_GAMES:
        raise TournamentError(
            f"a round robin of {n} entrants at tables of {variant.players} is {comb(n, variant.players)} games: "
            f"at most {MAX_CYCLE_GAMES}; play a Swiss tournament instead"
        )
    if rounds is None:
        rounds = default_rounds(format, n, variant.players)
    if not 1 <= rounds <= MAX_ROUNDS:
        raise TournamentError(f"rounds must be 1-{MAX_ROUNDS}, not {rounds}")
    title = (name or tournament).strip()
    problem = title_problem(title)
    if problem is not None:
        raise TournamentError(problem)
    entrant_keys = check_keys(entrants, keys or {})
    secret = make_seed(seed)
    created = now_ms()
    event = TournamentCreated(
        tournament,
        title,
        tuple(entrants),
        variant,
        format,
        rounds,
        commitment(secret),
        created,
        entrant_keys,
        TOURNAMENT_RULES,
    )
    store = TournamentStore(connection)
    if not store.create(tournament, secret, encode(event, 0, GENESIS, created), created):
        raise TournamentError(f"a tournament {tournament!r} already exists")
    return Created(event, secret)


def load(connection: redis.Redis, tournament: str) -> TournamentState:
    """Fold a tournament's whole stream (raises NoSuchTournament, CorruptEvent, TournamentCorrupt)."""
    check_tournament_id(tournament)
    state = TournamentState()
    TournamentStore(connection).catch_up(tournament, state)
    return state
