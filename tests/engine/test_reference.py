"""The bitmask kernel of red7es.rules agrees with the naive reference (tests/engine/reference.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from red7es import ALL_CARDS, Color, leader, scoring_cards
from red7es.cards import color_mask_of, mask_of
from red7es.rules import all_keys, key_count, key_top, palette_key, palette_keys, qualifying_mask, rival_keys

from .reference import qualifying, reference_leader, strength


@st.composite
def disjoint_palettes(draw, min_palettes=2, max_palettes=4, max_cards=8):
    """2-4 palettes of 0-8 cards each, no card in two palettes."""
    n = draw(st.integers(min_palettes, max_palettes))
    sizes = draw(st.lists(st.integers(0, max_cards), min_size=n, max_size=n))
    order = draw(st.permutations(ALL_CARDS))
    palettes, start = [], 0
    for size in sizes:
        palettes.append(list(order[start : start + size]))
        start += size
    return palettes


rules = st.sampled_from(list(Color))


@settings(max_examples=600, deadline=None)
@given(rule=rules, palettes=disjoint_palettes())
def test_leader_agrees_with_reference_for_every_rule(rule, palettes):
    assert leader(rule, palettes) == reference_leader(rule, palettes)


@settings(max_examples=600, deadline=None)
@given(rule=rules, palette=st.lists(st.sampled_from(ALL_CARDS), unique=True, max_size=8))
def test_scoring_cards_are_the_reference_qualifying_cards(rule, palette):
    assert sorted(scoring_cards(rule, palette)) == sorted(qualifying(rule, palette))


@settings(max_examples=400, deadline=None)
@given(palette=st.lists(st.sampled_from(ALL_CARDS), unique=True, max_size=10))
def test_palette_keys_encode_reference_count_then_highest_card(palette):
    nm = mask_of(palette)
    cm = color_mask_of(nm)
    keys = all_keys(nm, cm)
    for rule in Color:
        assert keys[rule] == palette_key(rule, nm, cm)
        expected = strength(rule, palette)
        if expected is None:
            assert keys[rule] == 0
        else:
            assert (key_count(keys[rule]), key_top(keys[rule])) == expected
        assert qualifying_mask(rule, nm) == mask_of(qualifying(rule, palette))


@settings(max_examples=300, deadline=None)
@given(rule=rules, palettes=disjoint_palettes(min_palettes=2, max_palettes=2, max_cards=49))
def test_no_two_nonempty_palettes_ever_tie(rule, palettes):
    keys = [palette_key(rule, mask_of(p), color_mask_of(mask_of(p))) for p in palettes]
    if keys[0] and keys[1]:
        assert keys[0] != keys[1]


@settings(max_examples=300, deadline=None)
@given(palettes=disjoint_palettes(), data=st.data())
def test_rival_keys_are_the_best_key_per_rule_among_the_other_live_palettes(palettes, data):
    """What a seat must beat under each rule: its own palette and players who are out never count."""
    n = len(palettes)
    seat = data.draw(st.integers(0, n - 1))
    alive = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    masks = [mask_of(p) for p in palettes]
    rivals = rival_keys(masks, alive, seat)
    for rule in Color:
        others = [palette_key(rule, m, color_mask_of(m)) for s, m in enumerate(masks) if s != seat and alive[s]]
        assert rivals[rule] == max(others, default=0)
        # the seat leads under ``rule`` exactly when its key beats the rivals' best (and it has a card)
        mine = palette_keys(masks[seat])[rule]
        live = [s for s in range(n) if alive[s] or s == seat]
        expected = reference_leader(rule, [palettes[s] for s in live])
        assert (mine > rivals[rule]) == (expected is not None and live[expected] == seat)
