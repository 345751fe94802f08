"""Prometheus metrics: the game's own counters, and ``/metrics`` for every process at once.

gunicorn runs several web processes and Celery several workers; each keeps its own counters. With
``PROMETHEUS_MULTIPROC_DIR`` set (``make serve`` and deploy/ set it), prometheus-client writes
them to files in that directory and ``/metrics`` sums the files of every process (multiprocess
mode). Without it (tests, ``make run``) ``/metrics`` shows this process's own.

Services call the small functions below, one line each; a count is taken when the transaction
commits (a move rolled back was never played).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

from chan_api import errors, multiproc

MOVES = Counter(
    "chan_moves", "Moves appended to hands' logs.", ["type", "system"]
)  # exposed as chan_moves_total
HANDS_ENDED = Counter("chan_hands_ended", "Hands ended, by outcome.", ["outcome"])
CLOCK_MOVES = Counter("chan_clock_moves", "Moves the clock played for an idle seat.")
SWEEPS_DROPPED = Counter(
    "chan_clock_sweeps_dropped", "Clock sweeps that expired before a worker took them."
)
LONG_POLLS_WAITING = Gauge(
    "chan_long_polls_waiting",
    "Long polls (GET /hands/{id}?wait=N) waiting now.",
    multiprocess_mode="livesum",
)
SETTLEMENT_LAG = Histogram(
    "chan_settlement_lag_seconds",
    "From a hand's end to its settlement booked in the ledger.",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600),
)
LEDGER_TRANSACTIONS = Counter(
    "chan_ledger_transactions", "Quan ledger transactions booked, by kind.", ["kind"]
)
CACHE_FAILURES = Counter(
    "chan_cache_failures",
    "Requests served without the cache (it did not answer), by what needed it.",
    ["use"],
)
TASKS_DROPPED = Counter(
    "chan_tasks_dropped", "Task messages dropped after killing their worker too often.", ["task"]
)


def _on_commit(count: Any) -> None:
    transaction.on_commit(count, robust=True)


def move_appended(*, type: str, system: bool) -> None:
    """A move joined a hand's log (``system``: played by the server)."""
    _on_commit(lambda: MOVES.labels(type=type, system=str(bool(system)).lower()).inc())


def hand_ended(*, result: Mapping[str, Any] | None) -> None:
    """A hand ended; ``result`` is ``Hand.result`` (its ``outcome.result``: win, draw, …)."""
    outcome = ((result or {}).get("outcome") or {}).get("result") or "unknown"
    _on_commit(lambda: HANDS_ENDED.labels(outcome=str(outcome)).inc())


def clock_moved() -> None:
    """The clock played a move for an idle seat."""
    _on_commit(CLOCK_MOVES.inc)


def clock_sweep_dropped() -> None:
    """A clock sweep expired in the queue (no worker, or the workers behind)."""
    SWEEPS_DROPPED.inc()


def settlement_booked(*, ended_at: datetime | None, settled_at: datetime) -> None:
    """A hand's settlement was booked: how long after the hand ended."""
    if ended_at is not None:
        lag = max(0.0, (settled_at - ended_at).total_seconds())
        _on_commit(lambda: SETTLEMENT_LAG.observe(lag))


def ledger_booked(*, kind: str) -> None:
    """A ledger transaction was booked (not replayed under its idempotency key)."""
    _on_commit(lambda: LEDGER_TRANSACTIONS.labels(kind=kind).inc())


def cache_failed(*, use: str) -> None:
    """The cache did not answer (the request went on without it): ``use`` is what needed it."""
    CACHE_FAILURES.labels(use=use).inc()


def task_dropped(*, task: str) -> None:
    """A poison message was dropped (chan_api.celery.BoundedDeliveryTask)."""
    TASKS_DROPPED.labels(task=task).inc()


# The decorator of the long-poll wait: the gauge counts the calls in progress.
long_poll = LONG_POLLS_WAITING.track_inprogress()


# ------------------------------------------------------------------------------------ /metrics


def metrics_text() -> bytes:
    """Every metric in Prometheus' text format: all processes' in multiprocess mode."""
    if multiproc.enabled():
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    return generate_latest(REGISTRY)


def client_address(request: HttpRequest) -> str:
    """The caller's address: ``REMOTE_ADDR``, or behind ``NUM_PROXIES`` proxies the address the
    nearest of them saw (as DRF's throttles do; a client-sent X-Forwarded-For is not trusted)."""
    num_proxies = settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0
    forwarded = request.headers.get("X-Forwarded-For")
    if num_proxies and forwarded:
        hops = [h.strip() for h in forwarded.split(",")]
        return hops[-min(num_proxies, len(hops))]
    return request.META.get("REMOTE_ADDR", "")


def metrics_allowed(request: HttpRequest) -> bool:
    """``METRICS_TOKEN`` as a bearer token, or a caller in ``METRICS_ALLOWED_IPS``."""
    token = settings.METRICS_TOKEN
    if token and request.headers.get("Authorization", "") == f"Bearer {token}":
        return True
    try:
        address = ipaddress.ip_address(client_address(request))
    except ValueError:
        return False
    return any(address in network for network in settings.METRICS_ALLOWED_NETWORKS)


def metrics_view(request: HttpRequest) -> HttpResponse:
    """``GET /metrics``: Prometheus' text format, for allowed callers only (403 problem+json)."""
    if not metrics_allowed(request):
        from chan_api.problems import _plain_problem

        return _plain_problem(errors.PermissionDenied())
    return HttpResponse(metrics_text(), content_type=CONTENT_TYPE_LATEST)
