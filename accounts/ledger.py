"""Everything that writes the Quan ledger: one balanced transaction per business event.

:func:`ledger_post` is the only function that appends ledger rows; grants, the daily bonus, admin
adjustments and hand settlements (games) all go through it. On PostgreSQL the database refuses
what must never happen even if this module had a bug (migration accounts 0004): an unbalanced
transaction, a non-issuance balance below zero, an edited or deleted ledger row.

Sub-accounts and chains (accounts 0017): the house and the issuance account are families, a
parent and ``CHAN_HOUSE_SHARDS`` children; a hand's fee goes to the house child ``table id mod N``
of its table and a player's grants come from the issuance child ``user id mod N``, so settlements
at different tables do not queue on one row. The ledger has one hash chain per shard: a
transaction extends the chain of its house or issuance child, else of its table, hand's table or
user (:func:`_chain_of`).

A wallet's holds (accounts/holds.py) are not to be spent: a leg that would take a balance below
what the account holds is refused like an overdraft.

Lock order: whoever also locks a hand or a table locks it first (games), then the ledger accounts
of the transaction, all at once, in ascending primary key (``SELECT … FOR NO KEY UPDATE ORDER BY id``),
then the head of the transaction's chain (the transaction-level advisory lock
``LEDGER_HEAD_LOCK + chain``, held to the commit), which serialises that chain: each
transaction's ``prev_hash`` is the hash of the one before it on its chain (accounts/ledger_hash.py;
a database trigger, accounts 0017, refuses any other), and its ``mac`` the record key's MAC of its
hash (``games.rules.record_mac``), written by the same insert. All three are taken by one statement
(``chan_ledger_lock``), the rows and entries written by a second. So two settlements touching the
same wallets in any order queue up instead of deadlocking, and two on different shards share no
lock but their players' wallets. A database transaction that books a second ledger transaction (a
settlement, then a leaving player's pot refund) locks that one's accounts while holding a chain
head; both are on the table's chain, so they take no second head, but should another
session hold one of the second's accounts and wait for that head, PostgreSQL's deadlock detector
aborts one of the two and its caller retries (the settlement task does).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.ledger_hash import GENESIS, ledger_tx_hash
from accounts.limit_selectors import bonus_check
from accounts.models import LedgerAccount, LedgerTransaction, User
from accounts.record_keys import record_keys
from core import metrics
from core.errors import Conflict, InvalidInput
from games.rules.record_mac import LEDGER, record_mac

Kind = LedgerTransaction.Kind
# An adjustment larger than this is refused (a typo, not a decision).
MAX_ADJUSTMENT = 10**12
# The greatest magnitude of one leg: far below bigint, so no sum of legs can overflow.
MAX_LEG = 10**15


# --------------------------------------------------------------------------- accounts


def _account_get_or_create(**lookup: Any) -> LedgerAccount:
    """The account matching ``lookup``, created (balance 0) on first use. Two first uses at once
    both end with the same row: the loser of the unique constraint reads the winner's."""
    account = LedgerAccount.objects.filter(**lookup).first()
    if account is not None:
        return account
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction stays usable
            return LedgerAccount.objects.create(**lookup)
    except IntegrityError:
        account = LedgerAccount.objects.filter(**lookup).first()
        if account is None:
            raise
        return account


def wallet_for(user: User) -> LedgerAccount:
    """The player's wallet (created empty on first use)."""
    return _account_get_or_create(kind=LedgerAccount.Kind.WALLET, user=user)


def ledger_shards() -> int:
    """How many sub-accounts the house and the issuance account have (``CHAN_HOUSE_SHARDS``),
    which is also how many hash chains the ledger has."""
    return max(1, int(settings.CHAN_HOUSE_SHARDS))


def shard_of(obj: Any) -> int:
    """The shard of a user or a table: its id mod ``CHAN_HOUSE_SHARDS``."""
    return int(obj.pk) % ledger_shards()


def _family_account(kind: str, shard: int | None) -> LedgerAccount:
    """The parent of ``kind`` (``shard`` None) or its child ``shard`` (created on first use)."""
    if shard is None:
        return _account_get_or_create(kind=kind, parent=None)
    if isinstance(shard, bool) or not isinstance(shard, int) or shard < 0:
        raise InvalidInput(_("A shard is a whole number from 0."), code="invalid")
    # (kind, shard) names one child: only the house and issuance families have shards.
    child = LedgerAccount.objects.filter(kind=kind, shard=shard, parent__isnull=False).first()
    if child is not None:
        return child
    parent = _account_get_or_create(kind=kind, parent=None)
    return _account_get_or_create(kind=kind, parent=parent, shard=shard)


