"""Everything that reads the Quan ledger: balances (one indexed row, O(1)), a player's statement
page by page, and the consistency checks of ``manage.py ledger_check``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection
from django.db.models import Count, Sum
from django.utils.translation import gettext_lazy as _

from accounts.hold_selectors import HOLD_CHECKS
from accounts.ledger_archive import ledger_entries_everywhere
from accounts.ledger_hash import GENESIS, ledger_tx_hash
from accounts.models import LedgerAccount, LedgerEntry, LedgerTransaction, User
from accounts.record_keys import record_keys
from core.ascii_digits import ascii_int
from core.errors import InvalidInput
from games.rules.record_mac import LEDGER, MacChain

LEDGER_PAGE_DEFAULT = 50
LEDGER_PAGE_MAX = 200


def wallet_balance(user: User) -> int:
    """The player's Quan: the wallet's balance column (0 before its first entry)."""
    balance = (
        LedgerAccount.objects.filter(kind=LedgerAccount.Kind.WALLET, user_id=user.pk)
        .values_list("balance", flat=True)
        .first()
    )
    return balance or 0


def family_balance(kind: str) -> int:
    """The balance of the house or the issuance account (``kind``): the sum over the family,
    the parent (what it held before the split, accounts 0017) and its sub-accounts."""
    total = LedgerAccount.objects.filter(kind=kind).aggregate(total=Sum("balance"))["total"]
    return total or 0


def house_balance() -> int:
    """All the fees the house has collected: the sum of the house and its sub-accounts."""
    return family_balance(LedgerAccount.Kind.HOUSE)


def issuance_balance() -> int:
    """Minus all the Quan ever put into play: the sum of the issuance family."""
    return family_balance(LedgerAccount.Kind.ISSUANCE)


@dataclass(frozen=True, slots=True)
class LedgerPage:
    """Entries of one wallet, newest first; ``next_cursor`` continues after the last one."""

    entries: list[LedgerEntry]
    next_cursor: str | None


def _cursor_value(cursor: str | None) -> int | None:
    if cursor is None or cursor == "":
        return None
    value = ascii_int(cursor)
    if value is None:
        raise InvalidInput(errors={"cursor": [_("Not a cursor this endpoint returned.")]})
    return value


def ledger_page(
    *, user: User, cursor: str | None = None, limit: int = LEDGER_PAGE_DEFAULT
) -> LedgerPage:
    """The player's wallet entries, newest first, at most ``limit``, before ``cursor`` (an
    opaque string from a previous page). Keyset pagination on the entry id over the index
    ``(account, -id)``: a page costs the same at 1,000 or 1,000,000 entries."""
    before = _cursor_value(cursor)
    # The wallet's id first, so the entries query names a constant account_id and the planner
    # walks the (account, -id) index; filtering on the joined account instead made it scan the
    # whole entry table backwards for a wallet whose entries are old (bench/ledger_bench.py).
    wallet_id = (
        LedgerAccount.objects.filter(kind=LedgerAccount.Kind.WALLET, user_id=user.pk)
        .values_list("pk", flat=True)
        .first()
    )
    if wallet_id is None:
        return LedgerPage(entries=[], next_cursor=None)
    entries = LedgerEntry.objects.filter(account_id=wallet_id)
    if before is not None:
        entries = entries.filter(id__lt=before)
    rows = list(entries.select_related("transaction").order_by("-id")[: limit + 1])
    has_more = len(rows) > limit
    rows = rows[:limit]
    return LedgerPage(entries=rows, next_cursor=str(rows[-1].pk) if has_more else None)


# --------------------------------------------------------------------------- checks


@dataclass(frozen=True, slots=True)
class LedgerProblem:
    check: str
    detail: str


def check_accounts_sum_to_zero() -> list[LedgerProblem]:
    """Σ of every account's balance is 0: Quan is neither created nor destroyed."""
    total = LedgerAccount.objects.aggregate(total=Sum("balance"))["total"] or 0
    if total != 0:
        return [LedgerProblem("accounts_sum_to_zero", f"all balances sum to {total}, not 0")]
    return []


