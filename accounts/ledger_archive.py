"""The ledger's entries once their months are archived (``manage.py partitions
--archive-before``; core/partitions.py, accounts 0022): read from ``chan_archive`` as well, where
they stay read-only, so ``ledger_check`` still reconciles every balance, every transaction and
every chain over all the entries ever booked, and a hand's export still shows its settlement."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import connection

from accounts.models import LedgerEntry, LedgerTransaction
from core.partitions import archived_table, archived_tables, month_start

ENTRIES = "accounts_ledgerentry"
COLUMNS = "id, transaction_id, account_id, amount, balance_after, transaction_created_at"


def ledger_entries_everywhere(*, cursor: Any) -> str:
    """A FROM item (``(…) AS e``) of every ledger entry, live and archived, with the columns
    of :data:`COLUMNS`: the live table alone while nothing is archived."""
    tables = archived_tables(cursor=cursor, table=ENTRIES)
    if not tables:
        return f"{ENTRIES} AS e"
    union = " UNION ALL ".join(f"SELECT {COLUMNS} FROM {t}" for t in [ENTRIES, *tables])
    return f"({union}) AS e"


def ledger_entries_archived(tx: LedgerTransaction) -> list[LedgerEntry]:
    """The transaction's entries in id order from the archive of its month (empty if that
    month is not archived)."""
    month = month_start(tx.created_at.astimezone(dt.UTC).date())
    with connection.cursor() as cursor:
        table = archived_table(cursor=cursor, table=ENTRIES, month=month)
    if table is None:
        return []
    entries = list(
        LedgerEntry.objects.raw(
            f"SELECT * FROM {table} WHERE transaction_id = %s ORDER BY id",  # noqa: S608 (a regclass)
            [tx.pk],
        )
    )
    for entry in entries:
        entry.transaction = tx
    return entries


def ledger_entries_of(tx: LedgerTransaction) -> list[LedgerEntry]:
    """The transaction's entries in id order: from its month's partition (the key names it),
    or, once that month is archived, from the archive. For the audits of what a transaction
    booked (hands, seasons, tournaments), which must not lose an archived month."""
    live = list(
        LedgerEntry.objects.filter(transaction=tx, transaction_created_at=tx.created_at).order_by(
            "id"
        )
    )
    return live or ledger_entries_archived(tx)
