"""The ledger in the admin: read-only pages, no way to edit or delete a row, and the
"Adjust Quan balance" action (amount, reason) that books an issuance transaction."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from accounts.ledger import balance_adjust, wallet_for
from accounts.ledger_selectors import wallet_balance
from accounts.models import LedgerAccount, LedgerEntry, LedgerTransaction, User

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client() -> Client:
    admin = User.objects.create_superuser(username="admin", password="x")
    client = Client()
    client.force_login(admin)
    return client


@pytest.fixture
def lan() -> User:
    user = User.objects.create_user(username="lan")
    balance_adjust(user=user, amount=1_000, reason="opening", key="open")
    return user


def adjust(client: Client, user: User, **form: str):  # type: ignore[no-untyped-def]
    """Run the action on the user changelist: first the form, then ``form`` submitted."""
    page = client.post(
        "/admin/accounts/user/", {"action": "adjust_balance", "_selected_action": [user.pk]}
    )
    assert page.status_code == 200
    nonce = re.search(rb'name="nonce" value="([0-9a-f-]+)"', page.content).group(1).decode()
    data = {"action": "adjust_balance", "_selected_action": [user.pk], "apply": "1"}
    return client.post("/admin/accounts/user/", {**data, "nonce": nonce, **form}, follow=True)


def test_ledger_pages_render_read_only(staff_client, lan):
    tx = LedgerTransaction.objects.get(kind="adjustment")
    account = wallet_for(lan)
    entry = LedgerEntry.objects.filter(account=account).first()
    for url in (
        "/admin/accounts/ledgeraccount/",
        f"/admin/accounts/ledgeraccount/{account.pk}/change/",
        "/admin/accounts/ledgertransaction/",
        f"/admin/accounts/ledgertransaction/{tx.pk}/change/",
        "/admin/accounts/ledgerentry/",
        f"/admin/accounts/ledgerentry/{entry.pk}/change/",
    ):
        page = staff_client.get(url)
        assert page.status_code == 200, url
        assert b'name="_save"' not in page.content, url
    detail = staff_client.get(f"/admin/accounts/ledgertransaction/{tx.pk}/change/")
    assert b"opening" in detail.content and b"1000" in detail.content
    # its place in the ledger's chain, for an auditor to follow (docs/audit.md)
    assert tx.hash.encode() in detail.content and tx.prev_hash.encode() in detail.content
    found = staff_client.get("/admin/accounts/ledgertransaction/", {"q": tx.hash})
    assert f"/admin/accounts/ledgertransaction/{tx.pk}/change/".encode() in found.content


@pytest.mark.parametrize("model", ["ledgeraccount", "ledgertransaction", "ledgerentry"])
def test_ledger_rows_cannot_be_added_changed_or_deleted(staff_client, lan, model):
    pk = {
        "ledgeraccount": wallet_for(lan).pk,
        "ledgertransaction": LedgerTransaction.objects.first().pk,
        "ledgerentry": LedgerEntry.objects.first().pk,
    }[model]
    base = f"/admin/accounts/{model}/"
    assert staff_client.get(f"{base}add/").status_code == 403
    assert staff_client.get(f"{base}{pk}/delete/").status_code == 403
    assert staff_client.post(f"{base}{pk}/change/", {"memo": "x", "amount": "5"}).status_code == 403
    staff_client.post(base, {"action": "delete_selected", "_selected_action": [pk]})
    assert wallet_balance(lan) == 1_000
    assert LedgerEntry.objects.count() == 2


def test_adjust_balance_books_an_issuance_transaction_once(staff_client, lan):
    page = adjust(staff_client, lan, amount="-250", reason="chargeback")
    assert b"Booked 1 adjustment" in page.content
    assert wallet_balance(lan) == 750
    tx = LedgerTransaction.objects.filter(kind="adjustment").first()
    assert tx.memo == "chargeback (by admin)" and tx.user_id == lan.pk


def test_adjust_balance_submitted_twice_books_once(staff_client, lan):
    page = staff_client.post(
        "/admin/accounts/user/", {"action": "adjust_balance", "_selected_action": [lan.pk]}
    )
    nonce = re.search(rb'name="nonce" value="([0-9a-f-]+)"', page.content).group(1).decode()
    form = {
        "action": "adjust_balance",
        "_selected_action": [lan.pk],
        "apply": "1",
        "nonce": nonce,
        "amount": "500",
        "reason": "goodwill",
    }
    staff_client.post("/admin/accounts/user/", form)
    staff_client.post("/admin/accounts/user/", form)
    assert wallet_balance(lan) == 1_500


@pytest.mark.parametrize(
    ("amount", "message"),
    [
        ("0", b"An adjustment of 0 Quan changes nothing."),
        ("1.5", b"The amount must be a whole number of Quan."),
        ("abc", b"The amount must be a whole number of Quan."),
        ("1000000000001", b"An adjustment is at most 1,000,000,000,000 Quan."),
        ("-1000000000001", b"An adjustment is at most 1,000,000,000,000 Quan."),
    ],
)
def test_adjust_balance_refuses_bad_amounts_with_a_clear_message(
    staff_client, lan, amount, message
):
    page = adjust(staff_client, lan, amount=amount, reason="typo")
    assert message in page.content
    assert wallet_balance(lan) == 1_000
    assert LedgerTransaction.objects.filter(kind="adjustment").count() == 1


def test_adjust_balance_cannot_overdraw_and_says_so(staff_client, lan):
    page = adjust(staff_client, lan, amount="-1001", reason="clawback")
    assert b"Not enough Quan" in page.content
    assert wallet_balance(lan) == 1_000


def test_adjust_balance_from_the_wallet_list_refuses_other_accounts(staff_client, lan):
    from accounts.ledger import house_account

    house = house_account()
    page = staff_client.post(
        "/admin/accounts/ledgeraccount/",
        {"action": "adjust_balance", "_selected_action": [house.pk, wallet_for(lan).pk]},
        follow=True,
    )
    assert b"Only wallets can be adjusted" in page.content
    wallet = wallet_for(lan)
    form = staff_client.post(
        "/admin/accounts/ledgeraccount/",
        {"action": "adjust_balance", "_selected_action": [wallet.pk]},
    )
    assert b"Adjust Quan balance" in form.content and b"lan" in form.content
    assert LedgerAccount.objects.get(pk=house.pk).balance == 0


def test_user_page_shows_the_balance_and_vip_tier(staff_client, lan):
    page = staff_client.get(f"/admin/accounts/user/{lan.pk}/change/")
    assert page.status_code == 200
    assert b"Quan balance" in page.content and b"1000" in page.content
    assert b'name="vip"' in page.content
