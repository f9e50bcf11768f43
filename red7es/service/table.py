"""A hosted game folded from its log, and the referee that answers commands.

:class:`Table` is what a worker keeps warm for a game: the engine state plus the
seats, their public keys and the log's position (version, head hash, command cursor).
``handle(command)`` decides a command exactly as the rules say and returns the log
events it causes; it never touches Redis, so the audit re-executes games with the
very same code.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..bots.base import BotError, decide, make_bot, thinks_long
from ..cards import Card
from ..cards import bits as _bits
from ..deal import commitment
from ..facts import FACT_TYPES, CardDrawn, Forfeited, GameOver, Outcome, RoundDealt
from ..game import BATCH_RULES, COMMITTED_TURNS, NO_SHOW, SEAT_WORDS, STRONG_KEYS, WITHDRAWN, Game, IllegalStep
from ..observation import Observation
from ..rules import qualifying_mask
from ..steps import ABORT, RESIGN, StepError, Turn, is_abort, is_resign
from ..variant import Variant
from .codec import GENESIS, STRICT_COMMAND_RULES, outcome_data, pack_map
from .events import (
    BOT,
    BOT_ID_PREFIX,
    PERSON,
    REPEAT,
    Adjudicated,
    ClockStarted,
    CommandApplied,
    CommandRejected,
    CreateCommand,
    GameCreated,
    JoinClosed,
    JoinCommand,
    JoinDeadline,
    LogEvent,
    SeatJoined,
    SeatSpec,
    SeedRevealed,
    TimedOut,
    TurnCommand,
    Withdrawn,
)
from .names import name_problem, shape_problem
from .store import Keys
from .tokens import TURN_V2, WEAK_KEY, is_weak_key, verify_turn

__all__ = ["MAX_REASON", "Table", "CreateRejected", "validate_seats", "bot_seed", "public_event"]

MAX_REASON = 1000  # characters of an adjudication's reason: a line or a paragraph, never a file


class CreateRejected(ValueError):
    """A create command that cannot start a game."""


def validate_seats(
    variant: Variant, seats: tuple[SeatSpec, ...], *, new_game: bool = True, max_bot_time: float | None = None
) -> None:
    """Raise CreateRejected unless the seats fit the variant: names unique, bots known.

    ``new_game`` holds bots to the limits of games created now (``make_bot``) and names
    to today's rule (no control characters, which other clients could still send); an
    audit re-executing an older create command passes False.  ``max_bot_time`` is the
    service's cap on a bot's decision, which a client creating a game holds bots to.
    """
    if len(seats) != variant.players:
        raise CreateRejected(f"{variant.players} players need {variant.players} seats, got {len(seats)}")
    names = [s.name for s in seats]
    for s in seats:
        problem = name_problem(s.name) if new_game else shape_problem(s.name)
        if problem is not None:
            raise CreateRejected(f"seat name {s.name!r} {problem}")
        if s.kind not in (PERSON, BOT):
            raise CreateRejected(f"seat {s.name!r} must be a person or a bot")
        if s.kind == BOT:
            try:
                make_bot(s.bot or "", new_game=new_game, max_time=max_bot_time)
            except BotError as exc:
                raise CreateRejected(str(exc)) from None
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise CreateRejected(f"seat names must be different ({', '.join(twice)} appears twice)")


def reason_problem(reason: str, act: str) -> str | None:
    """What is wrong with the reason given for an operator's ``act`` (an adjudication, a
    withdrawal): it must say why, in at most :data:`MAX_REASON` characters.  None if fine."""
    if not reason.strip():
        return f"{act} needs a reason"
    if len(reason) > MAX_REASON:
        return f"{act}'s reason is at most {MAX_REASON} characters, not {len(reason):,}"
    return None


def _check_reason(reason: str, act: str) -> None:
    problem = reason_problem(reason, act)
    if problem is not None:
        raise IllegalStep(problem)


def bot_seed(seed: bytes, seat: int, version: int) -> int:
    """The seed of a bot's decision: fixed by the game seed, the seat and the log position.

    A fresh bot is built for every decision, so a game plays the same whether its
    worker stayed warm or was restarted in the middle.
    """
    digest = hashlib.sha256(b"red7es/bot/v1" + seed + seat.to_bytes(2, "big") + version.to_bytes(8, "big"))
    return int.from_bytes(digest.digest()[:8], "big")


@dataclass
class Table:
    """One hosted game: rules state, seats and log position."""

    game_id: str
    variant: Variant
    seats: tuple[SeatSpec, ...]
    commitment: str
    created: int
    game: Game
    keys: list[str | None] = field(default_factory=list)
    version: int = 0
    head: bytes = GENESIS
    cursor: str = "0-0"
    seed_revealed: str | None = None
    rejections: dict[int, dict[str, str]] = field(default_factory=dict)
    # Ids of the turns answered so far. A signed turn names its game, seat and id but not
    # its place in the game, so without this, whoever can write to the commands stream
    # could play a seat's old turn again (submit.lua refuses a known id, but it runs on
    # the clients' side of Redis).
    answered: set[str] = field(default_factory=set)
    batch_rules: int = BATCH_RULES  # GameCreated's: how this game's batched turns are judged
    # A timed game's clock (RULES.md, Time), as the last ClockStarted set it: None until
    # every seat is taken, and once the game is over.
    clock: ClockStarted | None = None
    # Why an operator ended the game (RULES.md, Adjudication): Adjudicated's reason, shown
    # in the views' outcome; None for every game that ended by play.
    adjudication: str | None = None
    # The join deadline (RULES.md, Time, Join deadline) as JoinDeadline set it: None without
    # one, and once JoinClosed was recorded.  It is due while a person's seat is not taken.
    join_deadline: int | None = None
    # seat -> the reason of its Forfeited, as folded or decided (views and results name them)
    forfeit_why: dict[int, str] = field(default_factory=dict)

    # ------------------------------------------------------------------ building

    @classmethod
    def start(
        cls,
        game_id: str,
        command: CreateCommand,
        seed: bytes | None,
        at: int,
        batch_rules: int = BATCH_RULES,
        *,
        new_game: bool = True,
        stream_at: int | None = None,
    ) -> tuple[Table, list[LogEvent]]:
        """Open a game from its create command; returns the table and its first events.

        A new game is refereed under the current :data:`~red7es.game.BATCH_RULES` and
        its bots held to today's limits; an audit re-executing an older record passes
        the batch rules its log was created with and ``new_game=False``.

        The checks come in the order docs/events.md gives.  From batch rules 3 the command's
        id must be ``create-<game>``: joins are answered under it, and a client waits for
        that answer (workers of older rules did not look).  ``seed`` is the stored seed
        (None if it is missing).  ``stream_at`` is the create command's stream id in ms
        (referee time): a timed game whose seats are all taken at creation starts its
        first seat's clock then.
        """
        if batch_rules >= STRICT_COMMAND_RULES and command.id != f"create-{game_id}":
            raise CreateRejected(f"its id is {command.id!r}, not 'create-{game_id}'")
        if seed is None:
            raise CreateRejected("the game's seed is missing")
        if commitment(seed) != command.commitment:
            raise CreateRejected("the stored seed does not match the published commitment")
        validate_seats(command.variant, command.seats, new_game=new_game)
        game = Game.new(command.variant, seed=seed, batch_rules=batch_rules)
        table = cls(
            game_id,
            command.variant,
            command.seats,
            command.commitment,
            at,
            game,
            [None] * command.variant.players,
            batch_rules=batch_rules,
        )
        events: list[LogEvent] = [
            GameCreated(game_id, command.variant, command.seats, command.commitment, at, batch_rules)
        ]
        for seat, key in command.joins:
            events.extend(table._join(seat, key, command.id))
        events.extend(game.log or [])
        events.extend(table._withdrawn_at_creation(command, stream_at if stream_at is not None else at))
        if stream_at is not None and not table.over:
            join_time = command.variant.join_time
            if join_time is not None and not table.seated:
                table.join_deadline = stream_at + join_time
                events.append(JoinDeadline(stream_at, table.join_deadline))
            if table.clock is None:  # (a withdrawal that left every seat taken started it)
                events.extend(table._clock_after(stream_at))
        return table, events

    def _withdrawn_at_creation(self, command: CreateCommand, at: int) -> list[LogEvent]:
        """The withdrawals a create command asks (a tournament entrant withdrawn before its
        game was created), each as the operator's withdrawal at the creation's time, in the
        order given.  A seat that is none, given twice, or a bad reason cannot be created."""
        events: list[LogEvent] = []
        seen: set[int] = set()
        for seat, reason in command.withdrawn:
            if not 0 <= seat < len(self.seats) or seat in seen:
                raise CreateRejected(f"it withdraws seat {seat}, which it has not or withdraws twice")
            problem = reason_problem(reason, "a withdrawal")
            if problem is not None:
                raise CreateRejected(problem)
            seen.add(seat)
            if not self.over:
                events.extend(self.withdraw(seat, reason, at))
        return events

    @classmethod
    def rebuild(cls, events: list[LogEvent], seed: bytes | None) -> Table:
        """Fold a log (from event 0) back into a table.  With the seed, it can play on."""
        if not events or not isinstance(events[0], GameCreated):
            raise ValueError("a game log starts with GameCreated")
        created = events[0]
        game = Game.from_record(created.variant, created.batch_rules)
        table = cls(
            created.game,
            created.variant,
            created.seats,
            created.commitment,
            created.created,
            game,
            [None] * created.variant.players,
            batch_rules=created.batch_rules,
        )
        if seed is not None and commitment(seed) != created.commitment:
            # Whoever may write a game's seed but not read it (the gateway's Redis user,
            # which creates games) must not be able to swap in a seed it knows and so
            # learn the deals to come: the workers only play on with the committed one.
            raise ValueError("the stored seed does not match the published commitment")
        for event in events[1:]:
            table.fold(event)
        game.seed = seed
        if seed is not None and game.turn == -1 and game.outcome is None:
            game._deal(game.round)  # the log ended between a round and the next deal
        return table

    def _remember_rejection(self, event: CommandRejected) -> None:
        """A seat's last refused turn is shown in that seat's view only: the turn and
        the reason can reveal its cards ("you would not lead" after p:R7)."""
        if event.kind == "turn" and 0 <= event.seat < len(self.seats):
            self.rejections[event.seat] = {"id": event.id, "turn": event.text, "reason": event.reason}

    def fold(self, event: LogEvent) -> None:
        """Apply one recorded event to this table (no checks beyond the rules)."""
        if isinstance(event, CommandRejected):
            self._remember_rejection(event)
            if event.kind == "turn":
                self._answered(event.id)
        elif isinstance(event, CommandApplied):
            self._answered(event.id)
            if is_abort(event.turn):
                self.game.abort()  # its GameOver follows in the log (RULES.md, Aborting)
        elif isinstance(event, SeatJoined):
            self.keys[event.seat] = event.key
        elif isinstance(event, SeedRevealed):
            self.seed_revealed = event.seed
        elif isinstance(event, ClockStarted):
            self.clock = event
        elif isinstance(event, TimedOut):
            self.clock = None  # a ClockStarted follows unless the game ended
        elif isinstance(event, JoinDeadline):
            self.join_deadline = event.deadline
        elif isinstance(event, JoinClosed):
            self.join_deadline = None
            if not self._present():
                self.game.void(NO_SHOW)  # its GameOver follows in the log; else the forfeits do
        elif isinstance(event, Adjudicated):
            self.game.adjudicate(event.winners)  # its GameOver follows in the log
            self.adjudication = event.reason
        elif isinstance(event, RoundDealt):
            self.game.load_deal(event)
        elif isinstance(event, FACT_TYPES):
            self.game.apply_fact(event)
            if isinstance(event, Forfeited):
                self.forfeit_why[event.seat] = event.reason

    # ------------------------------------------------------------------ queries

    @property
    def signed_over(self) -> str | None:
        """What a person's turn signature must name besides the game id: the game's seed
        commitment under batch rules 6 on (red7es/turn/v2), None before (turn/v1)."""
        return self.commitment if self.batch_rules >= COMMITTED_TURNS else None

    @property
    def over(self) -> bool:
        return self.game.outcome is not None

    @property
    def to_move(self) -> int | None:
        return None if self.game.outcome is not None or self.game.turn < 0 else self.game.turn

    @property
    def seated(self) -> bool:
        """Whether every person's seat is taken (a timed game's clocks run from then)."""
        return all(
            spec.is_bot or self.keys[i] is not None or i in self.game.forfeited for i, spec in enumerate(self.seats)
        )

    @property
    def deadline(self) -> int | None:
        """When the seat to move's time is up (Redis ms) or, before every seat is taken, the
        join deadline; None: untimed, not started and no join deadline, over."""
        if self.over:
            return None
        if self.clock is not None:
            return self.clock.deadline
        return self.join_deadline if not self.seated else None

    def _absent(self) -> list[int]:
        """The person's seats nobody has taken that are still in the game, in seat order."""
        return [
            i
            for i, spec in enumerate(self.seats)
            if not spec.is_bot and self.keys[i] is None and i not in self.game.forfeited
        ]

    def _present(self) -> list[int]:
        """The seats in the game that someone plays: a bot's, or a person's seat taken."""
        absent = self._absent()
        return [i for i in range(len(self.seats)) if i not in absent and i not in self.game.forfeited]

    @property
    def bot_to_move(self) -> bool:
        """Whether a bot is to move now.  Not in a timed game whose clocks have not started
        (a person's seat not taken yet): it begins when everyone is there (RULES.md, Time),
        and a bot's turn there is timed by its own command's stream id."""
        seat = self.to_move
        if seat is None or not self.seats[seat].is_bot:
            return False
        return not (self.variant.timed and self.clock is None)

    # ------------------------------------------------------------------ deciding

    def handle(
        self, command: JoinCommand | TurnCommand, *, from_client: bool = False, at: int | None = None
    ) -> list[LogEvent]:
        """The log events a command causes (a rejection is an event too).

        ``from_client``: the command came through the commands stream, where bots'
        turns never come from (workers write them together with their facts).
        ``at``: the command's stream id in ms (referee time). In a timed game a command
        that passes the turn on (a whole turn, a fold, the last join) is followed by the
        next seat's ``ClockStarted``; the caller times the seat to move out first when
        ``at`` is past its deadline (:meth:`time_out`).
        """
        if isinstance(command, JoinCommand):
            events = self._join(command.seat, command.key, command.id)
            passes = isinstance(events[0], SeatJoined) and self.clock is None
        else:
            mover, round_number = self.to_move, self.game.round
            events = self._turn(command, from_client)
            applied = isinstance(events[0], CommandApplied)
            if applied and is_abort(command.turn):
                passes = True  # it ended the game: _clock_after starts no clock, stops the last
            elif applied and is_resign(command.turn):
                # a resign passes the turn on when it was the mover's, or when it ended
                # the round or the game (RULES.md, Resigning); else the mover's clock runs on
                passes = self.to_move != mover or self.game.round != round_number or self.over
            else:
                passes = applied and not Turn.parse(command.turn).open
        if passes and at is not None:
            events.extend(self._clock_after(at))
        return self._noted(events)

    def time_out(self, at: int) -> list[LogEvent]:
        """The seat to move's time is up, seen at referee time ``at`` (after its deadline).

        With a turn time the referee plays the seat's fold; with a game clock the seat
        forfeits the game (RULES.md, Time). The next seat's clock starts at ``at``.
        """
        if self.clock is None and self.deadline is not None:
            return self._noted(self._close_joins(at))
        clock = self.clock
        if clock is None or self.over or self.to_move != clock.seat:
            raise ValueError("no seat's clock is running")
        if at <= clock.deadline:
            raise ValueError(f"seat {clock.seat}'s time is up after {clock.deadline}, not at {at}")
        events: list[LogEvent] = [TimedOut(clock.seat, clock.deadline, at)]
        if self.variant.clock is not None:
            facts = self.game.forfeit(clock.seat, "time")
        else:
            facts = self.game.apply(Turn.parse("fold"))
        events.extend(facts)
        if any(isinstance(f, GameOver) for f in facts) and self.game.seed is not None:
            self.seed_revealed = self.game.seed.hex()
            events.append(SeedRevealed(self.seed_revealed))
        events.extend(self._clock_after(at, timed_out=clock.seat))
        return self._noted(events)

    def _close_joins(self, at: int) -> list[LogEvent]:
        """The join deadline passed, seen at ``at`` (RULES.md, Time, Join deadline): every seat
        not taken forfeits, in seat order, or, when nobody came (no seat taken, no bot), the
        game ends with no winner.  The clocks start at ``at`` if the game goes on."""
        deadline = self.join_deadline
        assert deadline is not None
        if at <= deadline:
            raise ValueError(f"the join deadline is {deadline}, not passed at {at}")
        events: list[LogEvent] = [JoinClosed(deadline, at)]
        self.join_deadline = None
        if not self._present():
            facts = self.game.void(NO_SHOW)
        else:
            facts = []
            for seat in self._absent():
                if self.over:
                    break
                facts.extend(self.game.forfeit(seat, NO_SHOW))
        events.extend(facts)
        if self.over and self.game.seed is not None:
            self.seed_revealed = self.game.seed.hex()
            events.append(SeedRevealed(self.seed_revealed))
        events.extend(self._clock_after(at))
        return events

    def adjudicate(self, winners: tuple[int, ...], reason: str) -> list[LogEvent]:
        """An operator ends the game now (RULES.md, Adjudication): ``Adjudicated``, then its
        ``GameOver`` (reason ``"adjudicated"``) and the ``SeedRevealed``.  The clocks stop.

        Raises :class:`~red7es.game.IllegalStep` (a ValueError) for a finished game, a
        winner that is no seat or is out of the game, or an empty reason or one longer than
        :data:`MAX_REASON`; the table is then unchanged.
        """
        _check_reason(reason, "an adjudication")
        facts = self.game.adjudicate(winners)
        self.adjudication = reason
        self.clock = None
        events: list[LogEvent] = [Adjudicated(tuple(winners), reason), *facts]
        if self.game.seed is not None:
            self.seed_revealed = self.game.seed.hex()
            events.append(SeedRevealed(self.seed_revealed))
        return events

    def withdraw(self, seat: int, reason: str, at: int) -> list[LogEvent]:
        """An operator withdraws ``seat`` at referee time ``at`` (RULES.md, Withdrawal):
        ``Withdrawn``, then the seat's forfeit (reason ``"withdrawn"``) as a resign's, then
        the clock of the seat to move when the turn passed on, or the game's end.

        Raises :class:`~red7es.game.IllegalStep` (a ValueError) for a game over, a seat that
        is no seat or already out, a bad reason, or an ``at`` the clock forbids: before the
        running clock started, or after the seat to move's deadline (its time-out comes
        first: :meth:`time_out`).  The table is then unchanged.
        """
        _check_reason(reason, "a withdrawal")
        clock, due = self.clock, self.deadline
        if clock is not None and at < clock.at:
            raise IllegalStep(f"a withdrawal at {at} comes before the running clock's start ({clock.at})")
        if due is not None and at > due:
            whose = f"seat {clock.seat}'s time" if clock is not None else "the join deadline"
            raise IllegalStep(f"{whose} was up at {due}: its time-out comes first")
        mover, round_number, unseated = self.to_move, self.game.round, self.clock is None
        facts = self.game.forfeit(seat, WITHDRAWN)
        events: list[LogEvent] = [Withdrawn(seat, reason, at), *facts]
        if self.over and self.game.seed is not None:
            self.seed_revealed = self.game.seed.hex()
            events.append(SeedRevealed(self.seed_revealed))
        # The turn passed on, the round or the game ended, or the seat withdrawn was the last
        # not taken (the clocks start now): as after a resign (RULES.md, Resigning).
        if self.to_move != mover or self.game.round != round_number or self.over or unseated:
            events.extend(self._clock_after(at))
        return self._noted(events)

    def _noted(self, events: list[LogEvent]) -> list[LogEvent]:
        """``events``, their forfeits' reasons remembered (:attr:`forfeit_reasons`)."""
        for event in events:
            if isinstance(event, Forfeited):
                self.forfeit_why[event.seat] = event.reason
        return events

    @property
    def forfeit_reasons(self) -> list[str]:
        """Why each seat out of the game went out, in the order they did (``Forfeited``'s
        reasons: ``time``, ``resigned``, ``withdrawn``, ``no-show``)."""
        return [self.forfeit_why.get(seat, "") for seat in self.game.forfeited]

    def _clock_after(self, at: int, timed_out: int | None = None) -> list[LogEvent]:
        """The ClockStarted of the seat to move once the turn passed to it at ``at`` (none for
        an untimed game, an unseated one or one over). The seat whose turn ended is charged
        the time since its clock started, and given the increment (a game clock)."""
        variant = self.variant
        seat = self.to_move
        if not variant.timed or seat is None or not self.seated:
            self.clock = None if seat is None else self.clock
            return []
        if variant.clock is not None:
            base, increment = variant.clock
            previous = self.clock
            left = list(previous.remaining) if previous is not None else [base] * len(self.seats)
            if previous is not None:
                if previous.seat == timed_out:
                    left[previous.seat] = 0
                else:
                    used = max(0, at - previous.at)
                    left[previous.seat] = max(0, left[previous.seat] - used) + increment
            started = ClockStarted(seat, at, at + left[seat], tuple(left))
        else:
            assert variant.turn_time is not None
            started = ClockStarted(seat, at, at + variant.turn_time)
        self.clock = started
        return [started]

    def bot_command(
        self, position: int, interrupted: Callable[[], bool] | None = None, max_time: float | None = None
    ) -> TurnCommand:
        """The turn the bot to move chooses, from its observation alone.

        ``position`` is the log version the command's facts will start at; it names
        the command and seeds the bot, so the same game always plays the same.  A bot
        that thinks long asks ``interrupted`` as it goes and may give up with
        :class:`~red7es.bots.base.DecisionInterrupted` (the table is unchanged), and
        ends its search within ``max_time`` seconds (the worker's cap).
        """
        seat = self.to_move
        if seat is None or not self.seats[seat].is_bot:
            raise ValueError("no bot is to move")
        if self.game.seed is None:
            raise ValueError("bots cannot play without the game's seed")
        seed = bot_seed(self.game.seed, seat, position)
        bot = make_bot(self.seats[seat].bot or "random", seed=seed, interrupted=interrupted, max_time=max_time)
        turn = decide(bot, self.game, seat)
        return TurnCommand(f"{BOT_ID_PREFIX}{position}", seat, str(turn), BOT, "")

    @property
    def bot_thinks_long(self) -> bool:
        """Whether the bot to move may think for more than about half a second
        (:func:`~red7es.bots.base.thinks_long`); False when no bot is to move."""
        seat = self.to_move
        if seat is None or not self.seats[seat].is_bot:
            return False
        return thinks_long(make_bot(self.seats[seat].bot or "random"))

    def _join(self, seat: int, key: str, command_id: str) -> list[LogEvent]:
        name = self.seats[seat].name if 0 <= seat < len(self.seats) else str(seat)
        reason = None
        if not 0 <= seat < len(self.seats):
            reason = f"there is no seat {seat}"
        elif self.seats[seat].is_bot:
            reason = f"seat {name} is played by a bot"
        elif self.keys[seat] is not None:
            reason = f"seat {name} has already been taken"
        elif seat in self.game.forfeited:  # withdrawn before anyone took it (RULES.md, Withdrawal)
            reason = f"seat {name} is out of the game"
        elif len(key) != 64 or any(ch not in "0123456789abcdef" for ch in key):
            reason = "a seat key is 64 lower-case hex digits"
        elif self.batch_rules >= STRONG_KEYS and is_weak_key(key):
            reason = f"a seat key {name} would hold is refused: {WEAK_KEY}"
        if reason:
            return [CommandRejected(command_id, seat, "join", name, reason)]
        self.keys[seat] = key
        return [SeatJoined(seat, name, key)]

    def _turn(self, command: TurnCommand, from_client: bool) -> list[LogEvent]:
        words = self.batch_rules >= SEAT_WORDS  # (earlier games read them as turns: refused)
        resign, abort = words and is_resign(command.turn), words and is_abort(command.turn)
        reason = self._turn_refusal(command, from_client, RESIGN if resign else ABORT if abort else None)
        # Only a copy that would take effect is a repeat: one refused anyway gets the
        # refusal it always got, so older records re-execute as they were written.
        if reason is None and (repeat := self._repeat(command)) is not None:
            return [repeat]
        self._answered(command.id)
        text = RESIGN if resign else ABORT
        if reason is None:
            try:
                if resign:
                    facts = self.game.resign(command.seat)
                elif abort:
                    facts = self.game.abort()
                else:
                    turn = _parsed_turn(command.turn)
                    facts = self.game.apply(turn)  # under the game's batch rules (Table.batch_rules)
                    text = str(turn)
            except (StepError, IllegalStep) as exc:
                reason = str(exc)
        if reason is not None:
            rejection = CommandRejected(command.id, command.seat, "turn", command.turn, reason)
            self._remember_rejection(rejection)
            return [rejection]
        events: list[LogEvent] = [CommandApplied(command.id, command.seat, text, command.by)]
        events.extend(facts)
        if any(isinstance(f, GameOver) for f in facts) and self.game.seed is not None:
            self.seed_revealed = self.game.seed.hex()  # as fold() would: the final view shows it
            events.append(SeedRevealed(self.seed_revealed))
        return events

    def _answered(self, command_id: str) -> None:
        """Remember a turn's id, unless it is a bot's: those are unique by their log
        position, and a client's command under such an id is refused anyway (keeping it
        would refuse the bot whose turn later falls at that position)."""
        if not command_id.startswith(BOT_ID_PREFIX):
            self.answered.add(command_id)

    def _repeat(self, command: TurnCommand) -> CommandRejected | None:
        """The answer to a copy of a turn already answered, added to the stream behind
        submit.lua's back: no effect, and not the seat's own refused turn (its view keeps
        the last one), so its kind is not ``turn``."""
        if command.id not in self.answered:
            return None
        reason = f"turn {command.id} was answered before: a turn takes effect once"
        return CommandRejected(command.id, command.seat, REPEAT, command.turn, reason)

    def _turn_refusal(self, command: TurnCommand, from_client: bool, word: str | None = None) -> str | None:
        """Why a seat's command (a turn, or the ``word`` resign or abort) is refused, or None."""
        if from_client and command.by != PERSON:
            return "only workers play for bots"
        if from_client and command.id.startswith(BOT_ID_PREFIX):
            return f"command ids starting with {BOT_ID_PREFIX} are reserved for bots' turns"
        seat = command.seat
        if not 0 <= seat < len(self.seats):
            return f"there is no seat {seat}"
        spec = self.seats[seat]
        if self.game.outcome is not None:
            return "the game is over"
        if command.by == BOT:
            if not spec.is_bot:
                return f"seat {spec.name} is not a bot"
            if self.variant.timed and self.clock is None:  # (bot_to_move: it waits for the clocks)
                return "a bot moves in a timed game once its clocks run (every person's seat taken)"
        else:
            if spec.is_bot:
                return f"seat {spec.name} is played by a bot"
            key = self.keys[seat]
            if key is None:
                return f"seat {spec.name} has not been joined yet"
            if not verify_turn(key, command.signature, self.game_id, command.id, seat, command.turn, self.signed_over):
                return f"wrong token for seat {spec.name}"
        if word == ABORT:  # any seat, before anyone moved (RULES.md, Aborting): Game.abort judges that
            return "bots do not abort" if command.by == BOT else None
        if word == RESIGN:  # at any time the seat is still in the game (RULES.md, Resigning)
            if command.by == BOT:
                return "bots do not resign"
            if seat in self.game.forfeited:
                return f"seat {spec.name} is already out of the game"
            return None
        if self.to_move != seat:
            mover = self.to_move
            if mover is None:
                return "no one is to move"
            return f"it is not {spec.name}'s turn (it is {self.seats[mover].name}'s)"
        return None

    # ------------------------------------------------------------------ views

    def public_view(self, version: int | None = None) -> dict[str, Any]:
        """What anyone may see: the public part of an observation, with names."""
        return self._view(self.game.observation(0, history=False), version)

    def seat_view(self, seat: int, version: int | None = None) -> dict[str, Any]:
        """What ``seat`` may see: its observation, its hand and its legal turns."""
        return self._seat_part(self._view(self.game.observation(seat, history=False), version), seat)

    def _seat_part(self, public: dict[str, Any], seat: int) -> dict[str, Any]:
        """A seat's view: the public view plus what only that seat sees."""
        view = dict(public, seat=seat, hand=[str(c) for c in self.game.hand(seat)], rejected=self.rejections.get(seat))
        if self.to_move == seat and not self.seats[seat].is_bot:
            view["legal"] = [str(t) for t in self.game.legal_turns()]
        return view

    def view_keys(self) -> list[str]:
        """The Redis keys of the game's views, in :meth:`packed_views`' order: public, then each seat's."""
        keys = Keys(self.game_id)
        return [keys.public_view, *(keys.view(seat) for seat in range(len(self.seats)))]

    def packed_views(self, version: int) -> dict[str, bytes]:
        """Every view of the game as stored (Redis key -> msgpack), the public part built once."""
        public = self.public_view(version)
        parts = [public, *(self._seat_part(public, seat) for seat in range(len(self.seats)))]
        return {key: pack_map(part) for key, part in zip(self.view_keys(), parts, strict=True)}

    def _view(self, obs: Observation | None, version: int | None) -> dict[str, Any]:
        game = self.game
        status = "over" if game.outcome is not None else "playing"
        seats = []
        for i, spec in enumerate(self.seats):
            entry: dict[str, Any] = {
                "seat": i,
                "name": spec.name,
                "kind": spec.kind,
                "bot": spec.bot,
                "joined": spec.is_bot or self.keys[i] is not None,
                "key": self.keys[i],  # public: lets a client check a token before it signs with it
            }
            if obs is not None:
                sv = obs.seats[i]
                entry.update(
                    in_round=sv.in_round,
                    hand_size=sv.hand_size,
                    palette=None if sv.palette is None else [str(c) for c in sv.palette],
                    score_pile=[str(c) for c in sv.score_pile],
                    score=sv.score,
                    round_wins=sv.round_wins,
                )
            if self.variant.timed:
                entry.update(self._seat_time(i))
            seats.append(entry)
        view: dict[str, Any] = {
            "game": self.game_id,
            "version": self.version if version is None else version,
            "status": status,
            "variant": self.variant.to_dict(),
            "commitment": self.commitment,
            **({"signs": TURN_V2} if self.signed_over is not None else {}),  # else turn/v1
            "seed": self.seed_revealed,
            "created": self.created,
            "seats": seats,
        }
        if self.variant.timed:
            clock = None if self.over else self.clock
            view["clock"] = (
                None if clock is None else {"seat": clock.seat, "started": clock.at, "deadline": clock.deadline}
            )
            if self.variant.join_time is not None:  # seats not taken by then forfeit (None: closed)
                view["join_deadline"] = self.deadline if clock is None else None
        if obs is None:
            return view
        leader = obs.leader
        view.update(
            round=obs.round,
            rule=obs.rule.name.lower(),
            canvas=[str(c) for c in obs.canvas],
            deck_size=obs.deck_size,
            deck_known=[[d, str(c)] for d, c in obs.deck_known],
            to_move=obs.to_move,
            turn_steps=[str(s) for s in obs.turn_steps],
            pending=obs.pending_text,
            leader=leader,
            qualifying=[]
            if leader is None
            else [str(Card(c)) for c in _bits(qualifying_mask(obs.rule, self.game.pal[leader]))],
            outcome=None if obs.outcome is None else self._outcome(obs.outcome),
        )
        return view

    def _outcome(self, outcome: Outcome) -> dict[str, Any]:
        """A view's outcome: GameOver's data, ``adjudication`` (why) when an operator ended it,
        and ``forfeit_reasons`` (why each seat in ``forfeited`` went out) when any did."""
        data = outcome_data(outcome)
        if self.adjudication is not None:
            data["adjudication"] = self.adjudication
        if outcome.forfeited:
            data["forfeit_reasons"] = self.forfeit_reasons
        return data

    def _seat_time(self, seat: int) -> dict[str, Any]:
        """A timed game's seat in a view (docs/events.md, Views): whether it forfeited and,
        with a game clock, its time left when the current clock started (the seat to move's
        runs down from then to ``clock.deadline``; None once the game is over)."""
        clock = self.clock
        left = None
        if self.variant.clock is not None and not self.over:
            left = clock.remaining[seat] if clock is not None and clock.remaining else self.variant.clock[0]
        return {"forfeited": seat in self.game.forfeited, "time_left": left}


