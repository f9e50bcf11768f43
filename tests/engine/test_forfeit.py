"""RULES.md, Time: a seat out of the game for good (its game clock ran out)."""

from __future__ import annotations

import pytest

from red7es.durations import DurationError, format_clock, format_duration, parse_clock, parse_duration
from red7es.facts import Forfeited, GameOver, PlayerOut, RoundDealt, TurnTakenBack
from red7es.game import Game, IllegalStep
from red7es.variant import Variant, VariantError


def test_a_forfeit_in_a_two_player_game_ends_it_at_once_the_other_winning_on_time() -> None:
    game = Game.new(2, seed="forfeit-2")
    loser = game.turn
    facts = game.forfeit(loser, "time")
    assert facts[0] == Forfeited(loser, "time")
    over = facts[-1]
    assert isinstance(over, GameOver)
    assert over.outcome.winners == (1 - loser,)
    assert over.outcome.reason == "time"
    assert over.outcome.forfeited == (loser,)
    assert game.over and game.turn == -1


def test_after_a_forfeit_the_others_play_on_and_the_seat_never_moves_again() -> None:
    game = Game.new(3, seed="forfeit-3", rounds=3)
    out = game.turn
    game.forfeit(out, "time")
    assert not game.over
    assert game.turn != out and out not in game.in_round
    rounds_seen = {game.round}
    while not game.over:
        assert game.turn != out, "a seat out of the game was given a turn"
        assert out not in game.in_round
        game.apply(game.legal_turns()[0])
        rounds_seen.add(game.round)
    assert len(rounds_seen) > 1, "the game should go on over several rounds"
    assert game.outcome is not None
    assert out not in game.outcome.winners
    assert game.outcome.forfeited == (out,)
    assert game.outcome.reason == "rounds"
    # every later deal leaves the seat out of its round
    deals = [f for f in game.log or [] if isinstance(f, RoundDealt)]
    assert deals[-1].round > 1


def test_when_all_but_one_forfeit_the_last_wins_on_time_and_the_first_out_ranks_lowest() -> None:
    game = Game.new(3, seed="forfeit-all")
    first = game.turn
    game.forfeit(first, "time")
    second = game.turn
    facts = game.forfeit(second, "time")
    over = facts[-1]
    assert isinstance(over, GameOver)
    assert over.outcome.reason == "time"
    assert over.outcome.forfeited == (first, second)
    assert over.outcome.winners == tuple(s for s in range(3) if s not in (first, second))


def test_a_forfeit_mid_turn_takes_the_turn_back_like_a_fold() -> None:
    game = Game.new(2, seed="forfeit-mid", actions=False)
    seat = game.turn
    hand_before = game.hand(seat)
    opening = next(t for t in game.legal_turns() if len(t.steps) == 1 and not t.is_fold)
    game.apply(f"{opening.steps[0]} ...")  # an open turn: the step stands until the turn ends
    assert game.hand(seat) != hand_before
    facts = game.forfeit(seat, "time")
    assert isinstance(facts[0], TurnTakenBack)
    assert game.hand(seat) == hand_before
    assert not any(isinstance(f, PlayerOut) for f in facts)


def test_the_facts_of_a_forfeit_replay_to_the_same_game() -> None:
    game = Game.new(3, seed="forfeit-replay", rounds=2)
    game.forfeit(game.turn, "time")
    while not game.over:
        game.apply(game.legal_turns()[-1])
    replayed = Game.from_record(game.variant)
    for fact in game.log or []:
        replayed.apply_fact(fact)
    assert replayed.outcome == game.outcome
    assert replayed.log == game.log


def test_a_seat_cannot_forfeit_twice() -> None:
    game = Game.new(3, seed="twice")
    seat = game.turn
    game.forfeit(seat, "time")
    with pytest.raises(IllegalStep):
        game.forfeit(seat, "time")


def test_durations_read_and_write_as_people_type_them() -> None:
    for text, ms in [("300ms", 300), ("30s", 30_000), ("5m", 300_000), ("2h", 7_200_000), ("2d", 172_800_000)]:
        assert parse_duration(text) == ms
        assert format_duration(ms) == text
    assert parse_duration("1h30m") == 5_400_000
    assert parse_clock("5m+5s") == (300_000, 5_000)
    assert parse_clock("5m") == (300_000, 0)
    assert format_clock((300_000, 5_000)) == "5m+5s"
    for bad in ("", "5", "5x", "m5", "0s", "31d", "5m+"):
        with pytest.raises(DurationError):
            parse_clock(bad) if "+" in bad else parse_duration(bad)


def test_time_controls_are_part_of_the_variant_and_untimed_variants_are_unchanged() -> None:
    assert "clock" not in Variant(2).to_dict() and "turn_time" not in Variant(2).to_dict()
    timed = Variant(2, clock=(300_000, 5_000))
    assert Variant.from_dict(timed.to_dict()) == timed
    assert timed.describe() == "2 players, basic, clock 5m+5s"
    assert Variant(3, turn_time=30_000).describe() == "3 players, basic, 30s a turn"
    with pytest.raises(VariantError):
        Variant(2, clock=(1000, 0), turn_time=1000)
    with pytest.raises(VariantError):
        Variant(2, turn_time=0)
