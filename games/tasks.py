"""Celery tasks: the server's clock. Each takes ids, calls one service, and is safe to run twice."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from celery import shared_task
from celery.signals import task_revoked
from django.db import connection, transaction
from django.utils import timezone

from core import metrics
from core.partitions import Partition, blocked_message, partitions_create_ahead
from games.clock import CLOCK_QUEUE, clock_overdue
from games.services.hands import hand_clock_tick
from games.services.quan_booking import hand_settle, hands_unsettled
from games.services.tables import table_deal_if_due

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True)
def table_deal_due(table_id: int) -> int | None:
    """The ready deadline of a table has come: deal if it still should. Returns the hand's id."""
    hand = table_deal_if_due(table_id=table_id)
    return None if hand is None else hand.pk


@shared_task(acks_late=True, ignore_result=True)
def hand_turn_due(hand_id: int, seq: int | None = None) -> int | None:
    """A hand's deadline has come: the server moves for the idle seat if nobody has moved
    since. Returns the new seq, or None when there was nothing to do. (``seq`` is ignored: the
    hand's own ``deadline_at`` says whether anything is due.)"""
    return hand_clock_tick(hand_id=hand_id)


@shared_task(
    acks_late=True,
    ignore_result=True,
    autoretry_for=(Exception,),
    retry_backoff=True,
    max_retries=10,
)
def hand_settle_due(hand_id: int) -> int | None:
    """An ended hand's settlement: book it in the Quan ledger (once, whatever the number of
    deliveries: the ledger key is the hand). Returns the transaction's id."""
    tx = hand_settle(hand_id=hand_id)
    return None if tx is None else tx.pk


@shared_task(ignore_result=True)
def partitions_create_due() -> list[str]:
    """Monthly (celery beat): the logs' partitions for this month and ``AHEAD_MONTHS`` after it,
    those missing (core/partitions.py; the application's role may create them, not archive).
    Returns the names created; fails (after creating the others) if a month is blocked by rows
    its log's DEFAULT partition already holds: an operator's to resolve (docs/operations.md)."""
    blocked: list[Partition] = []
    with transaction.atomic(), connection.cursor() as cursor:
        today = timezone.now().astimezone(dt.UTC).date()
        created = partitions_create_ahead(cursor=cursor, today=today, blocked=blocked)
    if blocked:
        raise RuntimeError(blocked_message(blocked))
    return [p.name for p in created]


@shared_task(ignore_result=True)
def clock_sweep() -> tuple[list[int], list[int], list[int]]:
    """Every ``CHAN_SWEEP_SECONDS`` (celery beat, 5 s by default; it expires after as long):
    queue the ticks whose wake-up was lost and the settlements still unbooked, one task each.
    The sweep and what it queues go through the "clock" queue (``CLOCK_QUEUE``), which no
    backlog of play's wake-ups holds up."""
    hands, tables = clock_overdue(now=timezone.now())
    for hand_id in hands:
        hand_turn_due.apply_async((hand_id,), queue=CLOCK_QUEUE)
    for table_id in tables:
        table_deal_due.apply_async((table_id,), queue=CLOCK_QUEUE)
    unsettled = hands_unsettled()
    for hand_id in unsettled:
        hand_settle_due.apply_async((hand_id,), queue=CLOCK_QUEUE)
    found = {"ticks": len(hands), "deals": len(tables), "settlements": len(unsettled)}
    # Every CHAN_SWEEP_SECONDS: silent (DEBUG) unless a wake-up or a settlement had been lost.
    logger.log(logging.INFO if any(found.values()) else logging.DEBUG, "sweep: queued %s", found)
    return hands, tables, unsettled


@task_revoked.connect
def clock_sweep_expired(
    sender: Any = None, request: Any = None, expired: bool = False, **kwargs: Any
) -> None:
    """A sweep that waited past its expiry is dropped by the worker: say so at WARNING (Celery's
    own line is INFO, which chan_api.logs.QuietSweepFilter hides) and count it, since while
    sweeps are dropped nothing re-arms a lost wake-up."""
    if not expired or getattr(sender, "name", None) != clock_sweep.name:
        return
    logger.warning(
        "clock sweep dropped: it expired at %s before a worker took it (no worker ran, or the "
        "workers are behind); nothing re-arms lost wake-ups until a sweep runs",
        getattr(request, "expires", None),
    )
    metrics.clock_sweep_dropped()


@shared_task(acks_late=True, ignore_result=True)
def integrity_scan_due(window_end: str | None = None, window_hours: float = 168.0) -> list[int]:
    """The integrity signals over the window ending ``window_end`` (ISO 8601; now when None):
    nightly by beat, and on demand from the admin. Safe to run twice (one flag per window)."""
    import datetime as dt

    from games.services.integrity import integrity_scan

    end = dt.datetime.fromisoformat(window_end) if window_end else None
    flags = integrity_scan(window_end=end, window=dt.timedelta(hours=window_hours))
    return [f.pk for f in flags]


@shared_task(acks_late=True, ignore_result=True)
def tournament_clock_due(tournament_id: int) -> str:
    """One beat of an arena's clock (start, score and close tables, seat free players, pay
    out at the end). Safe to run twice. Returns the arena's status."""
    from games.services.tournaments import tournament_clock

    return tournament_clock(tournament_id=tournament_id)


@shared_task(ignore_result=True)
def tournaments_sweep() -> list[int]:
    """Every ``CHAN_ARENA_SECONDS`` (celery beat): one clock beat for every arena with work
    due (see ``games.services.tournaments.tournaments_due``)."""
    from games.services.tournaments import tournaments_due

    due = tournaments_due(now=timezone.now())
    for tournament_id in due:
        tournament_clock_due.apply_async((tournament_id,), queue=CLOCK_QUEUE)
    return due


@shared_task(acks_late=True, ignore_result=True)
def seasons_close_due() -> list[str]:
    """Close the week and month seasons that have ended (beat, every few minutes; safe to run
    twice, at once, or late) and pay the prizes an unfunded board can now be paid."""
    from games.services.seasons import seasons_close_due as close

    return close()


@shared_task(acks_late=True, ignore_result=True)
def challenges_expire_due() -> int:
    """Store as expired the pending challenges past their deadline, each with a
    ``challenge_expired`` feed entry to its challenger (beat; safe to run twice)."""
    from games.services.challenges import challenges_expire

    return challenges_expire()


@shared_task(ignore_result=True)
def feed_prune_due() -> int:
    """Delete the players' feed entries past ``CHAN_FEED_RETENTION_DAYS`` (beat, hourly; each
    player's last entry kept)."""
    from games.services.feed import feed_prune

    return feed_prune()
