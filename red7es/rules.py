"""The seven Canvas rules: who leads, and which cards qualify.

Every palette gets a *key* under a rule: ``count << 6 | (top + 1)`` where ``count`` is
the number of qualifying cards and ``top`` the id of the strongest of them (0 when
nothing qualifies).  Comparing keys is comparing palettes exactly as RULES.md says:
first the size of the qualifying set, then its highest card.  Because cards are
unique, two non-empty palettes never have equal keys.

The keys are computed from the two bitmask layouts of :mod:`red7es.cards` with a
few shifts, ``int.bit_count``/``int.bit_length`` and lookup tables over pairs of
7-bit chunks, so the engine never builds lists of card objects on its hot path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache, partial

from .cards import _COLOR_BITS, ALL_CARDS, Card, Color, cards_of_mask, color_mask_of, mask_of

__all__ = [
    "EVEN_MASK",
    "LOW_MASK",
    "all_keys",
    "key_count",
    "key_top",
    "leader",
    "leader_of_masks",
    "match_winners",
    "palette_key",
    "palette_keys",
    "qualifying_mask",
    "rival_keys",
    "rule_of",
    "scoring_cards",
]

_CHUNK = 0x7F
_PAIR = 0x3FFF


def _mask_where(pred: Callable[[Card], bool]) -> int:
    return mask_of(c for c in ALL_CARDS if pred(c))


EVEN_MASK = _mask_where(lambda c: c.number % 2 == 0)
LOW_MASK = _mask_where(lambda c: c.number < 4)


def _group_key(chunk: int, top_of: Callable[[int], int]) -> int:
    """Key of one 7-bit group: its size, then its strongest card."""
    if not chunk:
        return 0
    return chunk.bit_count() << 6 | (top_of(chunk) + 1)


def _pair_tables(top_in_chunk: Callable[[int, int], int]) -> tuple[list[int], list[int], list[int], list[int]]:
    """Best group key for every value of chunks (0,1), (2,3), (4,5) and (6).

    Built from the 128 keys of each chunk: a pair's entry is the larger of its two
    chunks' keys, read in the order of ``high << 7 | low``.  (Calling ``_group_key`` for
    each of the 3 x 16,384 pairs cost 0.1 s at every import, which every ``red7``
    command and worker paid.)
    """
    keys = [[_group_key(v, partial(top_in_chunk, n)) for v in range(1 << 7)] for n in range(7)]
    pairs = [[k if k > h else h for h in keys[n + 1] for k in keys[n]] for n in (0, 2, 4)]
    return pairs[0], pairs[1], pairs[2], keys[6]


# Orange: number-major chunk n holds the cards numbered n+1; its top card is 7n + bitlen - 1.
_O0, _O1, _O2, _O3 = _pair_tables(lambda n, chunk: 7 * n + chunk.bit_length() - 1)
# Yellow: colour-major chunk k holds one colour; its top card is numbered bitlen, colour k.
_Y0, _Y1, _Y2, _Y3 = _pair_tables(lambda k, chunk: 7 * (chunk.bit_length() - 1) + k)


def _best_run(numbers: int) -> tuple[int, int]:
    """Longest run in a 7-bit set of numbers; the higher run wins a tie. (length, top)"""
    best = (0, 0)
    length = 0
    for n in range(1, 8):
        length = length + 1 if numbers >> (n - 1) & 1 else 0
        if length and (length, n) >= best:
            best = (length, n)
    return best


_RUN_LEN = [_best_run(v)[0] << 6 for v in range(128)]
# Cards numbered up to the run's top number: the run's top card is the highest of them.
_RUN_CUT = [(1 << 7 * _best_run(v)[1]) - 1 for v in range(128)]


def _fold(mask: int) -> int:
    """OR the seven 7-bit chunks of a mask together."""
    mask |= mask >> 28
    mask |= mask >> 14
    mask |= mask >> 7
    return mask & _CHUNK


def _key_red(nm: int, cm: int) -> int:
    return nm.bit_length() | 64 if nm else 0


# Orange and Yellow take the best of four table lookups.  Comparing them one by one
# is about a quarter faster than a call to the builtin max() with four arguments.


def _key_orange(nm: int, cm: int) -> int:
    best = _O0[nm & _PAIR]
    k = _O1[nm >> 14 & _PAIR]
    if k > best:
        best = k
    k = _O2[nm >> 28 & _PAIR]
    if k > best:
        best = k
    k = _O3[nm >> 42]
    return k if k > best else best


def _key_yellow(nm: int, cm: int) -> int:
    best = _Y0[cm & _PAIR]
    k = _Y1[cm >> 14 & _PAIR]
    if k > best:
        best = k
    k = _Y2[cm >> 28 & _PAIR]
    if k > best:
        best = k
    k = _Y3[cm >> 42]
    return k if k > best else best


def _key_green(nm: int, cm: int) -> int:
    x = nm & EVEN_MASK
    return x.bit_count() << 6 | x.bit_length()


def _key_blue(nm: int, cm: int) -> int:
    x = nm | nm >> 28
    x |= x >> 14
    x |= x >> 7
    return (x & _CHUNK).bit_count() << 6 | nm.bit_length()


def _key_indigo(nm: int, cm: int) -> int:
    x = cm | cm >> 28
    x |= x >> 14
    x |= x >> 7
    x &= _CHUNK
    return _RUN_LEN[x] | (nm & _RUN_CUT[x]).bit_length()


def _key_violet(nm: int, cm: int) -> int:
    x = nm & LOW_MASK
    return x.bit_count() << 6 | x.bit_length()


KEY_FUNCTIONS: tuple[Callable[[int, int], int], ...] = (
    _key_red,
    _key_orange,
    _key_yellow,
    _key_green,
    _key_blue,
    _key_indigo,
    _key_violet,
)


def palette_key(rule: int, nm: int, cm: int) -> int:
    """Key of one palette (number-major and colour-major masks) under a rule."""
    return KEY_FUNCTIONS[rule](nm, cm)


def all_keys(nm: int, cm: int) -> tuple[int, int, int, int, int, int, int]:
    """Keys of one palette under all seven rules, Red first."""
    x = nm | nm >> 28
    x |= x >> 14
    x |= x >> 7
    y = cm | cm >> 28
    y |= y >> 14
    y |= y >> 7
    y &= _CHUNK
    top = nm.bit_length()
    even = nm & EVEN_MASK
    low = nm & LOW_MASK
    # Orange and Yellow inline (see _key_orange): the best of four lookups each.
    orange = _O0[nm & _PAIR]
    k = _O1[nm >> 14 & _PAIR]
    if k > orange:
        orange = k
    k = _O2[nm >> 28 & _PAIR]
    if k > orange:
        orange = k
    k = _O3[nm >> 42]
    if k > orange:
        orange = k
    yellow = _Y0[cm & _PAIR]
    k = _Y1[cm >> 14 & _PAIR]
    if k > yellow:
        yellow = k
    k = _Y2[cm >> 28 & _PAIR]
    if k > yellow:
        yellow = k
    k = _Y3[cm >> 42]
    if k > yellow:
        yellow = k
    return (
        top | 64 if nm else 0,
        orange,
        yellow,
        even.bit_count() << 6 | even.bit_length(),
        (x & _CHUNK).bit_count() << 6 | top,
        _RUN_LEN[y] | (nm & _RUN_CUT[y]).bit_length(),
        low.bit_count() << 6 | low.bit_length(),
    )


_NO_KEYS = (0, 0, 0, 0, 0, 0, 0)


@lru_cache(maxsize=1 << 16)
def palette_keys(nm: int) -> tuple[int, int, int, int, int, int, int]:
    """:func:`all_keys` of a palette given by its number-major mask, memoised.

    Palettes are public and change by one card a turn, so searches and bots ask for
    the same few again and again; the cache turns those calls into one lookup.
    """
    return all_keys(nm, color_mask_of(nm))


def rival_keys(palettes: Sequence[int], alive: Sequence[bool], seat: int) -> tuple[int, ...]:
    """Per rule, the best key among the palettes of the other seats still in the round.

    What ``seat`` must beat under each rule to lead (0 where nobody else has a card).
    """
    keys = [palette_keys(nm) for s, nm in enumerate(palettes) if s != seat and alive[s]]
    if len(keys) == 1:  # two players, or one rival left: the common case on the hot path
        return keys[0]
    return tuple(map(max, *keys)) if keys else _NO_KEYS


def key_count(key: int) -> int:
    """How many cards qualify, from a key."""
    return key >> 6


def key_top(key: int) -> Card | None:
    """The strongest qualifying card, from a key."""
    return ALL_CARDS[(key & 63) - 1] if key else None


def leader_of_masks(rule: int, nms: Sequence[int], cms: Sequence[int]) -> int | None:
    """Index of the leading palette among mask pairs, or None if nothing qualifies."""
    key = KEY_FUNCTIONS[rule]
    best = 0
    who = None
    for i, nm in enumerate(nms):
        k = key(nm, cms[i])
        if k > best:
            best = k
            who = i
    return who


def rule_of(rule: Color | str | int) -> Color:
    """Accept a Color, a colour letter or English name, or a rule index."""
    if isinstance(rule, int):
        return Color(rule)
    return Color.parse(rule)


def leader(rule: Color | str, palettes: Sequence[Iterable[Card | str]]) -> int | None:
    """Index of the palette that leads under ``rule``, or None if no palette qualifies.

    ``rule`` is a :class:`Color` or its English name (``"indigo"``); ``palettes`` is a
    sequence of sequences of cards (or card notation).
    """
    key = KEY_FUNCTIONS[rule_of(rule)]
    best = 0
    who = None
    for i, palette in enumerate(palettes):
        # both masks in one pass over the cards; cards are parsed only if not Cards yet
        nm = cm = 0
        for card in palette:
            if type(card) is not Card:
                card = Card.parse(card)
            nm |= 1 << card
            cm |= _COLOR_BITS[card]
        k = key(nm, cm)
        if k > best:
            best = k
            who = i
    return who


def match_winners(totals: Sequence[int], round_wins: Sequence[int]) -> tuple[int, ...]:
    """Who wins an Advanced game with these scores: the highest score, then most rounds won.

    RULES.md, Winning (**Decision**): a tie on points goes to the tied player with more
    rounds won; if still tied, the win is shared (several seats).
    """
    best = max(totals)
    tied = [s for s, total in enumerate(totals) if total == best]
    most = max(round_wins[s] for s in tied)
    return tuple(s for s in tied if round_wins[s] == most)


def qualifying_mask(rule: int, nm: int) -> int:
    """Mask of the cards of a palette that qualify (and score) under a rule."""
    if not nm:
        return 0
    if rule == Color.RED:
        return 1 << (nm.bit_length() - 1)
    if rule == Color.GREEN:
        return nm & EVEN_MASK
    if rule == Color.VIOLET:
        return nm & LOW_MASK
    if rule == Color.ORANGE:
        key = _key_orange(nm, 0)
        if not key:
            return 0
        number_chunk = ((key & 63) - 1) // 7
        return nm & (_CHUNK << 7 * number_chunk)
    if rule == Color.YELLOW:
        key = _key_yellow(nm, color_mask_of(nm))
        if not key:
            return 0
        color_slot = ((key & 63) - 1) % 7
        return nm & _color_slot_mask(color_slot)
    if rule == Color.BLUE:
        out = 0
        for slot in range(7):
            top = (nm & _color_slot_mask(slot)).bit_length()
            if top:
                out |= 1 << (top - 1)
        return out
    if rule == Color.INDIGO:
        numbers = _fold(color_mask_of(nm))
        length, top_number = _best_run(numbers)
        out = 0
        for n in range(top_number - length + 1, top_number + 1):
            best = (nm & (_CHUNK << 7 * (n - 1))).bit_length()
            out |= 1 << (best - 1)
        return out
    raise ValueError(f"unknown rule {rule!r}")


def _color_slot_mask(slot: int) -> int:
    """Number-major mask of every card whose id is ``slot`` modulo 7 (one colour)."""
    return _SLOT_MASKS[slot]


_SLOT_MASKS = tuple(mask_of(range(slot, 49, 7)) for slot in range(7))


def scoring_cards(rule: Color | str, palette: Iterable[Card | str]) -> tuple[Card, ...]:
    """The cards a round winner takes from ``palette`` under ``rule``, weakest first.

    These are exactly the palette's qualifying cards: the single highest card under
    Red, the highest card of each colour under Blue, the counted group or run under
    Orange, Yellow and Indigo, every even card under Green, every card below 4 under
    Violet.
    """
    nm = mask_of(Card.parse(c) for c in palette)
    return cards_of_mask(qualifying_mask(rule_of(rule), nm))