def _rows(sql: str, params: list | None = None) -> list[tuple]:
    """``sql`` with ``{entries}`` read as every entry, live and archived (accounts 0022)."""
    with connection.cursor() as cursor:
        cursor.execute(sql.format(entries=ledger_entries_everywhere(cursor=cursor)), params)
        return cursor.fetchall()


def check_balances_match_entries() -> list[LedgerProblem]:
    """Every account's balance column equals the sum of its entries (archived months
    included), and none that must not is below zero."""
    rows = _rows(
        """
        SELECT a.id, coalesce(s.total, 0)::bigint FROM accounts_ledgeraccount a
        LEFT JOIN (SELECT account_id, sum(amount) AS total FROM {entries} GROUP BY account_id)
            AS s ON s.account_id = a.id
        WHERE a.balance <> coalesce(s.total, 0) OR (a.balance < 0 AND a.kind <> 'issuance')
        ORDER BY a.id
        """
    )
    accounts = LedgerAccount.objects.in_bulk([pk for pk, _total in rows])
    return [
        LedgerProblem(
            "balance_matches_entries",
            f"account {pk} ({accounts[pk]}): balance {accounts[pk].balance}, "
            f"entries sum to {total}",
        )
        for pk, total in rows
    ]


def check_transactions_balance() -> list[LedgerProblem]:
    """Every transaction has at least two entries summing to zero (archived months included)."""
    rows = _rows(
        """
        SELECT t.id, t.idempotency_key, coalesce(s.n, 0), coalesce(s.total, 0)::bigint
        FROM accounts_ledgertransaction t
        LEFT JOIN (SELECT transaction_id, count(*) AS n, sum(amount) AS total
                   FROM {entries} GROUP BY transaction_id) AS s ON s.transaction_id = t.id
        WHERE coalesce(s.total, 0) <> 0 OR coalesce(s.n, 0) < 2
        ORDER BY t.id
        """
    )
    return [
        LedgerProblem(
            "transaction_balances",
            f"transaction {pk} ({key}): {n} entries summing to {total}",
        )
        for pk, key, n, total in rows
    ]


def check_running_balances() -> list[LedgerProblem]:
    """Each entry's ``balance_after`` is its account's running sum up to it (in id order,
    archived months included)."""
    rows = _rows(
        """
        SELECT id, account_id, balance_after, running FROM (
            SELECT id, account_id, balance_after,
                   SUM(amount) OVER (PARTITION BY account_id ORDER BY id) AS running
            FROM {entries}
        ) AS r WHERE balance_after <> running ORDER BY id LIMIT 100
        """
    )
    return [
        LedgerProblem(
            "running_balance",
            f"entry {pk} on account {account}: balance_after {after}, running sum {running}",
        )
        for pk, account, after, running in rows
    ]


def check_entry_keys() -> list[LedgerProblem]:
    """Each entry's partition key is its transaction's ``created_at`` (accounts 0022: what
    makes one leg per account, unique with the key, unique without it)."""
    rows = _rows(
        """
        SELECT e.id, e.transaction_id FROM {entries}
        JOIN accounts_ledgertransaction t ON t.id = e.transaction_id
        WHERE e.transaction_created_at <> t.created_at ORDER BY e.id LIMIT 100
        """
    )
    return [
        LedgerProblem(
            "entry_key",
            f"entry {pk}: transaction_created_at is not transaction {tx}'s created_at",
        )
        for pk, tx in rows
    ]


CHAIN_BATCH = 2_000


