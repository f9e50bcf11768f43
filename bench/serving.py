"""What the gateway's own uvicorn protocol costs a request, beside uvicorn's (one run).

    python bench/serving.py [REQUESTS] [ROUNDS]

``red7 gateway`` serves through :class:`red7es.gateway.serving.RequestDeadline`, uvicorn's
h11 protocol plus a deadline for each request to arrive whole, the per-address and
per-process connection caps, a size check of every request's head and one write per
answer (head and first body bytes together).  This bench drives ``REQUESTS`` (default
5,000) keep-alive GETs down one connection of each protocol, in process, to an ASGI app
that answers a fixed JSON body at once, with a transport that records nothing (so the
figure is the protocol's and the event loop's work, not the network's), and reports the
best of ``ROUNDS`` (default 5) rounds of each, alternating which goes first, and the ratio.
The baseline is uvicorn's own ``H11Protocol`` under the same options but the protocol.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from red7es.gateway.serving import uvicorn_options

REQUEST = b"GET /api/games/abc HTTP/1.1\r\nHost: gw\r\nUser-Agent: bench\r\nAccept: application/json\r\n\r\n"
BODY = b'{"game":"abc","status":"playing"}'


class Sink(asyncio.Transport):
    """A transport that counts writes and keeps nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes += 1

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("203.0.113.9", 5000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": BODY})


def per_request(gateways: bool, requests: int) -> float:
    """Microseconds a keep-alive request takes through one protocol, answered whole."""
    options = uvicorn_options()
    if not gateways:
        options["http"] = H11Protocol

    async def run() -> float:
        config = Config(app=app, log_level="warning", forwarded_allow_ips="192.0.2.1", **options)
        config.load()
        protocol = config.http_protocol_class(config=config, server_state=ServerState(), app_state={})
        sink = Sink()
        protocol.connection_made(sink)
        started = time.perf_counter()
        for _ in range(requests):
            protocol.data_received(REQUEST)
            for _ in range(4):  # the answer's task runs
                await asyncio.sleep(0)
        elapsed = time.perf_counter() - started
        if sink.closed or sink.writes < requests:
            raise AssertionError(f"only {sink.writes} answers of {requests}")
        protocol.connection_lost(None)
        return elapsed / requests * 1e6

    return asyncio.run(run())


def main() -> None:
    requests = int(sys.argv[1]) if len(sys.argv) > 1 else 5_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    best = {True: float("inf"), False: float("inf")}
    for n in range(rounds):
        for gateways in (n % 2 == 0, n % 2 != 0):
            best[gateways] = min(best[gateways], per_request(gateways, requests))
    print("| protocol | µs per keep-alive request (best of rounds) |")
    print("|---|---:|")
    print(f"| uvicorn's H11Protocol (baseline) | {best[False]:.1f} |")
    print(f"| red7 gateway's RequestDeadline | {best[True]:.1f} |")
    print(f"| ratio | {best[True] / best[False]:.2f}× |")


if __name__ == "__main__":
    main()
