"""Celery tasks: the server's clock. Each takes ids, calls one service, and is safe to run twice."""

from __future__ import annotations

from celery import shared_task

from games.services import hands
from games.services.hands import hand_clock_tick
from games.services.tables import table_deal_if_due


@shared_task(acks_late=True, ignore_result=True)
def table_deal_due(table_id: int) -> int | None:
    """The ready deadline of a table has come: deal if it still should. Returns the hand's id."""
    hand = table_deal_if_due(table_id=table_id)
    return None if hand is None else hand.pk


@shared_task(acks_late=True, ignore_result=True)
def hand_turn_due(hand_id: int, seq: int) -> int | None:
    """The deadline of a hand's ``seq`` has come: the server moves for the idle seat if nobody
    has moved since. Returns the new seq, or None when there was nothing to do."""
    return hand_clock_tick(hand_id=hand_id, seq=seq)


@shared_task(ignore_result=True)
def clock_sweep() -> list[int]:
    """Every 30 s (celery beat): catch up on deadlines whose wake-up was lost."""
    return hands.clock_sweep()
