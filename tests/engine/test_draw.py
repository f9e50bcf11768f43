"""Advanced draw, variant flag ``draw`` (RULES.md, *Advanced draw*)."""

from __future__ import annotations

import pytest

from red7es import IllegalStep

from .helpers import drawn, names, position, steps_text, texts, turns_text


def drawing(*, deck=("Y4", "Y1"), palette=("R6",), **kw):
    """Seat 0 to move under Red, palette R6 (one card) against O5; the deck is Y4 then Y1."""
    kw.setdefault("draw", True)
    return position(hands=[["B3", "B1", "B2", "V3"], ["G1"]], palettes=[list(palette), ["O5"]], deck=deck, **kw)


def test_draw_allowed_after_discard_numbered_higher_than_palette_size():
    game = drawing()
    game.push("c:B3")  # 3 > 1 card in the palette
    assert steps_text(game.legal_steps()) == ["draw", "end", "fold"]
    facts = game.apply("draw")
    assert drawn(facts) == [(0, "Y4", "draw")]  # the top card
    assert "Y4" in names(game.hand(0))
    assert texts(game.deck_cards) == ["Y1"]


def test_draw_fact_is_recorded_in_a_batch():
    game = drawing()
    facts = game.apply("c:B3 draw")
    assert drawn(facts) == [(0, "Y4", "draw")]
    assert game.turn == 1


def test_no_draw_when_discard_number_is_not_greater_than_palette_size():
    game = drawing()
    game.push("c:B1")  # 1 is not greater than 1
    assert "draw" not in steps_text(game.legal_steps())
    with pytest.raises(IllegalStep, match="you may draw only once, after discarding"):
        game.push("draw")


def test_draw_uses_palette_size_at_the_moment_of_the_discard():
    game = drawing()
    with pytest.raises(IllegalStep, match="after discarding"):
        game.apply("p:V3 c:B2 draw")  # palette R6 V3 has 2 cards: 2 is not > 2
    game.apply("c:B2 draw")  # palette R6 alone: 2 > 1


def test_draw_is_optional():
    game = drawing()
    turns = turns_text(game.legal_turns())
    assert {"c:B3", "c:B3 draw"} <= turns
    game.apply("c:B3")
    assert game.turn == 1 and texts(game.deck_cards) == ["Y4", "Y1"]


def test_draw_not_allowed_when_the_deck_is_empty():
    game = drawing(deck=())
    game.push("c:B3")
    assert "draw" not in steps_text(game.legal_steps())
    with pytest.raises(IllegalStep, match="the draw deck is empty"):
        game.push("draw")
    assert "c:B3 draw" not in turns_text(game.legal_turns())


def test_draw_only_once():
    game = drawing()
    game.push("c:B3")
    game.push("draw")
    with pytest.raises(IllegalStep, match="only once"):
        game.push("draw")


def test_draw_only_after_a_discard():
    game = drawing()
    with pytest.raises(IllegalStep, match="after discarding"):
        game.apply("draw")
    with pytest.raises(IllegalStep, match="after discarding"):
        game.apply("p:V3 draw")


def test_draw_not_allowed_without_the_variant():
    game = drawing(draw=False)
    with pytest.raises(IllegalStep, match="only allowed in the Advanced draw variant"):
        game.apply("c:B3 draw")
    game.push("c:B3")
    assert "draw" not in steps_text(game.legal_steps())
    assert not any("draw" in t for t in turns_text(game.legal_turns()))


def test_draw_after_seven_to_canvas_uses_palette_size_after_the_move():
    # V2 O3 + R7 is three cards; 7c:O3 leaves two (V2 R7), and 3 > 2 allows the draw.
    game = position(hands=[["R7"], ["G1"]], palettes=[["V2", "O3"], ["B1"]], deck=["Y4"], draw=True, actions=True)
    facts = game.apply("p:R7 7c:O3 draw")
    assert drawn(facts) == [(0, "Y4", "draw")]


def test_no_draw_after_seven_to_canvas_when_number_not_greater_than_remaining_palette():
    game = position(hands=[["R7"], ["G1"]], palettes=[["V2", "O2"], ["B1"]], deck=["Y4"], draw=True, actions=True)
    game.push("p:R7")
    game.push("7c:O2")  # V2 R7 remain: 2 is not > 2
    assert "draw" not in steps_text(game.legal_steps())


def test_draw_after_a_seven_to_deck_draws_the_card_just_put_there():
    game = position(hands=[["R7", "B5"], ["G1"]], palettes=[["V2", "O3"], ["B1"]], deck=["Y4"], draw=True, actions=True)
    facts = game.apply("p:R7 7d:O3 c:B5 draw")  # Blue: V2 R7 two colours; 5 > 2
    assert drawn(facts) == [(0, "O3", "draw")]
