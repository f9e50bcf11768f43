"""The player's line, read on a terminal while their clock runs (``red7 play``, issue #18).

``input()`` blocks: nothing can be said while it waits, and anything printed then lands in
the middle of what the player is typing.  Here the terminal is put in cbreak mode (no echo,
no line editing by the terminal; Ctrl-C still interrupts) and the line is kept and echoed
by this reader, so the prompt can be redrawn in place as the time left changes (a live
countdown), and the 10-second warning printed once *above* it, the prompt and what was
typed redrawn under it.  Editing is the basic kind: Backspace, Ctrl-U (the whole line),
Ctrl-W (a word), Enter; Ctrl-D on an empty line is end of input.  Cursor keys are ignored.
The time shown is this machine's clock against the referee's deadline (Redis's time):
shown only, the referee never reads it.
"""

from __future__ import annotations

import codecs
import os
import select
import termios
import time
import tty
from collections.abc import Callable
from typing import IO

from rich.cells import cell_len

__all__ = ["WARN_MS", "ClockedInput"]

WARN_MS = 10_000  # the warning, once, when this much time or less is left
POLL = 0.25  # seconds between redraws of the countdown while nothing is typed

ERASE_WORD = "\x17"
ERASE_LINE = "\x15"
END_OF_INPUT = "\x04"
BACKSPACES = ("\x7f", "\x08")


class ClockedInput:
    """One line from the terminal on ``fd``, its prompt counting down to ``deadline`` (ms).

    ``prompt(left_ms)`` is the prompt for that time left; ``warning(left_ms)`` the line
    printed once when ``left_ms <= WARN_MS`` (plain text, shown through ``paint``).
    :meth:`read` returns the line (None at end of input); :attr:`rows` is then the terminal
    rows it wrote (warning included), for the menu that erases what it drew.
    """

    def __init__(
        self,
        out: IO[str],
        width: int,
        deadline: int,
        prompt: Callable[[int], str],
        warning: Callable[[int], str],
        paint: Callable[[str], str] = str,
        fd: int = 0,
    ) -> None:
        self.out = out
        self.width = max(width, 1)
        self.deadline = deadline
        self.prompt = prompt
        self.warning = warning
        self.paint = paint  # the warning's colours (plain text is measured, painted text shown)
        self.fd = fd
        self.buffer = ""
        self.shown = ""  # the prompt and the line as they are on the screen now
        self.warned = False
        self.rows = 0

    def _left(self) -> int:
        return self.deadline - int(time.time() * 1000)

    def _lines(self, text: str) -> int:
        """Rows ``text`` takes on the terminal (it wraps long lines)."""
        return max(1, -(-cell_len(text) // self.width))

    def _redraw(self, text: str) -> None:
        """Put ``text`` in place of the prompt line (all its wrapped rows) on the screen."""
        above = (cell_len(self.shown) - 1) // self.width if self.shown else 0
        self.out.write((f"\x1b[{above}A" if above else "") + "\r\x1b[J" + text)
        self.out.flush()
        self.shown = text

    def _tick(self) -> None:
        """The countdown: the warning once (above the prompt), else the prompt if its time changed."""
        left = self._left()
        if not self.warned and left <= WARN_MS:
            self.warned = True
            warning = self.warning(left)
            self._redraw(self.paint(warning) + "\n")
            self.rows += self._lines(warning)
            self.shown = ""
            self._redraw(self.prompt(left) + self.buffer)
            return
        line = self.prompt(left) + self.buffer
        if line != self.shown:
            self._redraw(line)

    def read(self) -> str | None:
        saved = termios.tcgetattr(self.fd)
        try:
            tty.setcbreak(self.fd, termios.TCSANOW)
            return self._read()
        finally:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, saved)

    def _read(self) -> str | None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        escape = ""  # an escape sequence (a cursor key) being skipped
        self._tick()
        while True:
            ready, _, _ = select.select([self.fd], [], [], POLL)
            if not ready:
                self._tick()
                continue
            data = os.read(self.fd, 1024)
            if not data:
                return self._done(None)
            for ch in decoder.decode(data):
                if escape:
                    escape = "" if (len(escape) > 1 or ch not in "[O") and "@" <= ch <= "~" else escape + ch
                    continue
                if ch in "\r\n":
                    self._redraw(self.prompt(self._left()) + self.buffer)  # the line as sent, on the screen
                    return self._done(self.buffer)
                if ch == END_OF_INPUT and not self.buffer:
                    return self._done(None)
                if ch == "\x1b":
                    escape = ch
                elif ch in BACKSPACES:
                    self.buffer = self.buffer[:-1]
                elif ch == ERASE_LINE:
                    self.buffer = ""
                elif ch == ERASE_WORD:
                    kept = self.buffer.rstrip()
                    self.buffer = kept[: kept.rfind(" ") + 1]
                elif ch >= " ":
                    self.buffer += ch
            self._redraw(self.prompt(self._left()) + self.buffer)

    def _done(self, line: str | None) -> str | None:
        self.out.write("\n")
        self.out.flush()
        self.rows += self._lines(self.shown)
        return line
