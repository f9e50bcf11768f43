"""Audit a tournament: every game, every pairing, the standings — from scratch.

The audit trusts neither the runner nor the tournament's own fold:

1. the tournament stream decodes and is a hash chain whose events follow each other
   (no game recorded twice, no round paired out of order);
2. every round's pairing is re-derived from the first event and the results of the
   rounds before it, and must equal the ``RoundPaired`` that was written;
3. every game is audited on its own (:func:`red7es.service.audit.audit_record`:
   re-executed from its revealed seed and commands), and must seat the paired entrants
   under the tournament's variant, those who registered a key seated with it at
   creation (and nobody else); once the tournament seed is revealed, each game's
   commitment must be that of the seed derived for it;
4. every recorded result must be the ``GameOver`` of that game's log, at the log
   position it names;
5. the standings recomputed from the games' logs must equal the standings folded from
   the tournament stream, line by line.

The result is PASS or the first divergence, in one line.  While a tournament is in
progress, games not over yet — or over but not yet recorded — are listed and left out
of both standings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..deal import commitment
from ..facts import Forfeited, GameOver
from ..service.audit import FAIL, AuditReport, audit_record
from ..service.client import GameService
from ..service.codec import CorruptEvent, decode_command, decode_event, event_hash
from ..service.events import CreateCommand, Withdrawn
from ..service.records import Record, RecordError, export, stream_order
from ..service.store import NoSuchGame
from ..wording import counted
from .events import GameFinished, RoundPaired, Seating, TournamentCreated
from .ids import game_seed
from .lifecycle import load
from .pairing import pair_round
from .runner import creation_withdrawals_problem, entrant_joins
from .standings import standings
from .state import TournamentCorrupt, TournamentState

__all__ = ["TournamentAudit", "audit_tournament"]


class _Divergence(Exception):
    pass


@dataclass
class TournamentAudit:
    """PASS, or FAIL and the first divergence; what was checked either way."""

    tournament: str
    ok: bool
    divergence: str | None = None
    rounds: int = 0
    games: int = 0
    finished: bool = False
    unfinished: list[str] = field(default_factory=list)  # games not over yet
    pending: list[str] = field(default_factory=list)  # over, not yet recorded (a run will record them)

    def line(self) -> str:
        if not self.ok:
            return f"FAIL {self.tournament}: {self.divergence}"
        progress = (
            "finished"
            if self.finished
            else f"in progress: {counted(len(self.unfinished), 'game')} not over, "
            f"{len(self.pending)} over but not recorded yet"
        )
        return (
            f"PASS {self.tournament}: {counted(self.rounds, 'round')} of pairings re-derived, "
            f"{counted(self.games, 'game')} audited, "
            f"standings recomputed from the games' logs match ({progress})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "tournament": self.tournament,
            "result": "pass" if self.ok else "fail",
            "passed": self.ok,
            "divergence": self.divergence,
            "rounds": self.rounds,
            "games": self.games,
            "finished": self.finished,
            "unfinished": self.unfinished,
            "pending": self.pending,
            "line": self.line(),
        }


GameAuditor = Callable[[Record], AuditReport]


def audit_tournament(
    service: GameService,
    tournament: str,
    *,
    game_audit: GameAuditor = audit_record,
    progress: Callable[[int, int], Any] | None = None,
) -> TournamentAudit:
    """Audit a tournament in Redis; never raises for bad data, it reports it.

    ``progress(done, total)`` is called after each game (for a progress bar).
    """
    report = TournamentAudit(tournament, ok=True)
    try:
        _run(service, tournament, report, game_audit, progress or (lambda done, total: None))
    except _Divergence as exc:
        report.ok = False
        report.divergence = str(exc)
    return report


def _run(
    service: GameService,
    tournament: str,
    report: TournamentAudit,
    game_audit: GameAuditor,
    progress: Callable[[int, int], Any],
) -> None:
    try:
        state = load(service.redis, tournament)
    except (CorruptEvent, TournamentCorrupt) as exc:
        raise _Divergence(f"tournament stream: {exc}") from None
    spec = state.spec
    report.finished = state.finished is not None
    seed: bytes | None = None
    if state.finished is not None:
        seed = bytes.fromhex(state.finished.seed)
        if commitment(seed) != spec.commitment:
            raise _Divergence("the revealed tournament seed does not hash to the commitment published at creation")
    from_logs: dict[str, GameFinished] = {}
    total, done = len(state.paired_games), 0
    previous: list[RoundPaired] = []
    for r in sorted(state.rounds):  # round by round, so the first divergence is the earliest
        _pairing(state, r, previous)
        previous.append(state.rounds[r])
        report.rounds += 1
        for t in state.rounds[r].tables:
            result = _game(service, state, r, t, seed, report, game_audit)
            if result is not None:
                from_logs[t.game] = result
            done += 1
            progress(done, total)
    report.pending = [g for g in from_logs if g not in state.results]
    counted = {g: result for g, result in from_logs.items() if g in state.results}
    _compare_standings(state, counted)


def _pairing(state: TournamentState, r: int, previous: list[RoundPaired]) -> None:
    """Round ``r`` must be what pairing gives from the rounds and results before it."""
    spec = state.spec
    earlier = {g: res for g, res in state.results.items() if res.round < r}
    derived = pair_round(spec, previous, earlier, state.withdrawn_before(r))
    written = state.rounds[r]
    if derived != written:
        raise _Divergence(
            f"round {r}: the pairing written is {_show_round(spec.entrants, written)}, "
            f"but the rules give {_show_round(spec.entrants, derived)}"
        )


def _show_round(entrants: Any, paired: RoundPaired) -> str:
    tables = " | ".join(",".join(entrants[e].name for e in t.seats) for t in paired.tables)
    byes = ",".join(entrants[e].name for e in paired.byes)
    return f"[{tables}]" + (f" byes [{byes}]" if byes else "")


def _game(
    service: GameService,
    state: TournamentState,
    r: int,
    t: Seating,
    seed: bytes | None,
    report: TournamentAudit,
    game_audit: GameAuditor,
) -> GameFinished | None:
    """Audit one game; its result from its own log (None if it is not over)."""
    spec = state.spec
    recorded = state.results.get(t.game)
    try:
        record = export(service, t.game)
    except (NoSuchGame, RecordError) as exc:
        if recorded is not None:
            raise _Divergence(f"game {t.game} is recorded as finished but cannot be read: {exc}") from None
        report.unfinished.append(t.game)
        return None
    seats = tuple(spec.entrants[e] for e in t.seats)
    if record.seats != seats:
        names = ",".join(s.name for s in record.seats)
        raise _Divergence(f"game {t.game} seats {names}, but round {r} paired {','.join(s.name for s in seats)}")
    if record.variant != spec.variant:
        raise _Divergence(f"game {t.game} is played as {record.variant.describe()}, not {spec.variant.describe()}")
    joins = _created_joins(record)
    withdrawn_problem = creation_withdrawals_problem(
        state, t, _created_withdrawn(record), record.commands[0].stream_id if record.commands else "0-0"
    )
    if withdrawn_problem is not None:
        raise _Divergence(f"game {t.game}: {withdrawn_problem}")
    if joins != entrant_joins(spec, t):
        raise _Divergence(
            f"game {t.game} seated {_joins_text(joins)} at creation, but the tournament registered"
            f" {_joins_text(entrant_joins(spec, t))}"
        )
    if seed is not None and record.commitment != commitment(game_seed(seed, t.game)):
        raise _Divergence(f"game {t.game} was not dealt from the seed the tournament seed derives for it")
    audit = game_audit(record)
    if audit.result == FAIL:
        raise _Divergence(f"game {t.game}: {audit.line()}")
    _check_withdrawals(state, t, record)
    from_log = _outcome(spec, record, r)
    if from_log is None:
        if recorded is not None:
            raise _Divergence(f"game {t.game} is recorded as finished but its log has no GameOver")
        report.unfinished.append(t.game)  # only its chain and signatures could be checked
        return None
    report.games += 1  # fully audited
    if recorded is not None:
        _compare_result(record, recorded, from_log)
    return from_log


def _check_withdrawals(state: TournamentState, t: Seating, record: Record) -> None:
    """A seat of a tournament game is withdrawn by the operator (RULES.md, Withdrawal) only
    when its entrant was withdrawn from the tournament before (docs/tournaments.md,
    Withdrawing): the organiser cannot put an entrant out of one game quietly."""
    for i, entry in enumerate(record.events):
        if b"Withdrawn" not in entry.raw:
            continue  # (the type's name is in every such event's bytes: the rest need no decoding)
        event = decode_event(entry.raw, f"event {i}").event
        if not isinstance(event, Withdrawn):
            continue
        entrant = t.seats[event.seat]
        name = state.spec.entrants[entrant].name
        if entrant not in state.withdrawn:
            raise _Divergence(
                f"game {t.game}: the operator withdrew {name} at event {i}, but the tournament never withdrew {name}"
            )
        since = stream_order(state.withdrawn_ids[entrant])[0]
        if event.at < since:
            raise _Divergence(
                f"game {t.game}: the operator withdrew {name} at event {i} (at {event.at}), before the tournament "
                f"withdrew {name} (at {since})"
            )


def _created_withdrawn(record: Record) -> tuple[tuple[int, str], ...]:
    """The (seat, reason) pairs a game's create command withdrew at once (none: no create)."""
    if not record.commands:
        return ()
    try:
        command = decode_command(record.commands[0].raw)[0]
    except CorruptEvent:
        return ()
    return command.withdrawn if isinstance(command, CreateCommand) else ()


