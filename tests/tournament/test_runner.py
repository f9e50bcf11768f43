"""Running tournaments in-process (fakeredis, games folded by the test): complete,
resumable, idempotent under interruption and racing runners, people's games waiting."""

from __future__ import annotations

import msgpack
import pytest

from red7es.deal import commitment
from red7es.service.codec import encode_command
from red7es.service.events import JoinCommand
from red7es.service.store import now_ms
from red7es.service.tokens import new_token, public_key
from red7es.tournament import TournamentError, TournamentRunner, create_tournament, load, standings
from red7es.tournament.audit import audit_tournament
from red7es.tournament.codec import decode
from red7es.tournament.events import GameFinished, RoundPaired
from red7es.tournament.ids import game_seed
from red7es.tournament.pairing import total_games
from red7es.tournament.store import TournamentKeys, TournamentStore
from red7es.variant import Variant

from .conftest import Inline, bots, people, tournament_games


class StopAfter:
    """A reporter that interrupts the run (like Ctrl-C) once ``n`` games are recorded."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.paired_rounds: list[int] = []

    def paired(self, paired: RoundPaired) -> None:
        self.paired_rounds.append(paired.round)

    def progress(self, done: int, total: int, round_number: int) -> None:
        if done >= self.n:
            raise KeyboardInterrupt

    def needs_people(self, game: str, names: list[str], joined: dict[str, str | None]) -> None:
        pass


def table(env: Inline, tournament: str) -> list[dict[str, object]]:
    state = load(env.connection, tournament)
    return [s.as_dict() for s in standings(state.spec, list(state.rounds.values()), state.results)]


@pytest.mark.parametrize(("fmt", "n", "k"), [("round-robin", 5, 2), ("swiss", 6, 2), ("round-robin", 4, 3)])
def test_a_tournament_runs_to_its_end(inline: Inline, fmt: str, n: int, k: int) -> None:
    created = create_tournament(inline.connection, "cup", bots(n), Variant(k), fmt, seed="s", rounds=None).event
    report = TournamentRunner(inline.service, "cup", driver=inline.drive).run()
    assert report.finished and report.done == report.total == total_games(created)
    state = load(inline.connection, "cup")
    assert state.complete and state.finished is not None
    assert commitment(bytes.fromhex(state.finished.seed)) == created.commitment
    games = tournament_games(inline.connection, "cup")
    assert sorted(games) == sorted(t.game for _r, t in state.paired_games)
    assert all(g.startswith("t-cup-r") for g in games)
    for g in games:  # every game was dealt from the seed the tournament seed derives for it
        view = msgpack.unpackb(inline.connection.get(f"red7:{{{g}}}:view:public"), raw=False)
        assert view["commitment"] == commitment(game_seed(bytes.fromhex(state.finished.seed), g))
    assert audit_tournament(inline.service, "cup").ok


def test_swiss_pairs_a_round_only_when_the_one_before_is_complete(inline: Inline) -> None:
    create_tournament(inline.connection, "sw", bots(6), Variant(2), "swiss", seed="s", rounds=3)
    TournamentRunner(inline.service, "sw", driver=inline.drive).run()
    recorded = TournamentStore(inline.connection).events("sw")
    seen: set[str] = set()
    for r in recorded:
        if isinstance(r.event, GameFinished):
            seen.add(r.event.game)
        elif isinstance(r.event, RoundPaired) and r.event.round > 1:
            previous = next(
                x.event for x in recorded if isinstance(x.event, RoundPaired) and x.event.round == r.event.round - 1
            )
            assert {t.game for t in previous.tables} <= seen


def test_an_interrupted_run_resumes_without_replaying_or_double_counting() -> None:
    straight, stopped = Inline(), Inline()
    for env in (straight, stopped):
        create_tournament(env.connection, "cup", bots(5), Variant(2), "round-robin", seed="same")
    TournamentRunner(straight.service, "cup", driver=straight.drive).run()

    for n in (2, 5, 7):  # stop three times, each time a little further on
        with pytest.raises(KeyboardInterrupt):
            TournamentRunner(stopped.service, "cup", driver=stopped.drive, reporter=StopAfter(n), parallel=1).run()
        assert len(load(stopped.connection, "cup").results) == n
    report = TournamentRunner(stopped.service, "cup", driver=stopped.drive).run()
    assert report.finished
    # every paired game exists once, under its fixed id, and the same games gave the same standings
    assert sorted(tournament_games(stopped.connection, "cup")) == sorted(tournament_games(straight.connection, "cup"))
    assert len(tournament_games(stopped.connection, "cup")) == report.total == 10
    assert table(stopped, "cup") == table(straight, "cup")
    again = TournamentRunner(stopped.service, "cup", driver=stopped.drive).run()  # a finished one: a no-op
    assert again.finished
    # TournamentCreated, 5 RoundPaired, 10 GameFinished, TournamentFinished: nothing twice
    assert stopped.connection.xlen(TournamentKeys("cup").events) == 1 + 5 + 10 + 1


def test_two_runners_at_once_count_every_game_once(inline: Inline) -> None:
    create_tournament(inline.connection, "race", bots(6), Variant(2), "round-robin", seed="r")
    other = TournamentRunner(inline.service, "race", driver=inline.drive)

    class RaceMidway(StopAfter):
        def progress(self, done: int, total: int, round_number: int) -> None:
            if done >= 3 and not other.state.finished:
                other.run()  # the second runner finishes everything under the first one's feet

    first = TournamentRunner(inline.service, "race", driver=inline.drive, reporter=RaceMidway(0))
    report = first.run()
    assert report.finished
    state = load(inline.connection, "race")  # the fold refuses a game recorded twice
    assert len(state.results) == total_games(state.spec) == 15
    assert audit_tournament(inline.service, "race").ok


def test_peoples_games_wait_for_their_moves(inline: Inline) -> None:
    create_tournament(inline.connection, "mixed", [*people("alice"), *bots(3)], Variant(2), "round-robin", seed="m")
    report = TournamentRunner(inline.service, "mixed", driver=inline.drive).run()
    assert not report.finished and report.done == 3  # the bots' games
    waiting = report.waiting_for_people
    assert len(waiting) == 3 and all(names == ["alice"] for names in waiting.values())
    for game in waiting:
        play_as(inline, game, "alice")
    report = TournamentRunner(inline.service, "mixed", driver=inline.drive).run()
    assert report.finished and report.done == 6
    assert audit_tournament(inline.service, "mixed").ok


def join_as(env: Inline, game: str, name: str) -> tuple[int, str]:
    """Take a person's seat, folding in-process; returns (seat, token)."""
    service = env.service
    env.drive(game)  # a worker would have folded its create command by now
    seat = service.seat_of(game, name)
    token = new_token()
    command = JoinCommand(f"join-{name}", seat, public_key(token))
    service.store.submit(game, command.id, encode_command(command, now_ms()))
    env.drive(game)
    return seat, token


