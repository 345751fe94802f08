"""The ledger's entries once their months are archived (``manage.py partitions
--archive-before``; core/partitions.py, accounts 0022): read from ``chan_archive`` as well, where
they stay read-only, so ``ledger_check`` still reconciles every balance, every transaction and
every chain over all the entries ever booked."""

from __future__ import annotations

from typing import Any

from core.partitions import archived_tables

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
