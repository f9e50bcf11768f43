"""Seeds, their commitment, and the deck order of every round.

The deck order of a round is a fixed, documented function of (seed, round number),
independent of the Python version, so anyone holding the revealed seed can re-derive
every deal (docs/events.md, "Deals"; docs/records.md):

* a byte stream ``SHA-256(b"red7es/deal/v1" || seed || round as 4 bytes big-endian ||
  counter as 4 bytes big-endian)`` for counter = 0, 1, 2, ... concatenated;
* ``below(n)`` reads the next 4 bytes as a big-endian unsigned integer ``x`` and
  returns ``x % n`` unless ``x >= 2**32 - 2**32 % n``, in which case it reads again
  (rejection sampling, so every result is equally likely);
* the cards still in the game, sorted by id (``V1`` = 0 ... ``R7`` = 48), are shuffled
  with Fisher-Yates: for ``i`` from ``len - 1`` down to 1, swap ``a[i]`` and
  ``a[below(i + 1)]``.  ``a[0]`` is the first card dealt.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence

__all__ = ["SeedError", "commitment", "deck_order", "make_seed"]

_DOMAIN = b"red7es/deal/v1"


class SeedError(ValueError):
    """Raised for a seed that cannot be used."""


def make_seed(value: bytes | str | None = None) -> bytes:
    """The game's secret seed.

    ``None`` draws 32 bytes from the operating system.  ``bytes`` are used as given.
    A string of 64 hex digits is those 32 bytes; any other string is hashed with
    SHA-256, so ``--seed demo`` gives the same games everywhere.
    """
    if value is None:
        return os.urandom(32)
    if isinstance(value, bytes):
        if not value:
            raise SeedError("a seed must not be empty")
        return value
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise SeedError("a seed must not be empty")
        if len(text) == 64:
            try:
                return bytes.fromhex(text)
            except ValueError:
                pass
        return hashlib.sha256(text.encode()).digest()
    raise SeedError(f"a seed is bytes or text, not {type(value).__name__}")


def commitment(seed: bytes) -> str:
    """SHA-256 of the seed in hex: published at creation, checked when the seed is revealed."""
    return hashlib.sha256(seed).hexdigest()


def _stream(seed: bytes, round_number: int) -> Iterator[int]:
    prefix = _DOMAIN + seed + round_number.to_bytes(4, "big")
    counter = 0
    while True:
        block = hashlib.sha256(prefix + counter.to_bytes(4, "big")).digest()
        for i in range(0, 32, 4):
            yield int.from_bytes(block[i : i + 4], "big")
        counter += 1


def deck_order(cards: Sequence[int], seed: bytes, round_number: int) -> list[int]:
    """The shuffled order (first dealt first) of ``cards`` for this round."""
    order = sorted(cards)
    words = _stream(seed, round_number)
    for i in range(len(order) - 1, 0, -1):
        n = i + 1
        limit = (1 << 32) - (1 << 32) % n
        x = next(words)
        while x >= limit:
            x = next(words)
        j = x % n
        order[i], order[j] = order[j], order[i]
    return order