def house_account(*, shard: int | None = None, hand: Any = None) -> LedgerAccount:
    """The house: it collects the fees of hands (RULES.md §11). A hand's fee goes to the house's
    sub-account ``table id mod CHAN_HOUSE_SHARDS`` of the hand's table (``hand=``; or ``shard=``
    directly), so that settlements at different tables do not queue on one row, while all the
    ledger transactions of one table (which its row lock serialises anyway) share one shard and
    one chain; with neither, the parent, whose own balance is what the house held before the
    split (accounts 0017). The house's balance is the family's sum
    (``ledger_selectors.house_balance``)."""
    if hand is not None:
        shard = int(hand.table_id) % ledger_shards()
    return _family_account(LedgerAccount.Kind.HOUSE, shard)


def issuance_account(*, shard: int | None = None, user: Any = None) -> LedgerAccount:
    """The counterpart of every grant, bonus and admin adjustment: the only account that may
    go below zero; minus its balance is all the Quan ever put into play. A player's grants come
    from the sub-account ``user id mod CHAN_HOUSE_SHARDS`` (``user=``; or ``shard=``); with
    neither, the parent (see :func:`house_account`)."""
    if user is not None:
        shard = shard_of(user)
    return _family_account(LedgerAccount.Kind.ISSUANCE, shard)


def pot_account(table: Any) -> LedgerAccount:
    """The gà góp pot of a table (RULES.md §10.10)."""
    return _account_get_or_create(kind=LedgerAccount.Kind.POT, table=table)


# --------------------------------------------------------------------------- posting


def _key_reused(key: str) -> Conflict:
    return Conflict(
        _("The ledger key %(key)s was already used for other movements."),
        code="idempotency_key_reused",
        key=key,
    )


def _merge_legs(legs: Sequence[tuple[LedgerAccount, int]]) -> dict[int, int]:
    """``{account id: amount}``: legs on one account added up, zero legs dropped."""
    merged: dict[int, int] = {}
    for account, amount in legs:
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise InvalidInput(_("Ledger amounts are whole Quan."), code="ledger_amount_invalid")
        if abs(amount) > MAX_LEG:
            raise InvalidInput(
                _("A ledger amount is at most %(max)s Quan."),
                code="ledger_amount_invalid",
                max=MAX_LEG,
            )
        if account.pk is None:
            raise InvalidInput(_("A ledger leg names an unsaved account."), code="invalid")
        merged[account.pk] = merged.get(account.pk, 0) + amount
    return {pk: amount for pk, amount in merged.items() if amount != 0}


def _booked_legs(tx: LedgerTransaction) -> dict[int, int]:
    # the key names the transaction's partition (accounts 0022)
    entries = tx.entries.filter(transaction_created_at=tx.created_at)
    return dict(entries.values_list("account_id", "amount"))


def _replay(existing: LedgerTransaction, kind: str, legs: Mapping[int, int]) -> LedgerTransaction:
    """A key seen again: the same movements return the booked transaction, others are refused."""
    if existing.kind != kind or _booked_legs(existing) != dict(legs):
        raise _key_reused(existing.idempotency_key)
    return existing


def _pk(obj: Any) -> int | None:
    return None if obj is None else obj.pk


def _chain_of(legs: Sequence[tuple[LedgerAccount, int]], **owners: Any) -> int:
    """The hash chain a transaction extends: the shard of its house or issuance sub-account if
    it has one, else that of its table, its hand's table or its user (in that order), else
    chain 0. So a table's settlements, pot moves and refunds all extend the table's chain (one
    chain head per database transaction, whatever it books), and a player's grants the chain of
    the player's issuance shard."""
    shards = sorted(account.shard for account, _amount in legs if account.shard is not None)
    if shards:
        return shards[0] % ledger_shards()
    if owners.get("table") is not None:
        return shard_of(owners["table"])
    if owners.get("hand") is not None:
        return int(owners["hand"].table_id) % ledger_shards()
    if owners.get("user") is not None:
        return shard_of(owners["user"])
    return 0


