"""`red7 new --clock/--turn-time` (docs/cli.md, Time controls): the variant, the views, the errors."""

from __future__ import annotations

from typing import Any

from support import Red7, fails, new_id, wait_for


def test_a_clock_is_part_of_the_variant_and_shown(alice: Red7) -> None:
    game = new_id()
    out = alice.ok("new", "-p", "alice", "-p", "bob", "--join-all", "--clock", "5m+5s", "--id", game).stdout
    assert "2 players, basic, clock 5m+5s" in out
    view: dict[str, Any] = wait_for(
        lambda: (v := alice.json("show", game, "--as", "alice")).get("clock") and v, "a clock"
    )
    assert view["variant"]["clock"] == [300_000, 5_000]
    clock = view["clock"]
    assert clock["deadline"] == clock["started"] + 300_000
    assert [s["time_left"] for s in view["seats"]] == [300_000, 300_000]
    assert [s["forfeited"] for s in view["seats"]] == [False, False]
    shown = alice.ok("show", game, "--as", "alice").stdout
    assert "clock 5m+5s" in shown and "time is up at" in shown and "clock" in shown.splitlines()[3]


def test_an_untimed_game_has_no_clock_in_its_view(alice: Red7) -> None:
    game = new_id()
    alice.ok("new", "-p", "alice", "-b", "greedy", "--id", game)
    view = wait_for(lambda: (v := alice.json("show", game)).get("rule") and v, "the deal")
    assert "clock" not in view and "clock" not in view["variant"] and "turn_time" not in view["variant"]
    assert all("time_left" not in s for s in view["seats"])


def test_a_turn_time_runs_out_and_the_seat_folds(alice: Red7) -> None:
    game = new_id()
    alice.ok("new", "-p", "alice", "-p", "bob", "--join-all", "--turn-time", "300ms", "--id", game)
    wait_for(lambda: alice.json("show", game)["status"] == "over", "the game to end on time", timeout=30)
    replay = alice.ok("replay", game).stdout
    assert "300ms a turn" in replay
    assert "PASS" in alice.ok("audit", game).stdout


def test_both_time_controls_or_a_bad_duration_are_usage_errors(alice: Red7) -> None:
    for options, error in [
        (("--clock", "5m", "--turn-time", "30s"), "Error: a game has --clock or --turn-time, not both"),
        (
            ("--clock", "5x"),
            "Error: Invalid value for '--clock': not a duration: '5x' (say e.g. 300ms, 30s, 5m, 2h or 2d)",
        ),
        (
            ("--turn-time", "31d"),
            "Error: Invalid value for '--turn-time': '31d' is longer than 30 days, the longest time control",
        ),
        (("--clock", "0s"), "Error: Invalid value for '--clock': a duration must be more than nothing, not '0s'"),
    ]:
        err = fails(alice("new", "-p", "alice", "-p", "bob", *options), 2)
        assert err.rstrip("\n").splitlines()[-1] == error


def test_a_join_deadline_forfeits_the_seat_nobody_took_and_show_says_so(alice: Red7) -> None:
    game = new_id()
    out = alice.ok("new", "-p", "alice", "-p", "bob", "--clock", "1m", "--join-time", "1s", "--id", game)
    assert "2 players, basic, clock 1m, join within 1s" in out.stdout
    view = alice.json("show", game)
    assert view["variant"]["join_time"] == 1_000 and view["clock"] is None
    wait_for(lambda: alice.json("show", game)["status"] == "over", "the join deadline to end it", timeout=30)
    view = alice.json("show", game)
    assert view["outcome"]["reason"] == "no-show" and view["outcome"]["forfeited"] == [1]
    assert "Game over: alice wins: bob never took their seat." in alice.ok("show", game, "--public").stdout
    late = alice("join", game, "bob")
    assert late.exit_code == 1 and "over" in late.stderr
    assert "PASS" in alice.ok("audit", game).stdout
    refused = alice("new", "-p", "alice", "-b", "greedy", "--join-time", "1s")
    assert refused.exit_code == 2 and "--join-time needs --clock or --turn-time" in refused.stderr
