"""A private Redis started on a port someone else holds for a moment (a node restarted on
its own port, which a client's connection took meanwhile) waits for the port instead of
failing at once; one held for good still fails, in one line that says why."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from red7es.service.redis_server import RedisServer, ServerError, free_port, redis_binary


def _held(port: int) -> socket.socket:
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", port))
    holder.listen(1)
    return holder


def test_a_port_held_for_a_moment_is_waited_for(tmp_path: Path) -> None:
    port = free_port()
    holder = _held(port)
    threading.Timer(0.6, holder.close).start()
    server = RedisServer(tmp_path / "redis", port=port, binary=redis_binary(prefer_system=True)).start()
    try:
        assert server.client().ping()
    finally:
        server.stop()


def test_a_port_held_for_good_fails_in_one_line(tmp_path: Path) -> None:
    port = free_port()
    holder = _held(port)
    try:
        with pytest.raises(ServerError, match=f"Failed listening on port {port}"):
            RedisServer(tmp_path / "redis", port=port, binary=redis_binary(prefer_system=True)).start(timeout=1.0)
    finally:
        holder.close()
