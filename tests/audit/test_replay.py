"""Replay: the view at any event is what the service showed, and a seat's view hides what it could not see."""

from __future__ import annotations

import itertools
import json
import random
import re
import time

import pytest

from red7es.facts import RoundDealt, RoundWon
from red7es.service.events import CommandApplied, CommandRejected, SeatJoined
from red7es.service.replay import Replay, ReplayError, view_of
from red7es.service.table import Table
from red7es.variant import Variant

from .conftest import ADVANCED, Games

CARD = re.compile(r"\b[ROYGBIV][1-7]\b")


@pytest.fixture(scope="module")
def watched(module_games: Games) -> str:
    """A finished people's game whose published views were captured at every version."""
    module_games.people("watched", Variant(3, **ADVANCED), ("alice", "bob"), rng=random.Random(5), capture=True)
    return "watched"


@pytest.fixture(scope="module")
def long_game(module_games: Games) -> Replay:
    """A long game: 4 players, scoring+draw+actions (about 500 events)."""
    game_id = module_games.bots("long", Variant(4, **ADVANCED), ("random",), seed="long-4")
    replay = Replay(module_games.service.log(game_id))
    assert len(replay) >= 300
    return replay


def hidden_from(table: Table, seat: int | None) -> set[str]:
    """Cards ``seat`` could not see at this point: other hands, the unseen deck, face-down palettes.

    Not hidden: cards named by the steps of the turn in progress, which everyone saw.
    """
    game = table.game
    hidden: set[str] = set()
    for s in range(game.players):
        if s != seat:
            hidden |= {str(c) for c in game.hand(s)}
        if not game.alive[s]:
            hidden |= {str(c) for c in game.palette(s)}
    known = {str(c) for _d, c in game.observation(0).deck_known}
    hidden |= {str(c) for c in game.deck_cards} - known
    # This turn's steps are public: a card a 7 put on the deck and its player drew is known to all.
    public = {str(s.card) for s in game.current_turn_steps if s.card is not None}
    return hidden - public


def test_replay_equals_every_view_the_service_published(module_games: Games, watched: str) -> None:
    replay = Replay(module_games.service.log(watched))
    shots = module_games.views[watched]
    assert len({version for version, _seat, _view in shots}) > 20
    for version, seat, published in shots:
        assert replay.view(version - 1, seat) == published, (version, seat)


@pytest.mark.parametrize("variant", [Variant(2), Variant(3, rounds=2), Variant(4, **ADVANCED)], ids=str)
def test_replay_of_a_bot_game_equals_its_final_views(module_games: Games, variant: Variant) -> None:
    game_id = module_games.bots(f"final-{variant.players}-{variant.rounds}", variant, ("greedy", "random"))
    replay = Replay(module_games.service.log(game_id))
    assert replay.view() == module_games.service.view(game_id)
    for seat in range(variant.players):
        assert replay.view(seat=seat) == module_games.service.view(game_id, seat)


def test_a_seat_sees_no_hidden_card_at_any_event(module_games: Games, watched: str) -> None:
    replay = Replay(module_games.service.log(watched))
    seen_hand = False
    for at in range(len(replay)):
        table = replay.table(at)
        for seat in (None, 0, 1, 2):
            view = view_of(table, at + 1, seat)
            shown = set(CARD.findall(json.dumps(view)))
            assert not shown & hidden_from(table, seat), (at, seat, shown & hidden_from(table, seat))
            if seat is not None and view["hand"]:
                seen_hand = True
                assert set(view["hand"]) == {str(c) for c in table.game.hand(seat)}
            if seat is None:
                assert "hand" not in view
            if at < len(replay) - 1:
                assert view["seed"] is None  # revealed only with the last event
    assert seen_hand


def test_replay_is_fast_on_a_long_game(long_game: Replay) -> None:
    """Any point of a ~500-event game is rebuilt from scratch well under 100 ms."""
    worst = 0.0
    for at in (len(long_game) // 2, len(long_game) - 1):
        for seat in (None, 0):
            start = time.perf_counter()
            long_game.view(at, seat)
            worst = max(worst, time.perf_counter() - start)
    assert worst < 0.1, f"{worst * 1000:.1f} ms"


def test_turns_cut_the_log_at_every_answer(long_game: Replay) -> None:
    turns = long_game.turns()
    assert turns[0].first == 0 and isinstance(long_game.events[turns[0].last], RoundDealt)
    assert turns[-1].last == len(long_game) - 1
    for a, b in itertools.pairwise(turns):
        assert b.first == a.last + 1
        assert isinstance(long_game.events[b.first], CommandApplied | CommandRejected | SeatJoined)


def test_walking_folds_to_the_same_states(long_game: Replay) -> None:
    for n, (turn, table) in enumerate(long_game.walk()):
        if n % 25 == 0:
            assert view_of(table, turn.last + 1, 1) == long_game.view(turn.last, 1)
    start = len(long_game) // 2
    first_turn, table = next(iter(long_game.walk(start)))
    assert first_turn.first <= start <= first_turn.last
    assert view_of(table, first_turn.last + 1, None) == long_game.view(first_turn.last)


def test_between_two_rounds_nobody_is_to_move(long_game: Replay) -> None:
    won = next(i for i, e in enumerate(long_game.events) if isinstance(e, RoundWon))
    assert long_game.view(won)["to_move"] is None
    assert "legal" not in long_game.view(won, 0)
    assert long_game.view(0)["to_move"] is None


def test_points_and_seats_are_checked(long_game: Replay) -> None:
    assert long_game.point(-1) == len(long_game) - 1
    with pytest.raises(ReplayError, match=f"there is no event {len(long_game)}"):
        long_game.view(len(long_game))
    with pytest.raises(ReplayError, match="no seat 'zed'"):
        long_game.seat_of("zed")
    assert long_game.seat_of("bot2") == 2 and long_game.seat_of("3") == 3
    with pytest.raises(ReplayError, match="starts with GameCreated"):
        Replay(long_game.events[1:])


def test_a_seat_sees_its_own_draws_in_the_events(long_game: Replay) -> None:
    drawn = [
        (turn, e)
        for turn in long_game.turns()
        for e in long_game.events[turn.first : turn.last + 1]
        if type(e).__name__ == "CardDrawn" and not e.public  # type: ignore[attr-defined]
    ]
    assert drawn
    turn, event = drawn[0]
    mine = long_game.visible_events(turn, event.seat)  # type: ignore[attr-defined]
    theirs = long_game.visible_events(turn, (event.seat + 1) % 4)  # type: ignore[attr-defined]
    assert any(e.get("card") == str(event.card) for e in mine)  # type: ignore[attr-defined]
    assert not any(e.get("type") == "CardDrawn" and "card" in e for e in theirs)
