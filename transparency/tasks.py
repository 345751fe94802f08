"""Celery tasks of the transparency log: each calls one service and is safe to run twice."""

from __future__ import annotations

from celery import shared_task

from transparency.services import log_publish


@shared_task(ignore_result=True)
def log_publish_due() -> int:
    """Every ``CHAN_LOG_PUBLISH_SECONDS`` (celery beat): append what the ledger and the hands
    queued, then sign the tree's head if it grew. Returns the signed head's size."""
    return log_publish().size
