"""The holds of seats (seed 004): a player sitting at a (non-practice) table holds
``SIT_STAKES`` × stake of its wallet there while it sits (accounts/holds.py). Creating a table,
sitting, quick-join and every deal check what is available (balance − held) under the locks
that make concurrent joins safe; a settlement takes a loser's payment from its hold at that
table and its free Quan, never from its holds at other tables, and then makes the hold whole
again (or, with nothing left there, the player is unseated); leaving releases the hold once the
player's last hand at the table is settled. Practice tables hold nothing.

Lock order: the hand or table row (the caller's), then the wallets in ascending id
(``accounts.holds.wallets_lock``), the ledger's own order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from accounts.hold_selectors import hold_amount, hold_amounts
from accounts.holds import hold_place, hold_release, hold_set, wallets_lock
from accounts.ledger import wallet_for
from accounts.models import LedgerAccount
from core.rows import values_read

CREATE_STAKES, SIT_STAKES = 10, 15  # what creating / sitting needs available (RULES.md §11)


def seat_hold_place(*, table: Any, user: Any, stakes: int = SIT_STAKES) -> int:
    """Hold ``SIT_STAKES`` × stake for ``user``'s seat at ``table`` (at least ``stakes`` ×
    stake available, else 409 ``insufficient_balance`` with ``needed``, ``available``,
    ``held``). Nothing at a practice table. The caller holds the table row lock (or created
    the table)."""
    if table.practice:
        return 0
    return hold_place(
        user=user,
        table=table,
        amount=SIT_STAKES * table.stake,
        minimum=stakes * table.stake,
        reason="sit",
    )


def seat_wallet_lock(*, table: Any, user: Any) -> None:
    """Lock ``user``'s wallet before its user row: a settlement locks wallets, then the players'
    rows (their XP), so a join that locked the row first and then waited for the wallet could
    close a cycle with it. The caller holds the table row lock."""
    if not table.practice:
        wallets_lock([user])


def seat_hold_release(*, table: Any, user: Any, hand: Any = None) -> None:
    """Release ``user``'s hold at ``table`` (it stood up, or was unseated between hands)."""
    if not table.practice:
        hold_release(user=user, table=table, reason="leave", hand=hand)


def seat_holds_for_deal(*, table: Any, seats: Sequence[Any]) -> list[Any]:
    """Before a deal: every seat's hold made whole (``SIT_STAKES`` × stake) from its free Quan;
    returns the seats that cannot be (the caller unseats them and calls
    :func:`seat_hold_release`). The caller holds the table row lock; the wallets are locked
    here in id order."""
    if table.practice or not seats:
        return []
    needed = SIT_STAKES * table.stake
    wallets = wallets_lock([s.player for s in seats])
    holds = hold_amounts(account_ids=[w.pk for w in wallets.values()], table_id=table.pk)
    poor = []
    for seat in seats:
        account = wallets[seat.player_id]
        here = holds[account.pk]
        if account.balance - account.held + here < needed:
            poor.append(seat)
            continue
        hold_set(account=account, table=table, amount=needed, reason="deal", current=here)
    return poor


# The wallets of the players dealt in, as a fixed statement (core.rows): ``LedgerAccount.objects
# .filter(kind=WALLET, user_id__in=…).values_list("user_id", "id")``.
_WALLET_IDS_SQL = (
    f"SELECT user_id, id FROM {LedgerAccount._meta.db_table} WHERE kind = %s AND user_id = ANY(%s)"
)


def deal_seat_accounts(*, table: Any, seats: Sequence[Any]) -> list[int | None]:
    """Each dealt seat's wallet (the account its settlement moves), which the deal binds in the
    hand's log (``games.rules.seating``); None at a practice table, where nothing is booked.
    The wallets exist: :func:`seat_holds_for_deal` locked (and opened) them."""
    if table.practice:
        return [None] * len(seats)
    params = [LedgerAccount.Kind.WALLET.value, [s.player_id for s in seats]]
    ids = dict(values_read(LedgerAccount, _WALLET_IDS_SQL, params))
    return [ids.get(s.player_id) or wallet_for(s.player).pk for s in seats]


def settlement_capacities(
    *, table: Any, wallets: Sequence[LedgerAccount], locked: Mapping[int, LedgerAccount]
) -> tuple[list[int], list[int]]:
    """For a settlement: each seat's hold at ``table`` and what it can pay there (§10.8 caps by
    it): that hold plus its free Quan, never what it holds at other tables. ``locked``: the
    wallets by id, locked and fresh."""
    here = [hold_amount(account_id=w.pk, table_id=table.pk) for w in wallets]
    capacity = [
        locked[w.pk].balance - (locked[w.pk].held - h) for w, h in zip(wallets, here, strict=True)
    ]
    return here, capacity


def settlement_holds(
    *,
    table: Any,
    hand: Any,
    wallets: Sequence[LedgerAccount],
    locked: Mapping[int, LedgerAccount],
    here: Sequence[int],
    capacity: Sequence[int],
    nets: Sequence[int],
    seated: set[int],
    grow: bool,
) -> set[int]:
    """What each seat holds at ``table`` after the settlement: ``SIT_STAKES`` × stake, or all it
    has left there if less, for a player still seated; nothing for one that left. Call it twice
    around the booking: ``grow=False`` before it (only shrinks: the loser's balance may then
    fall to its other holds, never below), ``grow=True`` after (the rest). Returns the user ids
    of seated players left with nothing at this table (unseated by the caller)."""
    needed = SIT_STAKES * table.stake
    emptied = set()
    for seat, wallet, h, cap, net in zip(
        hand.seat_list(), wallets, here, capacity, nets, strict=True
    ):
        left = cap + net
        target = min(needed, max(left, 0)) if seat.user_id in seated else 0
        if seat.user_id in seated and left <= 0:
            emptied.add(seat.user_id)
        if (target < h and not grow) or (target > h and grow):
            hold_set(
                account=locked[wallet.pk], table=table, amount=target, reason="settle", hand=hand
            )
    return emptied
