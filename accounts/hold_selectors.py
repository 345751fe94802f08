"""Everything that reads holds (issue 21): what a wallet holds at each table, what it has
available (balance − held), and the consistency checks ``manage.py ledger_check`` runs on them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection

from accounts.models import LedgerAccount, LedgerHold, User
from games.rules.ledger_chain import GENESIS


@dataclass(frozen=True, slots=True)
class Funds:
    """A wallet's Quan: ``balance``, ``held`` for its seats, ``available`` = balance − held."""

    balance: int
    held: int

    @property
    def available(self) -> int:
        return self.balance - self.held


@dataclass(frozen=True, slots=True)
class TableHold:
    """An open hold: ``amount`` Quan held for the player's seat at ``table_id``."""

    table_id: int
    table_name: str
    stake: int
    amount: int
    since: Any


def wallet_funds(user: User) -> Funds:
    """The player's balance and what it holds (one indexed row; zeros before its first entry)."""
    row = (
        LedgerAccount.objects.filter(kind=LedgerAccount.Kind.WALLET, user_id=user.pk)
        .values_list("balance", "held")
        .first()
    )
    return Funds(balance=row[0], held=row[1]) if row else Funds(balance=0, held=0)


def hold_amount(*, account_id: int, table_id: int) -> int:
    """The wallet's hold at the table: the amount of its latest hold event there (0 if none)."""
    amount = (
        LedgerHold.objects.filter(account_id=account_id, table_id=table_id)
        .order_by("-id")
        .values_list("amount", flat=True)
        .first()
    )
    return amount or 0


def hold_head(*, account_id: int) -> str:
    """The hash of the wallet's last hold event (the chain's head; 64 zeros before the first)."""
    head = (
        LedgerHold.objects.filter(account_id=account_id)
        .order_by("-id")
        .values_list("hash", flat=True)
        .first()
    )
    return head or GENESIS


_OPEN_HOLDS = """
    SELECT h.table_id, t.name, t.stake, h.amount, h.created_at FROM (
        SELECT DISTINCT ON (table_id) table_id, amount, created_at
        FROM accounts_ledgerhold WHERE account_id = %s ORDER BY table_id, id DESC
    ) AS h JOIN games_table AS t ON t.id = h.table_id
    WHERE h.amount > 0 ORDER BY h.table_id
"""


def wallet_holds(user: User) -> list[TableHold]:
    """The player's open holds, one per table, by table id."""
    account_id = (
        LedgerAccount.objects.filter(kind=LedgerAccount.Kind.WALLET, user_id=user.pk)
        .values_list("pk", flat=True)
        .first()
    )
    if account_id is None:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_OPEN_HOLDS, [account_id])
        rows = cursor.fetchall()
    return [
        TableHold(table_id=t, table_name=name, stake=stake, amount=amount, since=since)
        for t, name, stake, amount, since in rows
    ]


def open_holds() -> list[tuple[int, int, int]]:
    """Every open hold: ``(account id, table id, amount)`` (for the checks)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT account_id, table_id, amount FROM (
                SELECT DISTINCT ON (account_id, table_id) account_id, table_id, amount
                FROM accounts_ledgerhold ORDER BY account_id, table_id, id DESC
            ) AS h WHERE amount > 0 ORDER BY account_id, table_id
            """
        )
        return [tuple(row) for row in cursor.fetchall()]
