"""Events of a hosted game beyond the rules: creation, seats, commands, the seed.

Together with the engine's facts (:mod:`red7es.facts`) these make up a game's log.
They are plain frozen dataclasses; :mod:`red7es.service.codec` turns them into bytes.
Commands (what clients submit) are here too, since they are what the log answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..facts import Fact
from ..game import BATCH_RULES
from ..variant import Variant

__all__ = [
    "SeatSpec",
    "GameCreated",
    "SeatJoined",
    "CommandApplied",
    "CommandRejected",
    "SeedRevealed",
    "ClockStarted",
    "TimedOut",
    "Adjudicated",
    "Withdrawn",
    "JoinDeadline",
    "JoinClosed",
    "CreateCommand",
    "JoinCommand",
    "TurnCommand",
    "Command",
    "LogEvent",
    "PERSON",
    "BOT",
    "BOT_ID_PREFIX",
    "REPEAT",
]

PERSON = "person"
BOT = "bot"
# Command ids starting with this are the ids of bots' turns, written by workers only.
BOT_ID_PREFIX = "bot-"
# The kind of a CommandRejected answering a copy of a turn already answered.
REPEAT = "repeat"


@dataclass(frozen=True)
class SeatSpec:
    """A seat at creation: a person by name, or a bot (``bot`` is its spec, e.g. ``greedy``)."""

    name: str
    kind: str = PERSON
    bot: str | None = None

    @property
    def is_bot(self) -> bool:
        return self.kind == BOT


@dataclass(frozen=True)
class GameCreated:
    """Event 0 of every log: the rules, the seats and the seed's SHA-256 commitment.

    ``batch_rules`` is the version of the referee's rules for a turn sent as a batch
    of steps (:data:`red7es.game.BATCH_RULES`) the game is played under, so a record
    re-executes the way it was refereed even after those rules tighten.
    """

    game: str
    variant: Variant
    seats: tuple[SeatSpec, ...]
    commitment: str
    created: int  # milliseconds since the epoch
    batch_rules: int = BATCH_RULES


@dataclass(frozen=True)
class SeatJoined:
    """A person took a seat; ``key`` is the Ed25519 public key of the seat's secret token."""

    seat: int
    name: str
    key: str  # hex


@dataclass(frozen=True)
class CommandApplied:
    """A submitted turn was legal; the engine's facts for it follow in the log."""

    id: str
    seat: int
    turn: str
    by: str  # "person" or "bot"


@dataclass(frozen=True)
class CommandRejected:
    """A submitted command had no effect, and why (one line)."""

    id: str
    seat: int
    kind: str  # "turn", "join", "create", "corrupt" or "repeat"
    text: str  # the turn as submitted, or the seat name for a join
    reason: str


@dataclass(frozen=True)
class SeedRevealed:
    """The game is over: its secret seed, whose SHA-256 is GameCreated.commitment."""

    seed: str  # hex


@dataclass(frozen=True)
class ClockStarted:
    """In a timed game, the turn passed to ``seat`` at referee time ``at`` (RULES.md, Time).

    ``at`` is Redis's time in ms: the stream id of the command that passed the turn
    (the last join, for the first turn; the bot's own command for a bot's turn) or the
    ``at`` of the time-out that did.  The seat's time is up after ``deadline``: a command
    whose stream id is at or before it counts, one after it does not.  ``remaining``
    (game clocks only; empty with a turn time) is every seat's time left at ``at``,
    the seat to move's included: its deadline is ``at + remaining[seat]``.
    """

    seat: int
    at: int
    deadline: int
    remaining: tuple[int, ...] = ()


@dataclass(frozen=True)
class TimedOut:
    """The seat to move's time was up (``deadline``) and the referee saw it at ``at``.

    ``at`` is Redis's time in ms, after ``deadline``, and no later than the stream id of
    any command answered after this event. With a turn time the seat's fold follows
    (the referee plays it), with a game clock its ``Forfeited`` fact.
    """

    seat: int
    deadline: int
    at: int


@dataclass(frozen=True)
class JoinDeadline:
    """A game with a join deadline (variant ``join_time``; RULES.md, Time, Join deadline) was
    created at referee time ``at`` with a person's seat nobody had taken: the seats still not
    taken after ``deadline`` (``at`` + ``join_time``) forfeit.  Right after round 1's deal."""

    at: int
    deadline: int


@dataclass(frozen=True)
class JoinClosed:
    """The join deadline passed with seats not taken, and the referee saw it at ``at`` (after
    ``deadline``; no later than any command answered after it).  Each seat not taken then
    forfeits, in seat order (``Forfeited``, reason ``"no-show"``), or, with no seat still in the game taken and
    no bot, the game ends with no winner (``GameOver``, reason ``"no-show"``)."""

    deadline: int
    at: int


@dataclass(frozen=True)
class Adjudicated:
    """An operator ended the game with these winners, for this reason (RULES.md, Adjudication).

    Not a seat's command: the operator appends it to the log directly (``red7 adjudicate``),
    compare-and-append like a worker, so it comes between command answers.  The
    ``GameOver`` (reason ``"adjudicated"``) and ``SeedRevealed`` it causes follow it.  The
    audit trusts it as the operator's act and reports it; it cannot check it is fair.
    """

    winners: tuple[int, ...]
    reason: str


@dataclass(frozen=True)
class Withdrawn:
    """An operator withdrew ``seat`` from the game at referee time ``at`` (RULES.md, Withdrawal).

    The operator's act, not the seat's (a tournament entrant withdrawn: ``red7 tournament
    withdraw``), so nothing signs it; appended to the log directly, compare-and-append like
    a worker, between command answers.  The seat forfeits as a resign would: its
    ``Forfeited`` (reason ``"withdrawn"``) follows, then the next seat's ``ClockStarted``
    when the withdrawal passed the turn on, or ``GameOver`` and ``SeedRevealed`` when it
    left one seat in the game.  ``at`` is Redis's time in ms, no later than the log entry
    and at or before the seat to move's deadline (a time-out due comes first).
    """

    seat: int
    reason: str
    at: int


@dataclass(frozen=True)
class CreateCommand:
    """Create a game (the first command of its stream); ``joins`` seat people at once, and
    ``withdrawn`` puts seats out of it at once (RULES.md, Withdrawal: a tournament entrant
    withdrawn before the game was created), each with the withdrawal's reason."""

    id: str
    variant: Variant
    seats: tuple[SeatSpec, ...]
    commitment: str
    joins: tuple[tuple[int, str], ...]  # (seat, public key hex)
    withdrawn: tuple[tuple[int, str], ...] = ()  # (seat, reason)


@dataclass(frozen=True)
class JoinCommand:
    """Claim a person's seat with the public key of a fresh token."""

    id: str
    seat: int
    key: str


@dataclass(frozen=True)
class TurnCommand:
    """A turn for a seat, signed with the seat's token (bots' turns are unsigned)."""

    id: str
    seat: int
    turn: str
    by: str = PERSON
    signature: str = ""  # hex Ed25519 signature of tokens.turn_message(); "" for bots


Command = CreateCommand | JoinCommand | TurnCommand
LogEvent = (
    GameCreated
    | SeatJoined
    | CommandApplied
    | CommandRejected
    | SeedRevealed
    | ClockStarted
    | TimedOut
    | JoinDeadline
    | JoinClosed
    | Adjudicated
    | Withdrawn
    | Fact
)
