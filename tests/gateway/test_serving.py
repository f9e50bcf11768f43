"""How the gateway's uvicorn protocol writes a response: head and first body bytes in one
write (red7es/gateway/serving.py, Coalescing), and what it refuses before the app sees
it (connections past the caps, what h11 cannot parse, heads over 16 KiB), driven through
uvicorn's real h11 protocol with a transport that records each write."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from uvicorn.config import Config
from uvicorn.server import ServerState

from red7es.gateway.serving import MAX_INCOMPLETE, Coalescing, address_key, uvicorn_options


class Recording(asyncio.Transport):
    """A transport that keeps every write apart."""

    def __init__(self, peer: str = "127.0.0.1") -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False
        self.peer = peer

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": (self.peer, 5000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        pass


async def _app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    if scope["path"] == "/stream":
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/x-ndjson")]}
        )
        for line in (b'{"a":1}\n', b'{"b":2}\n'):
            await send({"type": "http.response.body", "body": line, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    body = b'{"ok":true}'
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _serve(requests: bytes) -> list[bytes]:
    async def run() -> list[bytes]:
        config = Config(app=_app, log_level="warning", **uvicorn_options())
        config.load()
        protocol = config.http_protocol_class(config=config, server_state=ServerState(), app_state={})
        transport = Recording()
        protocol.connection_made(transport)  # type: ignore[arg-type]
        protocol.data_received(requests)  # type: ignore[attr-defined]
        for _ in range(100):
            await asyncio.sleep(0)
        protocol.connection_lost(None)
        return transport.writes

    return asyncio.run(run())


def test_an_answer_is_one_write_head_and_body() -> None:
    writes = _serve(b"GET /x HTTP/1.1\r\nHost: gw\r\n\r\n")
    assert len(writes) == 1, writes
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n") and writes[0].endswith(b'\r\n\r\n{"ok":true}')


def test_keep_alive_answers_are_one_write_each() -> None:
    writes = _serve(b"GET /x HTTP/1.1\r\nHost: gw\r\n\r\n" * 3)
    assert len(writes) == 3 and all(w.endswith(b'{"ok":true}') for w in writes), writes


def test_a_stream_sends_its_head_with_its_first_line_and_each_line_as_it_comes() -> None:
    writes = _serve(b"GET /stream HTTP/1.1\r\nHost: gw\r\n\r\n")
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n") and writes[0].endswith(b'{"a":1}\n\r\n')
    assert writes[1].endswith(b'{"b":2}\n\r\n')
    assert writes[-1] == b"0\r\n\r\n"


def test_what_is_held_is_sent_at_close() -> None:
    real = Recording()
    transport = Coalescing(real)
    transport.hold()
    transport.write(b"head")
    transport.release()
    assert real.writes == []
    transport.close()
    assert real.writes == [b"head"] and real.closed


# ---------------------------------------------------------------- refused before the app


def _json_answer(writes: list[bytes]) -> tuple[int, dict[str, Any]]:
    """The status and JSON body of the one response in ``writes``."""
    data = b"".join(writes)
    head, _, body = data.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head.lower(), head
    return int(head.split()[1]), json.loads(body)


class Server:
    """One uvicorn server's state and protocol class: connections made and lost by hand."""

    def __init__(self, max_connections: int = 2, proxies: str = "127.0.0.1,::1") -> None:
        options = uvicorn_options(max_connections=max_connections)
        self.config = Config(app=_app, log_level="warning", forwarded_allow_ips=proxies, **options)
        self.config.load()
        self.state = ServerState()

    def connect(self, peer: str) -> tuple[Any, Recording]:
        protocol = self.config.http_protocol_class(config=self.config, server_state=self.state, app_state={})
        transport = Recording(peer)
        protocol.connection_made(transport)
        return protocol, transport


def test_an_address_past_its_connections_is_answered_429_in_json_and_others_are_not() -> None:
    async def run() -> None:
        server = Server(max_connections=2)
        held = [server.connect("203.0.113.7") for _ in range(2)]
        assert all(not t.writes and not t.closed for _, t in held)
        _, third = server.connect("203.0.113.7")
        assert third.closed
        status, body = _json_answer(third.writes)
        assert (status, body) == (429, {"error": "too many connections from this address: at most 2 at once"})
        _, other = server.connect("198.51.100.1")  # another address: served
        assert not other.closed
        held[0][0].connection_lost(None)  # one closes: the address may open one more
        _, again = server.connect("203.0.113.7")
        assert not again.closed and not again.writes

    asyncio.run(run())


def test_a_trusted_proxy_has_no_per_address_cap_unless_it_is_not_trusted() -> None:
    async def run() -> None:
        proxied = Server(max_connections=1)  # uvicorn's default: loopback is a proxy
        assert not any(proxied.connect("127.0.0.1")[1].closed for _ in range(5))
        direct = Server(max_connections=1, proxies="10.9.9.9")
        assert not direct.connect("127.0.0.1")[1].closed
        assert direct.connect("127.0.0.1")[1].closed

    asyncio.run(run())


def test_ipv6_clients_are_counted_by_their_64_and_mapped_ipv4_as_ipv4() -> None:
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:203.0.113.7") == address_key("203.0.113.7") == "203.0.113.7"

    async def run() -> None:
        server = Server(max_connections=1)
        assert not server.connect("2001:db8:1:2::1")[1].closed
        assert server.connect("2001:db8:1:2::ffff")[1].closed

    asyncio.run(run())


