"""Celery tasks: the server's clock. Each takes ids, calls one service, and is safe to run twice."""

from __future__ import annotations

from celery import shared_task

from games.services.tables import table_deal_if_due


@shared_task(acks_late=True, ignore_result=True)
def table_deal_due(table_id: int) -> int | None:
    """The ready deadline of a table has come: deal if it still should. Returns the hand's id."""
    hand = table_deal_if_due(table_id=table_id)
    return None if hand is None else hand.pk
