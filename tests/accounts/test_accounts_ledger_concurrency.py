"""Real threads on PostgreSQL, each with its own connection and transaction: the ledger's locks,
idempotency keys and triggers hold when postings race."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import call_command
from django.db import OperationalError, connection, connections, transaction
from django.db.models import Sum
from rest_framework.test import APIClient

from accounts.holds import hold_place
from accounts.ledger import balance_adjust, house_account, ledger_post, wallet_for
from accounts.ledger_selectors import ledger_problems, wallet_balance
from accounts.models import LedgerAccount, LedgerTransaction, User
from accounts.services import token_create
from core.errors import Conflict

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="concurrent writers"),
]


def at_once(n: int, call: Callable[[int], Any]) -> list[Any]:
    """Run ``call(i)`` in ``n`` threads released together; their results (or exceptions)."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = call(i)
        except BaseException as exc:  # noqa: BLE001 (returned, not lost in a thread)
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread is stuck (deadlock?)"
    return results


def funded(name: str, amount: int) -> User:
    user = User.objects.create_user(username=name)
    balance_adjust(user=user, amount=amount, reason="test funds", key=f"fund-{name}")
    return user


def test_opposite_transfers_at_once_are_both_booked_without_deadlock():
    a, b = funded("a", 1_000), funded("b", 1_000)
    wa, wb = wallet_for(a), wallet_for(b)
    rounds = 15
    for r in range(rounds):
        # given two settlements naming the same wallets in opposite orders
        legs = [[(wa, -10), (wb, 10)], [(wb, -7), (wa, 7)]]
        # when they are posted at the same instant
        results = at_once(
            2, lambda i, r=r, legs=legs: ledger_post(kind="transfer", key=f"r{r}-{i}", legs=legs[i])
        )
        # then both are booked (no deadlock error, no lost update)
        assert all(isinstance(tx, LedgerTransaction) for tx in results), results
    assert wallet_balance(a) == 1_000 - 3 * rounds
    assert wallet_balance(b) == 1_000 + 3 * rounds
    assert ledger_problems() == []


def test_the_same_key_posted_at_once_is_booked_once():
    a, b = funded("a", 1_000), funded("b", 1_000)
    legs = [(wallet_for(a), -100), (wallet_for(b), 90), (house_account(), 10)]
    results = at_once(6, lambda i: ledger_post(kind="hand_settlement", key="hand:7", legs=legs))
    assert all(isinstance(tx, LedgerTransaction) for tx in results), results
    assert len({tx.pk for tx in results}) == 1
    assert LedgerTransaction.objects.filter(idempotency_key="hand:7").count() == 1
    assert (wallet_balance(a), wallet_balance(b), house_account().balance) == (900, 1_090, 10)


def test_a_wallet_drained_from_two_threads_never_goes_negative():
    a, b, c = funded("a", 100), funded("b", 1), funded("c", 1)
    targets = [wallet_for(b), wallet_for(c)]
    results = at_once(
        2,
        lambda i: ledger_post(
            kind="transfer", key=f"drain-{i}", legs=[(wallet_for(a), -80), (targets[i], 80)]
        ),
    )
    booked = [r for r in results if isinstance(r, LedgerTransaction)]
    refused = [r for r in results if isinstance(r, Conflict)]
    assert len(booked) == 1 and len(refused) == 1, results
    assert refused[0].code == "insufficient_balance" and refused[0].extra["balance"] == 20
    assert wallet_balance(a) == 20


def test_two_bonus_claims_at_once_book_exactly_one_bonus():
    user = User.objects.create_user(username="lan")
    tokens = [token_create(user=user)[1] for _ in range(2)]
    clients = []
    for token in tokens:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        clients.append(client)
    responses = at_once(2, lambda i: clients[i].post("/api/v1/me/bonus"))
    assert sorted(r.status_code for r in responses) == [201, 409], responses
    conflict = next(r for r in responses if r.status_code == 409)
    assert conflict.json()["code"] == "bonus_already_claimed"
    assert LedgerTransaction.objects.filter(kind="daily_bonus", user=user).count() == 1
    assert wallet_balance(user) == 10_000


def test_many_random_postings_leave_a_clean_ledger_that_sums_to_zero():
    users = [funded(f"p{i}", 500) for i in range(6)]
    wallets = [wallet_for(u) for u in users]
    house = house_account()

    def worker(i: int) -> int:
        rng = random.Random(i)
        booked = 0
        for n in range(25):
            payers = rng.sample(wallets, rng.randint(1, 3))
            payee = rng.choice([w for w in wallets if w not in payers])
            amounts = [rng.randint(1, 120) for _ in payers]
            fee = sum(amounts) // 20
            legs = [(w, -a) for w, a in zip(payers, amounts, strict=True)]
            legs += [(payee, sum(amounts) - fee), (house, fee)]
            rng.shuffle(legs)
            try:
                ledger_post(kind="hand_settlement", key=f"w{i}-{n}", legs=legs)
                booked += 1
            except Conflict as exc:
                assert exc.code == "insufficient_balance"
        return booked

    results = at_once(4, worker)
    assert all(isinstance(r, int) for r in results), results
    assert sum(results) > 0
    assert LedgerTransaction.objects.filter(kind="hand_settlement").count() == sum(results)
    assert LedgerAccount.objects.aggregate(total=Sum("balance"))["total"] == 0
    assert all(w.balance >= 0 for w in LedgerAccount.objects.exclude(kind="issuance"))
    assert sum(wallet_balance(u) for u in users) + house_account().balance == 6 * 500
    call_command("ledger_check")  # raises CommandError on any problem


def _key_share_taken(table: str, pk: int) -> bool:
    """Whether another connection gets ``FOR KEY SHARE`` on the row at once (``NOWAIT``): what a
    deferred foreign key's check takes at COMMIT for a row that points at it."""
    answer: list[bool] = []

    def probe() -> None:
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"SELECT 1 FROM {table} WHERE id = %s FOR KEY SHARE NOWAIT", [pk])
            answer.append(True)
        except OperationalError:
            answer.append(False)
        finally:
            connections.close_all()

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join(timeout=30)
    return answer == [True]


def test_the_ledgers_row_locks_let_foreign_key_checks_through():
    """The accounts a posting, a hold or a wallet lock holds to its commit are locked ``FOR NO
    KEY UPDATE``: any other locker waits, a foreign key's check does not (with ``FOR UPDATE`` a
    transaction holding a lock the locker waits for deadlocked at its COMMIT)."""
    from games.models import Table

    a, b = funded("a", 1_000), funded("b", 1_000)
    table = Table.objects.create(name="t", stake=10, owner=a)
    accounts = LedgerAccount._meta.db_table
    with transaction.atomic():
        ledger_post(kind="transfer", legs=[(wallet_for(a), -5), (wallet_for(b), 5)], key="t-1")
        assert _key_share_taken(accounts, wallet_for(a).pk)  # chan_ledger_lock (0023)
    with transaction.atomic():
        hold_place(user=b, table=table, amount=10)  # the app's wallet lock, then the trigger's
        assert _key_share_taken(accounts, wallet_for(b).pk)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {accounts} WHERE id = %s FOR UPDATE", [wallet_for(a).pk])
        assert not _key_share_taken(accounts, wallet_for(a).pk)  # the probe tells them apart