@dataclass(frozen=True, slots=True)
class LockedAccount:
    """An account of a transaction being posted, as read under its row lock."""

    pk: int
    kind: str
    balance: int
    held: int


@dataclass(frozen=True, slots=True)
class PostLocks:
    """What the first round trip of a post returns (``chan_ledger_lock``, accounts 0017): the
    accounts locked in ascending id, the hash at the head of the chain (now held to the commit)
    and the id of a transaction already booked under the key, if any."""

    accounts: list[LockedAccount]
    head: str
    existing: int | None


def _post_lock(account_ids: Sequence[int], *, chain: int, key: str) -> PostLocks:
    """Lock the accounts (``SELECT … FOR NO KEY UPDATE`` in ascending id), then the chain's head (the
    advisory lock ``LEDGER_HEAD_LOCK + chain``, to the commit), then look the key up: one
    statement."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT o_ids, o_kinds, o_balances, o_held, o_head, o_existing"
            " FROM chan_ledger_lock(%s::bigint[], %s, %s)",
            [list(account_ids), chain, key],
        )
        ids, kinds, balances, held, head, existing = cursor.fetchone()
    return PostLocks(
        accounts=[LockedAccount(*row) for row in zip(ids, kinds, balances, held, strict=True)],
        head=head or GENESIS,
        existing=existing,
    )


def _check_funds(locked: Sequence[LockedAccount], legs: Mapping[int, int]) -> None:
    """Refuse a leg that would take a non-issuance account below zero (under its row lock).
    The one place the post path asks whether an account can pay."""
    for account in locked:
        amount = legs[account.pk]
        if account.kind != LedgerAccount.Kind.ISSUANCE and account.balance + amount < 0:
            raise Conflict(
                _("Not enough Quan: %(needed)s needed, %(balance)s available."),
                code="insufficient_balance",
                extra={"needed": -amount, "balance": account.balance, "account_id": account.pk},
                needed=-amount,
                balance=account.balance,
            )
        if account.held and account.balance + amount < account.held:
            # Quan held for seats is not to be spent (accounts/holds.py; the database
            # refuses it too, accounts 0014).
            available = account.balance - account.held
            raise Conflict(
                _("Not enough Quan: %(needed)s needed, %(available)s available (%(held)s held)."),
                code="insufficient_balance",
                extra={
                    "needed": -amount,
                    "balance": account.balance,
                    "available": available,
                    "held": account.held,
                    "account_id": account.pk,
                },
                needed=-amount,
                available=available,
                held=account.held,
            )


INSERT_TX_AND_ENTRIES = """
WITH tx AS (
    INSERT INTO accounts_ledgertransaction
        (kind, idempotency_key, memo, user_id, hand_id, table_id, prev_hash, hash, chain,
         mac, mac_key, created_at)
    VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id, created_at
)
INSERT INTO accounts_ledgerentry
    (transaction_id, account_id, amount, balance_after, transaction_created_at)
