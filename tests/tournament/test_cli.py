"""``red7 tournament ...`` end to end with CliRunner, on the test Redis with two real workers."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from support import Red7, TournamentRed7, fails, new_id, one_event_per_entry, one_line_error, wait_for

from red7es.cli.credentials import Credentials
from red7es.cli.main import cli
from red7es.service.client import GameService
from red7es.service.events import SeatSpec
from red7es.service.redis_server import free_port
from red7es.service.tokens import new_token
from red7es.variant import Variant


@pytest.fixture
def red7(pool_url: str, tmp_path: Path) -> TournamentRed7:
    return TournamentRed7(pool_url, tmp_path / "home")


def test_create_run_standings_show_list(red7: TournamentRed7) -> None:
    t = new_id("c")
    out = red7.ok("create", t, "-b", "greedy", "-b", "random", "-b", "g2=greedy", "-b", "random", "--seed", "cli")
    assert f"Tournament {t} created: round-robin, 4 entrants, 3 rounds, 6 games" in out.stdout
    assert f"red7 tournament run {t}" in out.stdout
    run = red7.ok("run", t)
    assert f"Tournament {t} finished: 6 games." in run.stdout
    assert "Round 1 paired: 2 table(s)" in run.stderr

    data = red7.json("standings", t)
    assert data["finished"] and data["games_played"] == data["games_total"] == 6
    rows = data["standings"]
    assert [r["name"] for r in rows] and sorted(r["name"] for r in rows) == ["g2", "greedy", "random", "random2"]
    assert sum(r["points"] for r in rows) == 6 * 1.0  # a two-player game hands out one point
    assert all(r["games"] == 3 for r in rows) and rows[0]["rank"] == 1
    assert {"mu", "sigma", "ordinal", "head_to_head", "round_wins", "buchholz"} <= set(rows[0])

    text = red7.ok("standings", t).stdout
    assert "entrant" in text and rows[0]["name"] in text and "ordinal" in text

    shown = red7.json("show", t)
    assert shown["finished"] and shown["seed"] and len(shown["paired"]) == 3
    assert all(tb["status"] == "recorded" for r in shown["paired"] for tb in r["tables"])
    assert f"t-{t}-r1-1" in red7.ok("show", t).stdout

    listed = red7.json("list")
    mine = next(x for x in listed if x["tournament"] == t)
    assert mine["finished"] and mine["games_played"] == 6 and mine["status"] == "finished"
    assert t in red7.ok("list").stdout


def test_list_says_a_tournament_never_run_is_not_started(red7: TournamentRed7) -> None:
    t = new_id("c")
    red7.ok("create", t, "-b", "greedy", "-b", "random", "-b", "random")
    mine = next(x for x in red7.json("list") if x["tournament"] == t)
    assert mine["status"] == "not started" and not mine["finished"] and mine["games_played"] == 0
    row = next(line for line in red7.ok("list").stdout.splitlines() if line.startswith(f"{t} "))
    assert row.split()[-3:] == ["0/3", "not", "started"], row
    red7.ok("run", t, "--no-wait", "--parallel", "1")  # pairs every round and starts one game
    assert next(x for x in red7.json("list") if x["tournament"] == t)["status"] in ("in progress", "finished")


def test_the_help_s_example_creates_a_tournament(red7: TournamentRed7) -> None:
    """``-b ismcts:iterations=200`` is a bot spec, ``-b g2=greedy`` a named entrant."""
    t = new_id("c")
    data = red7.json("create", t, "-b", "greedy", "-b", "random", "-b", "g2=greedy", "-b", "ismcts:iterations=200")
    entrants = [(e["name"], e["bot"]) for e in data["entrants"]]
    assert entrants == [
        ("greedy", "greedy"),
        ("random", "random"),
        ("g2", "greedy"),
        ("ismcts", "ismcts:iterations=200"),
    ]


def test_standings_print_every_fraction_to_two_decimals(red7: TournamentRed7) -> None:
    """Points, Buchholz, head-to-head and the rating alike (2.00, 0.50, 25.00), not 2 beside 25.00."""
    t = new_id("c")
    red7.ok("create", t, "-b", "greedy", "-b", "random", "-b", "random", "-f", "swiss", "-n", "2", "--seed", "dp")
    red7.ok("run", t)
    header, *rows = red7.ok("standings", t).stdout.splitlines()[1:]
    columns = header.split()
    columns[columns.index("round") : columns.index("round") + 2] = ["round wins"]
    fractions = ("points", "buchholz", "h2h", "mu", "sigma", "ordinal")
    assert set(fractions) <= set(columns), header
    for row in rows:
        cells = dict(zip(columns, row.split(), strict=True))
        assert all(re.fullmatch(r"-?\d+\.\d\d", cells[c]) for c in fractions if c != "h2h"), row
        assert re.fullmatch(r"\d+\.\d\d|—", cells["h2h"]), row  # —: no game against those tied with it
        assert all(re.fullmatch(r"\d+", cells[c]) for c in ("#", "games", "wins", "round wins", "byes")), row
    assert all(isinstance(r["points"], float | int) for r in red7.json("standings", t)["standings"])  # JSON: numbers


def test_csv_to_file_and_stdout(red7: TournamentRed7, tmp_path: Path) -> None:
    t = new_id("c")
    red7.ok("create", t, "-b", "greedy", "-b", "random", "-b", "random", "-f", "swiss", "-n", "2", "--seed", "csv")
    red7.ok("run", t)
    path = tmp_path / "s.csv"
    red7.ok("standings", t, "--csv", str(path))
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 3 and rows[0]["rank"] == "1" and rows[0]["buchholz"] != ""
    stdout = red7.ok("standings", t, "--csv", "-").stdout
    assert list(csv.DictReader(io.StringIO(stdout))) == rows
    byes = sum(int(r["byes"]) for r in rows)
    assert byes == 2  # 3 entrants at tables of 2: one bye per round, to two different entrants
    assert sorted(int(r["byes"]) for r in rows) == [0, 1, 1]


@pytest.mark.parametrize("command", [("standings", "--csv"), ("report", "-o")])
def test_a_file_that_cannot_be_written_is_one_line_naming_it(
    red7: TournamentRed7, tmp_path: Path, command: tuple[str, str]
) -> None:
    """As ``red7 export`` says it: the path and the reason, no ``[Errno N]``."""
    t = new_id("c")
    red7.ok("create", t, "-b", "greedy", "-b", "random")
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    cases = {
        tmp_path / "no-such-dir" / "out": "No such file or directory",
        tmp_path: "Is a directory",
        a_file / "out": "Not a directory",
    }
    subcommand, option = command
    for path, reason in cases.items():
        line = one_line_error(red7(subcommand, t, option, str(path)))
        assert line == f"Error: cannot write {path}: {reason}", line


def test_run_resumes_after_a_partial_run(red7: TournamentRed7) -> None:
    t = new_id("c")
    red7.ok("create", t, "-b", "greedy", "-b", "random", "-b", "greedy", "-b", "random", "-b", "greedy")
    first = red7.json("run", t, "--no-wait", "--parallel", "2")
    assert not first["finished"] and first["total"] == 10
    second = red7.json("run", t)
    assert second["finished"] and second["done"] == 10
    connection = redis.Redis.from_url(red7.url)
    games = [g for g in connection.zrange("red7:games", 0, -1) if g.decode().startswith(f"t-{t}-")]
    assert len(games) == 10
    assert red7.json("run", t)["finished"]  # again: nothing to do
    audit = red7.json("audit", t)
    assert audit["passed"] and audit["games"] == 10


def test_people_are_told_how_to_play(red7: TournamentRed7) -> None:
    t = new_id("people-told-how")  # 24 characters, the longest id: its join line is wider than 80 columns
    red7.ok("create", t, "-p", "alice", "-b", "greedy", "-b", "random")
    result = red7.ok("run", t, "--no-wait")
    assert "waits for alice" in result.stdout
    assert f"alice plays game t-{t}-r" in result.stderr
    assert "red7 join t-" in result.stderr and "--as alice" in result.stderr
    # one line each, whatever the width: the command must paste whole
    assert re.search(r"red7 join (t-\S+) alice && red7 play --game \1 --as alice\n", result.stderr), result.stderr
    # The bots' game is played by the workers meanwhile and recorded by the next run.
    # (A bot may also end alice's game early: folding, or unable to lead, it loses at
    # once, so only the bots' game is sure to be over.)
    bots_game = next(
        tb["game"] for r in red7.json("show", t)["paired"] for tb in r["tables"] if "alice" not in tb["seats"]
    )

    def bots_game_recorded() -> Any:
        data = red7.json("run", t, "--no-wait")  # records what is over
        shown = red7.json("show", t)["paired"]
        return (
            data
            if any(tb["game"] == bots_game and tb["status"] == "recorded" for r in shown for tb in r["tables"])
            else None
        )

    data = wait_for(bots_game_recorded, "the bots' game", timeout=30)
    status = {tb["game"]: tb["status"] for r in red7.json("show", t)["paired"] for tb in r["tables"]}
    assert status[bots_game] == "recorded" and data["total"] == 3
    open_games = [g for g, s in status.items() if s != "recorded"]
    assert sorted(data["waiting_for_people"]) == sorted(open_games)
    assert all(p == ["alice"] for p in data["waiting_for_people"].values())
    assert data["finished"] == (not open_games)


def test_names_that_look_like_markup_are_printed_as_typed(red7: TournamentRed7) -> None:
    """'[red]ann' was printed as 'ann', so the command to paste seated the real ann."""
    t = new_id("c")
    red7.ok("create", t, "-p", "[red]ann", "-p", "ann", "-b", "[/]=greedy")
    standings = red7.ok("standings", t).stdout
    assert "[red]ann" in standings and "[/]" in standings
    assert "[red]ann" in red7.ok("show", t).stdout
    run = red7.ok("run", t, "--no-wait").stderr
    assert "[red]ann plays game" in run and "red7 join t-" in run and "'[red]ann'" in run


def test_printed_commands_paste_into_a_shell(red7: TournamentRed7) -> None:
    """Every word is shell-quoted (names may hold quotes and $), and a typed --url is repeated."""
    t = new_id("c")
    odd = "o'neil$(x)"
    created = red7.ok("create", t, "-p", odd, "-b", "greedy", "--url", red7.url).stdout
    assert f"Run it: red7 tournament run {t} --url {red7.url}\n" in created
    run = red7.ok("run", t, "--no-wait", "--url", red7.url)
    game = f"t-{t}-r1-1"
    pasted = next(line for line in run.stderr.splitlines() if line.startswith(f"{odd} plays game {game}: "))
    join, play = " ".join(shlex.split(pasted.partition(": ")[2])).split(" && ")
    assert join == f"red7 join {game} {odd} --url {red7.url}"
    assert play == f"red7 play --game {game} --as {odd} --url {red7.url}"
    assert run.stdout.endswith(f"Continue with: red7 tournament run {t} --url {red7.url}\n")
    from_env = red7.ok("run", t, "--no-wait")  # $REDIS_URL: the shell has it, the commands do not repeat it
    assert from_env.stdout.endswith(f"Continue with: red7 tournament run {t}\n")
    assert shlex.quote(odd) in from_env.stderr and "--url" not in from_env.stderr


def test_a_resumed_run_tells_people_only_what_is_left_to_do(red7: TournamentRed7) -> None:
    """Finished games are not mentioned, seats held here are played, not joined again,
    seats joined by someone else (even with a stale token of theirs here) are played
    where their token is, and open seats are joined."""
    # A fixed id and seed, so fixed deals: on about one deal in 5,000 greedy cannot take the
    # lead on its first turn, and its fold would end alice's game before she joins it.
    t = "c-resumed-run"
    red7.ok("create", t, "-p", "alice", "-p", "bob", "-b", "greedy", "--seed", "resumed-run")
    red7.ok("run", t, "--no-wait")  # creates the three games: alice-bob, alice-greedy, bob-greedy
    game = {frozenset(tb["seats"]): tb["game"] for r in red7.json("show", t)["paired"] for tb in r["tables"]}
    both, alice_greedy, bob_greedy = (
        game[frozenset(p)] for p in (("alice", "bob"), ("alice", "greedy"), ("bob", "greedy"))
    )
    here = Red7(red7.url, red7.home)  # the organiser, who plays alice
    elsewhere = Red7(red7.url, red7.home.parent / "bob-home")
    here.ok("join", both, "alice")
    elsewhere.ok("join", both, "bob")
    here.ok("join", alice_greedy, "alice")

    def alice_greedy_over() -> bool:
        if here.json("show", alice_greedy)["status"] == "over":
            return True
        if here.json("moves", alice_greedy, "--as", "alice")["legal"]:
            here("move", alice_greedy, "--fold", "--as", "alice")
        return False

    wait_for(alice_greedy_over, "alice's game against greedy to end", timeout=30)
    Credentials(red7.home / "credentials.json").save(both, "bob", new_token())  # left by a join that lost to bob's
    told = [line for line in red7.ok("run", t, "--no-wait").stderr.splitlines() if " plays game " in line]
    assert sorted(told) == sorted(
        [
            f"alice plays game {both}: red7 play --game {both} --as alice",
            f"bob plays game {both} (joined elsewhere: play where its token is): red7 play --game {both} --as bob",
            f"bob plays game {bob_greedy}: red7 join {bob_greedy} bob && red7 play --game {bob_greedy} --as bob",
        ]
    ), told


def test_tournament_game_ids_cannot_be_taken_first(red7: TournamentRed7) -> None:
    """``red7 new --id t-...`` is refused; a game there by other means stops the run in one line."""
    t = new_id("c")
    red7.ok("create", t, "-p", "alice", "-b", "greedy")
    game = f"t-{t}-r1-1"
    player = Red7(red7.url, red7.home)
    refused = fails(player("new", "--id", game, "-p", "alice", "-b", "greedy"), 2).splitlines()[-1]
    assert refused == "Error: game ids starting t- are kept for tournament games: choose another --id"
    connection = redis.Redis.from_url(red7.url)
    assert not connection.exists(f"red7:{{{game}}}:meta")
    spec = red7.json("show", t)
    seats = [SeatSpec(e["name"], e["kind"], e["bot"]) for e in spec["entrants"]]
    GameService(connection).create(Variant(2), seats, seed="squatter", game_id=game, wait=None)  # the API allows it
    err = fails(red7("run", t, "--no-wait"))  # after the round's pairing and the progress bar
    assert err.splitlines()[-1] == (
        f"Error: game {game} exists but is not this tournament's game (another seed, other seats or another "
        f"variant): its id was taken before tournament {t} created it"
    )
    assert "plays game" not in err and "Traceback" not in err


def test_report_is_written(red7: TournamentRed7, tmp_path: Path) -> None:
    t = new_id("c")
    red7.ok("create", t, "--title", "Spring Cup", "-b", "greedy", "-b", "random", "-b", "random", "--seed", "r")
    red7.ok("run", t)
    out = tmp_path / "r.html"
    assert f"Wrote {out}" in red7.ok("report", t, "-o", str(out)).stdout
    page = out.read_text()
    assert "Spring Cup" in page and '<table id="standings">' in page and '<svg id="rating-chart"' in page
    assert f"red7 replay t-{t}-r1-1" in page
    with_dash = red7.ok("report", t, "-o", "-")  # stdout: the page alone, the summary on stderr
    assert with_dash.stdout == page and not (Path.cwd() / "-").exists()
    assert with_dash.stderr.startswith("Wrote the report to stdout (3 entrants, 3 games).")


def test_audit_passes_then_fails_on_a_tampered_game(red7: TournamentRed7) -> None:
    t = new_id("c")
    red7.ok("create", t, "-b", "greedy", "-b", "random", "--seed", "a")
    red7.ok("run", t)
    passed = red7.ok("audit", t).stdout
    assert passed.startswith(f"PASS {t}:") and len(passed.strip().splitlines()) == 1
    connection = redis.Redis.from_url(red7.url)
    log = f"red7:{{t-{t}-r1-1}}:log"
    connection.xdel(log, one_event_per_entry(connection, f"t-{t}-r1-1")[3][0])
    failed = red7("audit", t)
    assert failed.exit_code == 1
    assert failed.stdout.startswith(f"FAIL {t}: game t-{t}-r1-1: FAIL") and len(failed.stdout.strip().splitlines()) == 1
    data = json.loads(red7("audit", t, "--json").stdout)
    assert data["passed"] is False and data["divergence"].startswith(f"game t-{t}-r1-1")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("standings", "nope"), "no tournament 'nope' (list them with: red7 tournament list)"),
        (("run", "nope"), "no tournament 'nope'"),
        (("show", "nope"), "no tournament 'nope'"),
        (("report", "nope"), "no tournament 'nope'"),
        (("audit", "nope"), "no tournament 'nope'"),
    ],
)
def test_errors_are_one_line(red7: TournamentRed7, args: tuple[str, ...], message: str) -> None:
    assert message in one_line_error(red7(*args))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("create", "Bad_Id", "-b", "greedy", "-b", "random"), "is not a valid tournament id"),
        (("create", "x2", "-b", "greedy", "-b", "nope"), "unknown bot 'nope'"),
        (("create", "x5", "--title", "a\x1b[2Jb", "-b", "greedy", "-b", "random"), "without control characters"),
    ],
)
def test_typing_mistakes_are_usage_errors(red7: TournamentRed7, args: tuple[str, ...], message: str) -> None:
    """A bad id, bot or title is what was typed, caught before anything is sent: exit 2, not 1."""
    err = fails(red7(*args), 2)
    assert message in err.splitlines()[-1] and err.splitlines()[-1].startswith("Error: ")


def test_duplicate_and_oversized_tournaments_are_refused(red7: TournamentRed7) -> None:
    t = new_id("c")
    red7.ok("create", t, "-b", "greedy", "-b", "random")
    assert f"a tournament '{t}' already exists" in one_line_error(red7("create", t, "-b", "greedy", "-b", "random"))
    many = [arg for i in range(40) for arg in ("-b", f"b{i}=random")]
    assert "play a Swiss tournament instead" in one_line_error(red7("create", new_id("c"), "-k", "3", *many))
    usage = red7("create", new_id("c"), "-b", "greedy", "-b", "random", "--format", "knockout")
    assert usage.exit_code == 2
    spaced = red7("create", new_id("c"), "-p", "a b", "-b", "random")  # a name no seat may have: usage, as in new
    assert spaced.exit_code == 2 and "Error: seat name 'a b' must be 1-40 characters without spaces" in spaced.stderr
    contradiction = red7("create", new_id("c"), "-k", "3", "-b", "greedy", "-b", "random", "--scoring", "--rounds", "2")
    assert contradiction.exit_code == 2 and "rounds is for the basic game" in contradiction.stderr
    for few in (("-b", "greedy"), ("-k", "3", "-b", "greedy", "-b", "random")):  # like one seat in new
        short = red7("create", new_id("c"), *few)
        assert short.exit_code == 2 and "needs at least" in short.stderr and "Usage:" in short.stderr
    both = red7("standings", t, "--csv", "-", "--json")  # one stdout cannot hold both
    assert both.exit_code == 2 and "--csv - writes the standings to stdout" in both.stderr


def test_unreachable_redis_names_the_url(tmp_path: Path) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    red7 = TournamentRed7(url, tmp_path / "home")
    for args in (("list",), ("run", "cup"), ("standings", "cup")):
        line = one_line_error(red7(*args))
        assert f"cannot reach Redis at {url}" in line


def test_other_commands_do_not_load_the_tournament_package() -> None:
    """Every red7 command loads the CLI module; only tournament commands load the package."""
    import subprocess
    import sys

    from red7es.cli.commands_tournament import FORMATS
    from red7es.tournament.events import FORMATS as EVENT_FORMATS

    assert FORMATS == EVENT_FORMATS
    code = "import sys, red7es.cli.main; print(any(m.startswith('red7es.tournament') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


@pytest.mark.parametrize(("tournament", "expected"), [("nope", "no tournament 'nope'"), ("Bad_Id", "Bad_Id")])
def test_audit_tournament_errors_are_one_line(red7: TournamentRed7, tournament: str, expected: str) -> None:
    env = {"REDIS_URL": red7.url, "RED7_HOME": str(red7.home)}
    result = CliRunner().invoke(cli, ["audit", "--tournament", tournament], env=env, prog_name="red7")
    assert expected in one_line_error(result)


def test_a_timed_tournament_of_an_entrant_with_a_key_who_never_shows_finishes_by_itself(
    red7: TournamentRed7, pool_url: str
) -> None:
    """`--clock` with `--reserve`: the no-show's seats are taken at creation, so the clocks
    start at once (RULES.md, Time), each game of theirs ends by time, and the tournament
    finishes with no one joining anything; it audits, and standings rank the no-show last
    with a forfeit for each game, which the report names as time-outs."""
    from red7es.service.tokens import public_key

    # A fixed id and seed (fixed deals and bot turns) and two greedy bots: a random bot that
    # moves first against the ghost folds about one time in 25, and the ghost won that game.
    t = "nt-ghost-two"
    key = public_key(new_token())
    # 3 s each: the ghost's clock runs out in every game of theirs, and a bot that moves
    # first has ample Redis time for its move however loaded the machine (300 ms was not)
    entrants = ["-p", "ghost", "-b", "greedy", "-b", "g2=greedy", "--clock", "3s", "--seed", "ghost-two"]
    red7.ok("create", t, *entrants, "--reserve", f"ghost={key}")
    run = red7.ok("run", t)
    assert f"Tournament {t} finished: 3 games." in run.stdout
    rows = red7.json("standings", t)["standings"]
    assert rows[-1]["name"] == "ghost" and rows[-1]["points"] == 0 and rows[-1]["games"] == 2
    assert [(r["name"], r["forfeits"]) for r in rows][-1] == ("ghost", 2) and sum(r["forfeits"] for r in rows) == 2
    assert "forfeits" in red7.ok("standings", t).stdout.splitlines()[1]
    assert red7.ok("report", t, "-o", "-").stdout.count("forfeited: ghost (out of time)") == 2
    shown = red7.json("show", t)
    ghost_games = [tb["game"] for r in shown["paired"] for tb in r["tables"] if "ghost" in tb["seats"]]
    with redis.Redis.from_url(pool_url) as connection:
        for game in ghost_games:
            view = GameService(connection).view(game)
            assert view["status"] == "over" and view["outcome"]["reason"] == "time", view["outcome"]
    assert "PASS" in red7.ok("audit", t).stdout


def test_a_no_show_out_of_time_at_a_table_of_three_finishes_last_and_the_audit_rederives_it(
    red7: TournamentRed7, pool_url: str
) -> None:
    """Tournament rules 2 (docs/tournaments.md, Points): the ghost's clock runs out, the two
    bots play on, and the result records the ghost as forfeited: it finishes below the
    bot that lost (0 points, where a tie on score and rounds would give it ¼), and the
    audit re-derives the forfeit from the game's log."""
    from red7es.service.tokens import public_key
    from red7es.tournament import load
    from red7es.tournament.events import GameFinished, TournamentEvent

    from .test_audit import rewrite_stream

    # A fixed id and seed: fixed deals and bot turns (the random bot's fold before the
    # ghost's time-out would put it out first, and last)
    t = "nt3-ghost-three"
    key = public_key(new_token())
    entrants = ["-p", "ghost", "-b", "greedy", "-b", "random", "-k", "3", "--clock", "3s", "--seed", "ghost-three"]
    red7.ok("create", t, *entrants, "--reserve", f"ghost={key}")
    assert f"Tournament {t} finished: 1 game." in red7.ok("run", t).stdout
    rows = red7.json("standings", t)["standings"]
    assert [r["points"] for r in rows] == [1, 0.5, 0] and rows[-1]["name"] == "ghost", rows
    with redis.Redis.from_url(pool_url) as connection:
        state = load(connection, t)
    (result,) = state.results.values()
    seats = state.seating(result.game)[1].seats
    assert result.forfeited[0] == seats.index(0)  # the ghost (entrant 0) was out first
    assert result.forfeit_reasons == ("time",)  # tournament rules 3: why, though the bots played on
    assert "forfeited: ghost (out of time) ·" in red7.ok("report", t, "-o", "-").stdout
    assert "PASS" in red7.ok("audit", t).stdout

    def reason_changed(events: list[TournamentEvent]) -> list[TournamentEvent]:
        return [
            dataclasses.replace(e, forfeit_reasons=("resigned",)) if isinstance(e, GameFinished) else e for e in events
        ]

    with redis.Redis.from_url(pool_url) as connection:
        rewrite_stream(connection, t, reason_changed)
    failed = red7("audit", t)
    assert failed.exit_code == 1 and "the tournament recorded forfeit_reasons ['resigned']" in failed.stdout, (
        failed.stdout
    )
    with redis.Redis.from_url(pool_url) as connection:
        rewrite_stream(
            connection,
            t,
            lambda events: [
                dataclasses.replace(e, forfeit_reasons=("time",)) if isinstance(e, GameFinished) else e for e in events
            ],
        )

    def forfeit_left_out(events: list[TournamentEvent]) -> list[TournamentEvent]:
        return [
            dataclasses.replace(e, forfeited=(), forfeit_reasons=()) if isinstance(e, GameFinished) else e
            for e in events
        ]

    with redis.Redis.from_url(pool_url) as connection:
        rewrite_stream(connection, t, forfeit_left_out)
    failed = red7("audit", t)
    assert failed.exit_code == 1 and "the tournament recorded forfeited [] but its log says" in failed.stdout, (
        failed.stdout
    )


