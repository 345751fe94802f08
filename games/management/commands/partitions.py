"""The monthly partitions of the append-only logs (core/partitions.py; docs/operations.md):

    .venv/bin/python manage.py partitions [--ahead 3] [--archive-before 2025-01]

Creates each log's partitions from this month to ``--ahead`` months after it, those missing
(idempotent; the Celery beat task ``games.tasks.partitions_create_due`` does the same every
month, as the application). With ``--archive-before MONTH`` it also detaches every month
before MONTH into the ``chan_archive`` schema, read-only, where ``audit_hands`` still verifies
their hands and ``ledger_check`` their ledger entries: that needs the tables' owner, so the
command runs as the owner (``DATABASE_OWNER_URL``) when given, as ``migrate`` does.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.utils import timezone

from core.partitions import (
    AHEAD_MONTHS,
    Partition,
    blocked_message,
    partitions_archive_before,
    partitions_create_ahead,
)


def month(text: str) -> dt.date:
    """``YYYY-MM`` (or a date: its month)."""
    try:
        return dt.date.fromisoformat(text if len(text) > 7 else f"{text}-01").replace(day=1)
    except ValueError:
        raise ValueError(f'not a month: "{text}"') from None


class Command(BaseCommand):
    help = (
        "Create the logs' monthly partitions --ahead months ahead (idempotent); with "
        "--archive-before YYYY-MM, detach older months into the chan_archive schema."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--ahead", type=int, default=AHEAD_MONTHS, help="Months ahead.")
        parser.add_argument(
            "--archive-before", type=month, help="Archive the months before this one (YYYY-MM)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        connection = connections[DEFAULT_DB_ALIAS]
        owner = getattr(settings, "CHAN_DATABASE_OWNER", None)
        saved = connection.settings_dict
        if owner and options["archive_before"] is not None:
            connection.close()
            connection.settings_dict = {**saved, **owner}
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                today = timezone.now().astimezone(dt.UTC).date()
                blocked: list[Partition] = []
                try:
                    created = partitions_create_ahead(
                        cursor=cursor, today=today, months=options["ahead"], blocked=blocked
                    )
                    archived = []
                    if options["archive_before"] is not None:
                        archived = partitions_archive_before(
                            cursor=cursor, before=options["archive_before"], today=today
                        )
                except ValueError as error:
                    raise CommandError(str(error)) from None
        finally:
            if owner and options["archive_before"] is not None:
                connection.close()
                connection.settings_dict = saved
        for partition in created:
            self.stdout.write(f"created {partition.name}")
        for partition in archived:
            self.stdout.write(f"archived {partition.name}")
        self.stdout.write(f"{len(created)} partition(s) created, {len(archived)} archived.")
        if blocked:  # the others are created (committed): these need an operator
            raise CommandError(blocked_message(blocked))
