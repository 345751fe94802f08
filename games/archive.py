"""A hand's events once its month's partition is archived (``manage.py partitions
--archive-before``; core/partitions.py): read from ``chan_archive``, where they stay read-only,
so an export, and ``audit_hands`` through it, still verifies an archived hand."""

from __future__ import annotations

import datetime as dt

from django.db import connection

from core.partitions import archived_table, month_start
from games.models import Hand, HandEvent


def hand_events_archived(hand: Hand) -> list[HandEvent]:
    """The hand's events in seq order from the archive (empty if its month is not archived)."""
    month = month_start(hand.created_at.astimezone(dt.UTC).date())
    with connection.cursor() as cursor:
        table = archived_table(cursor=cursor, table=HandEvent._meta.db_table, month=month)
    if table is None:
        return []
    return list(
        HandEvent.objects.raw(
            f"SELECT * FROM {table} WHERE hand_id = %s ORDER BY seq",  # noqa: S608 (a regclass)
            [hand.pk],
        )
    )
