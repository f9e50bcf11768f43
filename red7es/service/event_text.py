"""Log events in words, one short line each: how the audit and replay name what they found.

An audit failure or an unverified replay quotes the event it stopped at, and where two
events of one type differ, only the first field that does.  The text is the event's
wire data as compact JSON (docs/events.md), so it reads the same as the record itself.
"""

from __future__ import annotations

import json
from typing import Any

from .codec import EVENTS, type_name
from .events import LogEvent

__all__ = ["event_difference", "show_event"]


def show_event(event: LogEvent | None) -> str:
    """An event in one short line: its type and data (``nothing`` for no event)."""
    if event is None:
        return "nothing"
    return f"{type_name(event)} {_json(EVENTS.data_of(event), separators=(',', ':'))}"


def event_difference(expected: LogEvent, found: LogEvent) -> tuple[str, str]:
    """The first field where two events of one type differ, as two short texts."""
    name = type_name(expected)
    path = _first_difference(EVENTS.data_of(expected), EVENTS.data_of(found), "")
    if path is None:
        return show_event(expected), show_event(found)
    where, a, b = path
    return f"{name} {where} = {_json(a)}", f"{name} {where} = {_json(b)}"


def _json(value: Any, **options: Any) -> str:
    """``value`` as JSON; what JSON cannot hold (bytes, msgpack extensions, a map with
    bytes keys in a damaged log's data) as its Python repr, so it is shown, not a TypeError."""
    try:
        return json.dumps(value, default=repr, **options)
    except TypeError:  # a key JSON cannot hold
        return repr(value)


def _first_difference(a: Any, b: Any, path: str) -> tuple[str, Any, Any] | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{path}.{key}" if path else str(key))
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{index}]")
        return None
    return None if a == b else (path, a, b)
