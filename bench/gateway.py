"""Gateway benchmark: what the HTTP gateway costs beside Redis directly, in one run.

Everything runs against one private Redis, real ``red7 worker`` processes and one real
``red7 gateway`` process, all started here on loopback:

* throughput: N clients at once, each playing its own games (a person's seat against a
  fast bot) with signed turns, first through the gateway (join over HTTP, follow the
  seat's NDJSON stream, POST each turn), then the same load through GameService on
  Redis directly; validated moves/s of each and their ratio (target: gateway ≤ 2×);
* submit-to-seen latency, one player over HTTP: from just before POSTing a turn to
  reading its change on the seat's stream (target: median < 10 ms), beside the same
  player's submit-to-applied on Redis directly and a PING;
* 1,000 streams: spectators' public streams, 10 on each of 100 live games whose turns
  a driver process submits on Redis directly; change-to-client latency (the change's
  Redis stream id is its write time in ms; the client's clock is the same machine's)
  (target: median < 50 ms), the gateway's RSS per stream, and the Redis work its
  streams do per change.

Usage:  python bench/gateway.py [--clients 8] [--games 12] [--streams 1000] [--live-games 100] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import redis
from pool import worker_processes  # bench/pool.py (this script's folder is on sys.path)
from service import percentile, ping_rtt

from red7es import Variant
from red7es.gateway.auth import signed_headers
from red7es.service.client import GameService
from red7es.service.events import BOT, PERSON, SeatSpec
from red7es.service.redis_server import RedisServer, free_port, redis_binary
from red7es.service.tokens import new_token, public_key, sign_turn, turn_commitment

ME = 0  # the person's seat in every game here: seat 0, against a bot in seat 1


def choose(legal: list[str]) -> str:
    """The person's turn: the first legal one that does not fold (as bench/service.py plays)."""
    return legal[0] if legal[0] != "fold" or len(legal) == 1 else legal[-1]


def person_game(service: GameService, bot: str, rounds: int, join: bool) -> tuple[str, str | None]:
    """A new game of a person (seat 0) against ``bot``; its id, and the token when joined here."""
    seats = [SeatSpec("me", PERSON), SeatSpec("bot", BOT, bot)]
    created = service.create(Variant(2, rounds=rounds), seats, join=["me"] if join else [])
    return created.game_id, created.tokens.get("me")


# ------------------------------------------------------------------ the gateway process


@contextlib.contextmanager
def gateway_process(url: str, log_dir: Path) -> Iterator[tuple[str, int]]:
    """``red7 gateway`` on a free loopback port; yields (base URL, pid); stopped after."""
    port = free_port()
    with open(log_dir / "gateway.log", "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "red7es.cli",
                "gateway",
                "--url",
                url,
                "--port",
                str(port),
                "--log-level",
                "warning",
                # The limits stay on, so their Redis round trip per request is measured, but
                # past the bench's load: every client here comes from one loopback address.
                "--rate",
                "100000000",
                "--seat-rate",
                "100000000",
                "--max-streams",
                "100000",
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/api/games?limit=1", timeout=2).status_code == 200:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the gateway did not start (log in {log_dir})")
            time.sleep(0.05)
        yield base, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        logged = (log_dir / "gateway.log").read_text(errors="replace").splitlines()
        if logged:
            print(f"the gateway logged {len(logged)} lines; the last ones:", *logged[-15:], sep="\n", file=sys.stderr)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------ 1. throughput


