"""Positions as values (docs/positions.md): one line of text for a game or a seat's view."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from red7es import Color, Game, PositionError, Variant
from red7es.cards import FULL_DECK_MASK

from .helpers import names, texts
from .sampling import positions

ISSUE_19 = "red7/1 2p+scoring+draw rules:4 round:1 rule:R canvas:- deck:- 0:V5/G1/-/0 1:Y3/R7,B6/-/0 to:0"


def _state(game: Game) -> tuple[object, ...]:
    """Everything a game is, but its fact log."""
    return game._save()[:-1]


def test_a_position_holds_the_whole_game_and_reads_back_to_it():
    game = Game.from_position(ISSUE_19)
    assert game.variant == Variant(2, scoring=True, draw=True)
    assert (names(game.hand(0)), names(game.palette(1)), game.turn, game.batch_rules) == (["V5"], ["R7", "B6"], 0, 4)
    assert game.position() == ISSUE_19
    won = next(f for f in game.apply("c:V5 fold") if type(f).__name__ == "RoundWon")
    assert (won.rule, texts(won.cards)) == (Color.RED, ["R7"])


def test_a_turn_in_progress_is_the_position_it_began_in_and_its_steps():
    text = (
        "red7/1 3p+draw+actions rules:4 round:1 rule:R canvas:- deck:R1,Y2*,G3 "
        "0:Y7,G6,B5,R3/V4,I1/-/0 1:O2/O4,B3/-/0 2:I2/B6/-/0 to:0 steps:p:R3,c:G6"
    )
    game = Game.from_position(text)
    assert texts(game.current_turn_steps) == ["p:R3", "c:G6"]
    assert names(game.hand(0)) == ["Y7", "B5", "R1"]  # R3 drew R1
    assert game.draw_ok and game.canvas_rule is Color.GREEN and texts(game.deck_cards) == ["Y2", "G3"]
    assert game.position() == text
    game.apply("draw fold")
    assert names(game.hand(0)) == ["Y7", "G6", "B5", "R3"] and texts(game.deck_cards) == ["R1", "Y2", "G3"]


def test_views_hide_what_the_seat_may_not_see():
    text = (
        "red7/1 3p+draw+actions rules:4 round:1 rule:R canvas:- deck:R1,Y2*,G3 "
        "0:Y7,G6,B5,R3/V4,I1/-/0 1:O2/O4,B3/-/0 2:I2/B6/-/0 to:0 steps:p:R3"
    )
    game = Game.from_position(text)
    assert game.view_position(0) == text.replace("deck:R1,Y2*,G3", "deck:R1,Y2*,?1").replace("1:O2/", "1:?1/").replace(
        "2:I2/", "2:?1/"
    )
    assert game.view_position(1) == text.replace("deck:R1,Y2*,G3", "deck:?1,Y2*,?1").replace(
        "0:Y7,G6,B5,R3/", "0:?4/"
    ).replace("2:I2/", "2:?1/")
    assert "0:?4/" in game.view_position(None) and "1:?1/" in game.view_position(None)


def test_an_observation_writes_its_view():
    game = Game.new(3, seed="view", actions=True)
    assert game.observation(1).position() == game.view_position(1)
    assert "?" in game.observation(1).position()


BAD = [
    ("", "a position starts with 'red7/1'"),
    ("red7/2 2p", "a position starts with 'red7/1', not 'red7/2'"),
    (ISSUE_19.replace("0:V5/", "0:V5,R7/"), "R7 is twice in the position: in seat 0's hand and in seat 1's palette"),
    (ISSUE_19.replace("deck:-", "deck:V5"), "V5 is twice in the position: in the deck and in seat 0's hand"),
    (ISSUE_19.replace("0:V5/", "0:V5,V1,V2,V3,V4,I1,I2,I3/"), "seat 0's hand has 8 cards"),
    (ISSUE_19 + " 2:O1/O2/-/0", "seat 2 is out of range: a 2-player game has seats 0 to 1"),
    (ISSUE_19.replace("to:0", "to:3"), "to:3 is out of range"),
    (ISSUE_19.replace("0:V5", "0:X9"), "'X9' in seat 0's hand is not a card"),
    (ISSUE_19.replace("rule:R", "rule:G"), "rule:G but the Canvas makes the rule Red"),
    (ISSUE_19.replace(" 1:Y3/R7,B6/-/0", ""), "seat 1 is missing"),
    (ISSUE_19.replace("2p+", "5p+"), "Red7 is played by 2 to 4 players"),
    (ISSUE_19 + " steps:c:R7", "steps: c:R7 is illegal here: R7 is not in your hand"),
    (ISSUE_19 + " steps:fold", "steps: fold ends the turn"),
    (ISSUE_19.replace("deck:-", "deck:?3"), "this is a view"),
    (ISSUE_19 + " moon:1", "unknown field 'moon'"),
    (ISSUE_19.replace("1:Y3/R7,B6/-/0", "1:Y3/R7,B6/-/0/out"), "a round in progress has at least two players"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_a_bad_position_says_what_is_wrong(text, message):
    with pytest.raises(PositionError) as caught:
        Game.from_position(text)
    assert message in str(caught.value)


def test_every_card_of_a_real_game_is_in_its_position():
    game = Game.new(4, seed="all", scoring=True)
    loaded = Game.from_position(game.position())
    placed = sum(loaded.hands) | sum(loaded.pal) | sum(1 << c for c in loaded.deck) | sum(1 << c for c in loaded.canvas)
    assert placed == FULL_DECK_MASK


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_positions_round_trip_over_random_games_mid_turn_included(seed):
    for game in positions(1, seed=seed, every=3):
        text = game.position()
        loaded = Game.from_position(text)
        assert loaded.position() == text
        assert _state(loaded) == _state(game)
        assert loaded.batch_rules == game.batch_rules and loaded.outcome == game.outcome
        for seat in range(game.players):
            assert loaded.view_position(seat) == game.view_position(seat)


def test_a_finished_game_round_trips_with_its_outcome():
    rng = random.Random(3)
    game = Game.new(3, seed="over", scoring=True, draw=True)
    while game.outcome is None:
        game.apply(rng.choice(game.legal_turns()))
    text = game.position()
    assert text.endswith(f"to:- over:{game.outcome.reason}")
    assert Game.from_position(text).outcome == game.outcome


POSITIONS_MD = Path(__file__).resolve().parents[2] / "docs" / "positions.md"


def test_the_examples_of_docs_positions_md_are_what_the_engine_does():
    text = POSITIONS_MD.read_text()
    lines = [line.strip().strip('"') for line in text.splitlines() if line.strip().strip('"').startswith("red7/1 ")]
    games = [line for line in lines if "?" not in line]
    views = [line for line in lines if "?" in line]
    assert len(games) == 2 and len(views) == 2
    for line in games:
        assert Game.from_position(line).position() == line
    mover, other = views
    assert Game.from_position(games[1].replace(",c:G6", "")).view_position(0) == mover
    assert Game.from_position(games[1].replace(",c:G6", "")).view_position(None) == other
    for line in views:
        with pytest.raises(PositionError, match="this is a view"):
            Game.from_position(line)
    game = Game.from_position(games[0])
    game.apply("c:V5 fold")
    assert game.score(1) == 7
    messages = set()
    for bad, _ in BAD:
        with pytest.raises(PositionError) as caught:
            Game.from_position(bad)
        messages.add(str(caught.value))
    rows = re.findall(r"^\| [^|]+ \| `(.+)` \|$", text.split("## Errors")[1], re.M)
    assert len(rows) == 10 and set(rows) <= messages, set(rows) - messages


def test_a_games_repr_is_its_position_so_a_failing_assertion_shows_it_in_one_line():
    game = Game.from_position(ISSUE_19)
    assert repr(game) == f"Game.from_position({ISSUE_19!r})"
    assert eval(repr(game), {"Game": Game}).position() == ISSUE_19  # our own repr
    assert str(game) == "<Game 2 players, scoring+draw, target 40, round 1, seat 0 to move>"


WORDS = st.sampled_from(
    ["-", "?", "*", ",", "/", ":", "R7", "V1", "0", "9", "-1", "out", "p:R7", "1:O4", "fold", "to:0", "steps:", "x"]
)


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_any_mangled_position_loads_or_says_what_is_wrong_never_an_index_error(data):
    words = data.draw(st.sampled_from([ISSUE_19, Game.new(3, seed="fuzz", actions=True).position()])).split()
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(words) - 1))
        action = data.draw(st.sampled_from(["drop", "replace", "append", "cut"]))
        if action == "drop" and len(words) > 1:
            del words[i]
        elif action == "replace":
            words[i] = data.draw(WORDS | st.text(max_size=8))
        elif action == "append":
            words[i] += data.draw(WORDS)
        else:
            words[i] = words[i][: data.draw(st.integers(0, len(words[i])))]
    try:
        game = Game.from_position(" ".join(words))
    except PositionError as exc:
        assert "\n" not in str(exc) and str(exc)
    else:
        assert Game.from_position(game.position()).position() == game.position()