def _created_joins(record: Record) -> tuple[tuple[int, str], ...] | None:
    """The (seat, key) pairs a game's create command seated at once (None: no create command)."""
    if not record.commands:
        return None
    try:
        command = decode_command(record.commands[0].raw)[0]
    except CorruptEvent:
        return None
    return command.joins if isinstance(command, CreateCommand) else None


def _joins_text(joins: tuple[tuple[int, str], ...] | None) -> str:
    if joins is None:
        return "nothing it can tell (no create command)"
    return ", ".join(f"seat {seat} with key {key[:16]}…" for seat, key in joins) or "nobody"


def _outcome(spec: TournamentCreated, record: Record, round_number: int) -> GameFinished | None:
    """The result a game's log ends with (GameOver is near its end: look from there), with
    its forfeited seats, and why each went out (its Forfeited facts, in order), when the
    tournament's rules record them."""
    for i, entry in reversed(list(enumerate(record.events))):
        event = decode_event(entry.raw, f"event {i}").event
        if isinstance(event, GameOver):
            reasons = _forfeit_reasons(record, i) if event.outcome.forfeited else []
            head = event_hash(entry.raw).hex()
            return GameFinished.of(spec, round_number, record.game_id, event.outcome, i + 1, head, reasons)
    return None


def _forfeit_reasons(record: Record, end: int) -> list[str]:
    """The reasons of the log's Forfeited facts before event ``end``, in order."""
    reasons = []
    for i, entry in enumerate(record.events[:end]):
        if b"Forfeited" in entry.raw:  # (the type's name is in such an event's bytes: no others decoded)
            event = decode_event(entry.raw, f"event {i}").event
            if isinstance(event, Forfeited):
                reasons.append(event.reason)
    return reasons


