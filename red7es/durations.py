"""Durations as people write them: ``300ms``, ``30s``, ``5m``, ``2h``, ``2d`` (and ``5m+5s`` clocks).

Time controls (:class:`~red7es.variant.Variant` ``clock`` and ``turn_time``) are whole
milliseconds; this module reads and writes them in the units a player types, so the
CLI, the views and the docs all say ``5m+5s`` the same way.
"""

from __future__ import annotations

import re

__all__ = ["DurationError", "format_clock", "format_duration", "parse_clock", "parse_duration"]

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_PART = re.compile(r"(\d+)(ms|s|m|h|d)")
# The longest time control: 30 days (longer than any correspondence game waits on a turn).
LONGEST_MS = 30 * 86_400_000


class DurationError(ValueError):
    """Text that is not a duration; the message says what one looks like."""


def parse_duration(text: str, *, zero: bool = False) -> int:
    """Milliseconds of ``30s``, ``5m``, ``1h30m``, ``300ms``, ``2d``; at most 30 days.

    ``zero`` allows ``0s`` (an increment may be nothing; a clock or a turn may not).
    """
    raw = text.strip().lower()
    pos, total = 0, 0
    for m in _PART.finditer(raw):
        if m.start() != pos:
            break
        total += int(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not raw or pos != len(raw):
        raise DurationError(f"not a duration: {text!r} (say e.g. 300ms, 30s, 5m, 2h or 2d)")
    if total == 0 and not zero:
        raise DurationError(f"a duration must be more than nothing, not {text!r}")
    if total > LONGEST_MS:
        raise DurationError(f"{text!r} is longer than 30 days, the longest time control")
    return total


def parse_clock(text: str) -> tuple[int, int]:
    """A game clock ``BASE+INCREMENT`` (``5m+5s``; ``5m`` alone has no increment), in ms."""
    base, plus, increment = text.partition("+")
    return parse_duration(base), parse_duration(increment, zero=True) if plus else 0


def format_duration(ms: int) -> str:
    """The shortest exact spelling: ``300ms``, ``30s``, ``5m``, ``1h30m``, ``2d``; ``0s`` for nothing."""
    if ms <= 0:
        return "0s"
    parts = []
    for unit in ("d", "h", "m", "s", "ms"):
        size = _UNITS[unit]
        if ms >= size:
            parts.append(f"{ms // size}{unit}")
            ms %= size
    return "".join(parts)


def format_clock(clock: tuple[int, int]) -> str:
    """``5m+5s``, or ``5m`` without increment."""
    base, increment = clock
    return format_duration(base) + (f"+{format_duration(increment)}" if increment else "")
