"""The web table in a real headless Chromium (Debian's, driven by Playwright: no browser download).

A spectator's page follows a game between two scripted seats live and its DOM never
holds a hidden card (checked after every DOM change); a person plays a whole game
against a bot by clicking; a gateway killed and restarted mid-game is resumed without
missing a change; a refused turn shows the referee's line; the lobby lists games; the
page's narration is the CLI's, word for word.  Skipped where Chromium is absent
(``.ci/run`` installs it).  ``RED7_WEB_SCREENSHOTS=1`` rewrites docs/images/*.png.
"""

from __future__ import annotations

import json
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from playwright.sync_api import Browser, Page, Route, sync_playwright
from support import CHROMIUM, Red7, wait_for

from red7es.cards import Color
from red7es.cli.render import _why, describe_event, describe_events, outcome_line
from red7es.gateway.auth import SKEW_MS, TIMESTAMP
from red7es.gateway.web import STATIC
from red7es.service.client import GameService
from red7es.service.events import SeatSpec
from red7es.service.redis_server import RedisServer, free_port
from red7es.service.store import Keys
from red7es.service.tokens import new_token, public_key
from red7es.tournament import SWISS, RoundPaired, TournamentRunner, create_tournament
from red7es.tournament.standings import two_decimals
from red7es.variant import Variant

from .conftest import Gateway, Seat, join, new_game
from .test_secrecy import SPECTATOR, Sent, check, hidden_at

pytestmark = pytest.mark.integration

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)")
IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
REFRESH_SCREENSHOTS = os.environ.get("RED7_WEB_SCREENSHOTS") == "1"
WAIT_MS = 30_000

# Recorded in the page before its own scripts run: the whole DOM after every batch of
# changes, with the versions it shows (the view's, and the last change narrated).
SNAPSHOTS = """
window.__snapshots = [];
new MutationObserver(() => {
  const t = document.getElementById("table");
  window.__snapshots.push({
    version: t ? t.dataset.version || "" : "",
    to: t ? t.dataset.changedTo || "" : "",
    html: document.documentElement.outerHTML,
  });
}).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    yield from fresh_page(browser)


def fresh_page(browser: Browser) -> Iterator[Page]:
    """A fresh browser profile (its own localStorage) per test; a script error, or a
    console error other than an HTTP status, fails the test."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda exc: problems.append(str(exc)))
    # Errors in the console are HTTP answers the pages expect (a 409 refusal, a 404 for a list
    # this gateway lacks) and nothing else: no script refused by the page's CSP, no failure.
    opened.on(
        "console",
        lambda m: m.type == "error" and not m.text.startswith("Failed to load resource") and problems.append(m.text),
    )
    yield opened
    context.close()
    assert not problems, problems


def shot(page: Page, name: str, tmp_path: Path, docs: bool = True) -> None:
    """A screenshot of the page: checked to be a picture with content; into docs/images/ on request."""
    path = tmp_path / name
    page.screenshot(path=str(path), full_page=True)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    if docs and REFRESH_SCREENSHOTS:
        IMAGES.mkdir(exist_ok=True)
        shutil.copy(path, IMAGES / name)


def shown_version(page: Page) -> int:
    return int(page.get_attribute("#table", "data-version") or -1)


def wait_version(page: Page, version: int) -> None:
    page.wait_for_function(
        "v => Number(document.getElementById('table').dataset.version) >= v", arg=version, timeout=WAIT_MS
    )


def change_ids(service: GameService, game: str) -> list[str]:
    return [i.decode() for i, _fields in service.redis.xrange(Keys(game).changes)]


def narrated(page: Page) -> list[str]:
    """The change ids the page narrated, oldest first (the log shows the newest first)."""
    ids = page.eval_on_selector_all("#log li", "items => items.map(i => i.dataset.change)")
    return list(reversed(ids))


