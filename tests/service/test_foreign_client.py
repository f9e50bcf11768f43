"""A client written from docs/events.md alone plays a game against a real worker.

The client below uses only redis, msgpack and cryptography, and the Lua scripts as
the page prints them: it creates a game, joins a seat, waits for answers on the
changes stream, submits signed turns (canonical, other spellings, an open turn's
continuation), a wrong turn and corrupt bytes, and finally checks the hash chain and
the revealed seed.  If the page and the service drift apart, this fails.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import msgpack
import redis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from support import WorkerPool, wait_for

EVENTS_MD = Path(__file__).resolve().parents[2] / "docs" / "events.md"
SERVICE = Path(__file__).resolve().parents[2] / "red7es" / "service"


def _lua_blocks() -> list[str]:
    return re.findall(r"```lua\n(.*?)```", EVENTS_MD.read_text(encoding="utf-8"), re.S)


def test_the_lua_scripts_on_the_page_are_the_ones_the_service_runs() -> None:
    scripts = {path.read_text(encoding="utf-8") for path in SERVICE.glob("*.lua")}
    blocks = _lua_blocks()
    assert len(blocks) == 2
    for block in blocks:
        assert block in scripts, block.splitlines()[0]


class DocsClient:
    """What events.md tells a client to do, and nothing from red7es."""

    def __init__(self, r: redis.Redis, game: str) -> None:
        self.r = r
        self.game = game
        blocks = {b.splitlines()[0]: b for b in _lua_blocks()}
        self.submit_lua = r.register_script(blocks["-- Append a client command exactly once per command id."])
        self.create_lua = r.register_script(
            blocks["-- Create a game: store its secret seed and its first command, once."]
        )
        self.tokens: dict[int, Ed25519PrivateKey] = {}

    def key(self, name: str) -> str:
        return f"red7:{{{self.game}}}:{name}"

    @staticmethod
    def command(kind: str, data: dict[str, Any]) -> bytes:
        return msgpack.packb({"type": kind, "version": 1, "at": int(time.time() * 1000), "data": data})  # type: ignore[no-any-return]

    def new_token(self, seat: int) -> str:
        self.tokens[seat] = Ed25519PrivateKey.from_private_bytes(os.urandom(32))
        return self.tokens[seat].public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()

    def wake(self) -> None:
        nudged = self.r.set(self.key("nudge"), 1, nx=True, px=30000)
        self.r.zadd("red7:work", {self.game: 0}, nx=True)
        if nudged:
            self.r.xadd("red7:inbox", {"g": self.game}, maxlen=100000, approximate=True)

    def last_change(self) -> str:
        last = self.r.xrevrange(self.key("changes"), count=1)
        return last[0][0].decode() if last else "0-0"

    def create(self, variant: dict[str, Any], seats: list[dict[str, Any]], joins: list[int], seed: bytes) -> None:
        at = int(time.time() * 1000)
        data = {
            "id": f"create-{self.game}",
            "variant": variant,
            "seats": seats,
            "commitment": hashlib.sha256(seed).hexdigest(),
            "joins": [[seat, self.new_token(seat)] for seat in joins],
        }
        raw = msgpack.packb({"type": "Create", "version": 1, "at": at, "data": data})
        keys = [self.key("commands"), self.key("meta"), self.key("secret"), self.key("cmdids")]
        assert self.create_lua(keys=keys, args=[data["id"], raw, seed.hex(), at, "0" * 64]) is not None
        self.r.zadd("red7:games", {self.game: at})
        self.r.sadd("red7:active", self.game)
        self.wake()

    def submit(self, command_id: str, raw: bytes) -> str:
        keys = [self.key("commands"), self.key("cmdids"), self.key("meta")]
        code, stream_id = self.submit_lua(keys=keys, args=[command_id, raw])
        assert code in (1, 2), code
        self.wake()
        return stream_id.decode()  # type: ignore[no-any-return]

    def wait(self, after: str, match: Any) -> dict[str, Any]:
        """Read the changes stream from ``after`` (XREAD BLOCK, no polling) until ``match``."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for _stream, entries in self.r.xread({self.key("changes"): after}, block=1000) or []:
                for entry_id, fields in entries:
                    after = entry_id.decode()
                    for event in msgpack.unpackb(fields[b"p"])["events"]:
                        if match(event):
                            return event  # type: ignore[no-any-return]
        raise AssertionError("no answer within 30 s")

    def join(self, seat: int) -> None:
        key, command_id, after = self.new_token(seat), uuid.uuid4().hex, self.last_change()
        self.submit(command_id, self.command("Join", {"id": command_id, "seat": seat, "key": key}))
        answer = self.wait(after, lambda e: e.get("key") == key or e.get("id") == command_id)
        assert answer["type"] == "SeatJoined", answer

    def turn(self, seat: int, text: str) -> dict[str, Any]:
        command_id, after = uuid.uuid4().hex, self.last_change()
        view = msgpack.unpackb(self.r.get(self.key("view:public")), raw=False)  # what its turns are signed over
        head = f"red7es/turn/v2\n{self.game}\n{view['commitment']}" if view.get("signs") == "red7es/turn/v2" else None
        assert head is not None  # a game created today signs turn/v2 (docs/events.md)
        message = f"{head}\n{command_id}\n{seat}\n{text}".encode()
        sig = self.tokens[seat].sign(message).hex()
        data = {"id": command_id, "seat": seat, "turn": text, "by": "person", "sig": sig}
        self.submit(command_id, self.command("Turn", data))
        return self.wait(after, lambda e: e["type"] in ("CommandApplied", "CommandRejected") and e["id"] == command_id)

    def view(self, seat: int) -> dict[str, Any]:
        return msgpack.unpackb(self.r.get(self.key(f"view:{seat}")))  # type: ignore[no-any-return]


