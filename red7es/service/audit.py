"""Audit: prove a finished game was played fairly, by playing it again.

The audit re-executes a game from its revealed seed and its commands stream through
:class:`~red7es.service.table.Table` and :func:`~red7es.service.folding.decide`, the
very code the worker ran, and compares what that produces with the stored log event
by event (type and data; the ``at`` timestamps are ignored).  Around that
re-execution it checks what re-execution alone cannot:

* the encoding: every event decodes, ``seq`` runs 0, 1, 2, ..., each ``prev`` is the
  SHA-256 of the previous event's bytes, the last event hashes to the store's
  ``head`` and the log is as long as the store's ``version``;
* the seed: SHA-256 of the revealed seed is the commitment published at creation;
* the people: every applied person's turn carries an Ed25519 signature by the key
  its seat joined with; bot turns are only for bot seats;
* the commands stream: every command up to the store's cursor is answered exactly
  once, in order, and nothing in the log answers a command that is not there.

The result is PASS, the FIRST divergence (event and command number, what was
expected, what was found, and why), or INCOMPLETE for a game that is not over: its
seed is still secret, so only the chain, the signatures and the legality of the
recorded steps can be checked.  The audit works on a :class:`Record`, so it runs
offline on exported files exactly as on games in Redis.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..deal import commitment
from ..facts import CardDrawn, Forfeited, GameOver, PlayerOut, RoundDealt, RoundWon, StepApplied, TurnTakenBack
from ..game import BATCH_RULES, NO_SHOW, RESIGNED, WITHDRAWN, IllegalStep
from ..steps import StepError, is_abort, is_resign
from ..steps import Turn as TurnText
from ..wording import counted
from .client import UnreadableKey
from .codec import (
    EVENT_TYPES,
    EVENTS,
    GENESIS,
    CorruptEvent,
    decode_command,
    decode_event,
    event_hash,
    seat_data,
    type_name,
)
from .event_text import event_difference, show_event
from .events import (
    BOT,
    PERSON,
    REPEAT,
    Adjudicated,
    ClockStarted,
    CommandApplied,
    CommandRejected,
    CreateCommand,
    GameCreated,
    JoinClosed,
    LogEvent,
    SeatJoined,
    SeedRevealed,
    TimedOut,
    TurnCommand,
    Withdrawn,
)
from .folding import decide, decide_command, stream_ms
from .names import shown as printable
from .record_files import Unreadable, readable_event
from .records import Entry, Record, export, stream_order
from .table import CreateRejected, Table
from .tokens import verify_turn
from .witness import record_divergence

if TYPE_CHECKING:
    from .client import GameService

__all__ = [
    "CHECKS",
    "COUNTS",
    "PASS",
    "FAIL",
    "INCOMPLETE",
    "AuditReport",
    "Divergence",
    "audit_as",
    "audit_game",
    "audit_record",
]

PASS, FAIL, INCOMPLETE = "pass", "fail", "incomplete"

CHECKS: dict[str, str] = {
    # the file (a record that cannot be read has nothing else to check)
    "unreadable": (
        "the record cannot be read from its file (docs/records.md): malformed, cut short or edited; "
        "or a key of the game in Redis holds what no worker writes"
    ),
    # the encoding (checked before anything is re-executed)
    "decode": "an event's bytes are not a valid event",
    "seq": "sequence numbers do not run 0, 1, 2, ...: an event was deleted, duplicated or moved",
    "hash-chain": "an event's bytes do not hash to the prev of the next event (or the store's head)",
    "truncated": "the log holds fewer events than the store's version says",
    "extra": "the log holds more events than the store's version says",
    "header": "the record's header disagrees with the log",
    # the seed
    "seed-missing": "the game is over but its seed was not revealed",
    "commitment": "SHA-256 of the revealed seed is not the commitment published at creation",
    "created": "the create command does not make the log's first events",
    # commands and their answers
    "signature": "a person's applied turn is not signed by the key the seat joined with",
    "bot-seat": "a bot turn was played for a seat that is not a bot",
    "bot-turn": "a bot's command is not where the worker writes bot turns",
    "repeat": "a copy of a turn already answered was applied again",
    "illegal-turn": "a command was applied although re-executing it rejects it",
    "wrongly-rejected": "a command was rejected although re-executing it applies it",
    "rejection": "a command was rejected for another reason than re-execution gives",
    "applied": "a command is recorded as applied differently than it was submitted",
    "join": "a seat was joined differently than the command says",
    "missing-command": "the log answers a command that is not in the commands stream",
    # time (RULES.md, Time: referee time is Redis's, the stream ids of commands and events)
    "early-timeout": "a seat was timed out before its time was up, or before a command that came in time",
    "late-turn": "a turn was applied although it came after its seat's time was up",
    "missing-timeout": "a seat's time was up but the log answers a later command without timing it out",
    "timeout": "a time-out's seat, deadline or time is not what the clocks give",
    "clock": "a seat's clock (ClockStarted: start, deadline, time left) is not what the record's times give",
    # the facts
    "deal": "a deal is not the one the seed produces",
    "illegal-step": "the log records a step the rules do not allow",
    "step": "the log records a step other than the command's",
    "draw": "a drawn card is not the one on top of the deck",
    "player-out": "a player left the round differently than the rules say",
    "take-back": "a fold took back other steps than the rules say (batch rules 4)",
    "forfeit": "a seat was put out of the game other than by its own resign command or its time-out",
    "abort": "a game was aborted although a turn had been played in it (RULES.md, Aborting)",
    "adjudication": "an adjudication ends a game that was over, or names a winner that is no seat or out of the game",
    "withdrawal": "a withdrawal puts out a seat that was out or of a game that was over, or its time is not one "
    "the clocks and the log allow (RULES.md, Withdrawal)",
    "score": "a round's winner or scored cards are not what the rules give",
    "outcome": "the final outcome (winners, scores, round wins) is not what the rules give",
    "seed": "the revealed seed is not the game's seed",
    # the order of events
    "missing-event": "an event re-execution produces is missing from the log",
    "extra-event": "the log holds an event re-execution does not produce",
    "reordered": "two events are in the wrong order",
    "event": "an event differs from what re-execution produces",
    # what a seat holder saw (audit --as: docs/trust.md)
    "seat-key": "the seat is held in the record by a key that is not the one your client created",
    "rolled-back": "the record ends before a version you were shown: events you saw are gone",
    "rewritten": "a log head you were shown is not on the record's chain: the log was rewritten or rolled back",
}

# Which divergence is reported when several share an event number: the encoding first.
_PRECEDENCE = {name: i for i, name in enumerate(CHECKS)}
_SHOW = 160
# The report's ``checked`` counts, every one always present (0 when none: docs/cli.md).
COUNTS = (
    "deals",
    "steps",
    "signatures",
    "bot_turns",
    "applied",
    "rejected",
    "rounds",
    "outcome",
    "commitment",
    "pending_commands",
)
# What a matching event adds to the report's ``checked`` counts.
_COUNTED: dict[type, str] = {
    StepApplied: "steps",
    RoundDealt: "deals",
    CommandApplied: "applied",
    CommandRejected: "rejected",
    RoundWon: "rounds",
    GameOver: "outcome",
}


@dataclass(frozen=True)
class Divergence:
    """Where a record stops matching its re-execution, and why (one line)."""

    check: str  # a key of CHECKS
    event: int | None  # log position (seq) of the first event concerned
    command: int | None  # position in the commands stream, when a command is concerned
    expected: str
    found: str
    reason: str

    def where(self) -> str:
        if self.check == "unreadable":  # the reader's line names the file, line and entry already
            return "record"
        parts = []
        if self.event is not None:
            parts.append(f"event {self.event}")
        if self.command is not None:
            parts.append(f"command {self.command}")
        return " / ".join(parts) or "record"

    def line(self) -> str:
        return f"{self.where()}: {self.check}: {self.reason}; expected {self.expected}, found {self.found}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # the fields, in order: the JSON report's keys


@dataclass
class AuditReport:
    """The outcome of one audit: PASS, FAIL with the first divergence, or INCOMPLETE."""

    game: str | None  # None when the record's header cannot be read
    result: str
    events: int
    commands: int
    checked: dict[str, int] = field(default_factory=dict)
    divergence: Divergence | None = None
    witness: str | None = None  # audit --as: what matched what the seat holder was shown
    # How an operator ended the game, when one did (RULES.md, Adjudication): the audit
    # checks everything before it, but the result is the operator's, not the play's.
    adjudicated: str | None = None
    # The seats an operator withdrew (RULES.md, Withdrawal), a line each: checked like any
    # forfeit, but the operator's act, not the seat's.
    withdrawals: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.result == PASS

    def line(self) -> str:
        """PASS, FAIL or INCOMPLETE and the essentials, in one line."""
        c = self.checked
        if self.result == FAIL and self.divergence is not None:
            game = "(game unknown)" if self.game is None else self.game
            return f"FAIL {game}: {self.divergence.line()}"
        witnessed = "" if self.witness is None else f"; {self.witness}"
        if self.adjudicated is not None:
            witnessed = f"; {self.adjudicated}{witnessed}"
        if self.withdrawals:
            witnessed = "".join(f"; {w}" for w in self.withdrawals) + witnessed
        if self.result == INCOMPLETE:
            return (
                f"INCOMPLETE {self.game}: the game is not over, so its seed is still secret and its deals and "
                f"outcome cannot be checked; verified only: hash chain ({counted(self.events, 'event')}), "
                f"{counted(c.get('signatures', 0), 'signature')}, {counted(c.get('steps', 0), 'step')} legal"
                f"{witnessed}"
            )
        verified = ", ".join(
            counted(c.get(key, 0), noun)
            for key, noun in (
                ("deals", "deal"),
                ("steps", "step"),
                ("signatures", "signature"),
                ("bot_turns", "bot turn"),
            )
        )
        return (
            f"PASS {self.game}: {counted(self.events, 'event')} re-executed from the revealed seed and "
            f"{counted(self.commands, 'command')}; {verified} verified; hash chain intact{witnessed}"
        )

    def to_dict(self) -> dict[str, Any]:
        witness = {} if self.witness is None else {"witness": self.witness}
        adjudicated = {} if self.adjudicated is None else {"adjudicated": self.adjudicated}
        withdrawals = {"withdrawals": self.withdrawals} if self.withdrawals else {}
        return {
            **witness,
            **adjudicated,
            **withdrawals,
            "game": self.game,
            "result": self.result,
            "passed": self.passed,
            "events": self.events,
            "commands": self.commands,
            "checked": {**dict.fromkeys(COUNTS, 0), **self.checked},
            "divergence": None if self.divergence is None else self.divergence.to_dict(),
            "line": self.line(),
        }


def audit_game(service: GameService, game_id: str) -> AuditReport:
    """Audit a game in Redis (through a consistent export of it).

    A game with a key that cannot be read (its meta's version not a number: no worker
    wrote it) fails check ``unreadable``, the key and why as the reason, as a record
    its file does not hold readably does: ``--all`` goes on to the other games.
    """
    try:
        record = export(service, game_id)
    except UnreadableKey as exc:
        return unexportable(game_id, str(exc))
    return audit_record(record)


def unexportable(game_id: str, reason: str) -> AuditReport:
    """The report of a game in Redis that cannot be read as a record (``reason`` says why):
    one failed game, check ``unreadable``, so ``red7 audit --all`` goes on to the others."""
    problem = Divergence("unreadable", None, None, "a game as workers store it", "a key that cannot be read", reason)
    return AuditReport(game_id, FAIL, 0, 0, {}, problem)


def audit_record(record: Record | Unreadable) -> AuditReport:
    """Audit a game record; never raises for a bad record, it reports it.

    A record its file does not faithfully hold (:func:`~red7es.service.record_files.read_each`
    could not read it) fails check ``unreadable``: the reader's line, which names
    the file and line, is the reason.
    """
    if isinstance(record, Unreadable):
        problem = Divergence(
            "unreadable",
            record.event,
            record.command,
            "a record as docs/records.md specifies",
            "one that cannot be read",
            record.error,
        )
        return AuditReport(record.game, FAIL, 0, 0, {}, problem)
    report = _Audit(record).run()
    if report.result == FAIL and _game_created_version(record) == 1:
        # Version 1 of GameCreated was written under batch rules 1 and, from 4c24a14 on,
        # under 2 (which it is read as): a record refereed under either is genuine.
        older = _Audit(record, batch_rules=1).run()
        if older.result != FAIL:
            return older
    return report


def audit_as(record: Record | Unreadable, name: str, key: str, heads: Mapping[int, str]) -> AuditReport:
    """Audit a record, then check it against what the holder of seat ``name`` was shown.

    ``key`` is the public key of the seat's token (the one the client created), ``heads``
    the log heads the client remembers (version -> hex head). The audit alone cannot
    tell a record rewritten whole by someone with write access to Redis; these can
    (docs/trust.md). The first divergence by event number is reported, the audit's own
    first at the same event only when it is earlier.
    """
    report = audit_record(record)
    if isinstance(record, Unreadable):
        return report
    joined: dict[str, tuple[int, str]] = {}
    names = [seat.name for seat in record.seats]
    for i, entry in enumerate(record.events):
        m = readable_event(entry.raw)
        data = m.get("data")
        if m.get("type") == "SeatJoined" and isinstance(data, dict):
            seat, seat_key = data.get("seat"), data.get("key")
            if type(seat) is int and 0 <= seat < len(names) and isinstance(seat_key, str):
                joined.setdefault(names[seat], (i, seat_key))
    problem = record_divergence([e.raw for e in record.events], {name: key}, joined, heads)
    if problem is None:
        report.witness = f"as {name}: your seat's key and {counted(len(heads), 'log head')} you were shown match"
        return report
    mine = Divergence(problem.check, problem.event, None, problem.expected, problem.found, problem.reason)
    theirs = report.divergence
    if theirs is None or theirs.event is None or (mine.event is not None and mine.event <= theirs.event):
        report.result, report.divergence = FAIL, mine
    return report


def _game_created_version(record: Record) -> int | None:
    """The version event 0 was written at, if it is a GameCreated (None otherwise)."""
    first = readable_event(record.events[0].raw) if record.events else {}
    version = first.get("version")
    return version if first.get("type") == "GameCreated" and type(version) is int else None


# ---------------------------------------------------------------------------- the audit


class _Audit:
    """One audit run: the record's events decoded once, checks in log order."""

    def __init__(self, record: Record, batch_rules: int | None = None) -> None:
        self.record = record
        self.batch_rules = batch_rules  # the batch rules to re-execute under; None: GameCreated's
        self.n = len(record.events)
        self.hashes = [event_hash(e.raw) for e in record.events]
        # Each event's msgpack map, unpacked once; the full dataclass only when needed
        # (comparing maps with the expected events' data is what makes the audit fast).
        self.maps: list[dict[str, Any] | None] = []
        self._decoded: dict[int, LogEvent | None] = {}
        self.counts: Counter[str] = Counter()
        self.stop = self.n
        self.adjudicated: str | None = None  # the report's line on an operator's adjudication
        self.withdrawals: list[str] = []  # the report's lines on the operator's withdrawals
        self.answered_at = 0  # the referee time (stream ms) of the last command re-executed

    def run(self) -> AuditReport:
        found = self._structure()
        # Re-execution past the first encoding problem could only find later divergences.
        self.stop = min((d.event for d in found if d.event is not None), default=self.n)
        created = self._event(0)
        seed: str | None = None  # set once the revealed seed checks out
        if isinstance(created, GameCreated):
            found.extend(self._header(created))
            seed_at, seed, problem = self._seed()
            if problem is not None:
                found.append(problem)
            elif seed is not None:
                semantic = self._commitment(created, seed_at, seed) or self._walk(bytes.fromhex(seed))
                if semantic is not None:
                    found.append(semantic)
            else:
                seedless = self._seedless()
                if seedless is not None:
                    found.append(seedless)
        elif self.n:
            found.append(
                _div("created", 0, None, "GameCreated", show_event(created), "a game log starts with GameCreated")
            )
        else:
            found.append(_div("truncated", 0, None, "GameCreated", "an empty log", "the record holds no events"))
        first = min(found, key=self._rank) if found else None
        if first is not None:
            result = FAIL
        else:
            result = PASS if seed is not None else INCOMPLETE
        checked = {k: v for k, v in sorted(self.counts.items())}
        report = AuditReport(self.record.game_id, result, self.n, len(self.record.commands), checked, first)
        report.adjudicated = self.adjudicated
        report.withdrawals = self.withdrawals
        return report

    def _rank(self, d: Divergence) -> tuple[int, int]:
        return (self.n + 1 if d.event is None else d.event, _PRECEDENCE.get(d.check, len(_PRECEDENCE)))

    def _event(self, j: int) -> LogEvent | None:
        """Event ``j`` fully decoded (None if it does not exist or cannot be decoded)."""
        if not 0 <= j < self.n or self.maps[j] is None:
            return None
        if j not in self._decoded:
            try:
                self._decoded[j] = decode_event(self.record.events[j].raw, f"event {j}").event
            except CorruptEvent:
                self._decoded[j] = None
        return self._decoded[j]

    # ------------------------------------------------------------------ the encoding

    def _structure(self) -> list[Divergence]:
        """Unpack every event by the codec's rules; the first decode, seq, chain and length problems."""
        found: list[Divergence] = []
        for i, entry in enumerate(self.record.events):
            m = None
            try:
                m = _unpack(entry.raw, f"event {i}")
            except CorruptEvent as exc:
                if not any(d.check == "decode" for d in found):
                    found.append(_div("decode", i, None, "a valid event", "undecodable bytes", str(exc)))
            self.maps.append(m)
            if m is None:
                continue
            seq = m["seq"]
            if seq != i and not any(d.check == "seq" for d in found):
                why = (
                    f"seq {seq} appears again at position {i}: an event is duplicated or moved"
                    if seq < i
                    else f"position {i} holds seq {seq}: an event is missing or moved"
                )
                found.append(_div("seq", i, None, f"seq {i}", f"seq {seq}", why))
        chain = self._chain()
        if chain is not None:
            found.append(chain)
        version = self.record.version
        if version > self.n:
            found.append(
                _div(
                    "truncated",
                    self.n,
                    None,
                    f"{version} events (the store's version)",
                    f"{self.n} events",
                    "the log is shorter than the store recorded: events were removed from its end",
                )
            )
        elif version < self.n:
            found.append(
                _div(
                    "extra",
                    version,
                    None,
                    f"{version} events (the store's version)",
                    f"{self.n} events",
                    f"events from {version} on were added after the store's last append",
                )
            )
        return found

    def _link(self, i: int) -> bool | None:
        """Whether event i's prev is the hash of event i-1; at i == n, whether the head is the last hash."""
        expected = self.hashes[i - 1] if i > 0 else GENESIS
        if i == self.n:
            if self.record.version != self.n:
                return None  # the head belongs to another length: the length check reports it
            return self.n == 0 or self.record.head == expected.hex()
        m = self.maps[i]
        return None if m is None else bool(m["prev"] == expected)

    def _chain(self) -> Divergence | None:
        """The first broken link, blamed on the event whose bytes changed."""
        for i in range(self.n + 1):
            if self._link(i) is not False:
                continue
            if i == self.n:
                return _div(
                    "hash-chain",
                    i - 1,
                    None,
                    f"SHA-256 {self.record.head} (the store's head)",
                    f"SHA-256 {self.hashes[i - 1].hex()}",
                    f"event {i - 1}'s bytes do not hash to the head the store recorded: they were altered",
                )
            m = self.maps[i]
            assert m is not None
            prev: bytes = m["prev"]
            if i == 0:
                return _div(
                    "hash-chain",
                    0,
                    None,
                    "prev = 32 zero bytes",
                    f"prev {prev.hex()}",
                    "event 0 must start the chain",
                )
            if m["seq"] == i and self._link(i + 1):  # (a moved event is the seq check's to report)
                return _div(
                    "hash-chain",
                    i - 1,
                    None,
                    f"SHA-256 {prev.hex()} (event {i}'s prev)",
                    f"SHA-256 {self.hashes[i - 1].hex()}",
                    f"event {i - 1}'s bytes were altered after event {i} was chained to them",
                )
            return _div(
                "hash-chain",
                i,
                None,
                f"prev {self.hashes[i - 1].hex()} (SHA-256 of event {i - 1})",
                f"prev {prev.hex()}",
                f"event {i} is not chained to event {i - 1}",
            )
        return None

    # ------------------------------------------------------------------ metadata and the seed

    def _header(self, created: GameCreated) -> list[Divergence]:
        r = self.record
        for name, header, logged in (
            ("game", r.game_id, created.game),
            ("variant", r.variant, created.variant),
            ("seats", r.seats, created.seats),
            ("commitment", r.commitment, created.commitment),
            ("created", r.created, created.created),
        ):
            if header != logged:
                return [
                    _div(
                        "header",
                        0,
                        None,
                        f"{name} {_brief(logged)} (GameCreated)",
                        f"{name} {_brief(header)} in the header",
                        "the record's header disagrees with event 0",
                    )
                ]
        return []

    def _seed(self) -> tuple[int, str | None, Divergence | None]:
        """Where the seed was revealed and what it is, or why that is wrong."""
        for j, m in enumerate(self.maps):
            revealed = self._event(j) if m is not None and m["type"] == "SeedRevealed" else None
            if isinstance(revealed, SeedRevealed):
                seed = revealed.seed
                if self.record.seed != seed:
                    return (
                        j,
                        None,
                        _div(
                            "header",
                            j,
                            None,
                            f"seed {_short(seed)} (SeedRevealed)",
                            f"seed {_short(str(self.record.seed))} in the header",
                            "the record's header disagrees with the revealed seed",
                        ),
                    )
                return j, seed, None
        for j, m in enumerate(self.maps):
            if m is not None and m["type"] == "GameOver":
                return (
                    j + 1,
                    None,
                    _div(
                        "seed-missing",
                        j + 1,
                        None,
                        "SeedRevealed",
                        show_event(self._event(j + 1)),
                        "a finished game reveals its seed",
                    ),
                )
        if self.record.seed is not None:
            return (
                self.n,
                None,
                _div(
                    "seed-missing",
                    self.n,
                    None,
                    "SeedRevealed",
                    "no SeedRevealed in the log",
                    "the header has a seed but the log never revealed it",
                ),
            )
        return -1, None, None

    def _commitment(self, created: GameCreated, at: int, seed: str) -> Divergence | None:
        try:
            digest = commitment(bytes.fromhex(seed))
        except ValueError:
            digest = "(not hex)"
        if digest == created.commitment:
            self.counts["commitment"] += 1
            return None
        return _div(
            "commitment",
            at,
            None,
            f"SHA-256(seed) = {_short(created.commitment)} (published in GameCreated)",
            f"SHA-256({_short(seed)}) = {_short(digest)}",
            "the revealed seed is not the one committed to at creation",
        )

    # ------------------------------------------------------------------ re-execution

    def _processed(self) -> list[tuple[int, Entry]]:
        """The commands up to the store's cursor: the ones the log must answer."""
        commands = self.record.commands
        if commands and commands[-1].stream_id == self.record.cursor:
            return list(enumerate(commands))  # the usual case: everything was folded
        cursor = stream_order(self.record.cursor)
        out = []
        for k, entry in enumerate(self.record.commands):
            if cursor >= (0, 0) and stream_order(entry.stream_id) > cursor:
                self.counts["pending_commands"] += 1
                continue
            out.append((k, entry))
        return out

    def _walk(self, seed: bytes) -> Divergence | None:
        """Re-execute every command and compare its answer with the log, in order."""
        commands = self._processed()
        if not commands:
            return _div("missing-command", 0, None, "the create command", "no commands", "the log answers no command")
        k, entry = commands[0]
        started = self._start(k, entry, seed)
        if isinstance(started, Divergence):
            return started
        table, expected = started
        pos = 0
        problem = self._compare(k, expected, pos)
        if problem is not None:
            return problem
        pos += len(expected)
        self.answered_at = stream_ms(entry.stream_id)
        for k, entry in commands[1:]:
            if pos > self.stop:
                return None
            problem, pos = self._time_outs(k, stream_ms(entry.stream_id), pos, table)
            if problem is not None:
                return problem
            answer = self._answer(k, entry, pos, table)
            if isinstance(answer, Divergence):
                return answer
            problem = self._compare(k, answer, pos)
            if problem is not None:
                return problem
            pos += len(answer)
            self.answered_at = max(self.answered_at, stream_ms(entry.stream_id))
        problem, pos = self._time_outs(None, None, pos, table)
        if problem is not None:
            return problem
        if pos < self.n:
            return self._orphan(pos)
        return None

    def _time_outs(self, k: int | None, at: int | None, pos: int, table: Table) -> tuple[Divergence | None, int]:
        """Check and re-execute the time-outs the log holds at ``pos``, before command ``k``
        (stream time ``at``; None: after the last command). Returns the first problem and
        the position after them (RULES.md, Time; docs/trust.md, Time).

        A command after the seat to move's deadline must find a time-out before its answer;
        a time-out must come after the deadline (its ``at``), before no command that came in
        time, no later than the command it precedes and no later than its own log entry
        (Redis's time when it was written)."""
        while True:
            due = table.deadline
            found = self.maps[pos] if pos < self.n else None
            if found is not None and found["type"] == "Adjudicated":
                # the operator's act ends the game whatever the clocks say: none is due after it
                problem, pos = self._adjudication(k, pos, table)
                if problem is not None:
                    return problem, pos
                continue
            if found is not None and found["type"] == "Withdrawn":
                problem, pos = self._withdrawal(k, pos, table)
                if problem is not None:
                    return problem, pos
                continue
            timed_out = found is not None and found["type"] in ("TimedOut", "JoinClosed")
            if not timed_out:
                if due is not None and at is not None and at > due:
                    return self._missing_time_out(k, at, due, pos, table), pos
                if due is not None and at is None and found is not None:
                    # after the last command's answer only a time-out can extend a timed game
                    return self._missing_time_out(None, None, due, pos, table), pos
                return None, pos
            event = self._event(pos)
            if not isinstance(event, TimedOut | JoinClosed):
                return self._undecodable(k, None, pos), pos
            problem = self._time_out_problem(k, at, due, pos, event)
            if problem is not None:
                return problem, pos
            expected = table.time_out(event.at)
            problem = self._compare(k, expected, pos)
            if problem is not None:
                return problem, pos
            pos += len(expected)

    def _adjudication(self, k: int | None, pos: int, table: Table) -> tuple[Divergence | None, int]:
        """The operator's adjudication at ``pos`` (RULES.md, Adjudication), before command ``k``:
        trusted as the operator's act (nothing signs it), but it must end a game not over with
        winners still in it, and the GameOver and SeedRevealed after it must be what it gives.
        The report says the game ended by it."""
        event = self._event(pos)
        if not isinstance(event, Adjudicated):
            return self._undecodable(k, None, pos), pos
        try:
            expected = table.adjudicate(event.winners, event.reason)
        except ValueError as exc:  # IllegalStep: over, no such seat, out of the game, no reason
            return _div("adjudication", pos, k, "a game not over, winners in it", show_event(event), str(exc)), pos
        problem = self._compare(k, expected, pos)
        if problem is not None:
            return problem, pos
        names = [printable(table.seats[s].name) for s in event.winners]
        won = f"{' and '.join(names)} {'win' if len(names) > 1 else 'wins'}" if names else "no winner"
        why = printable(_cut(event.reason))
        self.adjudicated = f"NOT ENDED BY PLAY: the operator adjudicated it at event {pos}: {won}; reason: {why}"
        return None, pos + len(expected)

    def _withdrawal(self, k: int | None, pos: int, table: Table) -> tuple[Divergence | None, int]:
        """The operator's withdrawal at ``pos`` (RULES.md, Withdrawal), before command ``k``:
        trusted as the operator's act (nothing signs it), but its seat must be in a game not
        over, its time no later than Redis wrote it, not before the running clock started
        not after the seat to move's deadline (a time-out due comes first), and not before
        the last command answered before it; and what follows it must be what it gives.
        The report names it."""
        event = self._event(pos)
        if not isinstance(event, Withdrawn):
            return self._undecodable(k, None, pos), pos
        written = stream_order(self.record.events[pos].stream_id)[0]
        try:
            if event.at > written:
                raise ValueError(f"the withdrawal says {event.at}, after Redis wrote it ({written})")
            if event.at < self.answered_at:  # it was decided after the answers before it
                raise ValueError(
                    f"the withdrawal says {event.at}, before the command answered before it ({self.answered_at})"
                )
            expected = table.withdraw(event.seat, event.reason, event.at)
        except ValueError as exc:  # IllegalStep: over, no such seat, out already, the clocks
            return _div(
                "withdrawal",
                pos,
                k,
                "a seat in a game not over, at a time the clocks allow",
                show_event(event),
                str(exc),
            ), pos
        problem = self._compare(k, expected, pos)
        if problem is not None:
            return problem, pos
        who = printable(table.seats[event.seat].name)
        self.withdrawals.append(f"the operator withdrew {who} at event {pos}; reason: {printable(_cut(event.reason))}")
        return None, pos + len(expected)

    def _time_out_problem(
        self, k: int | None, at: int | None, due: int | None, pos: int, event: TimedOut | JoinClosed
    ) -> Divergence | None:
        """Why the recorded time-out at ``pos`` cannot be (None if it can)."""
        found = show_event(event)
        if due is None:
            return _div("early-timeout", pos, k, "no time-out", found, "no seat's clock was running")
        if event.at <= due:
            return _div(
                "early-timeout",
                pos,
                k,
                f"a time-out after {due}",
                found,
                f"the seat's time was up after {due}, and the time-out is at {event.at}",
            )
        if at is not None and at <= due:
            return _div(
                "early-timeout",
                pos,
                k,
                f"command {k} answered first",
                found,
                f"command {k} came at {at}, at or before the deadline {due}: it counts, so it is answered first",
            )
        if at is not None and event.at > at:
            return _div(
                "timeout",
                pos,
                k,
                f"a time-out at {at} at the latest",
                found,
                f"the time-out says {event.at}, after command {k} (at {at}) that it comes before",
            )
        written = stream_order(self.record.events[pos].stream_id)[0]
        if event.at > written:
            return _div(
                "timeout",
                pos,
                k,
                f"a time-out at {written} at the latest",
                found,
                f"the time-out says {event.at}, after Redis wrote it ({self.record.events[pos].stream_id})",
            )
        return None

    def _missing_time_out(self, k: int | None, at: int | None, due: int, pos: int, table: Table) -> Divergence:
        """Command ``k`` came at ``at``, after the deadline ``due``, and no time-out precedes its
        answer (``k`` None: the log goes on after the last command's answer with something else)."""
        clock = table.clock
        name = table.seats[clock.seat].name if clock is not None else "the seat to move"
        found = self._event(pos) if pos < self.n else None
        shown = "the end of the log" if found is None else show_event(found)
        expected = f"TimedOut of {name} (deadline {due})"
        if k is None or at is None:
            return _div(
                "missing-timeout",
                pos,
                None,
                expected,
                shown,
                f"after the last command's answer only {name}'s time-out can follow",
            )
        if isinstance(found, CommandApplied) and clock is not None and found.seat == clock.seat:
            return _div(
                "late-turn",
                pos,
                k,
                expected,
                shown,
                f"{name}'s turn came at {at}, after their time was up at {due}, and was applied",
            )
        return _div(
            "missing-timeout",
            pos,
            k,
            expected,
            shown,
            f"{name}'s time was up at {due}; command {k} came at {at} and was answered without a time-out",
        )

    def _start(self, k: int, entry: Entry, seed: bytes) -> tuple[Table, list[LogEvent]] | Divergence:
        logged = self._event(0)
        as_logged = logged.batch_rules if isinstance(logged, GameCreated) else BATCH_RULES
        rules = self.batch_rules or as_logged
        try:
            command, at = decode_command(entry.raw, f"command {entry.stream_id}", rules)
        except CorruptEvent as exc:
            return _div("created", 0, k, "a create command", "an undecodable command", str(exc))
        if not isinstance(command, CreateCommand):
            return _div(
                "created", 0, k, "a create command", f"a {type(command).__name__}", "a game's first command creates it"
            )
        try:
            table, events = Table.start(
                self.record.game_id, command, seed, at, rules, new_game=False, stream_at=stream_ms(entry.stream_id)
            )
        except CreateRejected as exc:
            return _div("created", 0, k, "a game", "a rejected create command", str(exc))
        if isinstance(events[0], GameCreated):  # refereed under the rules tried, compared as the log reads
            events[0] = replace(events[0], batch_rules=as_logged)
        return table, events

    def _answer(self, k: int, entry: Entry, pos: int, table: Table) -> list[LogEvent] | Divergence:
        """What the worker's code answers to command ``k``, after the checks re-execution cannot make."""
        found = self.maps[pos] if pos < self.n else None
        kind = None if found is None else found["type"]
        answers = found is not None and found["data"].get("id")
        try:
            command, _at = decode_command(entry.raw, f"command {entry.stream_id}", table.batch_rules)
        except CorruptEvent:
            return decide(table, entry.stream_id, entry.raw)  # the worker's answer to a corrupt command
        if isinstance(command, TurnCommand):
            if command.by == BOT and not (kind == "CommandRejected" and answers == command.id):
                # written by a worker together with its answer (a client's would be rejected)
                problem = self._bot_turn(k, pos, command, table)
                if problem is not None:
                    return problem
                self.counts["bot_turns"] += 1
                return table.handle(command, at=stream_ms(entry.stream_id))
            if kind == "CommandApplied" and answers == command.id:
                problem = self._signature(k, pos, command, table)
                if problem is not None:
                    return problem
        return decide_command(table, command, stream_ms(entry.stream_id))

    def _bot_turn(self, k: int, pos: int, command: TurnCommand, table: Table) -> Divergence | None:
        seat = command.seat
        seats = table.seats
        name = seats[seat].name if 0 <= seat < len(seats) else f"seat {seat}"
        if not 0 <= seat < len(seats) or not seats[seat].is_bot:
            return _div(
                "bot-seat",
                pos,
                k,
                f"a turn signed by {name}",
                f"an unsigned bot turn '{command.turn}'",
                f"a bot turn was played for {name}, who is not a bot",
            )
        if command.id != f"bot-{pos}":
            return _div(
                "bot-turn",
                pos,
                k,
                f"command id bot-{pos}",
                f"command id {command.id}",
                "a worker names a bot's command after the log position of its answer",
            )
        return None

    def _signature(self, k: int, pos: int, command: TurnCommand, table: Table) -> Divergence | None:
        seat = command.seat
        if command.by != PERSON or not 0 <= seat < len(table.seats) or table.seats[seat].is_bot:
            return None  # re-execution rejects it; the comparison says so
        key = table.keys[seat]
        if key is None:
            return None
        game_id = self.record.game_id
        if verify_turn(key, command.signature, game_id, command.id, seat, command.turn, table.signed_over):
            self.counts["signatures"] += 1
            return None
        name = table.seats[seat].name
        return _div(
            "signature",
            pos,
            k,
            f"a signature by {name}'s key {_short(key)}",
            f"signature {_short(command.signature)} on '{command.turn}' for seat {seat}",
            f"the turn's signature does not verify against the key {name} joined with",
        )

    def _compare(self, k: int | None, expected: list[LogEvent], pos: int) -> Divergence | None:
        """The log from ``pos`` must be exactly ``expected`` (type and data)."""
        maps = self.maps
        for i, exp in enumerate(expected):
            j = pos + i
            if j >= self.n:
                return _div(
                    "missing-event",
                    j,
                    k,
                    show_event(exp),
                    "the end of the log",
                    f"the log ends before the answer to command {k} is complete",
                )
            m = maps[j]
            name = type_name(exp)
            t = EVENT_TYPES[name]
            if m is None or m["type"] != name or m["version"] != t.version or m["data"] != t.to_data(exp):
                # not the same map: decode it fully (an old version, other spellings) to judge
                found = self._event(j)
                if found is None:
                    return self._undecodable(k, exp, j)
                if found != exp:
                    return self._mismatch(k, expected, i, j)
            self._count(exp)
        return None

    def _undecodable(self, k: int | None, exp: LogEvent | None, j: int) -> Divergence:
        """Event ``j`` cannot be decoded, where ``exp`` (answering command ``k``) was due."""
        try:
            decode_event(self.record.events[j].raw, f"event {j}")
            reason = f"event {j} cannot be decoded"
        except CorruptEvent as exc:
            reason = str(exc)
        return _div("decode", j, k, "a valid event" if exp is None else show_event(exp), "undecodable bytes", reason)

    def _count(self, event: LogEvent) -> None:
        counter = _COUNTED.get(type(event))
        if counter is not None:
            self.counts[counter] += 1

    # ------------------------------------------------------------------ explaining a difference

    def _mismatch(self, k: int | None, expected: list[LogEvent], i: int, j: int) -> Divergence:
        exp = expected[i]
        found = self._event(j)
        assert found is not None
        moved = self._moved(k, expected, i, j)
        if moved is not None:
            return moved
        if type(exp) is type(found):
            return self._same_kind(k, exp, found, j)
        if isinstance(exp, CommandRejected) and isinstance(found, CommandApplied):
            if exp.kind == REPEAT:
                check = "repeat"
            elif exp.reason.startswith("wrong token"):
                check = "signature"
            elif is_abort(found.turn):
                check = "abort"
            else:
                check = "illegal-turn"
            return _div(
                check,
                j,
                k,
                f"rejected: {exp.reason}",
                f"applied '{found.turn}'",
                f"command {k} ('{exp.text}') was applied, but re-executing it rejects it: {exp.reason}",
            )
        if isinstance(exp, CommandApplied) and isinstance(found, CommandRejected):
            return _div(
                "wrongly-rejected",
                j,
                k,
                f"applied '{exp.turn}'",
                f"rejected: {found.reason}",
                f"command {k} was rejected, but re-executing it applies it",
            )
        return self._order(k, expected, i, j)

    def _same_kind(self, k: int | None, exp: LogEvent, found: LogEvent, j: int) -> Divergence:
        expected, got = event_difference(exp, found)
        if isinstance(exp, RoundDealt):
            return _div("deal", j, k, expected, got, f"round {exp.round}'s deal is not the one the seed produces")
        if isinstance(exp, StepApplied) and isinstance(found, StepApplied):
            why = self._why_illegal(j, found)
            if why is not None:
                return _div("illegal-step", j, k, expected, got, f"step {found.step} is illegal here: {why}")
            return _div("step", j, k, expected, got, f"the log records another step than command {k} makes")
        checks: dict[type, tuple[str, str]] = {
            CommandApplied: ("applied", f"command {k} is recorded differently than it was submitted"),
            CommandRejected: ("rejection", f"command {k} was rejected, but not as re-executing it rejects it"),
            RoundWon: ("score", "the round's winner or scored cards are not what the rules give"),
            GameOver: ("outcome", "the final outcome is not what the rules give"),
            CardDrawn: ("draw", "the card drawn is not the one on top of the deck"),
            PlayerOut: ("player-out", "a player left the round differently than the rules say"),
            TurnTakenBack: ("take-back", CHECKS["take-back"]),
            Forfeited: ("forfeit", CHECKS["forfeit"]),
            SeedRevealed: ("seed", "the revealed seed is not the game's seed"),
            SeatJoined: ("join", "the seat was joined differently than the command says"),
            GameCreated: ("created", "the game was created differently than the create command says"),
            TimedOut: ("timeout", CHECKS["timeout"]),
            ClockStarted: ("clock", CHECKS["clock"]),
        }
        check, reason = checks.get(type(exp), ("event", "the event differs from re-execution"))
        return _div(check, j, k, expected, got, reason)

    def _why_illegal(self, j: int, found: StepApplied) -> str | None:
        """Why the recorded step is illegal in the state just before it (None if legal)."""
        events = [e for e in (self._event(i) for i in range(j)) if e is not None]
        try:
            game = Table.rebuild(events, None).game
        except (ValueError, IndexError):
            return None
        if found.seat != game.turn:
            return f"seat {found.seat} is not to move (seat {game.turn} is)"
        try:
            game.push(found.step)
        except IllegalStep as exc:
            return str(exc)
        return None

    def _moved(self, k: int | None, expected: list[LogEvent], i: int, j: int) -> Divergence | None:
        """An expected event found one place off: swapped, missing or extra (None otherwise)."""
        exp = expected[i]
        found = self._event(j)
        after = self._event(j + 1)
        following = expected[i + 1] if i + 1 < len(expected) else None
        if following is not None and found == following:
            if after == exp:
                return _div(
                    "reordered", j, k, show_event(exp), show_event(found), f"events {j} and {j + 1} are swapped"
                )
            return _div("missing-event", j, k, show_event(exp), show_event(found), f"an event is missing at {j}")
        if after == exp:
            copy = j > 0 and found == self._event(j - 1)
            note = f" (a copy of event {j - 1})" if copy else ""
            return _div(
                "extra-event",
                j,
                k,
                show_event(exp),
                show_event(found),
                f"event {j} is not produced by re-execution{note}",
            )
        return None

    def _order(self, k: int | None, expected: list[LogEvent], i: int, j: int) -> Divergence:
        """A different kind of event where nothing simply moved."""
        exp = expected[i]
        found = self._event(j)
        if isinstance(found, CommandApplied | CommandRejected):
            return _div(
                "missing-event",
                j,
                k,
                show_event(exp),
                show_event(found),
                f"the answer to command {k} stops early at {j}",
            )
        return _div(
            "event",
            j,
            k,
            show_event(exp),
            show_event(found),
            f"event {j} is not what re-executing command {k} produces",
        )

    def _orphan(self, pos: int) -> Divergence:
        found = self._event(pos)
        if pos > 0 and found == self._event(pos - 1):
            return _div(
                "extra-event",
                pos,
                None,
                "the end of the log",
                show_event(found),
                f"event {pos} is a copy of event {pos - 1}",
            )
        if isinstance(found, CommandApplied | CommandRejected):
            return _div(
                "missing-command",
                pos,
                None,
                "the end of the log",
                show_event(found),
                f"event {pos} answers command {found.id}, which is not among the commands folded "
                f"(up to the cursor {self.record.cursor})",
            )
        return _div(
            "extra-event", pos, None, "the end of the log", show_event(found), f"event {pos} answers no command"
        )

    # ------------------------------------------------------------------ a game still running

    def _seedless(self) -> Divergence | None:
        """Without the seed: signatures, bot seats and the legality of every recorded step."""
        commands: dict[str, tuple[int, TurnCommand]] = {}
        table = Table.rebuild([self._event(0)], None)  # type: ignore[list-item]
        for k, entry in enumerate(self.record.commands):
            try:
                command, _at = decode_command(entry.raw, rules=table.batch_rules)  # as its referee read them
            except CorruptEvent:
                continue
            if isinstance(command, TurnCommand):
                commands.setdefault(command.id, (k, command))
        for j in range(1, self.n):
            event = self._event(j)
            if event is None:
                return self._undecodable(None, None, j)
            if isinstance(event, CommandApplied):
                problem = self._seedless_command(j, event, commands, table) or self._seedless_late(
                    j, event, commands, table
                )
                if problem is not None:
                    return problem
            if isinstance(event, TimedOut | JoinClosed):
                problem = self._time_out_problem(None, None, table.deadline, j, event)
                if problem is not None:
                    return problem
            if isinstance(event, Withdrawn):
                problem = self._seedless_withdrawal(j, event, table)
                if problem is not None:
                    return problem
            if isinstance(event, Forfeited):
                problem = self._seedless_forfeit(j, event)
                if problem is None and event.reason == NO_SHOW and table.keys[event.seat] is not None:
                    problem = _div(
                        "forfeit",
                        j,
                        None,
                        "a no-show of a seat nobody took",
                        show_event(event),
                        f"seat {event.seat} was taken: it cannot be a no-show",
                    )
                if problem is not None:
                    return problem
            if isinstance(event, CommandApplied) and is_abort(event.turn) and not table.game.untouched:
                return _div("abort", j, None, "an abort before anyone moved", show_event(event), CHECKS["abort"])
            try:
                table.fold(event)
            except (ValueError, IndexError) as exc:
                return _div("illegal-step", j, None, "a legal step", show_event(event), str(exc))
            if isinstance(event, StepApplied):
                self.counts["steps"] += 1
        return None

    def _seedless_withdrawal(self, j: int, event: Withdrawn, table: Table) -> Divergence | None:
        """A withdrawal's time in a game still running (RULES.md, Withdrawal): no later than
        Redis wrote it, not before the running clock started, not after the deadline due
        (its time-out comes first).  With the seed, re-execution checks this and more."""
        written = stream_order(self.record.events[j].stream_id)[0]
        clock, due = table.clock, table.deadline
        why = None
        if event.at > written:
            why = f"the withdrawal says {event.at}, after Redis wrote it ({written})"
        elif clock is not None and event.at < clock.at:
            why = f"a withdrawal at {event.at} comes before the running clock's start ({clock.at})"
        elif due is not None and event.at > due:
            why = f"the time was up at {due}: its time-out comes first"
        if why is None:
            return None
        return _div("withdrawal", j, None, "a withdrawal at a time the clocks allow", show_event(event), why)

    def _seedless_forfeit(self, j: int, event: Forfeited) -> Divergence | None:
        """A forfeit must answer the seat's own applied ``resign`` or its time-out, right
        before it (a TurnTakenBack of the seat's begun turn may come between: RULES.md,
        Resigning and Time).  With the seed, re-execution checks this and more."""
        i = j - 1
        before = self._event(i)
        if isinstance(before, TurnTakenBack) and i > 0:
            i -= 1
            before = self._event(i)
        if event.reason == RESIGNED:
            if isinstance(before, CommandApplied) and is_resign(before.turn) and before.seat == event.seat:
                return None
            expected = f"a resign command of seat {event.seat} before it"
        elif event.reason == WITHDRAWN:
            if isinstance(before, Withdrawn) and before.seat == event.seat:
                return None
            expected = f"the operator's withdrawal of seat {event.seat} before it"
        elif event.reason == NO_SHOW:
            while isinstance(before, Forfeited) and before.reason == NO_SHOW and i > 0:
                i -= 1  # the seats not taken forfeit one after another, after one JoinClosed
                before = self._event(i)
            if isinstance(before, JoinClosed):
                return None
            expected = f"the join deadline's JoinClosed before seat {event.seat}'s no-show"
        else:
            if isinstance(before, TimedOut) and before.seat == event.seat:
                return None
            expected = f"a time-out of seat {event.seat} before it"
        return _div("forfeit", j, None, expected, show_event(event), CHECKS["forfeit"])

    def _seedless_late(
        self, j: int, event: CommandApplied, commands: dict[str, tuple[int, TurnCommand]], table: Table
    ) -> Divergence | None:
        """A running timed game: a turn applied although its stream id is after its seat's deadline."""
        clock, due = table.clock, table.deadline
        known = commands.get(event.id)
        if known is None or clock is None or due is None or event.seat != clock.seat:
            return None
        k = known[0]
        at = stream_ms(self.record.commands[k].stream_id)
        if at <= due:
            return None
        name = table.seats[clock.seat].name
        return _div(
            "late-turn",
            j,
            k,
            f"TimedOut of {name} (deadline {due})",
            show_event(event),
            f"{name}'s turn came at {at}, after their time was up at {due}, and was applied",
        )

    def _seedless_command(
        self, j: int, event: CommandApplied, commands: dict[str, tuple[int, TurnCommand]], table: Table
    ) -> Divergence | None:
        known = commands.get(event.id)
        if known is None:
            return _div(
                "missing-command",
                j,
                None,
                f"command {event.id}",
                "no such command",
                f"event {j} answers a command not in the stream",
            )
        k, command = known
        if event.id in table.answered:
            return _div(
                "repeat",
                j,
                None,
                f"one answer to turn {event.id}",
                f"applied '{event.turn}' again",
                f"event {j} applies turn {event.id} a second time",
            )
        try:
            turn = str(TurnText.parse(command.turn))
        except StepError:
            turn = command.turn
        if (command.seat, turn, command.by) != (event.seat, event.turn, event.by):
            return _div(
                "applied",
                j,
                k,
                _brief([command.seat, turn, command.by]),
                _brief([event.seat, event.turn, event.by]),
                f"command {k} is recorded differently than it was submitted",
            )
        if not 0 <= command.seat < len(table.seats):
            return _div(
                "applied", j, k, "a seat of the game", f"seat {command.seat}", "a turn for a seat that does not exist"
            )
        if command.by == BOT:
            problem = self._bot_turn(k, j, command, table)
            if problem is None:
                self.counts["bot_turns"] += 1
            return problem
        if table.keys[command.seat] is None:
            return _div(
                "signature", j, k, "a joined seat", "a seat nobody joined", "a turn was applied for an empty seat"
            )
        problem = self._signature(k, j, command, table)
        return problem


# ---------------------------------------------------------------------------- helpers


def _unpack(raw: bytes, what: str) -> dict[str, Any]:
    """An event's msgpack map, checked by the codec's own rules but not built into an event.

    Comparing maps with the expected events' data is what makes the audit fast; an
    event at an older version is decoded in full, as only its upcasters can tell
    whether it reads.  Raises :class:`CorruptEvent` in the codec's words.
    """
    m = EVENTS.unpack(raw, what)
    if not EVENTS.is_current(m):
        decode_event(raw, what)
    return m


def _div(check: str, event: int | None, command: int | None, expected: str, found: str, reason: str) -> Divergence:
    return Divergence(check, event, command, _cut(expected), _cut(found), reason)


def _cut(text: str) -> str:
    return text if len(text) <= _SHOW else text[: _SHOW - 1] + "…"


def _short(text: str) -> str:
    return text if len(text) <= 16 else text[:16] + "…"


def _brief(value: Any) -> str:
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    elif isinstance(value, tuple) and value and hasattr(value[0], "kind"):
        value = [seat_data(s) for s in value]
    return json.dumps(value, separators=(",", ":"), default=str)