def no_horizontal_scroll(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


# ---------------------------------------------------------------------------- a spectator


@needs_chromium
def test_a_spectator_follows_a_game_live_and_never_sees_a_hidden_card(
    served: Gateway, http: httpx.Client, service: GameService, page: Page, tmp_path: Path
) -> None:
    game = new_game(service, ["ann", "bob"], seed="web-spectator")
    people = [join(http, game, 0), join(http, game, 1)]
    page.add_init_script(SNAPSHOTS)
    page.goto(f"{served.base}/g/{game}")
    rnd = random.Random(22)
    turns = 0
    every: list[str] = []  # every change id, read as the game goes
    while True:
        view = service.view(game)
        every += [i for i in change_ids(service, game) if i not in every]
        wait_version(page, view["version"])  # the page shows each change before the next turn
        if view["status"] == "over":
            break
        mover: Seat = people[view["to_move"]]
        answer = mover.play(rnd.choice(mover.view()["legal"]))
        assert answer.status_code == 200, answer.text
        turns += 1
        if turns == 3:
            shot(page, "spectator.png", tmp_path, docs=False)
    page.wait_for_selector("#end:not([hidden])", timeout=WAIT_MS)
    final = service.view(game)
    assert page.text_content("#seed") == final["seed"]
    assert outcome_line(final) in (page.text_content("#end") or "")
    assert page.get_attribute("#record", "href") == f"/api/games/{game}/record?format=jsonl"
    assert f"red7 audit {game}.jsonl" in (page.text_content("#end") or "")
    # Every change told once, in order; and after every DOM change, no card of a hand or
    # of the deck anywhere in the document (nor the seed before it was revealed).
    assert change_ids(service, game) == every  # (kept for a while after the end: docs/records.md)
    assert narrated(page) == every
    snapshots: list[dict[str, str]] = page.evaluate("window.__snapshots")
    assert len(snapshots) > turns
    hidden, reveal, seed = hidden_at(service, game, 2)
    for snap in snapshots:
        shown = [int(v) for v in (snap["version"], snap["to"]) if v]
        low, high = (min(shown), max(shown)) if shown else (0, 0)
        check([Sent(SPECTATOR, low, high, snap["html"])], hidden, reveal, seed)


# ---------------------------------------------------------------------------- a person


def play_by_clicking(page: Page, on_turn: Any = None) -> int:
    """Click through the page's offers until the game is over: a step, then Send when the
    turn is complete (a step that leaves one way to finish sends itself)."""
    turns = 0
    while True:
        page.wait_for_function(
            "() => ['move', 'over'].includes(document.getElementById('you').dataset.state)", timeout=WAIT_MS
        )
        if page.get_attribute("#you", "data-state") == "over":
            return turns
        if on_turn is not None:
            on_turn(turns)
        page.locator("#chooser button.step").first.click()
        while page.get_attribute("#you", "data-state") == "move":
            if page.is_enabled("#send"):
                page.click("#send")
            else:
                page.locator("#chooser button.step").first.click()
        turns += 1


@needs_chromium
@pytest.mark.parametrize("variant", [Variant(2), Variant(2, draw=True, actions=True)], ids=["basic", "draw+actions"])
def test_a_person_plays_a_whole_game_against_a_bot_by_clicking(
    served: Gateway, http: httpx.Client, service: GameService, page: Page, tmp_path: Path, variant: Variant
) -> None:
    """Every turn made by clicking what the page offers (with the actions and the draw:
    open turns, actions owed, draws); in the basic game, after every change of the DOM,
    no card of the bot's hand or of the deck anywhere in the page."""
    basic = variant == Variant(2)
    game = new_game(service, ["ann"], {"greedy": "greedy"}, variant, seed="web-person")
    page.add_init_script(SNAPSHOTS)
    page.goto(f"{served.base}/g/{game}")
    page.click("button[data-take='0']")
    page.wait_for_selector("#you:not([hidden])", timeout=WAIT_MS)
    token = page.evaluate(f"localStorage.getItem('red7es:token:{game}:0')")
    assert service.view(game)["seats"][0]["key"] == public_key(token)  # joined with the browser's key

    def look(turn: int) -> None:
        hand = service.view(game, 0)["hand"]
        shown = page.eval_on_selector_all("#hand .card", "cards => cards.map(c => c.textContent)")
        assert shown == hand  # letter and number on every card
        if turn == 1 and basic:
            shot(page, "table.png", tmp_path)
            page.set_viewport_size({"width": 390, "height": 844})  # a phone
            assert no_horizontal_scroll(page)
            shot(page, "table-phone.png", tmp_path)
            page.set_viewport_size({"width": 1100, "height": 900})

    turns = play_by_clicking(page, look)
    assert turns >= 1
    final = service.view(game)
    assert final["status"] == "over"
    page.wait_for_selector("#end:not([hidden])", timeout=WAIT_MS)
    assert outcome_line(final) in (page.text_content("#end") or "")
    if basic:  # (with actions a card seen on a palette may go back into a hand: the page tells its past)
        hidden, reveal, seed = hidden_at(service, game, 2)
        snapshots: list[dict[str, str]] = page.evaluate("window.__snapshots")
        for snap in snapshots:
            shown = [int(v) for v in (snap["version"], snap["to"]) if v]
            low, high = (min(shown), max(shown)) if shown else (0, 0)
            check([Sent(0, low, high, snap["html"])], hidden, reveal, seed)
    # The record the page links to passes `red7 audit`, as the page says.
    passes_audit(http, page.get_attribute("#record", "href") or "", game, tmp_path)


def passes_audit(http: httpx.Client, link: str, game: str, tmp_path: Path) -> None:
    """The record at ``link`` passes ``red7 audit`` (every signature, the deal from the seed)."""
    record = http.get(link)
    assert record.status_code == 200
    path = tmp_path / f"{game}.jsonl"
    path.write_bytes(record.content)
    audit = subprocess.run(
        [sys.executable, "-m", "red7es.cli", "audit", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "RED7_HOME": str(tmp_path / "home")},
    )
    assert audit.returncode == 0 and audit.stdout.startswith(f"PASS {game}"), audit.stdout + audit.stderr


@needs_chromium
def test_a_refused_turn_shows_the_referees_reason(
    served: Gateway, http: httpx.Client, service: GameService, page: Page
) -> None:
    """A stale page (its seat stream held back) offers a turn the seat already played
    elsewhere: the page shows the 409's line, and carries on once the stream is back."""
    game = new_game(service, ["ann"], {"greedy": "greedy"}, seed="web-refused")
    token = new_token()
    assert http.post(f"/api/games/{game}/seats/0/join", json={"key": public_key(token)}).status_code == 200
    ann = Seat(http, game, 0, token)

    def anns_turn() -> dict[str, Any] | None:
        view = ann.view()
        return view if view["to_move"] == 0 else None

    view = wait_for(anns_turn, "ann's turn")
    stale = {"type": "view", "id": change_ids(service, game)[-1], "view": view}
    held = re.compile(r".*/seats/0/stream.*")
    served_stale: list[str] = []

    def hold_back(route: Route) -> None:
        """The seat's stream as it was: its view now, then no more (the page keeps retrying)."""
        if served_stale:
            route.abort()
        else:
            served_stale.append(route.request.url)
            route.fulfill(status=200, content_type="application/x-ndjson", body=json.dumps(stale) + "\n")

    page.route(held, hold_back)
    page.goto(f"{served.base}/g/{game}#seat=0&token={token}")  # the link form `red7 new` could print
    page.wait_for_selector("#you[data-state='move']", timeout=WAIT_MS)
    assert "token" not in page.url  # taken out of the address bar once kept
    turn = next(t for t in view["legal"] if t.startswith("p:"))
    assert ann.play(turn).status_code == 200  # played elsewhere: this page is now stale
    for step in turn.split(" "):  # the last step of a turn with one way to finish sends it
        page.click(f"#chooser [data-step='{step}']")
    if page.evaluate(
        "() => !document.getElementById('message').textContent && !!document.querySelector('#send:enabled')"
    ):
        page.click("#send")  # a turn that could go on ("p:R7", or "p:R7 c:B3") is sent by Send
    page.wait_for_function("() => document.getElementById('message').textContent.startsWith('rejected: ')")
    line = page.text_content("#message") or ""
    assert "\n" not in line and len(line) > len("rejected: "), line
    page.unroute(held)
    now = service.view(game, 0)
    page.wait_for_function(
        "v => Number(document.getElementById('you').dataset.version) >= v", arg=now["version"], timeout=WAIT_MS
    )
    assert page.get_attribute("#you", "data-state") in ("move", "wait", "over")


@needs_chromium
def test_a_browser_clock_far_off_is_told_not_hidden(
    served: Gateway, http: httpx.Client, service: GameService, page: Page
) -> None:
    """A signed read carries the browser's clock: 60 s off, the seat's stream is refused
    (401) and the page says why, in the gateway's words."""
    game = new_game(service, ["ann"], {"greedy": "greedy"}, seed="web-clock")
    token = new_token()
    assert http.post(f"/api/games/{game}/seats/0/join", json={"key": public_key(token)}).status_code == 200
    page.clock.install(time=time.time() + 60)
    page.goto(f"{served.base}/g/{game}#seat=0&token={token}")
    page.wait_for_function("() => document.getElementById('message').textContent.includes(\"from the server's clock\")")
    said = page.text_content("#message") or ""
    # The page's clock is 60 s ahead of the time read before the install, less the install's
    # delay and the request's before Redis reads its own clock: under load that passed half a
    # second (+59 s, beside a CPU hog), so the offset is read, not matched.
    allowed = f"(±{SKEW_MS // 1000} s allowed)"
    off = re.match(
        rf"Your seat's stream: {re.escape(TIMESTAMP)} is \+(\d+) s from the server's clock {re.escape(allowed)}", said
    )
    assert off and 50 <= int(off[1]) <= 61, said


@needs_chromium
def test_a_seat_link_with_another_token_is_ignored_and_the_seat_kept(
    served: Gateway, http: httpx.Client, service: GameService, page: Page
) -> None:
    game = new_game(service, ["ann"], {"greedy": "greedy"}, seed="web-link")
    token = new_token()
    assert http.post(f"/api/games/{game}/seats/0/join", json={"key": public_key(token)}).status_code == 200
    page.goto(f"{served.base}/g/{game}#seat=0&token={token}")
    page.wait_for_selector("#you:not([hidden])", timeout=WAIT_MS)
    for link, said in (
        (f"#seat=0&token={new_token()}", "This link's token is not the one seat 0 (ann) joined with"),
        ("#seat=0&token=xyz", "This link is not a seat's"),
        (f"#seat=7&token={new_token()}", "This game has no seat 7"),
    ):
        page.goto("about:blank")
        page.goto(f"{served.base}/g/{game}{link}")
        page.wait_for_function("said => document.getElementById('notice').textContent.startsWith(said)", arg=said)
        page.wait_for_selector("#you:not([hidden])", timeout=WAIT_MS)  # still this browser's seat
        assert "token" not in page.url
    assert page.evaluate(f"localStorage.getItem('red7es:token:{game}:0')") == token


# ---------------------------------------------------------------------------- a restart


class GatewayProcess:
    """`red7 gateway` as its own process, killed outright (a crash drops every connection)."""

    def __init__(self, url: str, port: int, log: Path) -> None:
        self.base = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "red7es.cli", "gateway", "--url", url, "--port", str(port)]
        limits = ["--rate", "0", "--seat-rate", "0", "--max-streams", "0", "--log-level", "warning"]
        with log.open("ab") as out:
            self.process = subprocess.Popen([*command, *limits], stdout=out, stderr=subprocess.STDOUT)
        wait_for(self.up, "the gateway to listen", timeout=30)

    def up(self) -> bool:
        assert self.process.poll() is None, "the gateway exited"
        try:
            return httpx.get(f"{self.base}/api/games?limit=1", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)


