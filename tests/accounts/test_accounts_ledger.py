"""The ledger services (accounts/ledger.py): every rule of ledger_post, the account getters, the
welcome grant, the daily bonus and admin adjustments."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db.models import Sum

from accounts.ledger import (
    MAX_ADJUSTMENT,
    balance_adjust,
    bonus_claim,
    daily_bonus_amount,
    house_account,
    issuance_account,
    ledger_post,
    ledger_transfer,
    pot_account,
    wallet_for,
    welcome_grant_book,
)
from accounts.ledger_selectors import issuance_balance, ledger_problems, wallet_balance
from accounts.models import LedgerAccount, LedgerEntry, LedgerTransaction, LedgerWriteError, User
from accounts.services import user_register
from core.errors import Conflict, InvalidInput

pytestmark = pytest.mark.django_db
UTC = dt.UTC


def funded(name: str, amount: int = 1_000) -> User:
    """A user whose wallet holds ``amount`` Quan (an adjustment from issuance)."""
    user = User.objects.create_user(username=name)
    balance_adjust(user=user, amount=amount, reason="test funds", key=f"fund-{name}")
    return user


def make_table(owner: User):  # type: ignore[no-untyped-def]
    from games.models import Table

    return Table.objects.create(name="t", stake=10, owner=owner)


# --------------------------------------------------------------------------- accounts


def test_account_getters_create_once_and_then_return_the_same_row():
    user = User.objects.create_user(username="lan")
    table = make_table(user)
    first = (wallet_for(user), house_account(), issuance_account(), pot_account(table))
    again = (wallet_for(user), house_account(), issuance_account(), pot_account(table))
    assert [a.pk for a in first] == [a.pk for a in again]
    assert [a.kind for a in first] == ["wallet", "house", "issuance", "pot"]
    assert all(a.balance == 0 for a in first)
    assert LedgerAccount.objects.count() == 4


def test_wallet_balance_is_zero_without_a_wallet_and_reads_one_row(django_assert_num_queries):
    user = funded("lan", 700)
    assert wallet_balance(User.objects.create_user(username="nobody")) == 0
    with django_assert_num_queries(1):
        assert wallet_balance(user) == 700


def test_ledger_rows_refuse_orm_updates_and_deletes():
    user = funded("lan")
    for model in (LedgerAccount, LedgerTransaction, LedgerEntry):
        with pytest.raises(LedgerWriteError):
            model.objects.all().delete()
        with pytest.raises(LedgerWriteError):
            model.objects.all().update()
    with pytest.raises(LedgerWriteError):
        LedgerAccount.objects.filter(user=user).update(balance=10**9)
    assert wallet_balance(user) == 1_000


# --------------------------------------------------------------------------- ledger_post


def test_post_books_a_balanced_transaction_and_moves_every_balance():
    a, b = funded("a", 1_000), funded("b", 1_000)
    house = house_account()

    tx = ledger_post(
        kind="hand_settlement",
        key="hand:1:settle",
        legs=[(wallet_for(a), -300), (wallet_for(b), 285), (house, 15)],
        memo="hand 1",
    )

    assert tx.kind == "hand_settlement" and tx.memo == "hand 1"
    entries = {e.account_id: (e.amount, e.balance_after) for e in tx.entries.all()}
    assert entries == {
        wallet_for(a).pk: (-300, 700),
        wallet_for(b).pk: (285, 1_285),
        house.pk: (15, 15),
    }
    assert (wallet_balance(a), wallet_balance(b), house_account().balance) == (700, 1_285, 15)
    assert tx.entries.aggregate(total=Sum("amount"))["total"] == 0


def test_post_twice_with_the_same_key_books_once_and_returns_the_first_transaction():
    a, b = funded("a"), funded("b")
    legs = [(wallet_for(a), -100), (wallet_for(b), 100)]
    first = ledger_post(kind="transfer", key="k1", legs=legs)
    again = ledger_post(kind="transfer", key="k1", legs=list(reversed(legs)))
    assert again.pk == first.pk
    assert (wallet_balance(a), wallet_balance(b)) == (900, 1_100)
    assert LedgerTransaction.objects.filter(idempotency_key="k1").count() == 1


@pytest.mark.parametrize("change", ["amount", "account", "kind"])
def test_post_with_a_used_key_and_other_movements_is_refused(change):
    a, b, c = funded("a"), funded("b"), funded("c")
    ledger_post(kind="transfer", key="k1", legs=[(wallet_for(a), -100), (wallet_for(b), 100)])
    other = {
        "amount": ("transfer", [(wallet_for(a), -101), (wallet_for(b), 101)]),
        "account": ("transfer", [(wallet_for(a), -100), (wallet_for(c), 100)]),
        "kind": ("hand_settlement", [(wallet_for(a), -100), (wallet_for(b), 100)]),
    }[change]
    with pytest.raises(Conflict) as refused:
        ledger_post(kind=other[0], key="k1", legs=other[1])
    assert refused.value.code == "idempotency_key_reused"
    assert (wallet_balance(a), wallet_balance(b), wallet_balance(c)) == (900, 1_100, 1_000)


def test_post_merges_legs_on_one_account_and_drops_zero_legs():
    a, b = funded("a"), funded("b")
    house = house_account()
    tx = ledger_post(
        kind="hand_settlement",
        key="merge",
        legs=[(wallet_for(a), -100), (wallet_for(a), -50), (wallet_for(b), 150), (house, 0)],
    )
    assert sorted(tx.entries.values_list("account_id", "amount")) == sorted(
        [(wallet_for(a).pk, -150), (wallet_for(b).pk, 150)]
    )
    assert not LedgerEntry.objects.filter(account=house).exists()


@pytest.mark.parametrize(
    ("legs", "code"),
    [
        ([], "ledger_empty"),
        ([("a", 0), ("b", 0)], "ledger_empty"),
        ([("a", 100), ("a", -100)], "ledger_empty"),
        ([("a", -100), ("b", 99)], "ledger_unbalanced"),
        ([("a", -100)], "ledger_unbalanced"),
        ([("a", -1.5), ("b", 1.5)], "ledger_amount_invalid"),
        ([("a", True), ("b", -1)], "ledger_amount_invalid"),
        ([("a", -(10**16)), ("b", 10**16)], "ledger_amount_invalid"),
    ],
)
def test_post_refuses_empty_unbalanced_and_non_integer_sets(legs, code):
    wallets = {"a": wallet_for(funded("a")), "b": wallet_for(funded("b"))}
    before = LedgerEntry.objects.count()
    with pytest.raises(InvalidInput) as refused:
        ledger_post(kind="transfer", key="bad", legs=[(wallets[n], amt) for n, amt in legs])
    assert refused.value.code == code
    assert LedgerEntry.objects.count() == before
    assert not LedgerTransaction.objects.filter(idempotency_key="bad").exists()


def test_post_refuses_unknown_kinds_and_empty_keys():
    a, b = funded("a"), funded("b")
    legs = [(wallet_for(a), -1), (wallet_for(b), 1)]
    with pytest.raises(InvalidInput):
        ledger_post(kind="gift", key="k", legs=legs)
    with pytest.raises(InvalidInput):
        ledger_post(kind="transfer", key="", legs=legs)


@pytest.mark.parametrize("kind", ["wallet", "house", "pot"])
def test_post_refuses_a_leg_that_would_take_a_non_issuance_account_below_zero(kind):
    a, b = funded("a", 100), funded("b", 100)
    source = {
        "wallet": lambda: wallet_for(a),
        "house": house_account,
        "pot": lambda: pot_account(make_table(a)),
    }[kind]()
    with pytest.raises(Conflict) as refused:
        ledger_post(kind="transfer", key="over", legs=[(source, -101), (wallet_for(b), 101)])
    error = refused.value
    assert error.code == "insufficient_balance"
    assert error.extra == {
        "needed": 101,
        "balance": source.balance if kind != "wallet" else 100,
        "account_id": source.pk,
    }
    assert not LedgerTransaction.objects.filter(idempotency_key="over").exists()
    assert wallet_balance(a) == 100


def test_a_wallet_may_be_emptied_to_exactly_zero():
    a, b = funded("a", 100), funded("b", 1)
    ledger_transfer(
        kind="transfer", key="all", source=wallet_for(a), target=wallet_for(b), amount=100
    )
    assert (wallet_balance(a), wallet_balance(b)) == (0, 101)


def test_the_issuance_account_goes_below_zero_by_what_was_put_into_play():
    funded("a", 1_000)
    funded("b", 2_500)
    assert issuance_balance() == -3_500
    assert LedgerAccount.objects.aggregate(total=Sum("balance"))["total"] == 0
    assert ledger_problems() == []


def test_post_records_its_references():
    a, b = funded("a"), funded("b")
    table = make_table(a)
    tx = ledger_post(
        kind="ga_gop",
        key="pot:1",
        legs=[(wallet_for(a), -10), (wallet_for(b), -10), (pot_account(table), 20)],
        user=a,
        table=table,
    )
    tx.refresh_from_db()
    assert (tx.user_id, tx.table_id, tx.hand_id) == (a.pk, table.pk, None)
    assert pot_account(table).balance == 20


def test_transfer_refuses_non_positive_amounts():
    a, b = funded("a"), funded("b")
    for amount in (0, -5):
        with pytest.raises(InvalidInput):
            ledger_transfer(
                kind="transfer", key="t", source=wallet_for(a), target=wallet_for(b), amount=amount
            )


def test_a_post_inside_a_caller_transaction_rolls_back_with_it():
    from django.db import transaction

    a, b = funded("a"), funded("b")
    with pytest.raises(RuntimeError), transaction.atomic():
        ledger_post(kind="transfer", key="rb", legs=[(wallet_for(a), -5), (wallet_for(b), 5)])
        raise RuntimeError("the settlement failed later")
    assert (wallet_balance(a), wallet_balance(b)) == (1_000, 1_000)
    assert not LedgerTransaction.objects.filter(idempotency_key="rb").exists()


# --------------------------------------------------------------------------- welcome grant


def test_registration_books_the_welcome_grant_once():
    user = user_register(username="lan", password="a-Long-enough-pass-9")
    assert wallet_balance(user) == 50_000
    again = welcome_grant_book(user=user)
    assert wallet_balance(user) == 50_000
    assert again.idempotency_key == f"grant:welcome:{user.pk}"
    assert again.kind == "welcome_grant" and again.user_id == user.pk


def test_the_welcome_grant_follows_the_setting(settings):
    settings.CHAN_WELCOME_GRANT = 7
    user = User.objects.create_user(username="lan")
    welcome_grant_book(user=user)
    assert wallet_balance(user) == 7


def test_the_data_migration_grants_existing_users_once():
    from importlib import import_module

    from django.apps import apps
    from django.db import connection

    migration = import_module("accounts.migrations.0005_welcome_grants")
    old = User.objects.create_user(username="old")
    granted = user_register(username="new", password="a-Long-enough-pass-9")

    migration.forwards(apps, connection.schema_editor())
    migration.forwards(apps, connection.schema_editor())

    assert (wallet_balance(old), wallet_balance(granted)) == (50_000, 50_000)
    assert LedgerTransaction.objects.filter(kind="welcome_grant").count() == 2
    assert ledger_problems() == []


# --------------------------------------------------------------------------- daily bonus

# 2026-03-10 23:30 in Hanoi (UTC+7) is 16:30 UTC; the next local midnight is 17:00 UTC.
LATE_EVENING = dt.datetime(2026, 3, 10, 16, 30, tzinfo=UTC)


def test_bonus_is_booked_once_per_local_day_and_says_when_the_next_opens():
    user = User.objects.create_user(username="lan")
    tx = bonus_claim(user=user, now=LATE_EVENING)
    assert tx.kind == "daily_bonus"
    assert tx.idempotency_key == f"bonus:daily:{user.pk}:2026-03-10"
    assert wallet_balance(user) == 10_000

    with pytest.raises(Conflict) as refused:
        bonus_claim(user=user, now=LATE_EVENING + dt.timedelta(minutes=29))
    assert refused.value.code == "bonus_already_claimed"
    assert refused.value.extra == {"next_claim_at": "2026-03-10T17:00:00Z"}
    assert wallet_balance(user) == 10_000


def test_the_bonus_day_turns_at_midnight_in_ho_chi_minh_city_not_utc():
    user = User.objects.create_user(username="lan")
    bonus_claim(user=user, now=LATE_EVENING)
    # 00:00 local on the 11th, still the 10th in UTC: a new day
    bonus_claim(user=user, now=dt.datetime(2026, 3, 10, 17, 0, tzinfo=UTC))
    # 23:59 UTC on the 10th is 06:59 on the 11th locally: the same day as the previous claim
    with pytest.raises(Conflict):
        bonus_claim(user=user, now=dt.datetime(2026, 3, 10, 23, 59, tzinfo=UTC))
    assert wallet_balance(user) == 20_000


@pytest.mark.parametrize(("vip", "amount"), [(0, 10_000), (1, 15_000), (4, 50_000), (9, 50_000)])
def test_the_bonus_grows_with_the_vip_tier(vip, amount):
    user = User.objects.create_user(username="lan", vip=vip)
    assert daily_bonus_amount(user) == amount
    bonus_claim(user=user, now=LATE_EVENING)
    assert wallet_balance(user) == amount


def test_a_tier_change_the_same_day_does_not_give_a_second_bonus():
    user = User.objects.create_user(username="lan")
    bonus_claim(user=user, now=LATE_EVENING)
    user.vip = 3
    with pytest.raises(Conflict) as refused:
        bonus_claim(user=user, now=LATE_EVENING)
    assert refused.value.code == "bonus_already_claimed"


# --------------------------------------------------------------------------- adjustments


def test_adjustments_credit_and_debit_through_issuance_with_the_reason_as_memo():
    staff = User.objects.create_user(username="boss", is_staff=True)
    user = funded("lan", 500)
    tx = balance_adjust(user=user, amount=-200, reason="refund reversal", staff=staff, key="n1")
    assert wallet_balance(user) == 300
    assert tx.kind == "adjustment" and tx.memo == "refund reversal (by boss)"
    assert issuance_balance() == -300


def test_an_adjustment_is_booked_once_per_key():
    user = funded("lan", 500)
    balance_adjust(user=user, amount=100, reason="goodwill", key="n1")
    balance_adjust(user=user, amount=100, reason="goodwill", key="n1")
    assert wallet_balance(user) == 600


@pytest.mark.parametrize("amount", [0, 1.5, "100", True, MAX_ADJUSTMENT + 1, -MAX_ADJUSTMENT - 1])
def test_adjustments_of_zero_non_integers_and_huge_amounts_are_refused(amount):
    user = funded("lan", 500)
    with pytest.raises(InvalidInput) as refused:
        balance_adjust(user=user, amount=amount, reason="x", key="n1")
    assert refused.value.code == "adjustment_invalid"
    assert wallet_balance(user) == 500


def test_an_adjustment_needs_a_reason_and_cannot_overdraw():
    user = funded("lan", 500)
    with pytest.raises(InvalidInput):
        balance_adjust(user=user, amount=5, reason="  ", key="n1")
    with pytest.raises(Conflict) as refused:
        balance_adjust(user=user, amount=-501, reason="clawback", key="n2")
    assert refused.value.code == "insufficient_balance"
    assert refused.value.extra["balance"] == 500
    assert balance_adjust(user=user, amount=MAX_ADJUSTMENT, reason="max", key="n3")
