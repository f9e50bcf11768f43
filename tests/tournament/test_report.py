"""The HTML report: self-contained, and rendered by a real headless browser.

The browser test needs Debian's Chromium (``apt-get install -y chromium``); it is
skipped, saying so, where it is not installed.
"""

from __future__ import annotations

import dataclasses
import html
import re
import struct
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
from support import CHROMIUM

from red7es.service.events import BOT, SeatSpec
from red7es.tournament import TournamentRunner, create_tournament, load, standings
from red7es.tournament.rating import Rating, rating_history
from red7es.tournament.report import nice_ticks, render_report
from red7es.tournament.standings import Standing
from red7es.variant import Variant

from .conftest import Inline, bots

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
    # Laid out by the browser, the chart is as wide as the tables (it was 760px beside 968px).
    measured = tmp_path / "measured.html"
    measure = (
        "<script>document.body.dataset.widths = ['rating-chart', 'standings', 'games']"
        ".map(id => Math.round(document.getElementById(id).getBoundingClientRect().width)).join(',');</script>"
    )
    measured.write_text(path.read_text().replace("</body>", measure + "</body>"), encoding="utf-8")
    laid_out = subprocess.run(
        [*common, "--window-size=1200,900", "--dump-dom", measured.as_uri()],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    widths = re.search(r'data-widths="(\d+),(\d+),(\d+)"', laid_out)
    assert widths is not None, laid_out[-500:]
    assert len(set(widths.groups())) == 1, widths.groups()
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


def test_report_reads_as_a_table_of_people(inline: Inline, tmp_path: Path) -> None:
    """The Player column read "bot greedy", the subtitle "tables of 2 · 2 players", head-to-head
    0.00 where nobody was tied, and the chart's axis 16.6, 19.9, 23.2 with no label."""
    path, names = report_page(inline, tmp_path)
    page = path.read_text()
    header = re.search(r'<table id="standings"><thead><tr>(.*?)</tr>', page)
    assert header is not None
    assert re.findall(r"<th[^>]*>([^<]*)</th>", header.group(1))[:3] == ["#", "Player", "Kind"]
    rows = re.findall(r'<tr><td>\d+</td><td class="l">([^<]+)</td><td class="l">([^<]+)</td>', page)
    assert sorted(html.unescape(name) for name, _ in rows) == sorted(names)
    assert {kind for _, kind in rows} <= {"greedy bot", "random bot", "person"}
    assert "5 entrants · 2-player tables · basic · 3 rounds" in page and "tables of" not in page
    assert 'id="y-label"' in page and "rating (μ)" in page
    labels = re.findall(r'<text class="tick"[^>]*>([^<]+)</text>', page)
    assert 3 <= len(labels) <= 7 and all(re.fullmatch(r"\d+(\.\d)?", label) for label in labels), labels


def test_nice_ticks_are_round() -> None:
    assert nice_ticks(16.6, 23.2) == [16, 18, 20, 22, 24]
    assert nice_ticks(24.5, 25.5) == [24.4, 24.6, 24.8, 25.0, 25.2, 25.4, 25.6]
    assert nice_ticks(25, 25) == [24, 24.5, 25, 25.5, 26]


def test_head_to_head_without_games_is_a_dash_not_a_zero() -> None:
    rating = Rating(25.0, 8.0)
    alone = Standing(1, 0, "ann", "bot", "greedy", 2, 2, Fraction(2), 2, 0, None, Fraction(0), rating)
    lost = dataclasses.replace(alone, head_to_head_games=1)
    assert alone.figures(swiss=False)[6] == "—"
    assert lost.figures(swiss=False)[6] == "0.00"
