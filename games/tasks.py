"""Celery tasks: the server's clock. Each takes ids, calls one service, and is safe to run twice."""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from games.clock import clock_overdue
from games.services.hands import hand_clock_tick
from games.services.settlement import hand_settle, hands_unsettled
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
def clock_sweep() -> tuple[list[int], list[int], list[int]]:
    """Every ``CHAN_SWEEP_SECONDS`` (celery beat, 5 s by default): queue the ticks whose wake-up
    was lost and the settlements still unbooked, one task each."""
    hands, tables = clock_overdue(now=timezone.now())
    for hand_id in hands:
        hand_turn_due.delay(hand_id)
    for table_id in tables:
        table_deal_due.delay(table_id)
    unsettled = hands_unsettled()
    for hand_id in unsettled:
        hand_settle_due.delay(hand_id)
    found = {"ticks": len(hands), "deals": len(tables), "settlements": len(unsettled)}
    # Every CHAN_SWEEP_SECONDS: silent (DEBUG) unless a wake-up or a settlement had been lost.
    logger.log(logging.INFO if any(found.values()) else logging.DEBUG, "sweep: queued %s", found)
    return hands, tables, unsettled
