"""Running a tournament: pair rounds, create their games, record results — resumably.

Everything the runner knows it folds from the tournament's stream and the games
themselves, and every write is idempotent:

* a round is paired by a compare-and-append of ``RoundPaired`` *before* any of its games
  is created, so a run stopped in between finds the pairing and creates the games;
* games have fixed ids and derived seeds; creating one that exists fails, and that is
  taken as "already created" (after checking it is this tournament's game);
* a finished game is recorded by a compare-and-append of ``GameFinished``; a second run
  process racing for it loses the append, re-reads, and finds it recorded.

So ``red7 tournament run`` can be stopped (Ctrl-C, a crash, Redis going away) and run
again any number of times — even twice at once — and every game is played once and
counted once.  Bots' games are played by the worker pool; the runner only waits on the
games' change streams (a blocking XREAD, no polling).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..deal import commitment
from ..service.client import GameService, ServiceError, UnreadableKey, meta_int, read_view
from ..service.codec import decode_command, parse_outcome
from ..service.connection import is_cluster
from ..service.events import CreateCommand
from ..service.records import stream_order
from ..service.store import Keys, text
from .events import (
    SWISS,
    GameFinished,
    RoundPaired,
    Seating,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
)
from .ids import TournamentError, game_seed
from .pairing import pair_round
from .state import TournamentState
from .store import TournamentStore
from .withdrawal import withdraw_seats

__all__ = ["TournamentRunner", "RunReport", "Reporter", "NullReporter"]


class Reporter(Protocol):
    """What a run tells its user (the CLI draws a progress bar from it)."""

    def paired(self, paired: RoundPaired) -> None: ...

    def progress(self, done: int, total: int, round_number: int) -> None: ...

    def needs_people(self, game: str, people: list[str], joined: dict[str, str | None]) -> None:
        """``game`` is open and waits for ``people``; those in ``joined`` have taken their
        seat already (joining again would fail: they only need to play), with the public
        key of the token that took it (None if the view does not say)."""


class NullReporter:
    def paired(self, paired: RoundPaired) -> None:
        pass

    def progress(self, done: int, total: int, round_number: int) -> None:
        pass

    def needs_people(self, game: str, people: list[str], joined: dict[str, str | None]) -> None:
        pass


@dataclass
class RunReport:
    """Where a run left the tournament."""

    done: int
    total: int
    finished: bool
    waiting_for_people: dict[str, list[str]] = field(default_factory=dict)  # game -> people to play


class TournamentRunner:
    """Drives one tournament to its end on a :class:`GameService`.

    ``parallel`` caps the all-bot games in flight (people's games are always created
    as soon as they are paired).  ``driver``, if given, is called with a game id instead
    of waiting for workers (tests fold games in-process with it).
    """

    def __init__(
        self,
        service: GameService,
        tournament: str,
        *,
        parallel: int = 32,
        reporter: Reporter | None = None,
        driver: Callable[[str], Any] | None = None,
        poll: float = 1.0,
    ) -> None:
        self.service = service
        self.redis = service.redis
        self.tournament = tournament
        self.store = TournamentStore(service.redis)
        self.parallel = max(1, parallel)
        self.reporter: Reporter = reporter or NullReporter()
        self.driver = driver
        self.poll = poll
        self.state = TournamentState()
        self.refresh()
        seed = self.store.seed(tournament)
        if seed is None or commitment(seed) != self.state.spec.commitment:
            raise TournamentError(f"tournament {tournament} has lost its secret seed: its games cannot be created")
        self.seed = seed
        self.known: set[str] = set()  # games known to exist
        self.cursors: dict[str, str] = {}  # game -> last change id seen
        self.announced: set[str] = set()  # games whose people were told to play
        self.withdrawals_made: set[tuple[str, int]] = set()  # (game, entrant) withdrawn by this run
        self._discovered = False

    # ------------------------------------------------------------------ the loop

    def run(self, *, wait: bool = True) -> RunReport:
        """Run until the tournament is finished (or, without ``wait``, until it would wait)."""
        last_done = -1
        while True:
            self.refresh()
            done, total = len(self.state.results), self.state.total_games
            if done != last_done:
                self.reporter.progress(done, total, self.state.current_round)
                last_done = done
            if self.state.finished is not None:
                return RunReport(done, total, True)
            if self._pair_next():
                continue
            if self.state.complete:
                self._append([TournamentFinished(self.seed.hex())])
                continue
            self._ensure_games()
            self._withdraw_seats()
            if self._record_finished():
                continue
            self._announce()
            if self.driver is not None:
                if self._drive():
                    continue
                return self._report()
            if not wait:
                return self._report()
            self._wait()

    def refresh(self) -> None:
        """Fold the events written since the last refresh (by this run or any other)."""
        self.store.catch_up(self.tournament, self.state)

    # ------------------------------------------------------------------ steps

    def _append(self, events: list[TournamentEvent]) -> bool:
        """Compare-and-append after the folded state; False if someone else wrote first."""
        return self.store.append_after(self.tournament, self.state, events)

    def _pair_next(self) -> bool:
        """Pair what can be paired now: every remaining round-robin round, or the next Swiss round."""
        spec, state = self.state.spec, self.state
        r = state.current_round
        if r >= spec.rounds or (spec.format == SWISS and r and not state.round_complete(r)):
            return False
        previous = [state.rounds[i] for i in range(1, r + 1)]
        new: list[RoundPaired] = []
        while len(previous) < spec.rounds:
            paired = pair_round(spec, previous, state.results, set(state.withdrawn))
            previous.append(paired)
            new.append(paired)
            if spec.format == SWISS:
                break
        if self._append(list(new)):
            for paired in new:
                self.reporter.paired(paired)
        return True

    def _unrecorded(self) -> list[tuple[int, Seating]]:
        return [(r, t) for r, t in self.state.paired_games if t.game not in self.state.results]

    def _ensure_games(self) -> None:
        """Create the paired games not created yet (all-bot ones up to ``parallel`` in flight)."""
        pending = self._unrecorded()
        if not self._discovered:  # a resumed run: find the games an earlier run created
            firsts = self.service.store.first_commands([t.game for _r, t in pending])
            found = [(t, first) for (_r, t), first in zip(pending, firsts, strict=True) if first is not None]
            for t, first in found:
                self._check_created_here(t, first)
            games = [t.game for t, _first in found]
            for game, cursor in zip(games, self.service.store.last_change_ids(games), strict=True):
                self._know(game, cursor)
            self._discovered = True
        in_flight = sum(1 for _r, t in pending if t.game in self.known and not self._has_people(t))
        for r, t in pending:
            if t.game in self.known:
                continue
            people = self._has_people(t)
            if not people and in_flight >= self.parallel:
                continue
            self._create(r, t)
            in_flight += not people

    def _create(self, round_number: int, t: Seating) -> None:
        spec = self.state.spec
        seats = [spec.entrants[e] for e in t.seats]
        keys = {seats[seat].name: key for seat, key in entrant_joins(spec, t)}  # (what the checks expect)
        withdrawn = [(seats[t.seats.index(e)].name, w.reason) for e, w in self.state.withdrawn.items() if e in t.seats]
        try:
            self.service.create(
                spec.variant,
                seats,
                seed=game_seed(self.seed, t.game),
                keys=keys,
                game_id=t.game,
                wait=None,
                withdrawn=withdrawn,
            )
        except ServiceError:
            if not self.service.store.exists(t.game):
                raise
            self._check_created_here(t, self.service.store.first_commands([t.game])[0])
            self._know(t.game)  # created meanwhile by another runner: follow it from now
        else:
            self._know(t.game, "0-0")  # new: every change it will have is news

    def _know(self, game: str, cursor: str | None = None) -> None:
        """Follow ``game`` from change ``cursor`` (default: its latest change, read now)."""
        if game not in self.known:
            self.known.add(game)
            if game not in self.cursors:
                self.cursors[game] = cursor if cursor is not None else self.service.store.last_change_id(game)

    def _withdraw_seats(self) -> None:
        """Withdraw the entrants withdrawn from the tournament from their games not recorded
        yet (:func:`~red7es.tournament.withdrawal.withdraw_seats`), once per game and entrant."""
        games = [t for _r, t in self._unrecorded() if t.game in self.known]
        withdraw_seats(self.service, self.state, games, self.withdrawals_made)

    def _record_finished(self) -> bool:
        """Record every known game that is over; True if the stream changed."""
        candidates = [(r, t) for r, t in self._unrecorded() if t.game in self.known]
        if not candidates:
            return False
        states = self.service.store.metas_and_views([t.game for _r, t in candidates])
        finished: list[TournamentEvent] = []
        for (r, t), (meta, raw_view) in zip(candidates, states, strict=True):
            if meta.get("broken"):
                raise TournamentError(f"game {t.game} is broken ({meta['broken']}): the tournament cannot finish")
            if meta.get("status") != "over" or not raw_view:
                continue
            view = read_view(t.game, raw_view)
            self._check_identity(t, view)
            outcome = view.get("outcome")
            if not outcome:
                continue
            finished.append(
                GameFinished.of(
                    self.state.spec,
                    r,
                    t.game,
                    parse_outcome(outcome),
                    _finished_version(t.game, meta),
                    meta["head"],
                    outcome.get("forfeit_reasons") or (),
                )
            )
        if not finished:
            return False
        self._append(finished)
        return True

    def _announce(self) -> None:
        """Tell the people of every open game where to play it, once per run.

        Called once what is over has been recorded, and a game found over meanwhile is
        still passed over: a resumed run must not send people to games they finished.
        The seats already taken are named, so nobody is told to join a seat twice.
        """
        tables = [
            t
            for _r, t in self._unrecorded()
            if t.game in self.known and self._has_people(t) and t.game not in self.announced
        ]
        if not tables:
            return
        states = self.service.store.metas_and_views([t.game for t in tables])
        for t, (meta, raw_view) in zip(tables, states, strict=True):
            if meta.get("status") == "over":
                continue
            self.announced.add(t.game)
            self.reporter.needs_people(t.game, self._people(t), _joined(t.game, raw_view))

    def _check_created_here(self, t: Seating, first: bytes | None) -> None:
        """A game found under one of this tournament's ids must be the game it creates there.

        Its create command (there before any worker folds it) must carry this game's
        seed commitment, seats and variant. Otherwise someone took the id first (with
        ``GameService.create``, an import, or a red7 before ``new --id`` kept ``t-``
        ids), and the run stops before it sends anyone to play that game.
        """
        spec = self.state.spec
        command = decode_command(first)[0] if first is not None else None
        if not (
            isinstance(command, CreateCommand)
            and command.commitment == commitment(game_seed(self.seed, t.game))
            and command.seats == tuple(spec.entrants[e] for e in t.seats)
            and command.variant == spec.variant
            and command.joins == entrant_joins(spec, t)
            and creation_withdrawals_problem(self.state, t, command.withdrawn) is None
        ):
            raise self._not_ours(t.game)

    def _check_identity(self, t: Seating, view: dict[str, Any]) -> None:
        """A game over must be the game this tournament created (same seed, same seats), as
        played: its view is what the worker folded from the log, not the create command."""
        spec = self.state.spec
        expected = commitment(game_seed(self.seed, t.game))
        names = [s.get("name") for s in view.get("seats", [])]
        if view.get("commitment") != expected or names != [spec.entrants[e].name for e in t.seats]:
            raise self._not_ours(t.game)

    def _not_ours(self, game: str) -> TournamentError:
        return TournamentError(
            f"game {game} exists but is not this tournament's game (another seed, other seats or another variant): "
            f"its id was taken before tournament {self.tournament} created it"
        )

    def _drive(self) -> bool:
        """Fold the all-bot games in flight with the driver; True if any was driven."""
        driven = False
        for _r, t in self._unrecorded():
            if t.game in self.known and not self._has_people(t):
                self.driver(t.game)  # type: ignore[misc]
                driven = True
        return driven

    def _wait(self) -> None:
        """Block until a game in flight changes (or ``poll`` seconds pass)."""
        in_flight = [t for _r, t in self._unrecorded() if t.game in self.known]
        if not in_flight:
            time.sleep(self.poll)
            return
        if is_cluster(self.redis):
            # One XREAD may only name keys of one hash slot, and each game has its own:
            # follow one game, a bots' one if any (they move fast), and find the others
            # finished on the next pass.
            in_flight = ([t for t in in_flight if not self._has_people(t)] or in_flight)[:1]
        game_of = {Keys(t.game).changes: t.game for t in in_flight}
        streams = {key: self.cursors.get(game, "0-0") for key, game in game_of.items()}
        reply: Any = self.redis.xread(streams, block=max(1, int(self.poll * 1000)), count=100)  # type: ignore[arg-type]
        for key, rows in reply or []:
            if rows:
                self.cursors[game_of[text(key)]] = text(rows[-1][0])

    # ------------------------------------------------------------------ helpers

    def _has_people(self, t: Seating) -> bool:
        """Whether people are to play this game: a withdrawn entrant's seat is not waited for."""
        return bool(self._people(t))

    def _people(self, t: Seating) -> list[str]:
        """The people (not withdrawn) a game waits for, in seat order."""
        entrants, withdrawn = self.state.spec.entrants, self.state.withdrawn
        return [entrants[e].name for e in t.seats if not entrants[e].is_bot and e not in withdrawn]

    def _report(self) -> RunReport:
        waiting = {
            t.game: self._people(t) for _r, t in self._unrecorded() if t.game in self.known and self._has_people(t)
        }
        return RunReport(len(self.state.results), self.state.total_games, False, waiting)


