"""Prometheus metrics: the game's own counters (``/metrics`` shows them: chan_api/metrics_view.py).

gunicorn runs several web processes and Celery several workers; each keeps its own counters. With
``PROMETHEUS_MULTIPROC_DIR`` set (``make serve`` and deploy/ set it), prometheus-client writes
them to files in that directory and ``/metrics`` sums the files of every process (multiprocess
mode). Without it (tests, ``make run``) ``/metrics`` shows this process's own.

Services call the small functions below, one line each; a count is taken when the transaction
commits (a move rolled back was never played).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from prometheus_client import Counter, Gauge, Histogram

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
LONG_POLL_REARMS = Counter(
    "chan_long_poll_rearms_total",
    "A seat's long polls on a hand that Django had answered for the same client before: "
    "answered in the event loop from that answer, or by Django again (games.live.rearm).",
    ["answered_by"],
)
HAND_POLLS = Counter(
    "chan_hand_polls_total",
    "A seat's plain polls of a hand (If-None-Match, no wait) whose last 304 Django had made "
    "for the same client: answered in the event loop while the ETag holds, or by Django "
    "(games.live.rearm).",
    ["answered_by"],
)
MOVES_DIRECT = Counter(
    "chan_moves_direct_total",
    "Moves of a client whose move Django had answered before (a template): answered without "
    "the middleware and DRF, or by Django again (games.api.move_direct).",
    ["answered_by"],
)
MOVES_HEARD = Counter(
    "chan_moves_heard_total",
    "Moves committed by another process whose announced record carried this process's copy of "
    "the hand on (folded=yes), or did not follow it and was dropped (folded=no) "
    "(games.hand_store.hand_move_heard).",
    ["folded"],
)
MOVE_FLIGHTS = Counter(
    "chan_move_flights_total",
    "Players' moves by how they were made: in one flight on the hand as this process kept it "
    "(one), the two-flight way after the lock refused what was kept (refused), or the two-flight "
    "way from the start (two: nothing kept, or a move the one flight does not make) "
    "(games.services.hands).",
    ["made"],
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

LAGGING_READS = Counter(
    "chan_lagging_reads",
    "Reads that may lag (core/db_router.py), by the database that served them.",
    ["served_by"],
)
REPLICA_LAG = Gauge(
    "chan_replica_lag_seconds",
    "The replica's replay lag at this process's last check (+Inf: it did not answer).",
    multiprocess_mode="max",
)
LOG_LEAVES_REFUSED = Counter(
    "chan_log_leaves_refused",
    "Ledger transactions and hand heads the transparency log left out: their record key MAC "
    "does not verify (transparency.services.log_catch_up).",
    ["kind"],
)  # exposed as chan_log_leaves_refused_total


def _on_commit(count: Any) -> None:
    transaction.on_commit(count, robust=True)


def move_appended(*, type: str, system: bool) -> None:
    """A move joined a hand's log (``system``: played by the server)."""
    _on_commit(lambda: MOVES.labels(type=type, system=str(bool(system)).lower()).inc())


def hand_ended(*, outcome: str | None) -> None:
    """A hand ended with this outcome (``u``, ``u_lao``, ``hoa``; None: unknown)."""
    label = outcome or "unknown"
    _on_commit(lambda: HANDS_ENDED.labels(outcome=label).inc())


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


def lagging_read(*, replica: bool) -> None:
    """A read marked ``may_lag`` was served, by the replica or the primary."""
    LAGGING_READS.labels(served_by="replica" if replica else "primary").inc()


def replica_lag_measured(lag: float | None) -> None:
    REPLICA_LAG.set(float("inf") if lag is None else lag)


def log_leaf_refused(*, kind: str) -> None:
    """The transparency log left out a queued record whose MAC does not verify."""
    _on_commit(lambda: LOG_LEAVES_REFUSED.labels(kind=kind).inc())
