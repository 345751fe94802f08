"""Everything that reads the Quan ledger: balances (one indexed row, O(1)), a player's statement
page by page, and the consistency checks of ``manage.py ledger_check``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Count, F, Q, Sum
from django.utils.translation import gettext_lazy as _

from accounts.hold_selectors import HOLD_CHECKS
from accounts.ledger_hash import GENESIS, ledger_tx_hash
from accounts.models import LedgerAccount, LedgerEntry, LedgerTransaction, User
from core.ascii_digits import ascii_int
from core.errors import InvalidInput

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


def check_balances_match_entries() -> list[LedgerProblem]:
    """Every account's balance column equals the sum of its entries, and none that must not
    is below zero."""
    problems = []
    accounts = LedgerAccount.objects.annotate(entry_sum=Sum("entries__amount", default=0)).filter(
        ~Q(balance=F("entry_sum")) | (Q(balance__lt=0) & ~Q(kind="issuance"))
    )
    for account in accounts.order_by("pk"):
        problems.append(
            LedgerProblem(
                "balance_matches_entries",
                f"account {account.pk} ({account}): balance {account.balance}, "
                f"entries sum to {account.entry_sum}",
            )
        )
    return problems


def check_transactions_balance() -> list[LedgerProblem]:
    """Every transaction has at least two entries summing to zero."""
    bad = (
        LedgerTransaction.objects.annotate(
            total=Sum("entries__amount", default=0), n=Count("entries")
        )
        .filter(~Q(total=0) | Q(n__lt=2))
        .order_by("pk")
    )
    return [
        LedgerProblem(
            "transaction_balances",
            f"transaction {tx.pk} ({tx.idempotency_key}): {tx.n} entries summing to {tx.total}",
        )
        for tx in bad
    ]


def check_running_balances() -> list[LedgerProblem]:
    """Each entry's ``balance_after`` is its account's running sum up to it (in id order)."""
    from django.db import connection

    sql = """
        SELECT id, account_id, balance_after, running FROM (
            SELECT id, account_id, balance_after,
                   SUM(amount) OVER (PARTITION BY account_id ORDER BY id) AS running
            FROM accounts_ledgerentry
        ) AS e WHERE balance_after <> running ORDER BY id LIMIT 100
    """
    with connection.cursor() as cursor:
        cursor.execute(sql)
        rows = cursor.fetchall()
    return [
        LedgerProblem(
            "running_balance",
            f"entry {pk} on account {account}: balance_after {after}, running sum {running}",
        )
        for pk, account, after, running in rows
    ]


CHAIN_BATCH = 2_000


def check_chain() -> list[LedgerProblem]:
    """Each chain (one per shard, accounts 0017) links up: a transaction's ``prev_hash`` is the
    hash of the one before it on its chain (by id) and its ``hash`` is that of its content and its
    entries as they are now (accounts/ledger_hash.py): an entry added to an old transaction, a
    transaction moved to another chain, or any edit made with the triggers off, breaks it."""
    problems = []
    prev: dict[int, str] = {}
    last_id = 0
    columns = ("id", "kind", "idempotency_key", "memo", "user_id", "hand_id", "table_id")
    while True:
        batch = list(
            LedgerTransaction.objects.filter(id__gt=last_id)
            .order_by("id")
            .values_list(*columns, "chain", "prev_hash", "hash")[:CHAIN_BATCH]
        )
        if not batch:
            return problems
        legs: dict[int, list[tuple[int, int]]] = {}
        for tx_id, account, amount in LedgerEntry.objects.filter(
            transaction_id__gt=last_id, transaction_id__lte=batch[-1][0]
        ).values_list("transaction_id", "account_id", "amount"):
            legs.setdefault(tx_id, []).append((account, amount))
        last_id = batch[-1][0]
        for pk, kind, key, memo, user, hand, table, chain, prev_hash, stored in batch:
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
    check_chain,
    *HOLD_CHECKS,
]


def ledger_problems(
    checks: list[Callable[[], list[LedgerProblem]]] | None = None,
) -> list[LedgerProblem]:
    """Every problem the checks find (none on a sound ledger)."""
    return [problem for check in (checks or LEDGER_CHECKS) for problem in check()]