def _finished_version(game: str, meta: dict[str, str]) -> int:
    """The version of a game over (its meta's, which a worker always writes)."""
    version = meta_int(game, meta, "version", None)
    if version is None:
        raise UnreadableKey(game, Keys(game).meta, "it has no version")
    return version


def _joined(game: str, raw_view: bytes | None) -> dict[str, str | None]:
    """The people's seats taken in a game's public view, with the public key each was
    taken with (None in a view too old to carry it); none before a worker made the view."""
    if not raw_view:
        return {}
    view = read_view(game, raw_view)
    seats = [s for s in view.get("seats", []) if s.get("kind") == "person" and s.get("joined")]
    return {s["name"]: s.get("key") for s in seats}


def creation_withdrawals_problem(
    state: TournamentState, t: Seating, withdrawn: tuple[tuple[int, str], ...], before: str | None = None
) -> str | None:
    """What is wrong with the seats a game of this tournament was created withdrawn from
    (its create command's ``withdrawn``), or None: each must be an entrant the tournament
    withdrew, with that withdrawal's reason, in the order they were withdrawn.  With
    ``before`` (the create command's stream id), every entrant withdrawn before it must
    be there too: a game created after a withdrawal is created without the entrant in it."""
    expected = [
        (t.seats.index(e), w.reason)
        for e, w in state.withdrawn.items()
        if e in t.seats and (before is None or stream_order(state.withdrawn_ids[e]) < stream_order(before))
    ]
    given = list(withdrawn)
    if before is None:
        expected = [pair for pair in expected if pair in given]
    if given != expected:
        return f"it was created withdrawing {given}, but the tournament had withdrawn {expected}"
    return None


def entrant_joins(spec: TournamentCreated, t: Seating) -> tuple[tuple[int, str], ...]:
    """The (seat, public key) pairs a game of this tournament is created with: the seats of
    its entrants who registered a key (:attr:`TournamentCreated.keys`), in seat order."""
    return tuple(
        (seat, key) for seat, e in enumerate(t.seats) if (key := spec.key_of(spec.entrants[e].name)) is not None
    )
