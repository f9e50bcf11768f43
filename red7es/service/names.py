"""Seat names: the one rule for what may name a seat, and how a name is printed safely.

A seat name is 1-40 characters with no whitespace and nothing a terminal would act on
instead of showing it: control characters (Unicode category Cc: ESC starts the
sequences that recolour text, move the cursor or retitle the window), format characters
(Cf: bidirectional overrides that reorder what follows, zero-width characters) and the
line and paragraph separators (Zl, Zp). Every name reaches the terminal of every player
of the game (``red7 games``, ``show``, ``watch``, ``play``), so ``red7`` refuses such
names where it takes them (``new``, ``play``, ``tournament create``, through
:func:`name_problem`); a game created by another client may hold one all the same, so
whatever prints a name prints it through :func:`shown`, which writes those characters
as escapes (``\\x1b``, ``\\u202e``).
"""

from __future__ import annotations

import unicodedata

__all__ = ["MAX_NAME", "escaped", "name_problem", "shape_problem", "shown", "unshowable"]

MAX_NAME = 40
_UNSHOWABLE = frozenset({"Cc", "Cf", "Zl", "Zp"})


# Format characters that shape what is shown rather than hide or reorder it: the zero-width
# joiner (inside emoji such as 👩‍💻) and non-joiner (Persian, the Indic scripts).
_SHAPING = frozenset({"\u200c", "\u200d"})


def unshowable(ch: str) -> bool:
    """Whether a terminal would act on character ``ch`` rather than show it (Cc, Cf, Zl, Zp,
    but for the joiners that only shape the characters around them)."""
    return unicodedata.category(ch) in _UNSHOWABLE and ch not in _SHAPING


def name_problem(name: str) -> str | None:
    """What is wrong with ``name`` as a seat name (to follow the name in a message), or None."""
    problem = shape_problem(name)
    if problem is None and any(unshowable(ch) for ch in name):
        return "must not hold control or format characters (Unicode Cc, Cf, Zl, Zp)"
    return problem


def shape_problem(name: str) -> str | None:
    """The older rule, length and spaces only: what games created before :func:`name_problem`
    were held to, so their create commands still re-execute in an audit."""
    if not name or len(name) > MAX_NAME or any(ch.isspace() for ch in name):
        return f"must be 1-{MAX_NAME} characters without spaces"
    return None


def escaped(ch: str) -> str:
    """``ch`` as a Python escape: ``\\x1b``, ``\\u202e``, ``\\U000e0001``."""
    return ch.encode("unicode_escape").decode("ascii")


def shown(text: str) -> str:
    """``text`` to print: each character a terminal would act on written as its escape."""
    if text.isprintable():  # the usual case; not printable covers every unshowable character
        return text
    return "".join(escaped(ch) if unshowable(ch) else ch for ch in text)