@needs_chromium
def test_a_restarted_gateway_is_resumed_without_missing_a_change(
    served: Gateway,
    http: httpx.Client,
    service: GameService,
    browser: Browser,
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    game = new_game(service, ["ann", "bob"], seed="web-restart")
    ann_token = new_token()
    assert http.post(f"/api/games/{game}/seats/0/join", json={"key": public_key(ann_token)}).status_code == 200
    people = [Seat(http, game, 0, ann_token), join(http, game, 1)]
    port = free_port()
    gateway = GatewayProcess(redis_server.url, port, tmp_path / "gateway.log")
    context = browser.new_context()
    try:
        spectator, seat = context.new_page(), context.new_page()
        spectator.goto(f"{gateway.base}/g/{game}")
        seat.goto(f"{gateway.base}/g/{game}#seat=0&token={ann_token}")
        seat.wait_for_selector("#you:not([hidden])", timeout=WAIT_MS)
        rnd = random.Random(17)

        def turn() -> int:
            view = service.view(game)
            mover = people[view["to_move"]]
            answer = mover.play(rnd.choice([t for t in mover.view()["legal"] if t != "fold"]))
            assert answer.status_code == 200, answer.text
            return int(service.view(game)["version"])

        wait_version(spectator, turn())
        gateway.kill()  # the pages' gateway; the players go on through another
        for _ in range(3):
            version = turn()
        gateway = GatewayProcess(redis_server.url, port, tmp_path / "gateway.log")
        wait_version(spectator, version)
        seat.wait_for_function(
            "v => Number(document.getElementById('you').dataset.version) >= v", arg=version, timeout=WAIT_MS
        )
        assert narrated(spectator) == change_ids(service, game)  # each change once, in order, none missed
        hand = service.view(game, 0)["hand"]
        assert seat.eval_on_selector_all("#hand .card", "cards => cards.map(c => c.textContent)") == hand
    finally:
        context.close()
        gateway.kill()


# ---------------------------------------------------------------------------- the lobby


@needs_chromium
def test_the_lobby_lists_open_live_and_finished_games(
    served: Gateway, http: httpx.Client, service: GameService, page: Page, tmp_path: Path
) -> None:
    open_game = new_game(
        service, ["ann"], {"greedy": "greedy"}, seed="web-lobby"
    )  # fixed deals: the same games every run
    live = service.create(
        Variant(2),
        [SeatSpec("cat"), SeatSpec("greedy", "bot", "greedy")],
        join=["cat"],
        seed="web-live",
        game_id=f"gw-{uuid.uuid4().hex[:10]}",
    ).game_id  # taken at creation: the open seat is not left open
    over = new_game(service, [], {"one": "random", "two": "greedy"})
    wait_for(lambda: service.view(over)["status"] == "over", "the bots' game to end")
    made = service.create(Variant(2), [SeatSpec("eve"), SeatSpec("fay")], join=["eve"], seed="web-aborted", wait=30)
    assert service.play(made.game_id, "eve", made.tokens["eve"], "abort", wait=30).applied  # RULES.md, Aborting
    page.goto(f"{served.base}/")
    page.wait_for_selector(f"#open li[data-game='{open_game}']", timeout=WAIT_MS)
    page.wait_for_selector(f"#live li[data-game='{live}']", timeout=WAIT_MS)
    page.wait_for_selector(f"#over li[data-game='{over}']", timeout=WAIT_MS)
    page.wait_for_selector(f"#over li[data-game='{made.game_id}']", timeout=WAIT_MS)
    assert "· aborted" in (page.text_content(f"#over li[data-game='{made.game_id}']") or "")
    assert "ann (open)" in (page.text_content(f"#open li[data-game='{open_game}']") or "")
    assert page.get_attribute(f"#live li[data-game='{live}'] a", "href") == f"/g/{live}"
    page.wait_for_function("() => document.getElementById('tournaments').textContent.trim() !== ''")
    page.set_viewport_size({"width": 390, "height": 844})
    assert no_horizontal_scroll(page)
    page.set_viewport_size({"width": 1100, "height": 900})
    shot(page, "lobby.png", tmp_path)
    page.fill("#name", "dee")
    creates = any(
        getattr(r, "path", "") == "/api/games" and "POST" in getattr(r, "methods", ()) for r in served.app.routes
    )
    page.click("#create")
    if creates:  # POST /api/games: the game is made with this browser's key in seat 0
        page.wait_for_url("**/g/*", timeout=WAIT_MS)
        page.wait_for_selector("#you:not([hidden])", timeout=WAIT_MS)
    else:
        page.wait_for_function("() => document.getElementById('new-message').textContent !== ''")
        assert (page.text_content("#new-message") or "").startswith("Creating games is not available on this gateway")


@needs_chromium
def test_the_lobby_form_creates_a_game_as_post_api_games_says_and_opens_its_seat(
    served: Gateway, service: GameService, page: Page
) -> None:
    """The page's side of POST /api/games (built on another branch): its request, and on
    201 the new game's table with the seat joined by the browser's key.  The answer here
    is the test's: it creates the game and joins the key as that endpoint would."""
    sent: list[dict[str, Any]] = []

    def create(route: Route) -> None:
        body = route.request.post_data_json
        sent.append(body)
        people = [p["name"] for p in body["players"] if "bot" not in p]
        bots = {p["name"]: p["bot"] for p in body["players"] if "bot" in p}
        flags = {f: body[f] for f in ("scoring", "draw", "actions", "rounds", "target")}
        game = new_game(service, people, bots, Variant(len(body["players"]), **flags))
        service.submit_join(game, 0, body["players"][0]["key"])
        wait_for(lambda: service.view(game)["seats"][0]["key"] == body["players"][0]["key"], "the join")
        answer = {"game": game, "view": service.view(game)}
        route.fulfill(status=201, content_type="application/json", body=json.dumps(answer))

    page.route(
        re.compile(r".*/api/games$"),
        lambda route: create(route) if route.request.method == "POST" else route.fallback(),
    )
    page.goto(f"{served.base}/")
    page.fill("#name", "eve")
    page.select_option("#bot", "random")
    page.check("input[name='actions']")
    page.click("#create")
    page.wait_for_url("**/g/*", timeout=WAIT_MS)
    page.wait_for_selector("#you:not([hidden])", timeout=WAIT_MS)  # the seat is this browser's
    [body] = sent
    assert re.fullmatch(r"[0-9a-f]{64}", body["players"][0]["key"])
    assert body == {
        "players": [{"name": "eve", "key": body["players"][0]["key"]}, {"name": "random", "bot": "random"}],
        "scoring": False,
        "draw": False,
        "actions": True,
        "rounds": 1,
        "target": None,
        "id": None,
    }
    game = page.url.rsplit("/", 1)[1]
    token = page.evaluate(f"localStorage.getItem('red7es:token:{game}:0')")
    assert public_key(token) == body["players"][0]["key"]  # the secret stayed in the browser


@needs_chromium
def test_a_timed_game_made_from_the_lobby_form_shows_its_clock_running(
    served: Gateway, http: httpx.Client, page: Page, tmp_path: Path
) -> None:
    """The form's time control goes to the real POST /api/games: a text the gateway refuses
    is its one line under the form; "1m+2s" makes a game with that clock, whose table says
    the time control, whose turn it is and when its time is up (the view's deadline), and
    counts the running seat's time down; the other seats show the time they have left.
    The lobby lists it with its time control."""
    page.goto(f"{served.base}/")
    page.fill("#name", "eve")
    page.select_option("#bot", "greedy")
    page.check("input[name='scoring']")  # rounds to 40 points: a bot's fold ends a round, not the game
    assert page.is_hidden("#time-own")
    page.select_option("#time", "clock:")  # "my clock…": the text field
    page.fill("#time-text", "5x")
    page.click("#create")
    page.wait_for_function("() => document.getElementById('new-message').textContent !== ''", timeout=WAIT_MS)
    said = page.text_content("#new-message") or ""
    assert said == "clock: not a duration: '5x' (say e.g. 300ms, 30s, 5m, 2h or 2d)"
    page.fill("#time-text", "1m+2s")
    page.click("#create")
    page.wait_for_url("**/g/*", timeout=WAIT_MS)
    game = page.url.rsplit("/", 1)[1]
    view = http.get(f"/api/games/{game}").json()
    assert view["variant"]["clock"] == [60_000, 2_000]
    page.wait_for_selector("#clock:not([hidden])", timeout=WAIT_MS)
    assert "clock 1m+2s" in (page.text_content("#title") or "")
    # the page follows the view: the line names the seat whose clock runs and its deadline
    shown = page.evaluate(
        """() => { const c = document.getElementById('clock');
                   return {text: c.textContent, deadline: Number(c.dataset.deadline)}; }"""
    )
    clock = http.get(f"/api/games/{game}").json()["clock"]
    if shown["deadline"] == clock["deadline"]:  # (the bot may have moved in between)
        name = view["seats"][clock["seat"]]["name"]
        assert shown["text"].startswith(f"{name}'s time is up at ") and shown["text"].endswith(" left.")
    assert re.fullmatch(r"0:[0-5]\d|1:0[0-2]", page.text_content("#clock .left") or "")
    # one seat's time runs down (the seat to move: its facts show it ticking, with the deadline)
    first = page.text_content("#clock .left")
    page.wait_for_function(
        "f => { const n = document.querySelector('#clock .left'); return n && n.textContent !== f; }",
        arg=first,
        timeout=WAIT_MS,
    )
    assert page.locator(".seat .time-left[data-deadline]").count() == 1
    assert page.locator(".seat .time-left").count() == 2
    shot(page, "web-clock.png", tmp_path)
    page.goto(f"{served.base}/")  # the lobby lists the game with its time control
    page.wait_for_selector(f"#live li[data-game='{game}']", timeout=WAIT_MS)
    assert "2 players, scoring, clock 1m+2s" in (page.text_content(f"#live li[data-game='{game}']") or "")


@needs_chromium
def test_a_turn_time_preset_from_the_form_shows_the_deadline_and_no_seat_clocks(served: Gateway, page: Page) -> None:
    """The preset "30s a turn" sends "turn_time": "30s": the table says so and shows the
    running turn's deadline; a turn time has no time left per seat, so none is shown."""
    page.goto(f"{served.base}/")
    page.fill("#name", "tia")
    page.check("input[name='scoring']")  # (as above: a bot's fold ends a round, not the game)
    page.select_option("#time", "turn_time:30s")
    assert page.is_hidden("#time-own")
    page.click("#create")
    page.wait_for_url("**/g/*", timeout=WAIT_MS)
    page.wait_for_selector("#clock:not([hidden])", timeout=WAIT_MS)
    assert "30s a turn" in (page.text_content("#title") or "")
    assert re.fullmatch(r".+'s time is up at .+: 0:[0-3]\d left\.", page.text_content("#clock") or "")
    assert page.locator(".seat .time-left").count() == 0


@needs_chromium
def test_off_loopback_over_http_the_page_watches_but_says_playing_needs_https(
    served: Gateway, service: GameService, browser: Browser
) -> None:
    """WebCrypto exists only in a secure context: a gateway reached by a name over plain
    HTTP (here web.test, mapped to loopback) shows the table, and says why a seat cannot be taken."""
    game = new_game(service, ["ann"], {"greedy": "greedy"}, seed="web-https")
    other = browser.browser_type.launch(
        executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP web.test 127.0.0.1"]
    )
    try:
        page = other.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(str(exc)))
        page.goto(f"http://web.test:{served.port}/g/{game}")
        assert page.evaluate("window.isSecureContext") is False
        page.wait_for_selector("button[data-take='0']", timeout=WAIT_MS)  # the table is there, live
        page.click("button[data-take='0']")
        page.wait_for_function("() => document.getElementById('notice').textContent.includes('HTTPS')")
        assert service.view(game)["seats"][0]["key"] is None  # nothing was joined
        page.goto(f"http://web.test:{served.port}/")
        page.click("#create")
        page.wait_for_function("() => document.getElementById('new-message').textContent.includes('HTTPS')")
        assert not problems, problems
    finally:
        other.close()


