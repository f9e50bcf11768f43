"""Wording shared by the lines people read: counted nouns ("1 game", "2 games") and the
one line for a file that could not be written."""

from __future__ import annotations

import os

__all__ = ["cannot_write", "counted"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, singular for exactly one (``plural`` when adding an s is wrong)."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


def cannot_write(path: str | os.PathLike[str], exc: OSError) -> str:
    """``cannot write PATH: reason``: the file as the user named it (not a temporary file
    beside it) and the system's reason without Python's ``[Errno N]`` and repr quoting."""
    return f"cannot write {path}: {exc.strerror or exc}"