class HttpSeat:
    """A person who reaches its game only over HTTP (its token stays here)."""

    def __init__(self, http: httpx.Client, game: str) -> None:
        self.http, self.game, self.token = http, game, new_token()
        self.signed_over = turn_commitment(http.get(f"/api/games/{game}").json())  # (fixed for the game)

    def headers(self, path: str) -> dict[str, str]:
        return signed_headers(self.token, "GET", path, int(time.time() * 1000), secrets.token_hex(16))

    def join(self) -> None:
        answer = self.http.post(f"/api/games/{self.game}/seats/{ME}/join", json={"key": public_key(self.token)})
        answer.raise_for_status()

    def post(self, turn: str) -> dict[str, Any]:
        command_id = uuid.uuid4().hex
        sig = sign_turn(self.token, self.game, command_id, ME, turn, self.signed_over)
        answer = self.http.post(
            f"/api/games/{self.game}/turns", json={"id": command_id, "seat": ME, "turn": turn, "sig": sig}
        )
        if answer.status_code != 200:
            raise RuntimeError(f"turn {turn} in {self.game}: {answer.status_code} {answer.text}")
        return dict(answer.json())

    def play_out(self) -> int:
        """Play the game to its end following the seat's stream; the turns played."""
        path = f"/api/games/{self.game}/seats/{ME}/stream"
        played, version = 0, -1
        with self.http.stream("GET", path, headers=self.headers(path)) as stream:
            for raw in stream.iter_lines():
                line = json.loads(raw) if raw.strip() else {}
                view = line.get("view") if line.get("type") == "view" else None
                if line.get("type") == "error":
                    raise RuntimeError(f"stream of {self.game}: {line['error']}")
                if view is None:
                    continue
                if view["status"] == "over":
                    return played
                if view["to_move"] == ME and view.get("legal") and view["version"] > version:
                    version = view["version"]
                    self.post(choose(view["legal"]))
                    played += 1
        raise RuntimeError(f"the stream of {self.game} ended before the game")


def over_http(base: str, service: GameService, bot: str, rounds: int, games: int) -> Callable[[int], list[str]]:
    def client(_index: int) -> list[str]:
        ids = []
        with httpx.Client(base_url=base, timeout=30) as http:
            for _ in range(games):
                game, _token = person_game(service, bot, rounds, join=False)
                seat = HttpSeat(http, game)
                seat.join()
                seat.play_out()
                ids.append(game)
        return ids

    return client


def direct(service: GameService, bot: str, rounds: int, games: int) -> Callable[[int], list[str]]:
    def client(_index: int) -> list[str]:
        svc = GameService(redis.Redis(connection_pool=service.redis.connection_pool))
        ids = []
        for _ in range(games):
            game, token = person_game(svc, bot, rounds, join=True)
            assert token is not None
            play_direct(svc, game, token, [], None)
            ids.append(game)
        return ids

    return client


def run_clients(client: Callable[[int], list[str]], count: int) -> tuple[list[str], float]:
    """Run ``count`` clients in threads at once; (their games, seconds from start to the last)."""
    results: list[list[str]] = [[] for _ in range(count)]
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            results[index] = client(index)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    if errors:
        raise errors[0]
    return [g for ids in results for g in ids], elapsed


# ------------------------------------------------------------------ 2. submit-to-seen


async def submit_to_seen(base: str, service: GameService, bot: str, turns: int) -> tuple[list[float], list[float]]:
    """(POST-to-change-on-stream, POST-to-answer) times of one player's turns over HTTP."""
    seen: list[float] = []
    answered: list[float] = []
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        while len(seen) < turns:
            game, _ = person_game(service, bot, 3, join=False)
            token = new_token()
            joined = await http.post(f"/api/games/{game}/seats/{ME}/join", json={"key": public_key(token)})
            joined.raise_for_status()
            path = f"/api/games/{game}/seats/{ME}/stream"
            headers = signed_headers(token, "GET", path, int(time.time() * 1000), secrets.token_hex(16))
            async with http.stream("GET", path, headers=headers) as stream:
                await _play_timed(http, stream, game, token, turns, seen, answered)
    return seen, answered


