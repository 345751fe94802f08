"""The client's address is decided once (chan_api.throttles.client_address) for the throttles
and ``/metrics``: the socket's peer with ``NUM_PROXIES`` = 0, whatever X-Forwarded-For the
client sends; behind proxies the address the nearest one saw. Checked on the real server
(gunicorn with the deploy config and its uvicorn workers) and on the function itself."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.test import RequestFactory

from chan_api.throttles import AnonThrottle, client_address
from tests.chan_api.test_deploy import free_port
from tests.games.test_games_tasks import database_url

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def status_of(url: str, **headers: str) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as error:
        return error.code


def gunicorn(tmp_path: Path, num_proxies: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"PYTEST_VERSION", "DEBUG"}}
    env.update(
        SECRET_KEY="client-address-test",
        DATABASE_URL=database_url(),
        CHAN_VAR_DIR=str(tmp_path / "var"),
        BIND=f"127.0.0.1:{port}",
        WEB_WORKERS="1",
        CHAN_CLOCK="0",
        NUM_PROXIES=str(num_proxies),
    )
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    server = subprocess.Popen(
        [str(BIN / "gunicorn"), "-c", "deploy/gunicorn.conf.py", "chan_api.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if status_of(f"{base}/healthz") == 200:
                return server, base
        except OSError:
            pass
        assert time.monotonic() < deadline and server.poll() is None, "gunicorn did not start"
        time.sleep(0.3)


@pytest.mark.django_db(transaction=True)
def test_metrics_judge_the_socket_address_not_a_local_clients_own_header(tmp_path) -> None:
    # Given the production server on this machine with no proxy in front (NUM_PROXIES=0)
    server, base = gunicorn(tmp_path, num_proxies=0)
    try:
        # a local client is let in, whatever X-Forwarded-For it sends (it is never judged)
        assert status_of(f"{base}/metrics") == 200
        assert status_of(f"{base}/metrics", **{"X-Forwarded-For": "203.0.113.9"}) == 200
        assert status_of(f"{base}/metrics", **{"X-Forwarded-For": "127.0.0.1, 8.8.8.8"}) == 200
    finally:
        server.terminate()
        server.wait(timeout=30)
    # Behind one proxy (NUM_PROXIES=1) the address that proxy saw is the client's
    server, base = gunicorn(tmp_path, num_proxies=1)
    try:
        assert status_of(f"{base}/metrics", **{"X-Forwarded-For": "203.0.113.9"}) == 403
        assert status_of(f"{base}/metrics", **{"X-Forwarded-For": "203.0.113.9, ::1"}) == 200
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.parametrize(
    ("num_proxies", "forwarded", "client"),
    [
        (0, None, "192.0.2.1"),
        (0, "203.0.113.9", "192.0.2.1"),
        (1, None, "192.0.2.1"),
        (1, "203.0.113.9", "203.0.113.9"),
        (1, "10.0.0.1, 203.0.113.9", "203.0.113.9"),
        (2, "10.0.0.1, 203.0.113.9", "10.0.0.1"),
        (3, "10.0.0.1, 203.0.113.9", "10.0.0.1"),
    ],
)
def test_one_rule_for_the_client_address(settings, num_proxies, forwarded, client) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": num_proxies}
    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded else {}
    request = RequestFactory().get("/", REMOTE_ADDR="192.0.2.1", **headers)
    assert client_address(request) == client
    assert AnonThrottle().get_ident(request) == client  # the throttles count the same one