SELECT tx.id, leg.account_id, leg.amount, leg.balance_after, tx.created_at
FROM tx, unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS leg(account_id, amount, balance_after)
ORDER BY leg.account_id
RETURNING transaction_id
"""


def ledger_post(
    *,
    kind: str,
    key: str,
    legs: Sequence[tuple[LedgerAccount, int]],
    memo: str = "",
    user: Any = None,
    hand: Any = None,
    table: Any = None,
) -> LedgerTransaction:
    """Book one balanced transaction: ``legs`` are ``(account, signed Quan)``; legs on the same
    account are merged and zero legs dropped; what is left must be non-empty and sum to zero.

    Idempotent on ``key``: booked once; the same key again with the same kind and (merged) legs
    books nothing and returns the first transaction, with other legs it is refused
    (``idempotency_key_reused``). A leg that would take a non-issuance account below zero is
    refused (``insufficient_balance``, with ``needed``, ``balance`` and ``account_id``).

    Locks: the legs' accounts, ``SELECT … FOR NO KEY UPDATE`` in ascending id, after any hand or table
    lock the caller holds, then the head of its chain (see the module docstring). Runs in the
    caller's transaction if any.
    """
    tx, _booked = _post(kind=kind, key=key, legs=legs, memo=memo, user=user, hand=hand, table=table)
    return tx


def _post(
    *,
    kind: str,
    key: str,
    legs: Sequence[tuple[LedgerAccount, int]],
    memo: str,
    user: Any,
    hand: Any,
    table: Any,
) -> tuple[LedgerTransaction, bool]:
    """:func:`ledger_post`, also telling whether this call booked the transaction (True) or
    found it booked under its key (False)."""
    if kind not in Kind.values:
        raise InvalidInput(
            _("Unknown ledger transaction kind %(kind)s."), code="invalid", kind=kind
        )
    if not key:
        raise InvalidInput(_("A ledger transaction needs an idempotency key."), code="invalid")
    merged = _merge_legs(legs)
    if not merged:
        raise InvalidInput(_("A ledger transaction needs movements."), code="ledger_empty")
    total = sum(merged.values())
    if total != 0:
        raise InvalidInput(
            _("A ledger transaction must sum to zero, not %(total)s."),
            code="ledger_unbalanced",
            total=total,
        )

    chain = _chain_of(legs, hand=hand, user=user, table=table)
    account_ids = sorted(merged)
    with transaction.atomic():
        locks = _post_lock(account_ids, chain=chain, key=key)
        if len(locks.accounts) != len(merged):
            raise InvalidInput(_("A ledger leg names an unknown account."), code="invalid")
        # Under the locks, a committed transaction with this key is visible (READ COMMITTED).
        if locks.existing is not None:
            existing = LedgerTransaction.objects.get(pk=locks.existing)
            return _replay(existing, kind, merged), False
        _check_funds(locks.accounts, merged)
        memo = memo[:255]
        digest = ledger_tx_hash(
            prev=locks.head,
            kind=kind,
            key=key,
            memo=memo,
            user=_pk(user),
            hand=_pk(hand),
            table=_pk(table),
            entries=merged.items(),
        )
        # the record key's MAC of the hash (docs/audit.md): what database credentials cannot make
        mac, mac_key = record_mac(record_keys(), domain=LEDGER, digest=digest)
        now = timezone.now()
        with connection.cursor() as cursor:
            cursor.execute(
                INSERT_TX_AND_ENTRIES,
                [
                    kind,
                    key,
                    memo,
                    _pk(user),
                    _pk(hand),
                    _pk(table),
                    locks.head,
                    digest,
                    chain,
                    mac,
                    mac_key,
                    now,
                    account_ids,
                    [merged[pk] for pk in account_ids],
                    # each balance after its leg, from the balances read under the locks: the
                    # database compares them with its own (accounts 0021)
                    [a.balance + merged[a.pk] for a in locks.accounts],
                ],
            )
            rows = cursor.fetchall()
        if not rows:
            # The same key, booked at the same time on other accounts (whose locks we do not
            # hold), committed first: ON CONFLICT inserted nothing.
            existing = LedgerTransaction.objects.get(idempotency_key=key)
            return _replay(existing, kind, merged), False
        tx = LedgerTransaction(
            pk=rows[0][0],
            kind=kind,
            idempotency_key=key,
            memo=memo,
            user=user,
            hand=hand,
            table=table,
            prev_hash=locks.head,
            hash=digest,
            chain=chain,
            mac=mac,
            mac_key=mac_key,
            created_at=now,
        )
        tx._state.adding = False
        tx._state.db = connection.alias
        metrics.ledger_booked(kind=kind)
    return tx, True


def ledger_transfer(
    *,
    kind: str,
    key: str,
    source: LedgerAccount,
    target: LedgerAccount,
    amount: int,
    memo: str = "",
) -> LedgerTransaction:
    """Move ``amount`` (> 0) Quan from ``source`` to ``target``: a two-leg :func:`ledger_post`."""
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise InvalidInput(_("A transfer moves a positive whole amount."), code="invalid")
    return ledger_post(kind=kind, key=key, legs=[(source, -amount), (target, amount)], memo=memo)


# --------------------------------------------------------------------------- grants and bonuses


def welcome_grant_book(*, user: User) -> LedgerTransaction:
    """Book the welcome grant (``CHAN_WELCOME_GRANT``, RULES.md §11) once per player ever:
    key ``grant:welcome:<user id>``."""
    amount = settings.CHAN_WELCOME_GRANT
    return ledger_post(
        kind=Kind.WELCOME_GRANT,
        key=f"grant:welcome:{user.pk}",
        legs=[(issuance_account(user=user), -amount), (wallet_for(user), amount)],
        memo="Welcome grant",
        user=user,
    )


def daily_bonus_amount(user: User) -> int:
    """The daily bonus of the user's VIP tier (``CHAN_DAILY_BONUS``; the last tier caps)."""
    tiers = settings.CHAN_DAILY_BONUS
    return int(tiers[min(max(user.vip, 0), len(tiers) - 1)])