def _respell(turn: str) -> str:
    """Another spelling of the same turn: lower case, commas, the implied end written (fold has none)."""
    spelled = turn.lower().replace(" ", ",")
    return spelled if turn == "fold" else spelled + " end"


def test_a_client_written_from_the_page_plays_a_whole_game(real_redis: redis.Redis, workers: WorkerPool) -> None:
    workers.start(1, wait=True)
    client = DocsClient(real_redis, "foreign-1")
    seed = hashlib.sha256(b"foreign-1").digest()  # a fixed deal: the same game every run
    variant = {"players": 3, "scoring": True, "draw": True, "actions": True, "rounds": 1, "target": 12}
    seats = [
        {"name": "ann", "kind": "person", "bot": None},
        {"name": "bob", "kind": "person", "bot": None},
        {"name": "gus", "kind": "bot", "bot": "greedy"},
    ]
    client.create(variant, seats, joins=[0], seed=seed)
    wait_for(lambda: real_redis.exists(client.key("view:0")), "the worker's first views")
    client.join(1)

    # the page's script refuses a command submitted under another id than its data.id
    turn = {"id": "data-id", "seat": 0, "turn": "fold", "by": "person", "sig": ""}
    keys = [client.key("commands"), client.key("cmdids"), client.key("meta")]
    assert client.submit_lua(keys=keys, args=["argv-id", client.command("Turn", turn)]) == [4, b""]

    # corrupt bytes are answered by stream id
    after = client.last_change()
    stream_id = client.submit("junk-1", b"\xc1 no command")
    corrupt = client.wait(after, lambda e: e.get("id") == stream_id)
    assert (corrupt["type"], corrupt["kind"], corrupt["seat"]) == ("CommandRejected", "corrupt", -1)

    wrong_tried = respelled = continued = 0
    for _ in range(2000):
        mark = client.last_change()  # before the view: a change after it cannot be missed
        view = client.view(0)
        if view["status"] == "over":
            break
        seat = view["to_move"]
        if seat is None or seat == 2:  # between rounds, or the bot's move
            client.wait(mark, lambda e: True)
            continue
        mine = client.view(seat)
        legal = mine["legal"]
        if not wrong_tried:
            rejected = client.turn(seat, "p:R9")
            assert rejected["type"] == "CommandRejected" and set(rejected) == {"type", "id", "seat", "kind"}
            assert "not a card" in client.view(seat)["rejected"]["reason"]
            wrong_tried = 1
        text = legal[len(view["canvas"]) % len(legal)]
        was_open = bool(mine["turn_steps"])
        if not text.endswith("...") and not was_open:
            respelled += 1
            answer = client.turn(seat, _respell(text))
        else:
            continued += was_open
            answer = client.turn(seat, text)
        assert answer["type"] == "CommandApplied", (text, client.view(seat)["rejected"])
        assert answer["turn"] == text  # the canonical text, whatever was sent
    else:
        raise AssertionError("the game did not end")
    assert respelled and continued, "this deal no longer has an open turn to continue: pick another seed"

    # the log: a hash chain from 32 zero bytes, ending at meta.head, revealing our seed
    # (an entry per append: v, then its events e, e1, e2, ...)
    head, last, count = bytes(32), None, 0
    for _id, fields in real_redis.xrange(client.key("log")):
        raws = [fields[b"e"]]
        while b"e%d" % len(raws) in fields:
            raws.append(fields[b"e%d" % len(raws)])
        count += len(raws)
        assert int(fields[b"v"]) == count
        for j, raw in enumerate(raws):
            event = msgpack.unpackb(raw)
            assert event["prev"] == head and event["seq"] == count - len(raws) + j
            head, last = hashlib.sha256(raw).digest(), event
    assert real_redis.hget(client.key("meta"), "head") == head.hex().encode()
    assert last is not None and last["type"] == "SeedRevealed"
    assert bytes.fromhex(last["data"]["seed"]) == seed


def test_a_client_blocked_on_the_changes_stream_learns_that_its_create_failed(
    real_redis: redis.Redis, workers: WorkerPool
) -> None:
    """A create the worker cannot start writes no log: the one change entry wakes the client."""
    workers.start(1, wait=True)
    client = DocsClient(real_redis, "foreign-bad")
    woken: list[Any] = []
    reader = redis.Redis(connection_pool=redis.ConnectionPool(**real_redis.connection_pool.connection_kwargs))
    blocked = threading.Thread(target=lambda: woken.append(reader.xread({client.key("changes"): "0-0"}, block=30_000)))
    blocked.start()  # blocks before the game even exists, as a client that waits for its answer does
    wait_for(lambda: real_redis.info("clients")["blocked_clients"] >= 1, "the client to block")
    person = {"kind": "person", "bot": None}
    variant = {"players": 2, "scoring": False, "draw": False, "actions": False, "rounds": 1, "target": None}
    started = time.monotonic()
    client.create(variant, [{"name": "ann", **person}, {"name": "ann", **person}], joins=[0], seed=os.urandom(32))
    blocked.join(timeout=30)
    assert time.monotonic() - started < 10 and woken and woken[0], "the client was not woken"
    [[_stream, [(_id, fields)]]] = woken[0]
    reason = "cannot create the game: seat names must be different (ann appears twice)"
    assert fields[b"v"] == b"0"
    assert msgpack.unpackb(fields[b"p"]) == {"from": 0, "to": 0, "events": [], "broken": reason}
    meta = real_redis.hgetall(client.key("meta"))
    assert (meta[b"broken"], meta[b"status"], meta[b"version"]) == (reason.encode(), b"new", b"0")
    assert real_redis.xlen(client.key("log")) == 0 and not real_redis.exists(client.key("view:public"))
    reader.close()
