"""/metrics: Prometheus text for allowed callers only, HTTP and database metrics, the game's own
counters where the events happen, and every process's counts in multiprocess mode."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone
from prometheus_client import REGISTRY

from core import metrics
from games.models import Hand
from games.services.hands import hand_clock_tick
from games.services.quan_booking import hand_settle
from tests.games.conftest import make_player, players, start_hand  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = "application/problem+json"


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def total(name: str, **labels: str) -> float:
    """The sum of a labelled metric's samples whose labels include ``labels``."""
    return sum(
        s.value
        for metric in REGISTRY.collect()
        for s in metric.samples
        if s.name == name and labels.items() <= s.labels.items()
    )


def test_metrics_answer_the_local_machine_in_prometheus_text(client) -> None:
    client.get("/healthz")
    response = client.get("/metrics")  # the test client comes from 127.0.0.1
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    text = response.content.decode()
    for name in (
        "django_http_requests_total_by_method_total",
        "django_db_execute_total",
        "chan_moves_total",
        "chan_hands_ended_total",
        "chan_clock_moves_total",
        "chan_long_polls_waiting",
        "chan_settlement_lag_seconds",
        "chan_ledger_transactions_total",
    ):
        assert f"# TYPE {name.removesuffix('_total')}" in text, name


def test_metrics_refuse_other_addresses_even_if_they_claim_to_be_local(client) -> None:
    response = client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="127.0.0.1")
    assert response.status_code == 403
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "permission_denied"


def test_metrics_answer_an_allowed_network(client) -> None:
    import ipaddress

    with override_settings(METRICS_ALLOWED_NETWORKS=[ipaddress.ip_network("203.0.113.0/24")]):
        assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 200
        assert client.get("/metrics").status_code == 403  # 127.0.0.1 is no longer listed


def test_metrics_answer_the_token_from_anywhere(client) -> None:
    with override_settings(METRICS_TOKEN="s3cret-scrape-token"):
        good = client.get(
            "/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer s3cret-scrape-token"
        )
        bad = client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer nope")
    assert good.status_code == 200
    assert bad.status_code == 403


def test_the_clock_counts_its_moves_and_a_hand_counts_its_end_settlement_and_ledger(
    start_hand: Any,  # noqa: F811
    django_capture_on_commit_callbacks: Any,
) -> None:
    # Given a dealt hand whose players never move,
    hand_id = start_hand()["hand"]
    before = {
        "system_moves": total("chan_moves_total", system="true"),
        "clock": sample("chan_clock_moves_total"),
        "ended": total("chan_hands_ended_total"),
        "lag": sample("chan_settlement_lag_seconds_count"),
        "ledger": total("chan_ledger_transactions_total"),
    }
    # when the clock plays every turn until the hand ends (one tick a move),
    ticks = 0
    with django_capture_on_commit_callbacks(execute=True):
        while Hand.objects.get(pk=hand_id).status == Hand.Status.PLAYING and ticks < 400:
            assert hand_clock_tick(hand_id=hand_id, now=timezone.now() + timedelta(days=1))
            ticks += 1
    # then each tick counted one clock move and one system move, and the end counted once,
    assert Hand.objects.get(pk=hand_id).status == Hand.Status.ENDED
    assert sample("chan_clock_moves_total") == before["clock"] + ticks
    assert total("chan_moves_total", system="true") == before["system_moves"] + ticks
    assert total("chan_hands_ended_total") == before["ended"] + 1
    # and booking its settlement observes the lag and counts the ledger transaction (if any).
    with django_capture_on_commit_callbacks(execute=True):
        tx = hand_settle(hand_id=hand_id)
    assert sample("chan_settlement_lag_seconds_count") == before["lag"] + 1
    booked = 0 if tx is None else 1
    assert total("chan_ledger_transactions_total") == before["ledger"] + booked


def test_a_welcome_grant_counts_one_ledger_transaction(
    make_user, django_capture_on_commit_callbacks
) -> None:
    before = sample("chan_ledger_transactions_total", kind="welcome_grant")
    with django_capture_on_commit_callbacks(execute=True):
        make_user()
    assert sample("chan_ledger_transactions_total", kind="welcome_grant") == before + 1


def test_a_rolled_back_move_is_not_counted() -> None:
    from django.db import transaction

    before = sample("chan_clock_moves_total")
    with transaction.atomic():
        metrics.clock_moved()
        transaction.set_rollback(True)
    assert sample("chan_clock_moves_total") == before


def test_the_long_poll_gauge_counts_the_polls_waiting_now() -> None:
    seen: list[float] = []

    @metrics.long_poll
    def wait() -> None:
        seen.append(sample("chan_long_polls_waiting"))

    before = sample("chan_long_polls_waiting")
    wait()
    assert seen == [before + 1]
    assert sample("chan_long_polls_waiting") == before


# A counter incremented in one process, read by another's /metrics (multiprocess mode).
_COUNT = """
import django
django.setup()
from core import metrics
metrics.clock_moved()
metrics.move_appended(type="discard", system=False)
"""
_SCRAPE = """
import django
django.setup()
from django.test import Client
response = Client().get("/metrics", HTTP_HOST="localhost", REMOTE_ADDR="127.0.0.1")
assert response.status_code == 200, response.status_code
print(response.content.decode())
"""


def test_metrics_sum_every_process_through_the_multiprocess_directory(tmp_path) -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "chan_api.settings",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
    }

    def run(script: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    # Given two processes (a gunicorn worker and a Celery worker, say) that each counted,
    run(_COUNT)
    run(_COUNT)
    # a third process's /metrics shows both counts.
    text = run(_SCRAPE)
    assert "chan_clock_moves_total 2.0" in text
    assert 'chan_moves_total{system="false",type="discard"} 2.0' in text
