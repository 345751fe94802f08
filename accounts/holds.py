"""Everything that writes holds: Quan of a wallet set aside for one seat while the
player sits there. A hold moves no Quan; it lowers what is available (``balance − held``), and
the database refuses a balance below what is held (migration accounts 0014).

Holds are events of their own, not ledger transactions: each ``LedgerHold`` row says what the
hold at one table became (placed, resized, released), and the database keeps the wallet's
``held`` from them. A wallet's events chain by hash (each names the previous one's ``hash``),
serialised by the wallet's row lock, so placing a hold takes no ledger-wide lock.
(docs/decisions/holds.md: why not TigerBeetle-style pending transfers.)

Lock order: the caller's hand or table row first, then wallets ``SELECT … FOR NO KEY UPDATE`` in
ascending primary key (:func:`wallets_lock`), exactly as ``accounts.ledger.ledger_post`` locks
its accounts; a hold event issued under those locks takes no other lock.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from django.utils.translation import gettext_lazy as _

from accounts.hold_selectors import hold_amount, hold_head
from accounts.ledger import wallet_for
from accounts.models import LedgerAccount, LedgerHold, User
from core.errors import Conflict
from core.rows import rows_read, values_read

Kind = LedgerHold.Kind


def hold_hash(
    *,
    prev: str,
    account: int,
    table: int,
    kind: str,
    amount: int,
    hand: int | None,
    reason: str,
) -> str:
    """SHA-256 (hex) of a hold event's canonical JSON (sorted keys, compact, UTF-8), chaining
    ``prev``, the wallet's previous hold event's hash."""
    body = {
        "prev": prev,
        "account": account,
        "table": table,
        "kind": kind,
        "amount": amount,
        "hand": hand,
        "reason": reason,
    }
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def wallets_lock(users: Iterable[Any]) -> dict[int, LedgerAccount]:
    """The users' wallets (opened on first use), locked ``FOR NO KEY UPDATE`` in ascending id, by user
    id. Call it after any hand or table lock."""
    users = list(users)
    params = [LedgerAccount.Kind.WALLET.value, [u.pk for u in users]]
    # (the wallets that exist in one read; one opened for each player that has none yet)
    found = {user_id for (user_id,) in values_read(LedgerAccount, _WALLETS_FOUND_SQL, params)}
    for user in users:
        if user.pk not in found:
            wallet_for(user)
    return {
        account.user_id: account
        for account in rows_read(LedgerAccount, _WALLETS_OF, params, for_update=True)
    }


# Every deal and hold asks them: fixed statements (core.rows), not compiled per call. The lock
# is ``LedgerAccount.objects.filter(kind=WALLET, user_id__in=…)
# .select_for_update(no_key=True).order_by("pk")``: ascending id, the ledger's lock order.
_WALLETS_OF = "kind = %s AND user_id = ANY(%s) ORDER BY id"
_WALLETS_FOUND_SQL = (
    f"SELECT user_id FROM {LedgerAccount._meta.db_table} WHERE kind = %s AND user_id = ANY(%s)"
)


def insufficient_funds(*, needed: int, balance: int, held: int) -> Conflict:
    """409 ``insufficient_balance`` naming ``needed``, ``available``, ``held`` and ``balance``."""
    available = balance - held
    return Conflict(
        _("Not enough Quan: %(needed)s needed, %(available)s available (%(held)s held)."),
        code="insufficient_balance",
        extra={"needed": needed, "available": available, "held": held, "balance": balance},
        needed=needed,
        available=available,
        held=held,
    )


def hold_set(
    *,
    account: LedgerAccount,
    table: Any,
    amount: int,
    reason: str,
    hand: Any = None,
    current: int | None = None,
) -> LedgerHold | None:
    """Make the wallet's hold at ``table`` ``amount`` Quan (0 releases it): one hold event, or
    nothing when it already is. ``account`` must be locked by the caller (:func:`wallets_lock`);
    its ``held`` is brought up to date. The database refuses a hold beyond the balance.
    ``current``: the hold there now, when the caller read it under the same lock."""
    if current is None:
        current = hold_amount(account_id=account.pk, table_id=table.pk)
    if amount == current:
        return None
    if current == 0:
        kind = Kind.PLACED
    elif amount == 0:
        kind = Kind.RELEASED
    else:
        kind = Kind.RESIZED
    prev = hold_head(account_id=account.pk)
    hand_id = hand.pk if hand is not None else None
    reason = reason[:64]
    event = LedgerHold.objects.create(
        account=account,
        table=table,
        kind=kind,
        amount=amount,
        reason=reason,
        hand=hand,
        prev_hash=prev,
        hash=hold_hash(
            prev=prev,
            account=account.pk,
            table=table.pk,
            kind=kind,
            amount=amount,
            hand=hand_id,
            reason=reason,
        ),
    )
    account.held += amount - current
    return event


def hold_place(
    *, user: User, table: Any, amount: int, minimum: int | None = None, reason: str = "sit"
) -> int:
    """Hold ``amount`` Quan of the player's wallet for its seat at ``table`` — or, when less is
    available, all that is, if that is at least ``minimum`` (default: ``amount``). What it
    already holds there counts towards it. Refused with :func:`insufficient_funds` otherwise.
    Locks the wallet (after the caller's table lock). Returns the hold."""
    minimum = amount if minimum is None else minimum
    account = wallets_lock([user])[user.pk]
    here = hold_amount(account_id=account.pk, table_id=table.pk)
    free = account.balance - account.held + here
    if free < minimum:
        raise insufficient_funds(needed=minimum, balance=account.balance, held=account.held)
    new = min(amount, free)
    hold_set(account=account, table=table, amount=new, reason=reason)
    return new


def hold_release(*, user: User, table: Any, reason: str = "leave", hand: Any = None) -> None:
    """Release the player's hold at ``table`` (nothing if it holds nothing there). Locks the
    wallet (after the caller's table lock)."""
    account = LedgerAccount.objects.filter(kind=LedgerAccount.Kind.WALLET, user_id=user.pk).first()
    if account is None or hold_amount(account_id=account.pk, table_id=table.pk) == 0:
        return
    account = wallets_lock([user])[user.pk]
    hold_set(account=account, table=table, amount=0, reason=reason, hand=hand)