def _local_day(now: dt.datetime) -> tuple[dt.date, dt.datetime]:
    """The calendar day of ``now`` in ``TIME_ZONE`` (Asia/Ho_Chi_Minh) and when the next one
    begins, in UTC."""
    zone = ZoneInfo(settings.TIME_ZONE)
    day = now.astimezone(zone).date()
    next_start = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tzinfo=zone)
    return day, next_start.astimezone(dt.UTC)


def next_bonus_at(when: dt.datetime) -> dt.datetime:
    """When the bonus after one claimed at ``when`` opens: the next local midnight, in UTC."""
    return _local_day(when)[1]


def _bonus_already_claimed(next_claim_at: dt.datetime) -> Conflict:
    when = next_claim_at.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    return Conflict(
        _("Today's bonus was already claimed; the next one can be claimed at %(when)s."),
        code="bonus_already_claimed",
        extra={"next_claim_at": when},
        when=when,
    )


def bonus_claim(*, user: User, now: dt.datetime | None = None) -> LedgerTransaction:
    """Book today's daily bonus (:func:`daily_bonus_amount`) for the user: once per calendar day
    in ``TIME_ZONE``, keyed ``bonus:daily:<user id>:<local date>``. A second claim the same day,
    even one sent at the same instant, is ``bonus_already_claimed`` with ``next_claim_at`` (UTC,
    the next local midnight).

    Locks: the issuance account and the wallet, in id order (:func:`ledger_post`).
    """
    now = now or timezone.now()
    bonus_check(user, now)  # cooling off or self-excluded: no bonus (accounts/limits.py)
    day, next_claim_at = _local_day(now)
    key = f"bonus:daily:{user.pk}:{day.isoformat()}"
    if LedgerTransaction.objects.filter(idempotency_key=key).exists():
        raise _bonus_already_claimed(next_claim_at)
    amount = daily_bonus_amount(user)
    try:
        tx, booked = _post(
            kind=Kind.DAILY_BONUS,
            key=key,
            legs=[(issuance_account(user=user), -amount), (wallet_for(user), amount)],
            memo=f"Daily bonus {day.isoformat()}",
            user=user,
            hand=None,
            table=None,
        )
    except Conflict as exc:  # booked meanwhile at another VIP tier's amount
        if exc.code != "idempotency_key_reused":
            raise
        raise _bonus_already_claimed(next_claim_at) from exc
    if not booked:  # a concurrent claim booked it first
        raise _bonus_already_claimed(next_claim_at)
    return tx


def balance_adjust(
    *, user: User, amount: int, reason: str, staff: User | None = None, key: str
) -> LedgerTransaction:
    """An admin adjustment of the user's wallet by ``amount`` Quan (positive credits, negative
    debits; a debit cannot take the wallet below zero): an issuance transaction whose memo is
    the reason, booked once per ``key`` (the admin form's nonce, so a re-submitted form books
    nothing). Refused: 0, a non-integer, more than ``MAX_ADJUSTMENT`` either way, no reason.
    """
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise InvalidInput(
            _("The amount must be a whole number of Quan."), code="adjustment_invalid"
        )
    if amount == 0:
        raise InvalidInput(_("An adjustment of 0 Quan changes nothing."), code="adjustment_invalid")
    if abs(amount) > MAX_ADJUSTMENT:
        raise InvalidInput(
            _("An adjustment is at most %(max)s Quan either way."),
            code="adjustment_invalid",
            max=f"{MAX_ADJUSTMENT:,}",
        )
    reason = reason.strip()
    if not reason:
        raise InvalidInput(_("An adjustment needs a reason."), code="adjustment_invalid")
    by = f" (by {staff.username})" if staff is not None else ""
    return ledger_post(
        kind=Kind.ADJUSTMENT,
        key=f"adjust:{key}:{user.pk}",
        legs=[(issuance_account(user=user), -amount), (wallet_for(user), amount)],
        memo=f"{reason}{by}"[:255],
        user=user,
    )
