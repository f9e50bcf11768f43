"""How the gateway's uvicorn protocol writes a response: head and first body bytes in one
write (red7es/gateway/serving.py, Coalescing), driven through uvicorn's real h11 protocol
with a transport that records each write."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.config import Config
from uvicorn.server import ServerState

from red7es.gateway.serving import Coalescing, uvicorn_options


class Recording(asyncio.Transport):
    """A transport that keeps every write apart."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
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