async def _play_timed(
    http: httpx.AsyncClient,
    stream: httpx.Response,
    game: str,
    token: str,
    turns: int,
    seen: list[float],
    answered: list[float],
) -> None:
    pending: dict[str, float] = {}  # command id -> when its POST started
    version = -1
    tasks: set[asyncio.Task[None]] = set()
    signed_over = turn_commitment((await http.get(f"/api/games/{game}")).json())  # (fixed for the game)

    async def post(command_id: str, turn: str, start: float) -> None:
        sig = sign_turn(token, game, command_id, ME, turn, signed_over)
        answer = await http.post(
            f"/api/games/{game}/turns", json={"id": command_id, "seat": ME, "turn": turn, "sig": sig}
        )
        answer.raise_for_status()
        answered.append(time.perf_counter() - start)

    async for raw in stream.aiter_lines():
        now = time.perf_counter()
        line = json.loads(raw) if raw.strip() else {}
        if line.get("type") == "change":
            for event in line["events"]:
                start = pending.pop(event.get("id"), None) if event.get("type") == "CommandApplied" else None
                if start is not None:
                    seen.append(now - start)
        view = line.get("view") if line.get("type") == "view" else None
        if view is None:
            continue
        if view["status"] == "over" or len(seen) >= turns:
            break
        if view["to_move"] == ME and view.get("legal") and view["version"] > version:
            version = view["version"]
            command_id = uuid.uuid4().hex
            start = time.perf_counter()
            pending[command_id] = start
            task = asyncio.create_task(post(command_id, choose(view["legal"]), start))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
    await asyncio.gather(*tasks)


def play_direct(service: GameService, game: str, token: str, samples: list[float], turns: int | None) -> None:
    """Play the person's seat on Redis directly until the game ends (or ``samples`` holds
    ``turns`` submit-to-applied times): the view, a wait for its turn, a signed turn."""
    cursor = service.store.last_change_id(game)
    while turns is None or len(samples) < turns:
        view = service.view(game, ME)
        if view["status"] == "over":
            return
        if view.get("to_move") != ME or not view.get("legal"):
            change = service.wait_change(game, cursor, 10)
            cursor = change[0] if change else cursor
            continue
        start = time.perf_counter()
        answer = service.play(game, "me", token, choose(view["legal"]))
        samples.append(time.perf_counter() - start)
        if not answer.applied:
            raise RuntimeError(f"turn refused in {game}: {answer.reason}")
        cursor = service.store.last_change_id(game)


def direct_latency(service: GameService, bot: str, turns: int) -> list[float]:
    """Submit-to-applied of one player on Redis directly (as bench/service.py measures it)."""
    samples: list[float] = []
    while len(samples) < turns:
        game, token = person_game(service, bot, 3, join=True)
        assert token is not None
        play_direct(service, game, token, samples, turns)
    return samples


# ------------------------------------------------------------------ 3. many streams


def drive(
    url: str, games: list[tuple[str, dict[int, tuple[str, str]]]], seconds: float, rate: float, start: float = 0.0
) -> None:
    """(Its own process.) Submit people's turns in ``games``, ``rate`` turns/s in all, round
    robin, for ``seconds`` from ``start`` (a ``time.time()``; default: now); a game where
    none of the seats given (seat -> (name, token)) is to move is skipped.  It looks with
    the view of its first seat, and again with the mover's when that is another seat."""
    service = GameService(redis.Redis.from_url(url))
    interval = 1 / rate
    time.sleep(max(0.0, start - time.time()))  # (benches that run two drivers at once start them together)
    end = time.monotonic() + seconds
    tick = time.monotonic()
    index = 0
    while time.monotonic() < end:
        game, seats = games[index % len(games)]
        index += 1
        first = min(seats)
        view = service.view(game, first)
        mover = view.get("to_move")
        if view["status"] == "playing" and mover in seats:
            view = view if mover == first else service.view(game, mover)
            if view.get("legal"):
                name, token = seats[mover]
                service.submit(game, name, token, choose(view["legal"]))
        tick += interval
        time.sleep(max(0.0, tick - time.monotonic()))


_CHANGE = b'{"type":"change","id":"'