# ---------------------------------------------------------------------------- words


def test_the_page_says_what_the_cli_says(served: Gateway, browser: Browser) -> None:
    """Every kind of public event, each rule's reason for a lead, and the outcome, in the
    page's words and cli/render.py's: the same text."""
    names = ["ann", "bob", "cat"]
    events: list[dict[str, Any]] = [
        {
            "type": "GameCreated",
            "seats": [{"name": "ann", "kind": "person"}, {"name": "g", "kind": "bot", "bot": "greedy"}],
        },
        {"type": "SeatJoined", "seat": 1, "name": "bob"},
        {"type": "RoundDealt", "round": 2, "palettes": ["R3", "B5", "V1"], "first": 2},
        *(
            {"type": "StepApplied", "seat": 0, "step": s}
            for s in ("p:R7", "c:B3", "draw", "7c:G2", "7d:O4", "1:Y6", "fold", "end")
        ),
        {"type": "CardDrawn", "seat": 1, "card": "I4", "cause": "3"},
        {"type": "CardDrawn", "seat": 1},
        {"type": "TurnTakenBack", "seat": 2, "steps": ["p:G3", "draw"]},
        {"type": "PlayerOut", "seat": 1, "reason": "fold"},
        {"type": "PlayerOut", "seat": 1, "reason": "empty"},
        {"type": "RoundWon", "seat": 0, "round": 1, "rule": "ORANGE", "cards": ["R4", "Y4"]},
        {"type": "RoundWon", "seat": 0, "round": 1, "rule": "Indigo"},
        {"type": "GameOver", "winners": [0]},
        {"type": "GameOver", "winners": [0, 2]},
        {"type": "GameOver", "winners": [], "reason": "aborted"},
        {"type": "Adjudicated", "winners": [0, 2], "reason": "bob left"},
        {"type": "Adjudicated", "winners": [], "reason": "a broken deck"},
        {"type": "TimedOut", "seat": 2},
        {"type": "Forfeited", "seat": 1, "reason": "resigned"},
        {"type": "Forfeited", "seat": 1, "reason": "time"},
        {"type": "SeedRevealed", "seed": "ab" * 16},
        {"type": "CommandRejected", "seat": 1, "kind": "turn", "text": "p:R9", "reason": "not in your hand"},
        {"type": "CommandRejected", "kind": "corrupt"},
        {"type": "CommandRejected", "seat": 7, "kind": "repeat", "reason": "seen"},
        {"type": "CommandApplied", "seat": 0, "turn": "p:R7"},
        {"type": "TimedOut", "seat": 2, "deadline": 5, "at": 6},
        {"type": "Forfeited", "seat": 0, "reason": "time"},
        {"type": "Forfeited", "seat": 1, "reason": "resigned"},
        {"type": "ClockStarted", "seat": 1, "at": 6, "deadline": 9, "remaining": []},
    ]
    # Runs of events said together: a time-out and what it did are one line.
    fold = [{"type": "StepApplied", "seat": 1, "step": "fold"}, {"type": "PlayerOut", "seat": 1, "reason": "fold"}]
    runs: list[list[dict[str, Any]]] = [
        [{"type": "TimedOut", "seat": 1, "deadline": 5, "at": 6}, *fold, {"type": "ClockStarted", "seat": 2}],
        [{"type": "TimedOut", "seat": 1}, {"type": "TurnTakenBack", "seat": 1, "steps": ["p:R7"]}, *fold],
        [
            {"type": "TimedOut", "seat": 0},
            {"type": "Forfeited", "seat": 0, "reason": "time"},
            {"type": "GameOver", "winners": [1]},
        ],
        [{"type": "TimedOut", "seat": 0}, {"type": "ClockStarted", "seat": 0}, *fold],  # not seat 0's fold
        [*fold, {"type": "Forfeited", "seat": 2, "reason": "resigned"}],
    ]
    cases = [(c.name, q) for c in Color for q in ([], ["R7"], ["O3", "Y3", "B3"], ["G2", "G4", "V6"], ["I1", "B2"])]
    views: list[dict[str, Any]] = [
        {"seats": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}], "variant": {"scoring": False},
         "outcome": {"winners": [1], "round_wins": [0, 1], "scores": [0, 0]}},
        {"seats": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}], "variant": {"scoring": True},
         "outcome": {"winners": [0, 1], "round_wins": [2, 2], "scores": [41, 41]}},
        {"seats": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}], "variant": {"scoring": False},
         "outcome": {"winners": [], "round_wins": [0, 0], "scores": [0, 0], "reason": "aborted"}},
        {"seats": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}], "variant": {"scoring": False},
         "outcome": {"winners": [1], "round_wins": [0, 0], "scores": [0, 0], "reason": "resigned"}},
        {"seats": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}], "variant": {"scoring": False},
         "outcome": {"winners": [0], "round_wins": [0, 0], "scores": [0, 0], "reason": "time"}},
        {"seats": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}], "variant": {"scoring": True},
         "outcome": {"winners": [0], "round_wins": [0, 0], "scores": [3, 9], "reason": "adjudicated",
                     "adjudication": "bob left"}},
        {"seats": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}], "variant": {"scoring": False},
         "outcome": {"winners": [], "round_wins": [0, 0], "scores": [0, 0], "reason": "adjudicated",
                     "adjudication": "a broken deck"}},
        *(
            {"seats": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}, {"seat": 2, "name": "cat"}],
             "variant": {"scoring": False},
             "outcome": {"winners": [1], "round_wins": [0, 0, 0], "scores": [0, 0, 0], "reason": reason, **out}}
            for reason in ("time", "resigned")
            for out in ({}, {"forfeited": [0]}, {"forfeited": [2, 0]}, {"forfeited": [2, 0, 1][:2][::-1]})
        ),
    ]  # fmt: skip
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{served.base}/")
        page.wait_for_function("() => typeof Red7 === 'object'")
        said = page.evaluate(
            "([events, names]) => events.map(e => { const l = Red7.describe(e, names); return l && Red7.plain(l); })",
            [events, names],
        )
        assert said == [(line.plain if (line := describe_event(e, names)) else None) for e in events]
        told = page.evaluate(
            "([runs, names]) => runs.map(r => Red7.describeAll(r, names).map(Red7.plain))", [runs, names]
        )
        assert told == [[line.plain for line in describe_events(run, names)] for run in runs]
        assert told[0] == ["bob's turn timed out: folded.", "bob is out of the round (folded)."]
        assert told[2] == ["ann forfeited (time).", "Game over: bob wins."]
        assert told[3][0] == "ann's turn timed out."  # what it did is not in this run: said as it is
        reasons = page.evaluate("cases => cases.map(([rule, cards]) => Red7.why(rule, cards))", cases)
        assert reasons == [_why(Color.parse(rule), cards) for rule, cards in cases]
        rules = page.evaluate("() => Red7.COLOURS")
        assert rules == {c.letter: [c.title, c.rule_text] for c in Color}
        outcomes = page.evaluate("views => views.map(v => Red7.outcomeLine(v))", views)
        assert outcomes == [outcome_line(v) for v in views]
        assert "Game over: bob wins: ann resigned (cat was already out of the game)." in outcomes
        assert "Game over: bob wins on time: ann ran out of time." in outcomes
    finally:
        context.close()


