"""cli/clocked_input.py on a pseudo-terminal made here: the line as edited, the warning said
once above the prompt, end of input, and the terminal's modes given back."""

from __future__ import annotations

import io
import os
import termios
import time
import tty
from collections.abc import Iterator

import pytest

from red7es.cli.clocked_input import ClockedInput

FAR = 3_600_000  # an hour: no warning
PAST = -1_000  # time already up: the warning at once


@pytest.fixture
def terminal() -> Iterator[tuple[int, int]]:
    """(the side the player types into, the side play reads)."""
    typing, reading = os.openpty()
    yield typing, reading
    os.close(typing)
    os.close(reading)


def read(
    terminal: tuple[int, int], typed: bytes, left: int = FAR, width: int = 80, raw: bool = True
) -> tuple[str | None, str, int]:
    """What the reader returns for ``typed`` (all there before it starts), what it wrote, its
    rows. Typed ahead in cbreak mode (``raw``), as the reader itself sets it: else the
    terminal's own line editing would take the editing keys before the reader sees them."""
    typing, reading = terminal
    if raw:
        tty.setcbreak(reading, termios.TCSANOW)
    os.write(typing, typed)
    out = io.StringIO()
    reader = ClockedInput(
        out,
        width,
        int(time.time() * 1000) + left,
        lambda ms: f"Your turn ({'up' if ms <= 0 else 'some time'} left) > ",
        lambda ms: "Hurry: little left.",
        lambda text: f"<{text}>",
        reading,
    )
    return reader.read(), out.getvalue(), reader.rows


@pytest.mark.parametrize(
    ("typed", "line"),
    [
        (b"fold\r", "fold"),
        (b"p:R7 c:B3\n", "p:R7 c:B3"),
        (b"p:R8\x7fx\x087\r", "p:R7"),  # Backspace (DEL and BS)
        (b"junk\x15fold\r", "fold"),  # Ctrl-U: the whole line
        (b"p:R7 c:B3\x17c:G2\r", "p:R7 c:G2"),  # Ctrl-W: the last word
        (b"fold\x17\x17\r", ""),
        (b"fo\x1b[Dld\x1bOA\x1b[1;5C\r", "fold"),  # cursor keys: ignored
        ("p:R7 \N{GREEK SMALL LETTER ALPHA}\x7f\r".encode(), "p:R7 "),  # UTF-8, one character erased
        (b"fold\x04\r", "fold"),  # Ctrl-D within a line: nothing
    ],
)
def test_the_line_as_edited(terminal: tuple[int, int], typed: bytes, line: str) -> None:
    got, shown, _rows = read(terminal, typed)
    assert got == line
    assert shown.endswith(f"Your turn (some time left) > {line}\n")  # on the screen as sent
    assert "Hurry" not in shown


def test_ctrl_d_on_an_empty_line_is_the_end_of_input(terminal: tuple[int, int]) -> None:
    assert read(terminal, b"\x04")[0] is None
    assert read(terminal, b"x\x7f\x04")[0] is None


def test_the_warning_once_above_the_prompt_and_the_terminal_given_back(terminal: tuple[int, int]) -> None:
    before = termios.tcgetattr(terminal[1])
    got, shown, rows = read(terminal, b"fold\r", left=PAST, raw=False)
    assert got == "fold"
    assert shown.count("Hurry") == 1
    assert shown.index("<Hurry: little left.>\n") < shown.index("Your turn (up left) > fold")
    assert rows == 2  # the warning and the prompt's line, for the menu to erase
    assert termios.tcgetattr(terminal[1]) == before  # echo and line editing back as they were


def test_a_line_wider_than_the_terminal_is_redrawn_from_its_first_row(terminal: tuple[int, int]) -> None:
    got, shown, rows = read(terminal, b"p:R7 c:B3 x\r", width=20)
    assert got == "p:R7 c:B3 x"
    prompt = "Your turn (some time left) > "
    assert rows == -(-(len(prompt) + len(got)) // 20)
    assert "\x1b[1A\r\x1b[J" in shown  # back up the rows it wrapped onto before drawing it again