def _compare_result(record: Record, recorded: GameFinished, from_log: GameFinished) -> None:
    for name in ("winners", "scores", "round_wins", "reason", "forfeited", "forfeit_reasons"):
        if getattr(recorded, name) != getattr(from_log, name):
            raise _Divergence(
                f"game {record.game_id}: the tournament recorded {name} {list(getattr(recorded, name))!r}"
                f" but its log says {list(getattr(from_log, name))!r}"
            )
    v = recorded.version
    if not 1 <= v <= len(record.events) or event_hash(record.events[v - 1].raw).hex() != recorded.head:
        raise _Divergence(
            f"game {record.game_id}: the result was recorded at log event {v - 1} with head {recorded.head[:12]}…, "
            f"which is not in the game's log"
        )


def _compare_standings(state: TournamentState, from_logs: Mapping[str, GameFinished]) -> None:
    spec = state.spec
    rounds = state.paired_rounds
    folded = [s.as_dict() for s in standings(spec, rounds, state.results, withdrawn=state.withdrawn)]
    fresh = [s.as_dict() for s in standings(spec, rounds, from_logs, withdrawn=state.withdrawn)]
    for i, (a, b) in enumerate(zip(folded, fresh, strict=True)):
        for key in a:
            if a[key] != b[key]:
                raise _Divergence(
                    f"standings line {i + 1}: {key} is {a[key]!r} folded from the tournament stream "
                    f"but {b[key]!r} recomputed from the games' logs"
                )