def test_an_aborted_game_is_shown_as_a_loss_for_both(red7: TournamentRed7, pool_url: str, tmp_path: Path) -> None:
    """docs/tournaments.md, Aborted games: alice aborts her game before anyone moved."""
    t = new_id("abort")
    red7.ok("create", t, "-p", "alice", "-p", "bob")
    red7.ok("run", t, "--no-wait")
    game = red7.json("show", t)["paired"][0]["tables"][0]["game"]
    alice = Red7(pool_url, tmp_path / "alice")
    alice.ok("join", game, "alice")
    alice.ok("abort", game)

    def recorded() -> Any:
        data = red7.json("run", t, "--no-wait")
        return data if data["finished"] else None

    wait_for(recorded, "the aborted game to be recorded", timeout=30)
    table = red7.json("show", t)["paired"][0]["tables"][0]
    assert table["status"] == "recorded" and table["winners"] == [] and table["reason"] == "aborted"
    seats = ", ".join(table["seats"])  # in seat order, which the pairing draws
    assert f"{game}: {seats} — aborted before anyone moved (a loss for every seat)" in red7.ok("show", t).stdout
    assert [r["points"] for r in red7.json("standings", t)["standings"]] == [0, 0]
    assert red7("audit", t).exit_code == 0


def test_a_swiss_of_no_shows_and_a_withdrawal_finishes_by_itself_and_audits(red7: TournamentRed7) -> None:
    """Issue #18's tournament: people who never show — two seated with their keys (their
    clocks run out) and one without a key who never joins (the join deadline puts them
    out) — one withdrawn by the organiser after round 1 was paired, and bots; `run`
    finishes it with nobody doing anything more, and the audit passes."""
    from red7es.service.tokens import public_key

    t = new_id("sw-ns")
    people = ("ghost", "ghost2", "quitter")
    keys = [a for p in people for a in ("-p", p, "--reserve", f"{p}={public_key(new_token())}")]
    bots = ["-b", "greedy", "-b", "random", "-b", "g2=greedy"]
    timing = ["--clock", "3s", "--join-time", "2s"]
    red7.ok("create", t, *keys, "-p", "nobody", *bots, "--format", "swiss", "-n", "3", *timing)
    red7.ok("run", t, "--no-wait")  # round 1 paired, its games started
    said = red7.ok("withdraw", t, "quitter", "--reason", "quitter had to leave").stdout
    assert said.startswith(f"quitter withdrawn from tournament {t}")
    again = red7("withdraw", t, "quitter", "--reason", "again")
    assert again.exit_code == 1 and "has withdrawn from tournament" in again.stderr
    assert red7("withdraw", t, "quitter").exit_code == 2  # no --reason
    run = red7.ok("run", t)
    shown = red7.json("show", t)
    assert f"Tournament {t} finished: {shown['games_total']} games." in run.stdout
    assert shown["withdrawn"] == {"quitter": "quitter had to leave"}
    rounds = shown["paired"]
    in_round_1 = ["quitter" in tb["seats"] for tb in rounds[0]["tables"]].count(True)
    assert in_round_1 + rounds[0]["byes"].count("quitter") == 1  # paired in round 1: a table or the bye
    assert all("quitter" not in tb["seats"] and "quitter" not in r["byes"] for r in rounds[1:] for tb in r["tables"])
    rows = {r["name"]: r for r in red7.json("standings", t)["standings"]}
    quitter = rows["quitter"]  # out of her one game, unless her opponent was out first (nobody's join deadline)
    assert (
        quitter["withdrawn"] and quitter["games"] == in_round_1 and quitter["forfeits"] + quitter["wins"] == in_round_1
    )
    forfeits = 0
    for ghost in ("ghost", "ghost2", "nobody"):  # out in every game, unless the other seat was out first
        row = rows[ghost]
        assert not row["withdrawn"] and row["forfeits"] + row["wins"] == row["games"], row
        forfeits += row["forfeits"]
    assert forfeits >= 3  # three rounds: a no-show meets a bot in one of them at least
    assert "quitter (withdrawn)" in red7.ok("standings", t).stdout
    assert "quitter (withdrawn)" in red7.ok("report", t, "-o", "-").stdout
    assert "Withdrawn: quitter: quitter had to leave" in red7.ok("show", t).stdout
    assert "PASS" in red7.ok("audit", t).stdout
    late = red7("withdraw", t, "ghost", "--reason", "too late")
    assert late.exit_code == 1 and "is finished" in late.stderr


def test_an_entrant_without_a_key_who_never_joins_forfeits_at_the_join_deadline(red7: TournamentRed7) -> None:
    """`--join-time` (RULES.md, Time, Join deadline): a seat nobody takes within it forfeits
    ("no-show"), so a tournament of a person who never comes finishes by itself and audits."""
    t = new_id("jt")
    red7.ok("create", t, "-p", "ann", "-b", "greedy", "-b", "random", "--clock", "1m", "--join-time", "2s")
    assert f"Tournament {t} finished: 3 games." in red7.ok("run", t).stdout
    rows = {r["name"]: r for r in red7.json("standings", t)["standings"]}
    assert rows["ann"]["games"] == 2 and rows["ann"]["forfeits"] == 2 and rows["ann"]["points"] == 0
    assert red7.ok("report", t, "-o", "-").stdout.count("forfeited: ann (no-show)") == 2
    assert "PASS" in red7.ok("audit", t).stdout
    refused = red7("create", new_id("jt"), "-p", "ann", "-b", "greedy", "--join-time", "2s")
    assert refused.exit_code == 2 and "--join-time needs --clock or --turn-time" in refused.stderr
