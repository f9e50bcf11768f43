"""The client side of the service: create, join, submit, wait, read views.

Clients never change a game themselves: they append commands and wake a worker
through the workers' inbox stream; the worker folds the commands into the log and the views.  Waiting for
an answer is a blocking read of the game's changes stream, never polling.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import msgpack
import redis

from ..deal import SeedError, commitment, make_seed
from ..steps import StepError, Turn, command_text
from ..variant import Variant
from ..wording import with_article
from .codec import GENESIS, Recorded, decode_command, decode_log, encode_command
from .connection import is_cluster
from .envelope import MAX_COMMAND_SIZE
from .events import CommandRejected, CreateCommand, JoinCommand, LogEvent, SeatJoined, SeatSpec, TurnCommand
from .folding import Contended, Folder, GameBroken, NotStarted
from .inbox import MAXLEN as INBOX_MAXLEN
from .inbox import Inbox
from .store import (
    CommandTooLarge,
    DamagedGame,
    GameIsBroken,
    GameIsOver,
    GameStore,
    Keys,
    MismatchedId,
    NoSuchGame,
    RateGuard,
    ReservedId,
    Submitted,
    entry_field,
    new_game_id,
    now_ms,
    stream_order,
    valid_game_id,
    whole_number,
)
from .table import CreateRejected, validate_seats
from .tokens import TokenError, key_problem, new_token, public_key, sign_turn, turn_commitment

if TYPE_CHECKING:
    from .records import Record

__all__ = [
    "GameService",
    "ServiceError",
    "Rejected",
    "NoAnswer",
    "NoWorker",
    "TurnTooLarge",
    "BrokenGame",
    "UnreadableKey",
    "JoinRefused",
    "BadCreate",
    "GameExists",
    "CreatedGame",
    "Answer",
    "QUEUE_NAME",
    "GameSummary",
    "answer_in",
    "seat_index",
    "read_view",
    "meta_int",
]

QUEUE_NAME = "red7"  # the RQ queue every red7es worker listens on
NUDGE_TTL_MS = 30_000
SLOW_AFTER = 2.0  # seconds without an answer before on_slow is called
BROKEN_CHECK = 1.0  # longest a wait blocks before it looks again whether the game broke meanwhile


class ServiceError(RuntimeError):
    """Something the service could not do, said in one line."""


class Rejected(ServiceError):
    """The worker refused a command; the message is its reason."""


class NoWorker(ServiceError):
    """Nothing only a worker writes has come: the message asks whether one runs and ends
    ``(start one with: red7 worker)``.  A front end that knows a better command to paste
    (one with the ``--url`` typed) says it with :meth:`starting`."""

    def __init__(self, question: str) -> None:
        super().__init__(self._line(question, "red7 worker"))
        self.question = question

    def starting(self, start: str) -> str:
        """The message, with ``start`` as the command that starts a worker."""
        return self._line(self.question, start)

    @staticmethod
    def _line(question: str, start: str) -> str:
        return f"{question} (start one with: {start})"


class NoAnswer(NoWorker):
    """No worker answered in time: none runs, or all are busy (a command stays stored)."""


class UnreadableChange(ServiceError):
    """An entry of a game's changes stream is not what a worker writes (written by hand,
    or damaged): the entry and what is wrong with it, in one line.  The log and the views
    are untouched; only the notice of that change cannot be read."""

    def __init__(self, game_id: str, change_id: str, problem: str) -> None:
        super().__init__(f"game {game_id}: change {change_id} on its changes stream cannot be read: {problem}")


class UnreadableKey(ServiceError):
    """A key of a game that holds something no worker writes there (written by hand, or
    damaged): the game, the key and what is wrong with it, in one line.  Nothing is
    changed; only what that key says cannot be known (docs/events.md)."""

    def __init__(self, game_id: str, key: str, problem: str) -> None:
        super().__init__(f"game {game_id}: {key} cannot be read: {problem}")
        self.game_id = game_id
        self.key = key
        self.problem = problem


class BrokenGame(ServiceError):
    """The game is broken: a worker could not create it or cannot read its log, and it
    will not change again (``meta.broken`` says why; docs/events.md)."""

    def __init__(self, game_id: str, reason: str) -> None:
        super().__init__(f"game {game_id} is broken: {reason}")
        self.game_id = game_id
        self.reason = reason


class TurnTooLarge(Rejected):
    """A turn whose command would be larger than any referee reads: refused before it is
    sent (a worker would only answer it as corrupt).  ``room`` is the most the turn's text
    may take with its command id and signature."""

    def __init__(self, size: int, room: int) -> None:
        super().__init__(f"a turn is at most {room:,} bytes; this one is {size:,}")
        self.size = size
        self.room = room


class BadCreate(ServiceError):
    """A game that cannot be created as asked: its seats, id, seed or reserved keys (one line)."""


class GameExists(ServiceError):
    """A game already holds the id a create asked for."""


class JoinRefused(Rejected):
    """The worker refused a join; ``token`` is the one it was made with (kept before the answer came)."""

    def __init__(self, reason: str, token: str) -> None:
        super().__init__(reason)
        self.token = token


@dataclass(frozen=True)
class CreatedGame:
    game_id: str
    commitment: str
    tokens: dict[str, str]  # seat name -> token, for the seats joined at creation


@dataclass(frozen=True)
class Answer:
    """The worker's answer to one command."""

    command_id: str
    applied: bool
    reason: str | None
    events: list[dict[str, Any]]  # the public events of the answer
    # The seat's view read in the same round trip as the answer (GameService.play), so a
    # person need not read it again before her next turn (issue #23); None when not read.
    view: dict[str, Any] | None = None


