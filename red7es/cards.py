"""Cards, colours and the bit layouts the rules kernel works on.

A card is an ``int`` from 0 to 48 ordered by strength, so comparing two cards is
comparing two integers and the strongest card of a set of cards is the highest set
bit of its bitmask::

    id = (number - 1) * 7 + (6 - colour_rank)      # colour_rank: Red 0 ... Violet 6

so ``V1`` is 0, ``R1`` is 6, ``V2`` is 7 and ``R7`` is 48.  :class:`Card` subclasses
``int`` (python-chess style value type): the engine stores plain ints and hands out
the 49 cached :class:`Card` instances, which print as ``R7`` and parse from ``"r7"``.

Two bitmask layouts of a set of cards are used by the rules kernel:

* the *number-major* mask sets bit ``id``: each number's seven cards are one 7-bit
  chunk (bits ``7*(n-1)`` to ``7*(n-1)+6``);
* the *colour-major* mask sets bit ``7*(6 - colour_rank) + (number - 1)``: each
  colour's seven cards are one 7-bit chunk, weakest colour (Violet) lowest.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

__all__ = [
    "ALL_CARDS",
    "FULL_DECK_MASK",
    "Card",
    "CardError",
    "Color",
    "bits",
    "card_bit",
    "cards_of_mask",
    "color_bit",
    "color_mask_of",
    "mask_of",
    "parse_cards",
]


class CardError(ValueError):
    """Raised for text that is not a card, a colour or a list of cards."""


class Color(IntEnum):
    """The seven colours, strongest first; each colour is also a Canvas rule."""

    RED = 0
    ORANGE = 1
    YELLOW = 2
    GREEN = 3
    BLUE = 4
    INDIGO = 5
    VIOLET = 6

    @property
    def letter(self) -> str:
        """The one-letter code used in card notation (``R`` for Red)."""
        return "ROYGBIV"[self.value]

    @property
    def rule_text(self) -> str:
        """The Canvas rule of this colour, in words."""
        return _RULE_TEXT[self.value]

    @property
    def title(self) -> str:
        """The colour's English name, capitalised (``Indigo``)."""
        return self.name.capitalize()

    @classmethod
    def parse(cls, text: str | Color) -> Color:
        """Accept a colour, its letter (``"I"``) or its English name (``"indigo"``)."""
        if isinstance(text, Color):
            return text
        if not isinstance(text, str):
            raise CardError(f"not a colour: {text!r}")
        word = text.strip().upper()
        if len(word) == 1 and word in "ROYGBIV":
            return cls("ROYGBIV".index(word))
        try:
            return cls[word]
        except KeyError:
            raise CardError(
                f"unknown colour {text!r}: use one of red, orange, yellow, green, blue, indigo, violet"
            ) from None


_RULE_TEXT = (
    "highest card",
    "most cards of one number",
    "most cards of one colour",
    "most even cards",
    "most different colours",
    "most cards in a run",
    "most cards below 4",
)


class Card(int):
    """One of the 49 cards; an ``int`` whose order is the cards' strength."""

    __slots__ = ()

    def __new__(cls, value: int) -> Card:
        if type(value) is cls:
            return value  # type: ignore[return-value]
        if not 0 <= value < 49:
            raise CardError(f"card id out of range: {value!r}")
        return ALL_CARDS[value]

    @classmethod
    def _make(cls, value: int) -> Card:
        return int.__new__(cls, value)

    @classmethod
    def of(cls, color: Color | str, number: int) -> Card:
        """The card of this colour and number (``Card.of("red", 7)`` is ``R7``)."""
        if not 1 <= number <= 7:
            raise CardError(f"card number must be 1 to 7, not {number!r}")
        return ALL_CARDS[(number - 1) * 7 + 6 - Color.parse(color)]

    @classmethod
    def parse(cls, text: str | Card) -> Card:
        """Parse card notation: colour letter then number, any case (``"r7"``)."""
        if isinstance(text, Card):
            return text
        if not isinstance(text, str):
            raise CardError(f"not a card: {text!r}")
        token = text.strip().upper()
        if len(token) == 2 and token[0] in "ROYGBIV" and token[1] in "1234567":
            return ALL_CARDS[(int(token[1]) - 1) * 7 + 6 - "ROYGBIV".index(token[0])]
        raise CardError(f"not a card: {text!r} (a card is a colour letter R O Y G B I V and a number 1-7, e.g. R7)")

    @property
    def number(self) -> int:
        return int(self) // 7 + 1

    @property
    def color(self) -> Color:
        return Color(6 - int(self) % 7)

    @property
    def is_action(self) -> bool:
        """Odd cards (1, 3, 5, 7) carry an action in the ``actions`` variant."""
        return self.number % 2 == 1

    def __str__(self) -> str:
        return _NAMES[self]

    def __repr__(self) -> str:
        return f"Card.parse({_NAMES[self]!r})"

    def __format__(self, spec: str) -> str:
        return format(_NAMES[self], spec)

    def __reduce__(self) -> tuple[type[Card], tuple[int]]:
        return (Card, (int(self),))


_NAMES = tuple("ROYGBIV"[6 - i % 7] + str(i // 7 + 1) for i in range(49))
ALL_CARDS: tuple[Card, ...] = tuple(Card._make(i) for i in range(49))
FULL_DECK_MASK = (1 << 49) - 1


def card_bit(card: int) -> int:
    """The card's bit in the number-major mask."""
    return 1 << card


_COLOR_BITS = tuple(1 << ((i % 7) * 7 + i // 7) for i in range(49))


def color_bit(card: int) -> int:
    """The card's bit in the colour-major mask."""
    return _COLOR_BITS[card]


def mask_of(cards: Iterable[int]) -> int:
    """Number-major mask of a set of cards."""
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def color_mask_of(mask: int) -> int:
    """Colour-major mask of the cards in a number-major mask."""
    result = 0
    while mask:
        low = mask & -mask
        result |= _COLOR_BITS[low.bit_length() - 1]
        mask ^= low
    return result


def bits(mask: int) -> list[int]:
    """The set bits of a mask (card ids of a number-major mask), lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def cards_of_mask(mask: int) -> tuple[Card, ...]:
    """The cards of a number-major mask, weakest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(ALL_CARDS[low.bit_length() - 1])
        mask ^= low
    return tuple(out)


def parse_cards(text: str | Iterable[str | Card]) -> tuple[Card, ...]:
    """Parse ``"R7 B3,g2"`` or an iterable of card texts into cards."""
    if isinstance(text, str):
        items: Iterable[str | Card] = text.replace(",", " ").split()
    else:
        items = text
    return tuple(Card.parse(item) for item in items)