# ---------------------------------------------------------------------------- the pages


def test_the_pages_and_their_files_are_served_with_their_policy(http: httpx.Client) -> None:
    """No browser needed: the routes, the page's security headers, the files each page
    names (all in red7es/gateway/static/, which pyproject ships), and JSON 404s."""
    lobby = http.get("/")
    assert lobby.status_code == 200 and lobby.headers["content-type"].startswith("text/html")
    policy = lobby.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy and "default-src 'none'" in policy
    table = http.get("/g/some-game")  # any well-formed id: the page itself says when there is no such game
    assert table.status_code == 200 and table.headers["content-security-policy"] == policy
    tournament = http.get("/t/some-cup")  # likewise: the page says when there is no such tournament
    assert tournament.status_code == 200 and tournament.headers["content-security-policy"] == policy
    for page in (lobby.text, table.text, tournament.text):
        for name in re.findall(r'(?:src|href)="/web/([^"]+)"', page):
            asset = http.get(f"/web/{name}")
            assert asset.status_code == 200, name
            assert (STATIC / name).is_file()
            assert asset.headers["content-security-policy"] == policy, name  # (was: none on /web/)
    assert http.get("/web/table.html").headers["content-security-policy"] == policy  # a page by another path
    assert http.get("/web/red7.js").headers["content-type"].startswith(("text/javascript", "application/javascript"))
    assert http.get("/g/NOT-AN-ID!").json() == {"error": "no game 'NOT-AN-ID!'"}
    assert http.get("/t/NOT-AN-ID!").json() == {"error": "no tournament 'NOT-AN-ID!'"}
    assert http.get("/t/some-cup%0A").json() == {"error": "no tournament 'some-cup\\n'"}  # (was: the page)
    assert http.get("/web/nosuch.js").status_code == 404
    assert '"red7es.gateway" = ["static/*"]' in (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert {"/", "/g/{game_id}", "/t/{tournament}"}.isdisjoint(
        http.get("/openapi.json").json()["paths"]
    )  # pages, not API


# ---------------------------------------------------------------------------- a tournament


class Gate:
    """A tournament run's reporter that stops the run at each step (a round paired, a new
    count of games recorded) until the test has looked at the page: so the page is seen
    at every step of a tournament of bots, however fast its games go.

    Each wait is bounded: a failing test never leaves the run's thread blocked for good."""

    def __init__(self) -> None:
        self.reached: queue.Queue[tuple[str, int]] = queue.Queue()
        self.go = threading.Semaphore(0)

    def paired(self, paired: RoundPaired) -> None:
        self.reached.put(("paired", paired.round))
        self.go.acquire(timeout=120)

    def progress(self, done: int, total: int, round_number: int) -> None:
        self.reached.put(("played", done))
        self.go.acquire(timeout=120)

    def needs_people(self, game: str, people: list[str], joined: dict[str, str | None]) -> None:
        raise AssertionError("a tournament of bots has no people")


def shown_standings(page: Page) -> list[list[str]]:
    rows = page.eval_on_selector_all(
        "#standings tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    return [list(row) for row in rows]


def standings_rows(standings: list[dict[str, Any]], swiss: bool) -> list[list[str]]:
    """The rows the page should show for `red7 tournament standings --json`'s standings."""
    return [
        [
            str(s["rank"]),
            (f"{s['name']} ({s['bot']} bot)" if s["kind"] == "bot" else s["name"])
            + (" (withdrawn)" if s["withdrawn"] else ""),
            str(s["games"]),
            str(s["wins"]),
            two_decimals(s["points"]),
            str(s["round_wins"]),
            str(s["byes"]),
            *([two_decimals(s["buchholz"] or 0)] if swiss else []),
            two_decimals(s["ordinal"]),
        ]
        for s in standings
    ]


def shown_rounds(page: Page) -> list[dict[str, Any]]:
    return list(
        page.evaluate(
            """() => [...document.querySelectorAll('#rounds .round')].map(r => ({
                 round: Number(r.dataset.round),
                 games: [...r.querySelectorAll('li[data-game]')].map(li => ({
                   game: li.dataset.game, status: li.dataset.status, href: li.querySelector('a').getAttribute('href'),
                   text: li.textContent})),
               }))"""
        )
    )


@needs_chromium
def test_a_tournament_of_bots_is_followed_live_on_its_page(
    served: Gateway, http: httpx.Client, redis_server: RedisServer, service: GameService, page: Page, tmp_path: Path
) -> None:
    """Four bots, Swiss (a round is paired once the one before is over), run by the
    tournament runner on the real worker, the run held at each of its steps: the page,
    opened before the first round, shows each round as it is paired, and the standings
    after each new count of games recorded are the gateway's at that moment; at the end
    the final standings are `red7 tournament standings --json`'s, every game links to its
    table, and the lobby links to the page."""
    tid = f"tw-{uuid.uuid4().hex[:8]}"
    bots = [SeatSpec(f"b{i}", "bot", kind) for i, kind in enumerate(("greedy", "random", "greedy", "random"))]
    with redis.Redis.from_url(redis_server.url) as connection:
        create_tournament(connection, tid, bots, Variant(2), SWISS, seed=f"seed of {tid}", name="Winter cup")
    page.goto(f"{served.base}/t/{tid}")
    page.wait_for_function("() => document.getElementById('tournament').dataset.status === 'not started'")
    assert "Winter cup" in (page.text_content("#title") or "")
    assert page.text_content("#format") == "Swiss, 3 rounds, tables of 2, basic."
    assert page.text_content("#entrants") == "b0 (greedy bot), b1 (random bot), b2 (greedy bot), b3 (random bot)"
    assert page.get_attribute("#report", "href") == f"/api/tournaments/{tid}/report"
    page.wait_for_function("() => document.getElementById('connection').textContent === 'live'")

    gate = Gate()
    failure: list[BaseException] = []
    runner = TournamentRunner(service, tid, reporter=gate, poll=0.2)

    def run() -> None:
        try:
            runner.run()
        except BaseException as exc:  # seen by the test below
            failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    steps: list[tuple[str, int]] = []
    played_seen: list[int] = []
    try:
        while True:
            kind, n = gate.reached.get(timeout=120)
            steps.append((kind, n))
            if kind == "paired":  # shown once paired, before any of its games is created
                page.wait_for_selector(f"#rounds .round[data-round='{n}']", timeout=WAIT_MS)
                shown = http.get(f"/api/tournaments/{tid}").json()
                expected = [t["game"] for t in shown["paired"][n - 1]["tables"]]
                assert [g["game"] for g in shown_rounds(page)[n - 1]["games"]] == expected
                assert len(shown_rounds(page)) == n
            else:  # the standings once the n-th game is recorded: the gateway's, as it now says
                page.wait_for_selector(f"#standings[data-played='{n}']", timeout=WAIT_MS)
                standings = http.get(f"/api/tournaments/{tid}/standings").json()
                assert standings["games_played"] == n
                assert shown_standings(page) == standings_rows(standings["standings"], swiss=True)
                page.wait_for_function(  # each game_finished line shown (the standings may come first)
                    "n => document.querySelectorAll('#rounds li[data-status=recorded]').length === n", arg=n
                )
                played_seen.append(n)
            gate.go.release()
            if kind == "played" and n == runner.state.total_games:
                break
    finally:
        for _ in range(100):
            gate.go.release()  # never leave the run waiting on a failed test
        thread.join(60)
    assert not thread.is_alive() and not failure, failure
    assert [n for kind, n in steps if kind == "paired"] == [1, 2, 3]  # one round at a time
    assert played_seen[0] == 0 and played_seen[-1] == 6 and len(played_seen) >= 4  # changed as games finished
    assert played_seen == sorted(played_seen)

    page.wait_for_selector("#standings[data-final='true']", timeout=WAIT_MS)
    final = Red7(redis_server.url, tmp_path / "home").json("tournament", "standings", tid)
    assert final["finished"]
    assert shown_standings(page) == standings_rows(final["standings"], swiss=True)
    assert page.text_content("#h-standings") == "Final standings"
    shown = http.get(f"/api/tournaments/{tid}").json()
    assert page.text_content("#seed") == shown["seed"]
    rounds = shown_rounds(page)
    assert [r["round"] for r in rounds] == [1, 2, 3]
    for mine, theirs in zip(rounds, shown["paired"], strict=True):
        for game, table in zip(mine["games"], theirs["tables"], strict=True):
            assert game["game"] == table["game"] and game["href"] == f"/g/{table['game']}"
            assert game["status"] == "recorded" and " v ".join(table["seats"]) in game["text"]
            winners = table["winners"]
            said = f"won by {winners[0]}" if len(winners) == 1 else f"shared win: {' and '.join(winners)}"
            assert game["text"].endswith(f"finished · {said}")
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    assert no_horizontal_scroll(page)
    page.set_viewport_size({"width": 1100, "height": 900})
    shot(page, "tournament.png", tmp_path)

    game = rounds[1]["games"][0]["game"]  # its link opens that game's table
    page.click(f"#rounds li[data-game='{game}'] a")
    page.wait_for_url(f"**/g/{game}", timeout=WAIT_MS)
    page.wait_for_function("() => document.getElementById('table').dataset.status === 'over'", timeout=WAIT_MS)
    assert (page.text_content("#title") or "").startswith(f"Game {game} ")
    page.goto(f"{served.base}/")  # the lobby links to the page
    page.wait_for_selector(f"#tournaments li[data-tournament='{tid}'] a", timeout=WAIT_MS)
    assert page.get_attribute(f"#tournaments li[data-tournament='{tid}'] a", "href") == f"/t/{tid}"
    assert "Winter cup" in (page.text_content(f"#tournaments li[data-tournament='{tid}']") or "")


@needs_chromium
def test_a_withdrawal_is_shown_live_on_the_tournaments_page(
    served: Gateway, redis_server: RedisServer, service: GameService, page: Page
) -> None:
    """docs/tournaments.md, Withdrawing: the page names the entrant withdrawn as the stream
    tells it, and its standings mark them."""
    from red7es.tournament.withdrawal import withdraw_entrant

    tid = f"tw-{uuid.uuid4().hex[:8]}"
    entrants = [SeatSpec("ann"), SeatSpec("b1", "bot", "greedy"), SeatSpec("b2", "bot", "random")]
    with redis.Redis.from_url(redis_server.url) as connection:
        create_tournament(connection, tid, entrants, Variant(2), SWISS, seed=f"seed of {tid}")
    page.goto(f"{served.base}/t/{tid}")
    page.wait_for_function("() => document.getElementById('connection').textContent === 'live'")
    assert page.text_content("#entrants") == "ann, b1 (greedy bot), b2 (random bot)"
    withdraw_entrant(service, tid, "ann", "ann had to leave")
    page.wait_for_function(
        "() => document.getElementById('entrants').textContent === 'ann (withdrawn), b1 (greedy bot), b2 (random bot)'",
        timeout=WAIT_MS,
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('#standings td')].some(td => td.textContent === 'ann (withdrawn)')",
        timeout=WAIT_MS,
    )


@needs_chromium
def test_an_unknown_tournament_says_so(served: Gateway, page: Page) -> None:
    page.goto(f"{served.base}/t/nosuch")
    page.wait_for_function("() => document.getElementById('tournament').dataset.status === 'error'")
    assert page.text_content("#status") == (
        "no tournament 'nosuch': there is no such tournament on this gateway (the lobby lists them)."
    )
    assert page.is_hidden("#about")


def test_standings_figures_are_printed_as_the_cli_prints_them(served: Gateway, browser: Browser) -> None:
    """Red7.twoDecimals is two_decimals, exact halves (rounded to even) and -0 included."""
    values = [0, 1, 0.5, 1 / 3, 2 / 3, 0.125, 0.375, 0.625, 2.875, -0.125, -0.375, 1.005, 25.0, 1.9698, -0.0, -0.001]
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{served.base}/")
        page.wait_for_function("() => typeof Red7 === 'object'")
        assert page.evaluate("values => values.map(v => Red7.twoDecimals(v))", values) == [
            two_decimals(v) for v in values
        ]
    finally:
        context.close()


@needs_chromium
def test_a_tournament_page_resumes_after_its_gateway_restarts(
    served: Gateway, service: GameService, browser: Browser, redis_server: RedisServer, tmp_path: Path
) -> None:
    """The page's gateway killed (SIGKILL) once a game is recorded and shown; the rest of
    the tournament is played meanwhile; the gateway started again, the page catches up by
    itself (EventSource resumes with Last-Event-ID) to the final standings and every result."""
    tid = f"tw-{uuid.uuid4().hex[:8]}"
    bots = [SeatSpec(f"b{i}", "bot", kind) for i, kind in enumerate(("greedy", "random", "random", "greedy"))]
    with redis.Redis.from_url(redis_server.url) as connection:
        create_tournament(connection, tid, bots, Variant(2), SWISS, seed=f"seed of {tid}")
    port = free_port()
    gateway = GatewayProcess(redis_server.url, port, tmp_path / "gateway.log")
    context = browser.new_context()
    gate = Gate()
    runner = TournamentRunner(service, tid, reporter=gate, poll=0.2)
    thread = threading.Thread(target=runner.run, daemon=True)
    try:
        page = context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda exc: problems.append(str(exc)))
        page.goto(f"{gateway.base}/t/{tid}")
        page.wait_for_function("() => document.getElementById('connection').textContent === 'live'")
        thread.start()
        while True:
            kind, n = gate.reached.get(timeout=120)
            if kind == "played" and n >= 1:
                page.wait_for_selector(f"#standings[data-played='{n}']", timeout=WAIT_MS)
                break
            gate.go.release()
        gateway.kill()
        for _ in range(100):
            gate.go.release()  # the rest of the tournament, while the page's gateway is down
        thread.join(120)
        assert not thread.is_alive() and runner.state.finished is not None
        gateway = GatewayProcess(redis_server.url, port, tmp_path / "gateway.log")
        page.wait_for_selector("#standings[data-final='true']", timeout=WAIT_MS)
        # The final standings can come from a read the resumed stream's first game_finished
        # asks for, before that stream has told the later results; its tournament_over comes
        # after every one of them (stream order) and ends the stream: "finished".
        page.wait_for_function(
            "() => document.getElementById('connection').textContent === 'finished'", timeout=WAIT_MS
        )
        final = Red7(redis_server.url, tmp_path / "home").json("tournament", "standings", tid)
        assert shown_standings(page) == standings_rows(final["standings"], swiss=True)
        rounds = shown_rounds(page)
        assert [r["round"] for r in rounds] == [1, 2, 3]
        assert all(g["status"] == "recorded" for r in rounds for g in r["games"])
        assert page.text_content("#progress") == "6 of 6 games played; round 3 of 3 paired."
        assert not problems, problems
    finally:
        for _ in range(100):
            gate.go.release()
        context.close()
        gateway.kill()
