"""``red7 gateway --ssl-certfile/--ssl-keyfile`` serves HTTPS: a real process with a
self-signed certificate made here, and an httpx client that trusts only it."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from support import self_signed, wait_for

from red7es.service.client import GameService
from red7es.service.redis_server import free_port

from .conftest import Gateway, join, new_game

pytestmark = pytest.mark.integration


def test_red7_gateway_serves_https_with_the_given_certificate(
    served: Gateway, service: GameService, tmp_path: Path
) -> None:
    cert_file, key_file = self_signed(tmp_path)
    port = free_port()
    command = [sys.executable, "-m", "red7es.cli", "gateway", "--port", str(port), "--log-level", "warning"]
    tls = ["--ssl-certfile", str(cert_file), "--ssl-keyfile", str(key_file)]
    env = dict(os.environ, REDIS_URL=served.url)
    process = subprocess.Popen([*command, *tls], env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    trusting = ssl.create_default_context(cafile=str(cert_file))
    base = f"https://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, verify=trusting, timeout=20) as http:

            def answers() -> bool:
                assert process.poll() is None, process.communicate()
                try:
                    return http.get("/api/games").status_code == 200
                except httpx.TransportError:
                    return False

            wait_for(answers, "red7 gateway to answer over HTTPS")
            game = new_game(service, ["ann"], {"bob": "greedy"})
            assert "hand" in join(http, game, 0).view()
        with httpx.Client(base_url=base, timeout=20) as untrusting, pytest.raises(httpx.ConnectError):
            untrusting.get("/api/games")  # the system's CAs do not vouch for it
        with (
            httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20) as plain,
            pytest.raises(httpx.TransportError),
        ):
            plain.get("/api/games")  # no plain HTTP on that port
    finally:
        process.terminate()
        out, _err = process.communicate(timeout=20)
    assert f"red7es gateway on https://127.0.0.1:{port} for" in out.decode()
    alone = subprocess.run([*command, "--ssl-certfile", str(cert_file)], env=env, capture_output=True, text=True)
    assert alone.returncode == 2 and "--ssl-certfile and --ssl-keyfile go together" in alone.stderr