def play_as(env: Inline, game: str, name: str) -> None:
    """Join a person's seat and play its first legal turn every time, folding in-process."""
    service = env.service
    seat, token = join_as(env, game, name)
    for _ in range(500):
        view = service.view(game, seat)
        if view["status"] == "over":
            return
        if view.get("legal"):
            service.submit(game, name, token, view["legal"][0])
        env.drive(game)
    raise AssertionError(f"{name} never finished {game}")


class Announcements(StopAfter):
    """A reporter that keeps what people were told: (game, people, seats already joined)."""

    def __init__(self) -> None:
        super().__init__(10**9)
        self.told: list[tuple[str, list[str], dict[str, str | None]]] = []

    def needs_people(self, game: str, names: list[str], joined: dict[str, str | None]) -> None:
        self.told.append((game, names, joined))


def test_a_resumed_run_tells_people_only_of_open_games_and_which_seats_are_taken(inline: Inline) -> None:
    create_tournament(inline.connection, "back", [*people("alice"), *bots(3)], Variant(2), "round-robin", seed="b")
    first = Announcements()
    TournamentRunner(inline.service, "back", driver=inline.drive, reporter=first).run()
    assert len(first.told) == 3 and all(names == ["alice"] and not joined for _g, names, joined in first.told)
    over, joined, untouched = (game for game, _names, _joined in first.told)
    play_as(inline, over, "alice")  # over, not recorded yet
    _seat, token = join_as(inline, joined, "alice")
    resumed = Announcements()
    report = TournamentRunner(inline.service, "back", driver=inline.drive, reporter=resumed).run()
    assert resumed.told == [(joined, ["alice"], {"alice": public_key(token)}), (untouched, ["alice"], {})]
    assert report.done == 4 and sorted(report.waiting_for_people) == sorted([joined, untouched])