@dataclass(frozen=True)
class GameSummary:
    game_id: str
    status: str  # new, playing, over, broken, or unreadable (see ``unreadable``)
    version: int | None  # None only when the meta's version cannot be read
    to_move: int | None
    created: int | None  # None only when the meta's created cannot be read
    seats: list[dict[str, Any]]
    variant: dict[str, Any]
    winners: list[int] | None
    unreadable: str | None = None  # why a key of the game cannot be read (UnreadableKey's line)
    reason: str | None = None  # how it ended (GameOver's reason: "aborted" has no winners), once over

    def as_json(self) -> dict[str, Any]:
        """The game as `red7 games --json` and the gateway's game list show it (docs/cli.md)."""
        return {
            "game": self.game_id,
            "status": self.status,
            "version": self.version,
            "to_move": self.to_move,
            "created": self.created,
            "seats": [
                {"name": x["name"], "kind": x.get("kind"), "bot": x.get("bot"), "joined": bool(x.get("joined"))}
                for x in self.seats
            ],
            "winners": self.winners,
            "reason": self.reason,
            "variant": self.variant,
            "unreadable": self.unreadable,
        }


class GameService:
    """Everything a client does with games, on one Redis connection."""

    def __init__(
        self,
        connection: redis.Redis,
        wake: Callable[[str], None] | None = None,
        *,
        scripted_create: bool = True,
        inbox: Inbox | None = None,
    ) -> None:
        """``wake(game_id)`` tells workers a game has work (default: post to ``inbox``, the
        workers' inbox unless given); ``scripted_create`` as :class:`GameStore`'s (False:
        for a user that may not read seeds)."""
        self.redis = connection
        self.store = GameStore(connection, scripted_create=scripted_create)
        posts = inbox if inbox is not None else Inbox(connection)
        self.wake = wake if wake is not None else posts.post
        # The default wake on a standalone Redis: the nudge set and the game posted by the
        # submit script itself (submit.lua; wake.lua for a wake-up without a command); a
        # cluster's slots keep the nudge and the inbox apart.
        self._inbox = posts if wake is None and not is_cluster(connection) else None
        # Called when an answer is slow to come (the CLI starts a local worker if none runs).
        self.on_slow: Callable[[], None] | None = None
        # Called with (game, seat name, token) as soon as a new token is committed to
        # Redis and before waiting for a worker: a wait that times out (no worker yet)
        # must not lose the token of a seat the command will still take.
        self.keep_token: Callable[[str, str, str], None] | None = None
        self._unchanging = Unchanging(self.view)

    # ------------------------------------------------------------------ lifecycle

    def create(
        self,
        variant: Variant,
        seats: Sequence[SeatSpec],
        *,
        seed: bytes | str | None = None,
        join: Sequence[str] = (),
        keys: Mapping[str, str] | None = None,
        game_id: str | None = None,
        wait: float | None = 10.0,
        withdrawn: Sequence[tuple[str, str]] = (),
    ) -> CreatedGame:
        """Create a game; people named in ``join`` are seated at once (tokens returned), and
        the people named in ``keys`` are seated at once with the public key given (seat
        name -> 64 hex digits: a token someone else holds, so the seat is theirs alone);
        the seats in ``withdrawn`` ((name, reason), in order) are out of it from the start
        (RULES.md, Withdrawal: a tournament's entrant withdrawn before the game).

        Raises :class:`BadCreate` for a game that cannot be as asked, :class:`GameExists`
        for an id taken."""
        seat_specs = tuple(seats)
        try:
            # held to the workers' cap on a bot's decision (red7 worker --max-bot-time)
            validate_seats(variant, seat_specs, max_bot_time=self.store.max_bot_time())
        except CreateRejected as exc:
            raise BadCreate(str(exc)) from None
        names = [s.name for s in seat_specs]
        tokens: dict[str, str] = {}
        seated: dict[int, str] = {}  # seat -> public key

        def seat_person(name: str, key: str) -> None:
            if name not in names:
                raise BadCreate(f"no seat named {name!r}")
            seat = names.index(name)
            if seat_specs[seat].is_bot:
                raise BadCreate(f"seat {name} is a bot")
            if seat in seated:
                raise BadCreate(f"seat {name} is given twice")
            if key in seated.values():
                raise BadCreate(f"seat {name}'s key already holds another seat: one seat per key")
            seated[seat] = key

        for name, key in (keys or {}).items():
            if problem := key_problem(key):
                raise BadCreate(f"seat {name}'s key {problem}")
            seat_person(name, key)
        for name in join:
            token = new_token()
            seat_person(name, public_key(token))
            tokens[name] = token
        joins = sorted(seated.items())
        game_id = game_id or new_game_id()
        if not valid_game_id(game_id):
            raise BadCreate(f"{game_id!r} is not a valid game id (lower-case letters, digits, dashes)")
        try:
            secret = make_seed(seed)
        except SeedError as exc:
            raise BadCreate(str(exc)) from None
        out = []
        for name, reason in withdrawn:
            if name not in names:
                raise BadCreate(f"no seat named {name!r}")
            out.append((names.index(name), reason))
        command = CreateCommand(f"create-{game_id}", variant, seat_specs, commitment(secret), tuple(joins), tuple(out))
        mark = self.store.last_change_id(game_id) if wait else "0-0"  # only a wait reads from the mark
        at = now_ms()  # one clock reading: meta's created is the create command's at (GameCreated.created)
        try:
            stored = self.store.create(game_id, command.id, encode_command(command, at), secret, at, GENESIS)
        except CommandTooLarge as exc:  # (seats' names and bots are short: only a bot's options could be long)
            raise BadCreate(f"the game cannot be created: {exc}") from None
        if not stored:
            raise GameExists(f"a game {game_id!r} already exists")
        self._keep(game_id, tokens)
        self.schedule(game_id)
        if wait:
            self._await(game_id, mark, wait, lambda e: e.get("type") == "GameCreated")
        return CreatedGame(game_id, command.commitment, tokens)

    def join(self, game_id: str, name: str, *, wait: float = 10.0) -> str:
        """Claim a person's seat; returns the new secret token for it."""
        view = self.created_view(game_id, wait)
        seat = seat_index(view, name)
        token = new_token()
        key = public_key(token)
        mark = self.store.last_change_id(game_id)
        command_id = self.submit_join(game_id, seat, key, keep=lambda: self._keep(game_id, {name: token}))
        answer = self._await(
            game_id,
            mark,
            wait,
            lambda e: (
                (e.get("type") == "SeatJoined" and e.get("key") == key)
                or (e.get("type") == "CommandRejected" and e.get("id") == command_id)
            ),
        )
        if answer.get("type") == "CommandRejected":
            raise JoinRefused(str(answer["reason"]), token)
        return token

    def submit_join(self, game_id: str, seat: int, key: str, *, keep: Callable[[], None] | None = None) -> str:
        """Append a join of ``seat`` with public key ``key`` and wake a worker; returns the
        command's id.  Only the public key is sent: whoever holds its token (the CLI, or a
        remote client through the HTTP gateway) never gives it away.  ``keep`` runs once the
        command is stored and before any wait for its answer (the CLI saves the token then;
        on a standalone Redis the worker is woken in the round trip that stores it)."""
        command = JoinCommand(uuid.uuid4().hex, seat, key)
        try:
            submitted = self._store_command(game_id, command.id, encode_command(command, now_ms()))
        except GameIsOver as exc:
            raise ServiceError(f"{exc}: its seats can no longer be joined") from None
        if keep is not None:
            keep()
        if submitted.must_wake:
            self.wake(game_id)
        return command.id

    def submit(
        self, game_id: str, name: str, token: str, turn: str | Turn, *, command_id: str | None = None
    ) -> tuple[str, bool]:
        """Append a signed turn for a seat; returns (command id, was it a duplicate)."""
        command = self._signed(game_id, name, token, turn, command_id)
        return command.id, self._submit_signed(game_id, command).duplicate

    def _signed(self, game_id: str, name: str, token: str, turn: str | Turn, command_id: str | None) -> TurnCommand:
        """Seat ``name``'s turn signed with ``token``, under ``command_id`` (a new one for None)."""
        seat = self.seat_of(game_id, name)
        try:
            text = command_text(turn)  # a turn, or resign (RULES.md, Resigning)
        except StepError as exc:
            raise Rejected(str(exc)) from None
        command_id = command_id or uuid.uuid4().hex
        try:
            signature = sign_turn(token, game_id, command_id, seat, text, self.signed_over(game_id))
        except TokenError as exc:
            raise ServiceError(str(exc)) from None
        return TurnCommand(command_id, seat, text, "person", signature)

    def submit_signed(
        self, game_id: str, command: TurnCommand, guard: RateGuard | None = None, checked_created: int | None = None
    ) -> tuple[str, bool]:
        """Append a turn someone else signed (the HTTP gateway never holds a token) and wake
        a worker; returns (command id, was it a duplicate).  The worker checks the signature.
        With a ``guard`` (the gateway's rate limit per seat), the append counts it, and
        :class:`~red7es.service.store.OverLimit` past its limit, nothing stored.  With
        ``checked_created`` (the game's ``created`` its signature was checked against),
        :class:`~red7es.service.store.GameRemade` if the id was made again since.

        :class:`TurnTooLarge` before anything is sent when the command would be larger than
        any referee reads (it would only be answered as corrupt)."""
        return command.id, self._submit_signed(game_id, command, guard, checked_created).duplicate

    def _submit_signed(
        self, game_id: str, command: TurnCommand, guard: RateGuard | None = None, checked_created: int | None = None
    ) -> Submitted:
        """:meth:`submit_signed`, with what the store read in the same round trip (the mark
        the answer comes after, the command's stream id)."""
        command_id = command.id
        raw = encode_command(command, now_ms())
        if len(raw) > MAX_COMMAND_SIZE:
            size = len(command.turn.encode())
            raise TurnTooLarge(size, MAX_COMMAND_SIZE - (len(raw) - size))
        try:
            submitted = self._store_command(game_id, command_id, raw, guard, checked_created)
        except (ReservedId, MismatchedId, CommandTooLarge) as exc:
            raise ServiceError(str(exc)) from None
        except GameIsOver as exc:
            # Refused before it is stored, so a finished game's record never changes.
            raise Rejected(str(exc)) from None
        if submitted.must_wake:
            self.wake(game_id)
        if submitted.duplicate:
            self._check_same_command(game_id, submitted.stream_id, command)
        return submitted

    def _store_command(
        self,
        game_id: str,
        command_id: str,
        command: bytes,
        guard: RateGuard | None = None,
        checked_created: int | None = None,
    ) -> Submitted:
        """Submit a command to the store, setting the game's nudge in the same round trip
        (the caller wakes a worker when ``must_wake``).  A refusal is raised, a worker woken
        first if the nudge was set.  A game whose keys cannot take the command (its
        commands stream out of ids, a key of the wrong type: written by hand) is marked
        broken with the reason, as a worker marks one whose keys cannot take an append,
        so that nobody is left trying."""
        submitted = self.store.submit_and_nudge(
            game_id, command_id, command, NUDGE_TTL_MS, self._scripted_inbox(), guard, checked_created
        )
        if submitted.refused is None:
            return submitted
        if submitted.must_wake:
            self.wake(game_id)  # this call holds the nudge: later commands would not wake anyone
        if isinstance(submitted.refused, DamagedGame):
            # A Redis user that may not write the changes stream (the HTTP gateway's:
            # docs/gateway.md) leaves the marking to the workers (nothing was written:
            # the whole transaction is refused); the client is told all the same.
            with contextlib.suppress(redis.exceptions.NoPermissionError):
                self.store.mark_broken(game_id, str(submitted.refused))
            raise BrokenGame(game_id, str(submitted.refused)) from None
        if isinstance(submitted.refused, GameIsBroken):
            raise BrokenGame(game_id, submitted.refused.reason) from None
        raise submitted.refused

    def _check_same_command(self, game_id: str, stream_id: str, command: TurnCommand) -> None:
        """A resubmitted id must carry the same turn: otherwise say so instead of pretending."""
        rows = self.redis.xrange(Keys(game_id).commands, min=stream_id, max=stream_id)
        if not rows:
            return
        try:
            first, _at = decode_command(entry_field(rows[0][1], b"c"))
        except ValueError:
            first = None
        if not isinstance(first, TurnCommand) or first.seat != command.seat:
            # Another seat's command: naming its turn would show a card of that seat's hand.
            raise Rejected(f"command id {command.id} is already in use; use a new id for a new turn")
        if first.turn != command.turn:
            shown = first.turn
            raise Rejected(f"command id {command.id} was already used for '{shown}'; use a new id for a new turn")

    def play(
        self,
        game_id: str,
        name: str,
        token: str,
        turn: str | Turn,
        *,
        command_id: str | None = None,
        wait: float = 10.0,
    ) -> Answer:
        """Submit a turn and wait for the worker's answer, with the seat's view as the
        answer left it (:attr:`Answer.view`): submitting, and waiting with the view, are
        one round trip each (and a wake-up of a worker, when none is on its way)."""
        command = self._signed(game_id, name, token, turn, command_id)
        submitted = self._submit_signed(game_id, command)
        # The mark was read just before the command was stored; a duplicate's answer may
        # be long written: look from the start.
        mark = "0-0" if submitted.duplicate else submitted.mark
        return self.answer(game_id, command.id, after=mark, wait=wait, stream_id=submitted.stream_id, seat=command.seat)

    def answer(
        self,
        game_id: str,
        command_id: str,
        *,
        after: str = "0-0",
        wait: float = 10.0,
        stream_id: str | None = None,
        seat: int | None = None,
    ) -> Answer:
        """The worker's answer to a command, waiting for it without polling.

        An applied command's answer is its ``CommandApplied`` and the events after it
        in the same change, up to the next command's.  A command the worker could not
        read is answered as corrupt under its stream id (the only id it has then), so
        that answer is recognised too: ``stream_id`` when the caller knows it (read
        otherwise).  With a ``seat``, its view is read with each wait and the answer
        carries the one read with it (:attr:`Answer.view`).
        """
        if stream_id is None:
            stream_id = self.store.command_stream_id(game_id, command_id)
        ids = {command_id} if stream_id is None else {command_id, stream_id}
        seen = _SeenView(seat)
        # The mark is the change the game's last append wrote (meta.change_id): a change
        # written after it by hand in a millisecond before the command's cannot hold its
        # answer, so one that cannot be read is passed over, not raised (a worker's changes
        # are always readable; stream ids are Redis's clock, and the ids of two streams
        # compare by it, not by their sequence numbers).
        stored = None if stream_id is None else stream_order(stream_id)[0]
        for batch in self._event_batches(game_id, after, wait, seen, unreadable_before=stored):
            found = answer_in(batch, command_id, ids)
            if found is not None:
                return dataclasses.replace(self.with_reason(game_id, found, ids), view=seen.read(game_id))
        raise AssertionError("unreachable: the batches end only by an error")  # pragma: no cover

    def with_reason(self, game_id: str, answer: Answer, ids: set[str] | None = None) -> Answer:
        """A rejection as :func:`answer_in` found it on the public changes stream, with its
        reason filled in from the seat's view (or the log); other answers as they are.
        ``ids``: every id the command may be answered under (default: its command id)."""
        if answer.applied or answer.reason:
            return answer
        event = answer.events[0]
        reason = self._rejection_reason(game_id, ids or {answer.command_id}, event.get("seat"))
        return Answer(answer.command_id, False, reason, [dict(event, reason=reason)])

    def _rejection_reason(self, game_id: str, ids: set[str], seat: Any) -> str:
        """Why a turn was refused: public notices leave it out, the seat's view has it."""
        if isinstance(seat, int) and seat >= 0:
            rejected = self.view(game_id, seat).get("rejected") or {}
            if rejected.get("id") in ids:
                return str(rejected["reason"])
        # An older rejection of this command (a resubmitted id): find it in the log.
        for recorded in reversed(self.log(game_id)):
            event = recorded.event
            if isinstance(event, CommandRejected) and event.id in ids:
                return event.reason
        return "rejected"

    def schedule(self, game_id: str) -> bool:
        """Wake a worker for this game, unless one is already on its way; True if woken."""
        inbox = self._scripted_inbox()
        if inbox is not None:  # one round trip: the script posts when it sets the nudge
            nudged, must_wake = self.store.nudge_and_post(game_id, NUDGE_TTL_MS, inbox)
        else:
            nudged = must_wake = self.store.set_nudge(game_id, NUDGE_TTL_MS)
        if must_wake:
            self.wake(game_id)
        return nudged

    def _scripted_inbox(self) -> tuple[str, int] | None:
        """The inbox submit.lua and wake.lua post to (key, length cap), its workers' group made sure of;
        None where the caller posts itself (a wake of its own, a cluster)."""
        if self._inbox is None:
            return None
        return self._inbox.ready_key(), INBOX_MAXLEN

    # ------------------------------------------------------------------ reading

    def view(self, game_id: str, seat: int | None = None) -> dict[str, Any]:
        """The current public view, or the view of one seat (what it may see); BrokenGame for a broken game."""
        raw, broken = self.store.view_and_broken(game_id, seat)
        return self._read_view(game_id, seat, raw, broken)

    def _read_view(self, game_id: str, seat: int | None, raw: bytes | None, broken: str | None) -> dict[str, Any]:
        """The view ``raw`` as :meth:`view` answers it (its errors, an archived game's view)."""
        if broken:
            raise BrokenGame(game_id, broken)
        if raw is None:
            if not self.store.exists(game_id):
                from .archive import archived_view  # a game moved to a file by red7 archive

                archived = archived_view(self.redis, game_id, seat)
                if archived is None:
                    raise NoSuchGame(game_id)
                return archived
            raise NoWorker(f"game {game_id} has no view yet: is a worker running?")
        view = read_view(game_id, raw, seat)
        self._unchanging.seen(game_id, view)
        return view

    def created_view(self, game_id: str, wait: float) -> dict[str, Any]:
        """The public view, waiting up to ``wait`` seconds for a game created a moment ago
        (its create command not folded yet) to get its first one."""

        def ready() -> bool:
            if self.store.view(game_id) is not None or not self.store.exists(game_id):
                return True  # (a broken game is told by _wait_until, after each look)
            self.schedule(game_id)
            return False

        self._wait_until(game_id, wait, ready)
        return self.view(game_id)  # or its one-line error: no such game, or no view yet

    def seat_of(self, game_id: str, name: str) -> int:
        """A seat's number by name (seats never change, so it is remembered)."""
        return self._unchanging.seat_of(game_id, name)

    def signed_over(self, game_id: str) -> str | None:
        """What this game's turn signatures name besides its id (:func:`~red7es.service.tokens.turn_commitment`)."""
        return self._unchanging.signed_over(game_id)

    def adjudicate(self, game_id: str, winners: Sequence[str], reason: str) -> list[LogEvent]:
        """An operator ends a game not over with these winners (seat names, maybe none) and
        reason (RULES.md, Adjudication); returns the events appended (Adjudicated, GameOver,
        SeedRevealed).  Appended as a worker appends (:meth:`Folder.adjudicate`), on this
        connection, which must be an operator's: it reads the seed and writes the log.

        Raises :class:`Rejected` (the game is over, a name is no seat or out of the game)
        and :class:`ServiceError` (no worker has created it yet, or it is broken).
        """
        seats = tuple(self.seat_of(game_id, name) for name in winners)
        return _operator_act(lambda: Folder(self.store).adjudicate(game_id, seats, reason))

    def withdraw(self, game_id: str, name: str, reason: str) -> list[LogEvent]:
        """An operator withdraws seat ``name`` from a game not over, for ``reason`` (RULES.md,
        Withdrawal): it forfeits as if it resigned; returns the events appended (a time-out
        already due, Withdrawn, Forfeited, then the next clock or the game's end).  Appended
        as a worker appends (:meth:`Folder.withdraw`), on this connection, which must be an
        operator's.

        Raises :class:`Rejected` (the game is over, the seat is out of the game already)
        and :class:`ServiceError` (no worker has created it yet, or it is broken).
        """
        seat = self.seat_of(game_id, name)
        events = _operator_act(lambda: Folder(self.store).withdraw(game_id, seat, reason))
        self.schedule(game_id)  # a worker folds what follows: commands waiting, a bot to move
        return events

    def seat_key(self, game_id: str, seat: int, view: dict[str, Any] | None = None) -> str | None:
        """The public key seat ``seat`` joined with (None while it is open).

        Views carry it; a view written before they did (a game finished by an older
        red7es is never folded again) falls back to the seat's SeatJoined in the log.
        """
        entry = (view or self.view(game_id))["seats"][seat]
        if "key" in entry:
            return entry["key"] if isinstance(entry["key"], str) else None
        for recorded in self.log(game_id):
            if isinstance(recorded.event, SeatJoined) and recorded.event.seat == seat:
                return recorded.event.key
        return None

    def answered(self, game_id: str, wait: float) -> bool:
        """Wait up to ``wait`` seconds until every command submitted so far is answered; whether it is."""
        last = self.store.last_command_id(game_id)
        return self._wait_until(game_id, wait, lambda: self.store.meta(game_id).get("cursor", "0-0") == last)

    def _wait_until(self, game_id: str, wait: float, ready: Callable[[], bool]) -> bool:
        """Check ``ready()`` at once and after each change of the game, for up to ``wait`` seconds."""
        deadline = time.monotonic() + wait
        mark = self.store.last_change_id(game_id)  # before the first check: no change is missed
        while not ready():
            self.check_not_broken(game_id)
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            changed = self.wait_change(game_id, mark, min(left, 1.0))
            if changed is not None:
                mark = changed[0]
        return True

    def wait_change(self, game_id: str, after: str, timeout: float) -> tuple[str, list[dict[str, Any]]] | None:
        """Block until the game changes after change id ``after``; returns (id, events), or None
        after ``timeout`` seconds. :class:`BrokenGame` once the game is broken (it will not change
        again); the changes before the entry that says so are returned first."""
        rows = self._rows(game_id, after, timeout)
        if not rows:
            self.check_not_broken(game_id)
            return None
        events: list[dict[str, Any]] = []
        last = after
        for change_id, _v, payload in rows:
            try:
                events.extend(self._public_events(game_id, change_id, payload))
            except BrokenGame:
                if last == after:
                    raise
                break
            last = change_id
        return last, events

    def _rows(
        self, game_id: str, after: str, timeout: float, seen: _SeenView | None = None
    ) -> list[tuple[str, int | None, bytes]]:
        """The game's changes after ``after``, waiting up to ``timeout`` seconds for one
        (and with ``seen``, its seat's view read in the same round trip as each wait).

        A worker that breaks a game writes a last changes entry that wakes this wait;
        one that writes none (an older red7es, meta.broken set by hand) is noticed too,
        by a look at the meta every BROKEN_CHECK seconds: BrokenGame then, not a timeout.
        """
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            block_ms = max(1, int(min(left, BROKEN_CHECK) * 1000))
            if seen is None or seen.seat is None:
                rows = self.store.changes(game_id, after=after, block_ms=block_ms)
            else:
                rows, seen.raw = self.store.changes_and_view(game_id, after, block_ms, seen.seat)
            if rows or left <= BROKEN_CHECK:
                return rows
            self.check_not_broken(game_id)

    def check_not_broken(self, game_id: str) -> None:
        """Raise :class:`BrokenGame` if the game is broken."""
        reason = self.store.broken(game_id)
        if reason:
            raise BrokenGame(game_id, reason)

    @staticmethod
    def _public_events(game_id: str, change_id: str, payload: bytes) -> list[dict[str, Any]]:
        """The events of one changes entry; :class:`BrokenGame` for the entry that marks the
        game broken, :class:`UnreadableChange` for one that is not a worker's (docs/events.md)."""
        change = _unpacked_map(payload)
        if isinstance(change, str):
            raise UnreadableChange(game_id, change_id, change)
        if change.get("broken"):
            raise BrokenGame(game_id, str(change["broken"]))
        events = change.get("events")
        if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
            raise UnreadableChange(game_id, change_id, "its events are not a list of maps")
        return events

    # ------------------------------------------------------------------ the client interface (transport.py)

    def seat_view(self, game_id: str, name: str, token: str) -> dict[str, Any]:
        """Seat ``name``'s view.  On Redis whoever may read it reads it: ``token`` is the
        HTTP transport's, which signs the read with it (the commands hold it either way)."""
        return self.view(game_id, self.seat_of(game_id, name))

    def last_change_id(self, game_id: str) -> str:
        """The id of the game's last change ("0-0" before any)."""
        return self.store.last_change_id(game_id)

    def count_games(self) -> int:
        return self.store.count_games()

    def join_answered(self, game_id: str, name: str, token: str, wait: float) -> bool:
        """Whether an earlier join of ``name`` (with ``token``) is answered, waiting up to
        ``wait`` seconds: every command stored so far is then answered."""
        return self.answered(game_id, wait)

    def record(self, game_id: str) -> Record:
        """The game's record, read in one transaction (:func:`red7es.service.records.export`)."""
        from .records import export  # records imports this module

        return export(self, game_id)

    def log(self, game_id: str) -> list[Recorded]:
        if not self.store.exists(game_id):
            raise NoSuchGame(game_id)
        return decode_log(self.store.log(game_id))

    def games(self, limit: int = 50) -> list[GameSummary]:
        """The newest ``limit`` games.  A game whose meta or view cannot be read is listed
        too, with status ``unreadable`` and ``unreadable`` saying why: one damaged key
        never hides the other games."""
        from .archive import archived_summaries  # games moved to files by red7 archive

        ids = self.store.games(limit)
        rows = self.store.metas_and_views_as_read(ids)
        archived = archived_summaries(self.redis, [g for g, (meta, raw, _p) in zip(ids, rows, strict=True) if not meta])
        return [
            archived[game_id] if game_id in archived else _summary(game_id, meta, raw, problem)
            for game_id, (meta, raw, problem) in zip(ids, rows, strict=True)
        ]

    # ------------------------------------------------------------------ helpers

    def _changes(
        self, game_id: str, after: str, deadline: float, seen: _SeenView | None = None
    ) -> Iterator[tuple[str, int | None, bytes]]:
        left = deadline - time.monotonic()
        if left <= 0:
            self.check_not_broken(game_id)  # broken before the wait began: no worker will answer
            raise NoAnswer(f"no answer from a worker for game {game_id}: is one running?")
        if self.on_slow is not None:
            # Wait a little first; if nothing comes, let the caller make sure a worker runs.
            rows = self._rows(game_id, after, min(left, SLOW_AFTER), seen)
            if rows:
                yield from rows
                return
            self.on_slow()
            left = deadline - time.monotonic()
            if left <= 0:
                return
        rows = self._rows(game_id, after, left, seen)
        yield from rows

    def _event_batches(
        self,
        game_id: str,
        after: str,
        wait: float,
        seen: _SeenView | None = None,
        unreadable_before: int | None = None,
    ) -> Iterator[list[dict[str, Any]]]:
        """The events of each change after ``after``, as they come; ServiceError after ``wait``
        seconds.  ``seen`` keeps the seat's view read with the last wait.  A change that
        cannot be read, in a millisecond before ``unreadable_before``, is passed over."""
        deadline = time.monotonic() + wait
        cursor = after
        while True:
            for change_id, _v, payload in self._changes(game_id, cursor, deadline, seen):
                cursor = change_id
                try:
                    events = self._public_events(game_id, change_id, payload)
                except UnreadableChange:
                    if unreadable_before is None or not stream_order(change_id)[0] < unreadable_before:
                        raise
                    continue
                yield events

    def _keep(self, game_id: str, tokens: dict[str, str]) -> None:
        if self.keep_token is not None:
            for name, token in tokens.items():
                self.keep_token(game_id, name, token)

    def _await(self, game_id: str, after: str, wait: float, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first event after ``after`` that ``match`` accepts."""
        for batch in self._event_batches(game_id, after, wait):
            for event in batch:
                if match(event):
                    return dict(event)
        raise AssertionError("unreachable: the batches end only by an error")  # pragma: no cover


class _SeenView:
    """A seat's view as read with the last wait for changes (:meth:`GameStore.changes_and_view`)."""

    def __init__(self, seat: int | None) -> None:
        self.seat = seat
        self.raw: bytes | None = None  # the view, once read

    def read(self, game_id: str) -> dict[str, Any] | None:
        """The view as :meth:`GameService.view` reads it; None if none was read, or the game
        has no view or one that cannot be read (the caller's own read then says so: the
        answer itself is told all the same).  meta.broken is not read with it: a game that
        broke after its answer shows the view the answer left, and the next read of the
        game (a view, a wait, a submit) says it is broken."""
        if self.seat is None or self.raw is None:
            return None
        try:
            return read_view(game_id, self.raw, self.seat)
        except UnreadableKey:
            return None


def answer_in(batch: Sequence[dict[str, Any]], command_id: str, ids: Collection[str] = ()) -> Answer | None:
    """The answer to command ``command_id`` among the public events of one change, or None.

    ``ids``: other ids it may be answered under (a command the worker could not read is
    answered under its stream id).

    An applied command's answer is its ``CommandApplied`` and the events after it in the
    same change, up to the next command's.  A rejection's reason is not on the public
    stream (it can tell the seat's cards): ``reason`` is then None, and
    :meth:`GameService.with_reason` reads it from the seat's view.
    """
    for i, event in enumerate(batch):
        if event.get("id") != command_id and event.get("id") not in ids:
            continue
        kind = event.get("type")
        if kind == "CommandRejected":
            reason = event.get("reason")
            return Answer(command_id, False, str(reason) if reason else None, [dict(event)])
        if kind == "CommandApplied":
            events = [event]
            for later in batch[i + 1 :]:
                if later.get("type") in ("CommandApplied", "CommandRejected"):
                    break
                events.append(later)
            return Answer(command_id, True, None, events)
    return None


def _summary(game_id: str, meta: dict[str, str], raw: bytes | None, problem: str | None = None) -> GameSummary:
    """One game of :meth:`GameService.games`: what can be read of it, and the first
    key that cannot be (its fields then read as unknown; ``problem``: one Redis refused
    to read, a key of another type)."""
    problems: list[str] = [] if problem is None else [problem]

    def number(name: str, default: int | None) -> int | None:
        try:
            return meta_int(game_id, meta, name, default)
        except UnreadableKey as exc:
            problems.append(str(exc))
            return None

    version, to_move, created = number("version", 0), number("to_move", None), number("created", 0)
    view: dict[str, Any] = {}
    if raw:
        try:
            view = read_view(game_id, raw)
        except UnreadableKey as exc:
            problems.append(str(exc))
    outcome = view.get("outcome")
    winners = outcome.get("winners") if isinstance(outcome, dict) else None
    reason = outcome.get("reason") if isinstance(outcome, dict) else None
    status = "broken" if meta.get("broken") else "unreadable" if problems else meta.get("status", "?")
    return GameSummary(
        game_id,
        status,
        version,
        to_move,
        created,
        view.get("seats", []),
        view.get("variant", {}),
        winners,
        problems[0] if problems else None,
        reason,
    )


def _unpacked_map(raw: bytes) -> dict[str, Any] | str:
    """msgpack bytes a worker wrote as a map, or what is wrong with them (a phrase)."""
    try:
        obj = msgpack.unpackb(raw, raw=False)
    except Exception as exc:  # msgpack raises several unrelated types for bad bytes
        return f"not valid msgpack ({type(exc).__name__})"
    if not isinstance(obj, dict):
        return f"{with_article(type(obj).__name__)}, not a map"
    return obj


def read_view(game_id: str, raw: bytes, seat: int | None = None) -> dict[str, Any]:
    """A stored view (the public one, or seat ``seat``'s) as the map a worker wrote;
    :class:`UnreadableKey` naming the key if it is not one (docs/events.md)."""
    view = _unpacked_map(raw)
    if isinstance(view, str):
        problem = view
    else:
        seats = view.get("seats", [])
        if isinstance(seats, list) and all(isinstance(s, dict) and isinstance(s.get("name"), str) for s in seats):
            return view
        problem = "its seats are not a list of maps with a name"
    keys = Keys(game_id)
    raise UnreadableKey(game_id, keys.public_view if seat is None else keys.view(seat), problem)


@overload
def meta_int(game_id: str, meta: Mapping[str, str], name: str, default: int) -> int: ...
@overload
def meta_int(game_id: str, meta: Mapping[str, str], name: str, default: None) -> int | None: ...
def meta_int(game_id: str, meta: Mapping[str, str], name: str, default: int | None) -> int | None:
    """Field ``name`` of a game's meta hash (``version``, ``to_move``, ``created``) as the
    whole number a worker writes, ``default`` when it is absent or empty;
    :class:`UnreadableKey` when it holds anything else (written by hand, or damaged)."""
    value = meta.get(name, "")
    if value == "":
        return default
    number = whole_number(value)
    if number is None:
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise UnreadableKey(game_id, Keys(game_id).meta, f"its {name} is {shown!r}, not a whole number")
    return number


class Unchanging:
    """What never changes in a game, remembered from the first read of its view: its
    seats' names, and what its turns are signed over besides its id
    (:func:`~red7es.service.tokens.turn_commitment`: the batch rules are the game's).

    Only a game made again under the same id (keys deleted by hand) changes them: every
    view the client reads is shown to :meth:`seen`, which forgets what it remembered of
    a game whose ``created`` is not the one it remembered."""

    def __init__(self, view: Callable[[str], dict[str, Any]]) -> None:
        self._view = view
        self._seats: dict[str, list[str]] = {}
        self._signed_over: dict[str, str | None] = {}
        self._created: dict[str, object] = {}

    def seen(self, game_id: str, view: dict[str, Any]) -> None:
        """A view of the game, just read: the game made again since if its ``created`` differs."""
        if game_id in self._created and view.get("created") != self._created[game_id]:
            self._keep(game_id, view)

    def seat_of(self, game_id: str, name: str) -> int:
        seats = self._seats.get(game_id)
        if seats is None or name not in seats:
            view = self._view(game_id)
            seat = seat_index(view, name)
            self._keep(game_id, view)
            return seat
        return seats.index(name)

    def signed_over(self, game_id: str) -> str | None:
        if game_id not in self._signed_over:
            self._keep(game_id, self._view(game_id))
        return self._signed_over[game_id]

    def _keep(self, game_id: str, view: dict[str, Any]) -> None:
        self._seats[game_id] = [s["name"] for s in view["seats"]]
        self._signed_over[game_id] = turn_commitment(view)
        self._created[game_id] = view.get("created")


def seat_index(view: dict[str, Any], name: str) -> int:
    """The number of seat ``name`` (or a seat number given as text) in a game's view."""
    for seat in view.get("seats", []):
        if seat["name"] == name:
            return int(seat["seat"])
    number = whole_number(name)
    if number is not None and number < len(view.get("seats", [])):
        return number
    names = ", ".join(s["name"] for s in view.get("seats", []))
    raise ServiceError(f"no seat {name!r} in game {view.get('game')} (seats: {names})")


def _operator_act(act: Callable[[], list[LogEvent]]) -> list[LogEvent]:
    """Run an operator's act on a game's log (:meth:`Folder.adjudicate`, :meth:`Folder.withdraw`),
    its refusals as :class:`Rejected` and a game it cannot act on as :class:`ServiceError`."""
    try:
        return act()
    except ValueError as exc:  # IllegalStep
        raise Rejected(str(exc)) from None
    except (NotStarted, GameBroken, Contended) as exc:
        raise ServiceError(str(exc)) from None