def check_chain() -> list[LedgerProblem]:
    """Each chain (one per shard, accounts 0017) links up: a transaction's ``prev_hash`` is the
    hash of the one before it on its chain (by id) and its ``hash`` is that of its content and its
    entries as they are now, archived months included (accounts/ledger_hash.py): an entry added
    to an old transaction, a transaction moved to another chain, or any edit made with the
    triggers off, breaks it. And each carries the record key's MAC of its hash
    (``games.rules.record_mac``; none only on those booked before the first that has one): a
    transaction inserted with database credentials alone, however well it chains, is reported
    (``mac``)."""
    problems = []
    prev: dict[int, str] = {}
    # the ledger's rows in id order: one written without a MAC is allowed only before the first
    # that has one, on any chain (games.rules.record_mac)
    macs = MacChain(record_keys(), domain=LEDGER)
    last_id = 0
    columns = ("id", "kind", "idempotency_key", "memo", "user_id", "hand_id", "table_id")
    with connection.cursor() as cursor:
        entries = ledger_entries_everywhere(cursor=cursor)
    while True:
        batch = list(
            LedgerTransaction.objects.filter(id__gt=last_id)
            .order_by("id")
            .values_list(*columns, "chain", "prev_hash", "hash", "mac", "mac_key")[:CHAIN_BATCH]
        )
        if not batch:
            return problems
        legs: dict[int, list[tuple[int, int]]] = {}
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT transaction_id, account_id, amount FROM {entries}"  # noqa: S608
                " WHERE transaction_id > %s AND transaction_id <= %s ORDER BY id",
                [last_id, batch[-1][0]],
            )
            for tx_id, account, amount in cursor.fetchall():
                legs.setdefault(tx_id, []).append((account, amount))
        last_id = batch[-1][0]
        for pk, kind, key, memo, user, hand, table, chain, prev_hash, stored, mac, kid in batch:
            if prev_hash != prev.get(chain, GENESIS):
                problems.append(
                    LedgerProblem(
                        "chain",
                        f"transaction {pk} ({key}): prev_hash is not the hash before it "
                        f"on chain {chain}",
                    )
                )
            wanted = ledger_tx_hash(
                prev=prev_hash,
                kind=kind,
                key=key,
                memo=memo,
                user=user,
                hand=hand,
                table=table,
                entries=legs.get(pk, []),
            )
            if stored != wanted:
                problems.append(
                    LedgerProblem(
                        "chain",
                        f"transaction {pk} ({key}): its hash is not that of its content and "
                        "entries (edited, or an entry added afterwards)",
                    )
                )
            prev[chain] = stored
            unvouched = macs.check(digest=stored, mac=mac, mac_key=kid)
            if unvouched is not None:
                problems.append(LedgerProblem("mac", f"transaction {pk} ({key}): {unvouched}"))


def ledger_head() -> dict[str, object]:
    """The ledger's head for auditors: the last transaction's id and hash, how many there are
    (``tx_id`` null and ``hash`` 64 zeros on an empty ledger), and the head of each hash chain
    (``chains``: ``chain``, ``tx_id``, ``hash``, ``count``, one per chain in use)."""
    last = LedgerTransaction.objects.order_by("-id").values_list("pk", "hash").first()
    count = LedgerTransaction.objects.count()
    heads = []
    counts = dict(
        LedgerTransaction.objects.order_by()
        .values_list("chain")
        .annotate(n=Count("id"))
        .values_list("chain", "n")
    )
    for chain in sorted(counts):
        tx_id, digest = (
            LedgerTransaction.objects.filter(chain=chain)
            .order_by("-id")
            .values_list("pk", "hash")
            .first()
        )
        heads.append({"chain": chain, "tx_id": tx_id, "hash": digest, "count": counts[chain]})
    if last is None:
        return {"tx_id": None, "hash": GENESIS, "count": count, "chains": heads}
    return {"tx_id": last[0], "hash": last[1], "count": count, "chains": heads}


# The checks of ``manage.py ledger_check``, in order. Another app adds its own (say, that each
# settled hand's transaction matches its outcome) by appending a function returning problems.
LEDGER_CHECKS: list[Callable[[], list[LedgerProblem]]] = [
    check_accounts_sum_to_zero,
    check_balances_match_entries,
    check_transactions_balance,
    check_running_balances,
    check_entry_keys,
    check_chain,
    *HOLD_CHECKS,
]


def ledger_problems(
    checks: list[Callable[[], list[LedgerProblem]]] | None = None,
) -> list[LedgerProblem]:
    """Every problem the checks find (none on a sound ledger)."""
    return [problem for check in (checks or LEDGER_CHECKS) for problem in check()]