def test_a_game_id_taken_by_another_game_is_refused(inline: Inline) -> None:
    create_tournament(inline.connection, "cup", bots(2), Variant(2), "round-robin", seed="x")
    seats = [s for s in bots(2)]
    inline.service.create(Variant(2), seats, seed="squatter", game_id="t-cup-r1-1", wait=None)
    with pytest.raises(TournamentError, match="exists but is not this tournament's game"):
        TournamentRunner(inline.service, "cup", driver=inline.drive).run()


def test_a_game_id_taken_first_stops_the_run_before_anyone_is_sent_to_it(inline: Inline) -> None:
    """Found on the run's first look (discovery), with a person's seat: nobody is told to join it."""
    create_tournament(inline.connection, "sq", [*people("alice"), *bots(1)], Variant(2), "round-robin", seed="s")
    seats = list(load(inline.connection, "sq").spec.entrants)
    inline.service.create(Variant(2), seats, seed="squatter", game_id="t-sq-r1-1", wait=None)
    told = Announcements()
    with pytest.raises(TournamentError, match="t-sq-r1-1 exists but is not this tournament's game"):
        TournamentRunner(inline.service, "sq", reporter=told).run(wait=False)
    assert told.told == []


@pytest.mark.parametrize(
    ("other_seed", "seats_swapped", "variant"),
    [(True, False, Variant(2)), (False, True, Variant(2)), (False, False, Variant(2, rounds=2))],
    ids=["another seed", "other seats", "another variant"],
)
def test_a_game_id_taken_while_the_run_goes_on_is_refused_when_created(
    inline: Inline, other_seed: bool, seats_swapped: bool, variant: Variant
) -> None:
    """Taken after the run first looked: its create fails, and the game there is checked, not followed."""
    create_tournament(inline.connection, "sq", bots(4), Variant(2), "round-robin", seed="s")
    runner = TournamentRunner(inline.service, "sq", parallel=1)
    runner.run(wait=False)  # creates one game of round 1 (nothing plays it)
    state = load(inline.connection, "sq")
    later = next(t for _r, t in state.paired_games if t.game not in tournament_games(inline.connection, "sq"))
    entrants = [state.spec.entrants[e] for e in later.seats]
    seed = b"squatter" if other_seed else game_seed(runner.seed, later.game)
    seats = entrants[::-1] if seats_swapped else entrants
    inline.service.create(variant, seats, seed=seed, game_id=later.game, wait=None)
    runner.parallel = 100
    with pytest.raises(TournamentError, match=f"{later.game} exists but is not this tournament's game"):
        runner.run(wait=False)


def test_a_tournament_without_its_secret_cannot_run(inline: Inline) -> None:
    create_tournament(inline.connection, "cup", bots(2), Variant(2), "round-robin")
    inline.connection.delete(TournamentKeys("cup").secret)
    with pytest.raises(TournamentError, match="lost its secret seed"):
        TournamentRunner(inline.service, "cup")


def test_parallel_caps_the_bot_games_in_flight(inline: Inline) -> None:
    create_tournament(inline.connection, "cap", bots(6), Variant(2), "round-robin", seed="c")
    TournamentRunner(inline.service, "cap", parallel=4).run(wait=False)  # nothing plays the games
    assert len(tournament_games(inline.connection, "cap")) == 4
    state = load(inline.connection, "cap")
    assert state.current_round == 5 and not state.results  # every round-robin round paired up front
    assert decode(TournamentStore(inline.connection).read("cap")[-1][1]).type == "RoundPaired"
