"""A deliberately naive reference implementation of the Canvas rules, from RULES.md.

It works on lists of :class:`Card` (using only ``card.number``, ``card.color`` and the
cards' order) and follows the table of RULES.md line by line, with no bit tricks and
nothing shared with ``red7es.rules``.  Property tests check the engine against it.
"""

from __future__ import annotations

from collections.abc import Sequence

from red7es import Card, Color


def _best_group(groups: list[list[Card]]) -> list[Card]:
    """The largest group; among equally large ones, the one containing the highest card."""
    groups = [g for g in groups if g]
    if not groups:
        return []
    return max(groups, key=lambda g: (len(g), max(g)))


def _indigo_run(palette: Sequence[Card]) -> list[Card]:
    """The longest run of consecutive numbers, one card (the highest) per number;
    among equally long runs, the one containing the highest card."""
    representative: dict[int, Card] = {}
    for card in palette:
        if card.number not in representative or card > representative[card.number]:
            representative[card.number] = card
    runs: list[list[Card]] = []
    for start in range(1, 8):
        for end in range(start, 8):
            numbers = range(start, end + 1)
            if all(n in representative for n in numbers):
                runs.append([representative[n] for n in numbers])
    return _best_group(runs)


def qualifying(rule: Color, palette: Sequence[Card]) -> list[Card]:
    """The cards of ``palette`` that qualify (and score) under ``rule``."""
    palette = list(palette)
    if not palette:
        return []
    if rule == Color.RED:
        return [max(palette)]
    if rule == Color.ORANGE:
        return _best_group([[c for c in palette if c.number == n] for n in range(1, 8)])
    if rule == Color.YELLOW:
        return _best_group([[c for c in palette if c.color == col] for col in Color])
    if rule == Color.GREEN:
        return [c for c in palette if c.number in (2, 4, 6)]
    if rule == Color.BLUE:
        return [max(c for c in palette if c.color == col) for col in Color if any(c.color == col for c in palette)]
    if rule == Color.INDIGO:
        return _indigo_run(palette)
    if rule == Color.VIOLET:
        return [c for c in palette if c.number in (1, 2, 3)]
    raise AssertionError(rule)


def strength(rule: Color, palette: Sequence[Card]) -> tuple[int, Card] | None:
    """What palettes are compared by: (number of qualifying cards, their highest card)."""
    q = qualifying(rule, palette)
    return (len(q), max(q)) if q else None


def reference_leader(rule: Color, palettes: Sequence[Sequence[Card]]) -> int | None:
    """Index of the leading palette, or None when no palette has a qualifying card."""
    best: tuple[int, Card] | None = None
    who = None
    for i, palette in enumerate(palettes):
        s = strength(rule, palette)
        if s is None:
            continue
        assert s != best, "ties cannot happen: cards are unique"
        if best is None or s > best:
            best, who = s, i
    return who
