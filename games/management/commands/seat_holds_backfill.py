"""Give every seat taken before holds existed (accounts 0014) its hold: 15 × stake of the
player's free Quan, or, for a player who cannot cover it, stand it up (between hands) or leave
it to its next deal, which unseats it (in a hand). Safe to run again; ``ledger_check`` lists the
seats still without a hold (``seat_hold``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from games.services.seat_hold_repair import seat_holds_backfill

WHAT = {
    "placed": "held {amount}",
    "placed_short": "held {amount} of {needed} (in a hand; the next deal unseats it if short)",
    "unseated": "unseated: {available} available, {needed} needed",
    "unseated_at_next_deal": "nothing free (in a hand; the next deal unseats it)",
}


class Command(BaseCommand):
    help = __doc__

    def handle(self, *args: Any, **options: Any) -> None:
        repairs = seat_holds_backfill()
        for r in repairs:
            what = WHAT[r.action].format(amount=r.amount, needed=r.needed, available=r.available)
            self.stdout.write(f"table {r.table_id} user {r.user_id}: {what}")
        self.stdout.write(f"{len(repairs)} seat(s) without a hold")
