"""The monthly partitions of the append-only logs (docs/operations.md "Partitions").

Each log in :data:`PARTITIONED` is partitioned by RANGE on a timestamp, one partition a month
(``<table>_y2026m12``, UTC months) and a DEFAULT partition for anything no month holds. The
SQL lives in the database (migration games 0028): ``chan_month_partition_create`` makes one
month's partition (the application's role may call it: the monthly beat task does) and
``chan_month_partition_archive`` detaches one into the ``chan_archive`` schema, read-only
(the owner's alone); accounts 0022 partitioned the ledger's entries the same way. This module
only says which months.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

# The partitioned logs (parent tables), each with the count of its rows' owners still open in a
# month (a month with any is never archived: their next row would find no partition), or None
# when a row's owner never stays open: a ledger transaction's entries are all inserted with it
# (accounts 0013), so a ledger month is final once it is over.
PARTITIONED: dict[str, str | None] = {
    "games_handevent": "SELECT count(*) FROM games_hand WHERE status <> 'ended'"
    " AND created_at >= %s AND created_at < %s",
    "accounts_ledgerentry": None,
}
# Each log's partition key.
PARTITION_KEYS = {
    "games_handevent": "hand_created_at",
    "accounts_ledgerentry": "transaction_created_at",
}
ARCHIVE_SCHEMA = "chan_archive"
AHEAD_MONTHS = 3


def month_start(day: dt.date, shift: int = 0) -> dt.date:
    """The first day of ``day``'s month, ``shift`` months later (or earlier if negative)."""
    index = day.year * 12 + day.month - 1 + shift
    return dt.date(index // 12, index % 12 + 1, 1)


def month_moment(month: dt.date) -> dt.datetime:
    """Midnight UTC of the first of ``month`` (the partitions' bounds)."""
    return dt.datetime(month.year, month.month, 1, tzinfo=dt.UTC)


def partition_name(table: str, month: dt.date) -> str:
    return f"{table}_y{month.year:04d}m{month.month:02d}"


@dataclass(frozen=True, slots=True)
class Partition:
    table: str
    month: dt.date

    @property
    def name(self) -> str:
        return partition_name(self.table, self.month)


def partitions_create_ahead(
    *,
    cursor: Any,
    today: dt.date,
    months: int = AHEAD_MONTHS,
    blocked: list[Partition] | None = None,
) -> list[Partition]:
    """Create each log's partitions from ``today``'s month to ``months`` after it, those
    missing (idempotent). Returns the ones created. A missing month whose rows the DEFAULT
    partition already holds cannot be created over them: it is added to ``blocked`` and the
    others are created, or without ``blocked`` refused (ValueError)."""
    created = []
    for table in PARTITIONED:
        key = PARTITION_KEYS[table]
        for shift in range(months + 1):
            month = month_start(today, shift)
            cursor.execute("SELECT to_regclass(%s) IS NULL", [partition_name(table, month)])
            if not cursor.fetchone()[0]:
                continue
            cursor.execute(
                f"SELECT EXISTS (SELECT 1 FROM {table}_default"  # noqa: S608 (our names)
                f" WHERE {key} >= %s AND {key} < %s)",
                [month_moment(month), month_moment(month_start(month, 1))],
            )
            if cursor.fetchone()[0]:
                if blocked is None:
                    raise ValueError(blocked_message([Partition(table, month)]))
                blocked.append(Partition(table, month))
                continue
            cursor.execute("SELECT chan_month_partition_create(%s, %s)", [table, month])
            if cursor.fetchone()[0]:
                created.append(Partition(table, month))
    return created


def blocked_message(blocked: list[Partition]) -> str:
    names = ", ".join(p.name for p in blocked)
    return (
        f"{names}: the DEFAULT partition holds rows of that month (no partition was created"
        " ahead): see docs/operations.md, Partitions"
    )


def partitions_attached(*, cursor: Any, table: str) -> list[Partition]:
    """The monthly partitions attached to ``table`` (not its DEFAULT one), oldest first."""
    cursor.execute(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
        " WHERE i.inhparent = %s::regclass ORDER BY c.relname",
        [table],
    )
    found = []
    for (name,) in cursor.fetchall():
        suffix = name.removeprefix(f"{table}_y")
        if len(suffix) == 7 and suffix[4] == "m" and suffix.replace("m", "").isdigit():
            found.append(Partition(table, dt.date(int(suffix[:4]), int(suffix[5:]), 1)))
    return found


def partitions_archive_before(
    *, cursor: Any, before: dt.date, today: dt.date | None = None
) -> list[Partition]:
    """As the owner: detach into the archive every monthly partition of a month that ends on
    or before ``before``'s month starts. Returns the ones archived. Refuses (ValueError, before
    detaching anything) a month with a row owner still open (a hand still playing): its next
    row would find no partition; and a month of a log without owners (the ledger's entries)
    that is not over yet (``today``, UTC, by default): its next rows would land in the DEFAULT
    partition."""
    cutoff = month_start(before)
    this_month = month_start(today or dt.datetime.now(dt.UTC).date())
    due = []
    for table, open_rows in PARTITIONED.items():
        for partition in partitions_attached(cursor=cursor, table=table):
            if partition.month >= cutoff:
                continue
            if open_rows is None:
                if partition.month >= this_month:
                    raise ValueError(f"{partition.name}: its month is not over")
            else:
                cursor.execute(
                    open_rows,
                    [month_moment(partition.month), month_moment(month_start(partition.month, 1))],
                )
                still_open = cursor.fetchone()[0]
                if still_open:
                    raise ValueError(f"{partition.name}: {still_open} row owner(s) still open")
            due.append(partition)
    archived = []
    for partition in due:
        cursor.execute(
            "SELECT chan_month_partition_archive(%s, %s)", [partition.table, partition.month]
        )
        if cursor.fetchone()[0]:
            archived.append(partition)
    return archived


def archived_table(*, cursor: Any, table: str, month: dt.date) -> str | None:
    """The archive table of ``table``'s ``month`` ("schema.name"), or None if not archived."""
    name = partition_name(table, month)
    cursor.execute(  # the catalog, not to_regclass: a role without USAGE on the schema may ask
        "SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = %s AND c.relname = %s)",
        [ARCHIVE_SCHEMA, name],
    )
    return f"{ARCHIVE_SCHEMA}.{name}" if cursor.fetchone()[0] else None


def archived_tables(*, cursor: Any, table: str) -> list[str]:
    """Every archived month of ``table`` ("schema.name"), oldest first."""
    cursor.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = %s AND c.relkind = 'r' AND c.relname LIKE %s ORDER BY c.relname",
        [ARCHIVE_SCHEMA, table.replace("_", "\\_") + "\\_y%"],
    )
    return [f"{ARCHIVE_SCHEMA}.{name}" for (name,) in cursor.fetchall()]
