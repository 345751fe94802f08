"""Seats taken before holds existed (accounts 0014) hold nothing until their next deal, and a
settlement before it could take their whole balance (seed 004). :func:`seat_holds_backfill`
gives each such seat its hold now, or unseats the player who cannot cover it (``manage.py
seat_holds_backfill``; ``ledger_check`` lists the seats still without one, ``seat_hold``).

Lock order: the table row, then the wallet (``accounts.holds.wallets_lock``), as a seat join.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from accounts.hold_selectors import hold_amount
from accounts.holds import hold_set, wallets_lock
from games.models import Hand, HandSeat, Seat, Table
from games.selectors.seat_holds import seats_without_holds
from games.services.feed import UNSEAT_STAKE, feed_table_changed
from games.services.pot import pot_refund
from games.services.seat_holds import SIT_STAKES

log = logging.getLogger(__name__)

# What became of a seat without its hold.
PLACED = "placed"  # 15 × stake held, as a seat taken today
PLACED_SHORT = "placed_short"  # in a hand: what it has is held; the next deal unseats it if short
UNSEATED = "unseated"  # between hands and unable to cover the stake: stood up now
AT_NEXT_DEAL = "unseated_at_next_deal"  # in a hand with nothing free: the next deal unseats it


@dataclass(frozen=True, slots=True)
class SeatHoldRepair:
    """One seat that sat without its hold, and what was done: ``action`` (the constants above),
    the hold placed (``amount``), and what 15 × stake ``needed`` against what was ``available``."""

    table_id: int
    user_id: int
    action: str
    amount: int
    needed: int
    available: int


def seat_holds_backfill() -> list[SeatHoldRepair]:
    """Every seat at a non-practice table that holds nothing: hold 15 × stake of the player's
    free Quan. A player who cannot is unseated now (logged with why: it cannot cover the stake),
    its gà góp share refunded, its table's players told (``seats_changed``, ``reason`` stake) — unless it is in a hand not
    yet settled there: then what it has free is held and the next deal, which asks 15 × stake
    of every seat, unseats it if still short. One transaction per seat; safe to run again (a
    seat with its hold is left alone)."""
    repairs = []
    for table_id, _number, user_id in seats_without_holds():
        repair = _seat_hold_repair(table_id=table_id, user_id=user_id)
        if repair is not None:
            repairs.append(repair)
    return repairs


@transaction.atomic
def _seat_hold_repair(*, table_id: int, user_id: int) -> SeatHoldRepair | None:
    table = Table.objects.select_for_update(no_key=True).filter(pk=table_id).first()
    if table is None or table.practice:
        return None
    seat = Seat.objects.filter(table=table, player_id=user_id).select_related("player").first()
    if seat is None:
        return None  # it left meanwhile
    user: Any = seat.player
    account = wallets_lock([user])[user.pk]
    if hold_amount(account_id=account.pk, table_id=table.pk):
        return None  # held meanwhile (a deal, a settlement or another run)
    needed = SIT_STAKES * table.stake
    free = account.balance - account.held

    def repaired(action: str, amount: int) -> SeatHoldRepair:
        return SeatHoldRepair(table.pk, user.pk, action, amount, needed, free)

    if free >= needed:
        hold_set(account=account, table=table, amount=needed, reason="backfill")
        return repaired(PLACED, needed)
    in_a_hand = HandSeat.objects.filter(hand__table=table, user=user).filter(
        hand__settled_at__isnull=True, hand__status__in=[Hand.Status.PLAYING, Hand.Status.ENDED]
    )
    if in_a_hand.exists():
        if free > 0:
            hold_set(account=account, table=table, amount=free, reason="backfill")
            return repaired(PLACED_SHORT, free)
        return repaired(AT_NEXT_DEAL, 0)
    log.info(
        "unseated: its seat had no hold and it cannot cover the stake",
        extra={"table_id": table.pk, "user_id": user.pk, "needed": needed, "available": free},
    )
    seat.delete()
    pot_refund(table=table, user=user)
    feed_table_changed(
        table_id=table.pk, change="left", user=user, seat=seat.number, reason=UNSEAT_STAKE
    )
    return repaired(UNSEATED, 0)
