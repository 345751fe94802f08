"""Everything that reads holds: what a wallet holds at each table, what it has
available (balance − held), and the consistency checks ``manage.py ledger_check`` runs on them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection

from accounts.models import LedgerAccount, LedgerHold, User
from core.rows import values_read
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


# Each wallet's last hold event at the table (the chain's order is the ids'), for every deal: a
# fixed statement (core.rows), not compiled per deal.
_HOLD_AMOUNTS_SQL = (
    f"SELECT h.account_id, h.amount FROM {LedgerHold._meta.db_table} h WHERE h.id IN"
    f" (SELECT max(l.id) FROM {LedgerHold._meta.db_table} l"
    "  WHERE l.account_id = ANY(%s) AND l.table_id = %s GROUP BY l.account_id)"
)


def hold_amounts(*, account_ids: list[int], table_id: int) -> dict[int, int]:
    """:func:`hold_amount` of several wallets at one table, in one read (0 where none)."""
    found = dict(values_read(LedgerHold, _HOLD_AMOUNTS_SQL, [account_ids, table_id]))
    return {account_id: found.get(account_id, 0) for account_id in account_ids}


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


# --------------------------------------------------------------------------- checks


def check_held_matches_holds() -> list[Any]:
    """Every account's ``held`` is the sum of its open holds, and no more than its balance."""
    from accounts.ledger_selectors import LedgerProblem

    totals: dict[int, int] = {}
    for account_id, _table_id, amount in open_holds():
        totals[account_id] = totals.get(account_id, 0) + amount
    problems = []
    rows = LedgerAccount.objects.filter(held__gt=0) | LedgerAccount.objects.filter(pk__in=totals)
    for pk, held, balance in rows.order_by("pk").values_list("pk", "held", "balance"):
        if held != totals.get(pk, 0):
            problems.append(
                LedgerProblem(
                    "held_matches_holds",
                    f"account {pk}: held {held}, its open holds sum to {totals.get(pk, 0)}",
                )
            )
        if held > balance:
            problems.append(
                LedgerProblem("held_within_balance", f"account {pk}: holds {held} of {balance}")
            )
    return problems


def check_hold_chain() -> list[Any]:
    """Each wallet's hold events chain (``prev_hash`` is its previous event's ``hash``, each
    ``hash`` that of its content), and each ``delta``/``held_after`` is the running sum."""
    from accounts.holds import hold_hash
    from accounts.ledger_selectors import LedgerProblem

    problems = []
    head: dict[int, str] = {}
    held: dict[int, int] = {}
    here: dict[tuple[int, int], int] = {}
    columns = (
        "id",
        "account_id",
        "table_id",
        "kind",
        "amount",
        "delta",
        "held_after",
        "hand_id",
        "reason",
        "prev_hash",
        "hash",
    )
    for row in LedgerHold.objects.order_by("id").values_list(*columns).iterator(chunk_size=2000):
        pk, account, table, kind, amount, delta, after, hand, reason, prev, stored = row
        if prev != head.get(account, GENESIS):
            problems.append(
                LedgerProblem("hold_chain", f"hold {pk}: prev_hash is not account {account}'s")
            )
        wanted = hold_hash(
            prev=prev,
            account=account,
            table=table,
            kind=kind,
            amount=amount,
            hand=hand,
            reason=reason,
        )
        if stored != wanted:
            problems.append(
                LedgerProblem("hold_chain", f"hold {pk}: its hash is not its content's")
            )
        if delta != amount - here.get((account, table), 0):
            problems.append(LedgerProblem("hold_chain", f"hold {pk}: delta {delta} is wrong"))
        held[account] = held.get(account, 0) + amount - here.get((account, table), 0)
        if after != held[account]:
            problems.append(LedgerProblem("hold_chain", f"hold {pk}: held_after {after} is wrong"))
        here[(account, table)] = amount
        head[account] = stored
    return problems


HOLD_CHECKS = [check_held_matches_holds, check_hold_chain]
