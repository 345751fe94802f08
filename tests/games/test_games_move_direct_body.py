"""A move's body read outside Django (games/api/move_direct.py) is capped as Django caps it: a
real web worker (gunicorn, one uvicorn worker) that has answered a client's move through Django
is sent a 200 MB body by the same client, with its length or in chunks; it stops reading at
``DATA_UPLOAD_MAX_MEMORY_SIZE`` + 1, answers Django's 413 problem, and its memory stays flat."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.games.conftest import Player, start_table

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
_MB = 1024 * 1024
_HUGE = 200 * _MB


def _status_kib(pid: int, field: str) -> int:
    """``field`` of /proc/<pid>/status (VmRSS, VmHWM), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def _worker_pid(master: int, timeout: float = 30.0) -> int:
    """The gunicorn master's one worker process."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.1)
    raise AssertionError("gunicorn started no worker")


def _server(tmp_path: Path) -> Iterator[tuple[int, subprocess.Popen[bytes], Path]]:
    from tests.faults.harness import free_port, process_stop
    from tests.games.test_games_tasks import database_url

    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "SECRET_KEY": "test-only",
        "CHAN_TOKEN_CACHE_SECONDS": "5",  # (a client's template needs the token's memory)
        "MOVE_DIRECT": "1",
    }
    log = tmp_path / "gunicorn.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "--workers", "1"]
            + ["--bind", f"127.0.0.1:{port}", "chan_api.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=out,
        )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                time.sleep(0.2)
        yield port, server, log
    finally:
        process_stop(server)


server = pytest.fixture(_server)


def _post(port: int, path: str, headers: dict[str, str], body: Any, chunked: bool) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", path, body=body, headers=headers, encode_chunked=chunked)
    answer = conn.getresponse()
    return answer.status, answer.getheader("Content-Type"), answer.read()


def _turn(players: list[Player], hand_id: int) -> tuple[Player, dict[str, Any]]:
    for p in players:
        view = p.client.get(f"/api/v1/hands/{hand_id}").json()
        if view["legal_moves"]:
            return p, view
    raise AssertionError("nobody may move")


@pytest.mark.slow(seconds=20)
@pytest.mark.parametrize("sent", ["content-length", "chunked"])
def test_a_200_mb_move_body_is_refused_at_the_limit_and_the_worker_stays_flat(
    server: tuple[int, subprocess.Popen[bytes], Path], players: list[Player], sent: str
) -> None:
    port, gunicorn, log = server
    worker = _worker_pid(gunicorn.pid)
    hand_id = start_table(players)["hand"]
    player, view = _turn(players, hand_id)
    path = f"/api/v1/hands/{hand_id}/moves"
    headers = {
        "Authorization": f"Bearer {player.token}",
        "Content-Type": "application/json",
        "Accept": "application/json",
    }
    chunked = sent == "chunked"
    if chunked:
        headers["Transfer-Encoding"] = "chunked"
    # Given a client whose move Django accepted (its answer now a template for the next ones),
    move = json.dumps({**view["legal_moves"][0], "expected_seq": view["seq"]}).encode()
    first = _post(port, path, headers, iter([move]) if chunked else move, chunked)
    assert first[0] == 201, (first, log.read_text()[-3000:])
    before_rss, before_peak = _status_kib(worker, "VmRSS"), _status_kib(worker, "VmHWM")

    # when the same client sends 200 MB on the same endpoint (streamed, 1 MB at a time),
    def huge() -> Iterator[bytes]:
        chunk = b" " * _MB
        for _ in range(_HUGE // _MB):
            yield chunk

    big_headers = dict(headers) if chunked else {**headers, "Content-Length": str(_HUGE)}
    status, content_type, body = _post(port, path, big_headers, huge(), chunked)
    # then it is Django's 413 problem,
    assert status == 413, (status, body[:300], log.read_text()[-3000:])
    assert content_type == "application/problem+json"
    assert json.loads(body)["code"] == "body_too_large"
    # and the worker never held the body: its resident memory, and its peak, grew < 20 MB.
    grown_rss = _status_kib(worker, "VmRSS") - before_rss
    grown_peak = _status_kib(worker, "VmHWM") - before_peak
    assert grown_peak < 20 * 1024, f"peak grew by {grown_peak} KiB (resident: {grown_rss} KiB)"
    assert grown_rss < 20 * 1024, f"resident grew by {grown_rss} KiB"