def test_past_the_gateways_connections_a_new_one_is_answered_503_in_json() -> None:
    async def run() -> None:
        server = Server(max_connections=0)
        server.config.http_protocol_class.open_cap = 3
        kept = [server.connect(f"198.51.100.{i}")[1] for i in range(3)]
        assert not any(t.closed for t in kept)
        _, refused = server.connect("198.51.100.200")
        status, body = _json_answer(refused.writes)
        assert status == 503 and body["error"].startswith("the gateway is full")

    asyncio.run(run())


@pytest.mark.parametrize(
    "garbage",
    [b"\x16\x03\x01 not http\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"],
)
def test_what_h11_cannot_parse_is_a_json_400(garbage: bytes) -> None:
    status, body = _json_answer(_serve(garbage))
    assert (status, body) == (400, {"error": "malformed HTTP request"})


@pytest.mark.parametrize("packets", [1, 3])
def test_a_head_over_16_kib_is_refused_in_one_packet_or_several(packets: int) -> None:
    head = b"GET /x HTTP/1.1\r\nHost: gw\r\nX-Big: " + b"a" * (MAX_INCOMPLETE + 10) + b"\r\n\r\n"
    size = len(head) // packets + 1

    async def run() -> list[bytes]:
        server = Server()
        protocol, transport = server.connect("127.0.0.1")
        for start in range(0, len(head), size):
            if not transport.closed:
                protocol.data_received(head[start : start + size])
        for _ in range(20):
            await asyncio.sleep(0)
        return transport.writes

    status, body = _json_answer(asyncio.run(run()))
    assert status == 431 and body == {"error": f"request line and headers over {MAX_INCOMPLETE:,} bytes"}


def test_a_head_under_16_kib_with_its_body_in_one_packet_is_served() -> None:
    head = b"POST /x HTTP/1.1\r\nHost: gw\r\nX-Big: " + b"a" * (MAX_INCOMPLETE - 200)
    body = b"b" * (MAX_INCOMPLETE + 1000)  # a body's size is the app's to judge (BodyLimit), not the head's
    writes = _serve(head + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    assert writes and writes[0].startswith(b"HTTP/1.1 200 OK")


def _feed(packets: list[bytes], server: Server | None = None, peer: str = "127.0.0.1") -> tuple[Any, Recording]:
    async def run() -> tuple[Any, Recording]:
        protocol, transport = (server or Server()).connect(peer)
        for packet in packets:
            if not transport.closed:
                protocol.data_received(packet)
            for _ in range(20):
                await asyncio.sleep(0)
        return protocol, transport

    return asyncio.run(run())


def test_a_large_head_behind_another_request_in_the_same_packet_is_refused() -> None:
    """Was: checked only as a packet began a request, so the second head of a pipelined pair passed whole."""
    big = b"GET /b HTTP/1.1\r\nHost: gw\r\nX-Big: " + b"a" * (MAX_INCOMPLETE * 6) + b"\r\n\r\n"
    _, transport = _feed([b"GET /a HTTP/1.1\r\nHost: gw\r\n\r\n" + big])
    answers = b"".join(transport.writes)
    assert answers.startswith(b"HTTP/1.1 200 OK") and b"HTTP/1.1 431 " in answers and transport.closed


def test_a_head_that_never_ends_is_refused_once_past_16_kib() -> None:
    _, transport = _feed([b"GET /x HTTP/1.1\r\nX-Big: " + b"a" * 9000, b"a" * 9000])
    status, _body = _json_answer(transport.writes)
    assert status == 431 and transport.closed


def test_a_request_with_bare_line_feeds_and_a_large_body_in_one_packet_is_served() -> None:
    """Was: 431, the head's end looked for as CRLF CRLF only (h11 takes bare LFs)."""
    body = b"b" * 20_000
    _, transport = _feed([b"POST /lf HTTP/1.1\nHost: x\nContent-Length: 20000\n\n" + body])
    assert transport.writes and transport.writes[0].startswith(b"HTTP/1.1 200 OK")


class _WebSocket(asyncio.Protocol):
    """Stands in for a WebSocket protocol (no library of one is installed here)."""

    def __init__(self, **_kwargs: Any) -> None:
        pass

    def data_received(self, data: bytes) -> None:
        pass


def test_a_websocket_upgrade_gives_its_address_count_back() -> None:
    """uvicorn hands an upgraded connection to another protocol object, whose end this one
    never hears of: with a WebSocket library installed (uvicorn's default ``ws="auto"``), a
    few upgrades locked the address out for good. ``red7 gateway`` serves no WebSocket at
    all (``ws="none"``); and an upgrade under a configuration that does gives the count back."""
    assert uvicorn_options()["ws"] == "none"
    server = Server(max_connections=1, proxies="10.9.9.9")
    server.config.ws_protocol_class = _WebSocket
    upgrade = b"GET /x HTTP/1.1\r\nHost: gw\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    upgrade += b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"

    async def run() -> bool:
        for _ in range(3):
            protocol, transport = server.connect("127.0.0.1")
            assert not transport.closed
            protocol.data_received(upgrade)
        return server.connect("127.0.0.1")[1].closed

    assert not asyncio.run(run())
