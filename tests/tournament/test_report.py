"""The HTML report: self-contained, and rendered by a real headless browser.

The browser test needs Debian's Chromium (``apt-get install -y chromium``); it is
skipped, saying so, where it is not installed.
"""

from __future__ import annotations

import html
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from red7es.service.events import BOT, SeatSpec
from red7es.tournament import TournamentRunner, create_tournament, load, standings
from red7es.tournament.rating import rating_history
from red7es.tournament.report import render_report
from red7es.variant import Variant

from .conftest import Inline, bots

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def report_page(env: Inline, tmp_path: Path, fmt: str = "swiss") -> tuple[Path, list[str]]:
    entrants = [*bots(4), SeatSpec("z<i>&", BOT, "greedy")]  # names are escaped, not markup
    create_tournament(env.connection, "cup", entrants, Variant(2), fmt, seed="page", rounds=3, name="Cup & <Co>")
    TournamentRunner(env.service, "cup", driver=env.drive).run()
    state = load(env.connection, "cup")
    rounds = [state.rounds[r] for r in sorted(state.rounds)]
    page = render_report(
        state.spec,
        standings(state.spec, rounds, state.results),
        rating_history(state.spec, rounds, state.results),
        rounds,
        state.results,
        finished=state.finished is not None,
    )
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    return path, [e.name for e in state.spec.entrants]


def test_report_is_self_contained(inline: Inline, tmp_path: Path) -> None:
    path, names = report_page(inline, tmp_path)
    page = path.read_text()
    assert "Cup &amp; &lt;Co&gt;" in page and "<Co>" not in page  # text is escaped
    assert "z&lt;i&gt;&amp;" in page and "<i>" not in page
    for external in ("<script", "<link", "src=", "@import", "url(", "https://"):
        assert external not in page
    assert re.findall(r"http://[^\"]+", page) == ["http://www.w3.org/2000/svg"]  # a namespace, never fetched
    assert page.count('class="entrant"') == len(names)
    assert page.count("red7 replay t-cup-r") == 6  # 3 rounds of 2 tables (5 entrants: a bye each round)
    assert page.count("bye: ") == 3


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)")
def test_report_renders_in_a_headless_browser(inline: Inline, tmp_path: Path) -> None:
    path, names = report_page(inline, tmp_path)
    assert CHROMIUM is not None
    common = [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(
        [*common, "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    # What the browser built from the page, not the file: the parsed tables and the SVG.
    assert '<table id="standings">' in dom
    rows = re.findall(r"<tr><td>(\d+)</td><td class=\"l\">([^<]+)</td>", dom)
    assert sorted(html.unescape(name) for _rank, name in rows) == sorted(names)
    assert '<svg id="rating-chart"' in dom and dom.count("<polyline") == len(names)
    assert dom.count("red7 replay t-cup-r") == 6
    shot = tmp_path / "shot.png"
    subprocess.run(
        [*common, f"--screenshot={shot}", "--window-size=1000,1200", path.as_uri()],
        capture_output=True,
        timeout=60,
        check=True,
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1000, 1200) and len(data) > 20_000  # a page with content, not a blank one
