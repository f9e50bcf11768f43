"""Wording shared by the lines people read: counted nouns ("1 game", "2 games"), a noun
with its article ("an int"), and the one line for a file that could not be written."""

from __future__ import annotations

import os

__all__ = ["cannot_write", "counted", "with_article"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, singular for exactly one (``plural`` when adding an s is wrong)."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


def with_article(noun: str) -> str:
    """``noun`` with its indefinite article, by its first letter: ``an int``, ``a str``."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def cannot_write(path: str | os.PathLike[str], exc: OSError) -> str:
    """``cannot write PATH: reason``: the file as the user named it (not a temporary file
    beside it) and the system's reason without Python's ``[Errno N]`` and repr quoting."""
    return f"cannot write {path}: {exc.strerror or exc}"