def public_event(event: LogEvent, players: int) -> dict[str, Any] | None:
    """The part of a log event everyone may see (for the changes stream), or None.

    ``players`` is the game's number of seats: a turn refused for a seat the game does
    not have keeps its text and reason, as no seat's view can hold them (and there is
    no hand for them to reveal).
    """
    from .codec import EVENT_TYPES, type_name

    name = type_name(event)
    if isinstance(event, RoundDealt):
        return {
            "type": name,
            "round": event.round,
            "palettes": [str(c) for c in event.palettes],
            "hand_sizes": [len(h) for h in event.hands],
            "deck_size": len(event.deck),
            "first": event.first,
        }
    if isinstance(event, CardDrawn):
        data = {"type": name, "seat": event.seat, "cause": event.cause}
        if event.public:
            data["card"] = str(event.card)
        return data
    if isinstance(event, CommandRejected) and (
        (event.kind == "turn" and 0 <= event.seat < players) or event.kind == REPEAT
    ):
        # what was tried and why it failed stay in the seat's own view
        return {"type": name, "id": event.id, "seat": event.seat, "kind": event.kind}
    data = EVENT_TYPES[name].to_data(event)
    data["type"] = name
    return data


@functools.lru_cache(maxsize=4096)
def _parsed_turn(text: str) -> Turn:
    """``Turn.parse``, once per text: turns are immutable, and a worker folds the same few
    texts again and again (every bot turn it writes is parsed back as it is answered).
    A text that cannot be parsed raises every time (lru_cache keeps no exception)."""
    return Turn.parse(text)
