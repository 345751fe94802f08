"""manage.py ledger_check: quiet on a sound ledger; exit 1 and a list on every kind of damage,
a hand whose log was changed behind the guards included, and every transaction the record key
does not vouch for (one inserted with the application's database credentials alone)."""

from __future__ import annotations

import pytest
from django.db import connection

from accounts.ledger import (
    balance_adjust,
    house_account,
    issuance_account,
    ledger_post,
    wallet_for,
)
from accounts.ledger_selectors import (
    LEDGER_CHECKS,
    LedgerProblem,
    issuance_balance,
    ledger_problems,
)
from accounts.models import LedgerTransaction, User
from accounts.record_keys import new_record_key, record_keys
from tests.db_owner import as_owner
from tests.forgery import ledger_forge
from tests.games.tampering import expected_reports, first_reports, tampered_hands
from tests.ledger_run import ledger_check_run as check

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="damage needs raw PostgreSQL"),
]


@pytest.fixture
def lan() -> User:
    user = User.objects.create_user(username="lan")
    balance_adjust(user=user, amount=1_000, reason="funds", key="fund")
    return user


def damage(*statements: tuple[str, list]) -> None:
    """Raw SQL as the owner with the ledger's triggers off, inside the test's transaction (rolled
    back after): the application's role may not write a balance at all."""
    tables = ("accounts_ledgeraccount", "accounts_ledgertransaction", "accounts_ledgerentry")
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE needs no pending checks
        for table in tables:
            as_owner(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        for sql, params in statements:
            as_owner(sql, params)
        for table in tables:
            as_owner(f"ALTER TABLE {table} ENABLE TRIGGER USER")


def test_a_sound_ledger_passes(lan):
    assert check() == (0, f"ledger ok ({len(LEDGER_CHECKS)} checks)\n")


def test_a_balance_column_off_its_entries_is_reported(lan):
    damage(("UPDATE accounts_ledgeraccount SET balance = 999 WHERE id = %s", [wallet_for(lan).pk]))
    code, out = check()
    assert code == 1
    assert "accounts_sum_to_zero: all balances sum to -1, not 0" in out
    assert f"balance_matches_entries: account {wallet_for(lan).pk}" in out


def test_an_unbalanced_transaction_and_a_wrong_running_balance_are_reported(lan):
    wallet = wallet_for(lan).pk
    damage(
        (
            "INSERT INTO accounts_ledgertransaction"
            " (kind, idempotency_key, memo, created_at, prev_hash, hash) "
            "VALUES ('transfer', 'broken', '', now(), '', '')",
            [],
        ),
        (
            "INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after) "
            "SELECT id, %s, 5, 7 FROM accounts_ledgertransaction WHERE idempotency_key = 'broken'",
            [wallet],
        ),
    )
    code, out = check()
    assert code == 1
    assert "transaction_balances: transaction" in out and "(broken): 1 entries summing to 5" in out
    assert "running_balance: entry" in out and "balance_after 7, running sum 1005" in out
    assert "balance_matches_entries" in out  # the column never saw the raw entry


@pytest.mark.slow
def test_every_hand_whose_log_was_tampered_is_reported_at_its_first_bad_seq(make_user):
    # Given settled hands the database owner changed behind the guards (a payload, a seed, the
    # order of two events) and one left alone, the books themselves untouched,
    hands = tampered_hands(make_user)
    # the check reports each changed hand with its first bad seq and why, goes on, and exits 1.
    code, out = check()
    assert code == 1
    assert first_reports(out, hands) == expected_reports(hands)
    assert all(line.startswith("hand_settlement: hand ") for line in out.splitlines())


def test_checks_are_a_list_others_can_extend(lan):
    def always_wrong() -> list[LedgerProblem]:
        return [LedgerProblem("hand_settlement", "hand 7 paid 10, settled 12")]

    assert ledger_problems() == []
    assert ledger_problems([*LEDGER_CHECKS, always_wrong]) == always_wrong()
    assert issuance_balance() == -1_000


# --------------------------------------------------------------------------- the record key


def forged_grant(user: User, **mac: tuple[str, str]) -> int:
    """chan_app's forgery: +1,000,000 from the user's issuance shard to its wallet, balanced,
    on the chain of the user's last transaction, its hash right."""
    chain = LedgerTransaction.objects.filter(user=user).order_by("-id").first().chain
    legs = [(issuance_account(user=user).pk, -1_000_000), (wallet_for(user).pk, 1_000_000)]
    return ledger_forge(key="forged", legs=legs, chain=chain, user=user.pk, **mac)


def test_a_transaction_forged_with_the_application_credentials_is_reported(lan):
    # Given chan_app inserting a balanced adjustment whose chain hash it computed from the head,
    tx = forged_grant(lan)
    assert wallet_for(lan).balance == 1_001_000  # spendable: the database took it
    # the check names it (nothing else is wrong with it) and exits 1.
    code, out = check()
    assert code == 1
    assert out.splitlines() == [
        f"mac: transaction {tx} (forged): it carries no MAC, after a row that does"
    ]


def test_a_transaction_with_a_made_up_mac_is_reported(lan):
    tx = forged_grant(lan, mac=("ab" * 32, record_keys().signing))
    code, out = check()
    assert code == 1
    assert out.splitlines() == [
        f"mac: transaction {tx} (forged): its MAC is not the record key's MAC of its hash"
    ]


def test_a_key_retired_but_listed_verifies_an_unknown_key_does_not(lan, settings):
    old = settings.CHAN_RECORD_KEY  # lan's transactions were booked under it
    new = new_record_key("next")
    settings.CHAN_RECORD_KEY = f"{new},{old}"  # rotated: the new key signs, the old verifies
    balance_adjust(user=lan, amount=5, reason="after the rotation", key="later")
    assert LedgerTransaction.objects.order_by("-id").first().mac_key == "next"
    assert check() == (0, f"ledger ok ({len(LEDGER_CHECKS)} checks)\n")
    settings.CHAN_RECORD_KEY = new  # the old key dropped: what it vouched for is unvouched
    code, out = check()
    assert code == 1
    old_id = old.split(":")[0]
    assert f"its MAC is under key '{old_id}', which is not a record key" in out
    assert "after the rotation" not in out and "(adjust:later:" not in out


def test_transactions_without_a_mac_pass_only_before_the_first_keyed_one():
    # Given a transaction booked before keys existed (no MAC), then one booked with the key,
    issuance, house = issuance_account(shard=0).pk, house_account(shard=0).pk
    ledger_forge(key="before-keys", legs=[(issuance, -7), (house, 7)], chain=0)
    ledger_post(
        kind="transfer",
        key="with-the-key",
        legs=[(issuance_account(shard=0), -3), (house_account(shard=0), 3)],
    )
    assert check() == (0, f"ledger ok ({len(LEDGER_CHECKS)} checks)\n")
    # one without a MAC after it is reported.
    tx = ledger_forge(key="after-keys", legs=[(issuance, -1), (house, 1)], chain=0)
    code, out = check()
    assert code == 1
    assert out.splitlines() == [
        f"mac: transaction {tx} (after-keys): it carries no MAC, after a row that does"
    ]