async def spectator(
    port: int, game: str, opened: asyncio.Event, samples: list[float], stop: asyncio.Event, ends: dict[str, int]
) -> None:
    """A public stream read with a raw socket (HTTP/1.1 chunked); each change's delay after
    its write time (its id's milliseconds) goes to ``samples``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET /api/games/{game}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        await writer.drain()
        status = await reader.readline()
        if b" 200 " not in status:
            raise RuntimeError(f"stream of {game}: {status!r}")
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        buffered = b""
        first = True
        last = b""
        while not stop.is_set():
            size = int((await reader.readline()).strip() or b"0", 16)
            if size == 0:
                end = (
                    last[:160].decode(errors="replace")
                    if last.startswith(b'{"type":"error')
                    else last[:40].split(b",")[0].decode(errors="replace")
                )
                if b'"status":"over"' in last:
                    end += " (game over)"
                ends[end] = ends.get(end, 0) + 1
                return
            buffered += (await reader.readexactly(size + 2))[:-2]
            received = time.time() * 1000
            *lines, buffered = buffered.split(b"\n")
            for line in lines:
                last = line or last
                if first:
                    first = False
                    opened.set()
                if line.startswith(_CHANGE):
                    stamp = int(line[len(_CHANGE) : line.index(b"-", len(_CHANGE))])
                    samples.append(received - stamp)
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


def commandstats(conn: redis.Redis) -> dict[str, int]:
    info: dict[str, Any] = conn.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(stats["calls"]) for name, stats in info.items()}


async def many_streams(
    url: str, base: str, pid: int, service: GameService, streams: int, live: int, seconds: float, rate: float
) -> dict[str, Any]:
    games = [person_game(service, "random", 50, join=True) for _ in range(live)]
    for game, _token in games:
        service.created_view(game, 10)
    port = int(base.rsplit(":", 1)[1])
    before = rss_kib(pid)
    stop = asyncio.Event()
    samples: list[float] = []
    ends: dict[str, int] = {}
    opened = [asyncio.Event() for _ in range(streams)]
    tasks = []
    for i in range(streams):
        tasks.append(asyncio.create_task(spectator(port, games[i % live][0], opened[i], samples, stop, ends)))
        if i % 50 == 49:
            await asyncio.gather(*(e.wait() for e in opened[: i + 1]))
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in opened)), 60)
    samples.clear()  # the first views are not changes
    held = rss_kib(pid)
    conn = service.redis
    stats0, cpu0, changes0 = commandstats(conn), cpu_seconds(pid), total_changes(conn, games)
    driver = multiprocessing.get_context("spawn").Process(
        target=drive, args=(url, [(g, {ME: ("me", t)}) for g, t in games if t], seconds, rate)
    )
    started = time.perf_counter()
    driver.start()
    lags: list[float] = []
    watch = asyncio.create_task(loop_lag(lags, stop))
    await asyncio.get_running_loop().run_in_executor(None, driver.join)
    await asyncio.sleep(0.5)  # the last changes' lines
    elapsed = time.perf_counter() - started
    stats1, cpu1, changes1 = commandstats(conn), cpu_seconds(pid), total_changes(conn, games)
    after = rss_kib(pid)
    alive = sum(1 for t in tasks if not t.done())
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, watch, return_exceptions=True)
    failed = [t for t in tasks if not t.cancelled() and t.exception() is not None]
    calls = {k: stats1.get(k, 0) - stats0.get(k, 0) for k in ("exec", "xrange", "get", "xread", "xrevrange")}
    return {
        "samples": samples,
        "rss_before": before,
        "rss_held": held,
        "rss_after": after,
        "alive": alive,
        "failed": [repr(t.exception()) for t in failed][:3],
        "changes": changes1 - changes0,
        "calls": calls,
        "cpu": (cpu1 - cpu0) / elapsed,
        "elapsed": elapsed,
        "ends": ends,
        "lag": lags,
    }


async def loop_lag(lags: list[float], stop: asyncio.Event) -> None:
    """How late this process's event loop runs a 10 ms timer (ms): the clients' own delay."""
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(0.01)
        lags.append((time.perf_counter() - start - 0.01) * 1e3)


def total_changes(conn: redis.Redis, games: list[tuple[str, str | None]]) -> int:
    pipe = conn.pipeline(transaction=False)
    for game, _ in games:
        pipe.xlen(f"red7:{{{game}}}:changes")
    return sum(int(n) for n in pipe.execute())


# ------------------------------------------------------------------ report


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=8, help="players at once in the throughput run")
    parser.add_argument(
        "--games", type=int, default=12, help="games each player plays in each throughput pass (fewer: noisier)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="round wins that end a throughput game")
    parser.add_argument("--bot", default="random")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--turns", type=int, default=100, help="timed turns of the one player")
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--live-games", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=30, help="how long the driver plays the live games")
    parser.add_argument("--rate", type=float, default=50, help="person turns/s the driver submits in all")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.clients, args.games, args.turns, args.streams, args.live_games, args.seconds = 4, 2, 30, 200, 20, 10

    print(f"load average at start: {load_average()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp) / "redis", port=free_port(), binary=redis_binary(prefer_system=True)).start()
        try:
            conn = redis.Redis.from_url(server.url)
            service = GameService(conn)
            rtt = ping_rtt(conn)
            with (
                worker_processes(server.url, args.workers, Path(tmp)),
                gateway_process(server.url, Path(tmp)) as (
                    base,
                    pid,
                ),
            ):
                rss_idle = rss_kib(pid)
                print(f"gateway pid {pid}", flush=True)
                runs = {
                    "http": over_http(base, service, args.bot, args.rounds, args.games),
                    "direct": direct(service, args.bot, args.rounds, args.games),
                }
                done: dict[str, list[tuple[int, float]]] = {"http": [], "direct": []}
                cpu: dict[str, list[float]] = {"http": [0.0, 0.0], "direct": [0.0, 0.0]}  # gateway, clients
                for order in (("http", "direct"), ("direct", "http")):  # ABBA: neither always goes first
                    for path in order:
                        gateway0, clients0 = cpu_seconds(pid), sum(os.times()[:2])
                        games, secs = run_clients(runs[path], args.clients)
                        done[path].append((moves_of(conn, games, joined_over_http=path == "http"), secs))
                        cpu[path][0] += cpu_seconds(pid) - gateway0
                        cpu[path][1] += sum(os.times()[:2]) - clients0
                print(f"throughput done; load average {load_average()}", flush=True)
                seen, answered = asyncio.run(submit_to_seen(base, service, args.bot, args.turns))
                plain = direct_latency(service, args.bot, args.turns)
                print(f"latency done; load average {load_average()}", flush=True)
                crowd = asyncio.run(
                    many_streams(server.url, base, pid, service, args.streams, args.live_games, args.seconds, args.rate)
                )
        finally:
            server.stop()

    version = subprocess.run([server.binary, "--version"], capture_output=True, text=True).stdout.split()[2]
    (http_moves, http_secs), (direct_moves, direct_secs) = (
        tuple(map(sum, zip(*done[path], strict=True))) for path in ("http", "direct")
    )
    http_rate, direct_rate = http_moves / http_secs, direct_moves / direct_secs
    print(
        f"\nRedis {version}, {args.workers} worker processes, 1 gateway process; person vs {args.bot};"
        f" load average at the end: {load_average()}\n"
    )
    print("| measure | value | same-run baseline | ratio |")
    print("|---|---|---|---|")
    print(f"| PING round trip | {rtt * 1e6:.0f} µs | — | — |")
    each = ", ".join(
        f"{h[0] / h[1]:,.0f} vs {d[0] / d[1]:,.0f}" for h, d in zip(done["http"], done["direct"], strict=True)
    )
    print(
        f"| validated moves/s, {args.clients} players at once over HTTP ({2 * args.clients * args.games} games to"
        f" {args.rounds} rounds, in two passes: {each}) | {http_rate:,.0f} moves/s ({http_moves:.0f} moves in"
        f" {http_secs:.1f} s) | on Redis directly: {direct_rate:,.0f} moves/s ({direct_moves:.0f} moves in"
        f" {direct_secs:.1f} s) | {direct_rate / http_rate:.2f}× slower |"
    )
    print(
        f"| CPU per validated move (gateway process; this benchmark's client threads) | over HTTP:"
        f" {cpu['http'][0] / http_moves * 1e3:.2f} ms; {cpu['http'][1] / http_moves * 1e3:.2f} ms | on Redis"
        f" directly: —; {cpu['direct'][1] / direct_moves * 1e3:.2f} ms | — |"
    )
    med, p90 = statistics.median(seen), percentile(seen, 0.9)
    base_med = statistics.median(plain)
    print(
        f"| submit-to-seen over HTTP, 1 player (POST to its change on the seat's stream) | median {med * 1e3:.2f} ms,"
        f" p90 {p90 * 1e3:.2f} ms ({len(seen)} turns) | submit-to-applied on Redis directly: median"
        f" {base_med * 1e3:.2f} ms, p90 {percentile(plain, 0.9) * 1e3:.2f} ms | {med / base_med:.2f}× |"
    )
    print(
        f"| POST a turn to its answer, same player | median {statistics.median(answered) * 1e3:.2f} ms,"
        f" p90 {percentile(answered, 0.9) * 1e3:.2f} ms | — | — |"
    )
    samples = crowd["samples"]
    per_stream = (crowd["rss_held"] - crowd["rss_before"]) / args.streams
    print(
        f"| change-to-client, {args.streams} public streams on {args.live_games} live games"
        f" ({len(samples)} lines, {crowd['changes']} changes in {crowd['elapsed']:.1f} s) | median"
        f" {statistics.median(samples):.0f} ms, p90 {percentile(samples, 0.9):.0f} ms, p99"
        f" {percentile(samples, 0.99):.0f} ms | — | — |"
    )
    print(
        f"| gateway RSS | idle {rss_idle / 1024:.1f} MiB; before the streams {crowd['rss_before'] / 1024:.1f} MiB;"
        f" {args.streams} open {crowd['rss_held'] / 1024:.1f} MiB; after the run {crowd['rss_after'] / 1024:.1f} MiB"
        f" | — | {per_stream:.1f} KiB per stream |"
    )
    calls, changes = crowd["calls"], max(1, crowd["changes"])
    print(
        f"| gateway during the stream run | {crowd['cpu']:.2f} CPU cores; Redis calls: "
        + ", ".join(f"{k.upper()} {v:,}" for k, v in calls.items())
        + f" | {crowd['changes']} changes | EXEC {calls['exec'] / changes:.1f} per change |"
    )
    lag = crowd["lag"]
    print(
        f"\nstreams still open at the end: {crowd['alive']} of {args.streams}; ended early, by last line:"
        f" {crowd['ends'] or 'none'}; failed: {crowd['failed'] or 'none'}; the clients' event loop ran a 10 ms timer"
        f" late by median {statistics.median(lag):.1f} ms, p90 {percentile(lag, 0.9):.1f} ms"
    )


def moves_of(conn: redis.Redis, games: list[str], *, joined_over_http: bool) -> int:
    """Applied turns (the person's and the bot's) in ``games``: their commands stream's
    entries, less the create and, over HTTP, the join (no turn was refused in these runs:
    each was legal). (Not ``cmdids``: bots' command ids are not stored there.)"""
    pipe = conn.pipeline(transaction=False)
    for game in games:
        pipe.xlen(f"red7:{{{game}}}:commands")
    return sum(int(n) - 1 - (1 if joined_over_http else 0) for n in pipe.execute())


if __name__ == "__main__":
    main()
