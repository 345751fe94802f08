"""Book the settlement of every ended hand still unbooked (what the clock's sweep queues), now,
in this process: for an operator after an outage of the workers, and for the fault tests."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from games.services.quan_booking import hand_settle, hands_unsettled


class Command(BaseCommand):
    help = __doc__

    def handle(self, *args: Any, **options: Any) -> None:
        pending = hands_unsettled()
        for hand_id in pending:
            hand_settle(hand_id=hand_id)
        self.stdout.write(f"{len(pending)} hand(s) settled")
