"""The ledger's entries partitioned by month (migration accounts 0022, core/partitions.py,
``manage.py partitions``, accounts/ledger_archive.py): every guard on every partition, also for a
statement that names a partition; the key bound to the transaction; months created ahead
idempotently; a posting in a month without a partition; an archived month still reconciled and
tampering in it found; and the migration itself over existing entries, back and forth."""

from __future__ import annotations

import datetime as dt
from importlib import import_module
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import DatabaseError, ProgrammingError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from accounts.ledger import balance_adjust, issuance_account, wallet_for
from accounts.ledger_selectors import LEDGER_CHECKS, ledger_problems, wallet_balance
from accounts.models import LedgerEntry, LedgerTransaction, User
from core.db_roles import app_role_grant
from core.partitions import month_start, partition_name, partitions_archive_before
from tests.accounts.test_accounts_ledger_triggers import NO_TRUNCATE, new_transaction, refused, run
from tests.db_owner import as_owner, connected_as_owner
from tests.ledger_run import ledger_check_run as ledger_check

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL partitions"),
]

ENTRIES = "accounts_ledgerentry"
GUARDS = {
    "accounts_ledgerentry_append_only",
    "accounts_ledgerentry_no_truncate",
    "accounts_ledgerentry_post",
    "accounts_ledgerentry_post_statement",
}

NEXT_ID = "nextval(pg_get_serial_sequence('accounts_ledgerentry', 'id'))"


@pytest.fixture
def lan() -> User:
    user = User.objects.create_user(username="lan")
    balance_adjust(user=user, amount=1_000, reason="test funds", key="fund")
    return user


def partitions() -> list[str]:
    return [
        name
        for (name,) in run(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = %s::regclass ORDER BY 1",
            (ENTRIES,),
        )
    ]


def this_month() -> dt.date:
    return month_start(dt.datetime.now(dt.UTC).date())


def booked_in(month: dt.date, monkeypatch, *, user: User, amount: int, key: str):
    """An adjustment booked as if on the 15th of ``month`` (the ledger's clock moved there)."""
    moment = dt.datetime(month.year, month.month, 15, 12, tzinfo=dt.UTC)
    with monkeypatch.context() as patch:
        patch.setattr(timezone, "now", lambda: moment)
        return balance_adjust(user=user, amount=amount, reason="then", key=key)


def test_the_entries_are_partitioned_by_month_with_every_guard_on_every_partition() -> None:
    names = partitions()
    assert partition_name(ENTRIES, this_month()) in names
    assert partition_name(ENTRIES, month_start(this_month(), 3)) in names
    assert f"{ENTRIES}_default" in names
    for name in names:
        triggers = run(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal",
            (name,),
        )
        assert {t for (t,) in triggers} == GUARDS, name


def test_a_posting_lands_in_its_transactions_month_with_its_key(lan) -> None:
    tx = LedgerTransaction.objects.get(idempotency_key=f"adjust:fund:{lan.pk}")
    rows = run(
        "SELECT tableoid::regclass::text, transaction_created_at FROM accounts_ledgerentry"
        " WHERE transaction_id = %s",
        (tx.pk,),
    )
    month = month_start(tx.created_at.astimezone(dt.UTC).date())
    assert rows == [(partition_name(ENTRIES, month), tx.created_at)] * 2
    assert wallet_balance(lan) == 1_000
    assert ledger_problems() == []


def test_a_partition_named_directly_refuses_edits_and_truncation(lan) -> None:
    current = partition_name(ENTRIES, this_month())
    refused(f"UPDATE {current} SET amount = amount * 2", match="append-only")  # noqa: S608
    refused(f"DELETE FROM {current}", match="append-only")  # noqa: S608
    refused(f"TRUNCATE {current}", before=NO_TRUNCATE, match="append-only")
    refused(f"TRUNCATE {ENTRIES}_default", before=NO_TRUNCATE, match="append-only")
    assert wallet_balance(lan) == 1_000


def test_an_insert_into_a_partition_moves_balances_as_one_into_the_parent(lan) -> None:
    # the parent's statement trigger does not fire for a statement naming a partition: the
    # partition has its own copy (chan_partition_statement_triggers, accounts 0022); the ids
    # come from the parent's sequence (a partition has no identity of its own)
    wallet, issuance = wallet_for(lan).pk, issuance_account().pk
    current = partition_name(ENTRIES, this_month())
    with pytest.raises(DatabaseError, match="balance_after is not"), transaction.atomic():
        tx = new_transaction("direct-wrong")
        run(
            f"INSERT INTO {current} (id, transaction_id, account_id, amount, balance_after)"  # noqa: S608
            f" VALUES ({NEXT_ID}, %s, %s, 250, 999999), ({NEXT_ID}, %s, %s, -250, 0)",
            (tx, wallet, tx, issuance),
        )
    with transaction.atomic():
        tx = new_transaction("direct-ok")
        run(
            f"INSERT INTO {current} (id, transaction_id, account_id, amount, balance_after)"  # noqa: S608
            f" VALUES ({NEXT_ID}, %s, %s, 250, 0), ({NEXT_ID}, %s, %s, -250, 0)",
            (tx, wallet, tx, issuance),
        )
        run("SET CONSTRAINTS ALL IMMEDIATE")
    assert wallet_balance(lan) == 1_250
    # and entries joining a past transaction are refused there too
    past = LedgerTransaction.objects.get(idempotency_key=f"adjust:fund:{lan.pk}").pk
    refused(
        f"INSERT INTO {current} (id, transaction_id, account_id, amount, balance_after)"  # noqa: S608
        f" VALUES ({NEXT_ID}, %s, %s, 5, 0), ({NEXT_ID}, %s, %s, -5, 0)",
        (past, wallet, past, issuance),
        match="entries join only the ledger transaction just inserted",
    )
    assert wallet_balance(lan) == 1_250


def test_an_entry_whose_key_is_not_its_transactions_is_refused(lan) -> None:
    wallet = wallet_for(lan).pk
    # two legs of one transaction in two months' partitions would each pass one leg per account
    with transaction.atomic():
        tx = new_transaction("elsewhere")
        refused(
            "INSERT INTO accounts_ledgerentry"
            " (transaction_id, account_id, amount, balance_after, transaction_created_at)"
            " SELECT %s, %s, 5, 0, created_at + interval '40 days'"
            " FROM accounts_ledgertransaction WHERE id = %s",
            (tx, wallet, tx),
            match="transaction_created_at is not the transaction's created_at",
        )
        # (the transaction, left without entries, is refused at the commit: undo it)
        transaction.set_rollback(True)
    assert wallet_balance(lan) == 1_000
    assert ledger_problems() == []


def test_creating_partitions_ahead_is_idempotent() -> None:
    out = StringIO()
    call_command("partitions", "--ahead", "5", stdout=out)
    created = [line for line in out.getvalue().splitlines() if ENTRIES in line]
    assert created == [
        f"created {partition_name(ENTRIES, month_start(this_month(), 4))}",
        f"created {partition_name(ENTRIES, month_start(this_month(), 5))}",
    ]
    out = StringIO()
    call_command("partitions", "--ahead", "5", stdout=out)
    assert out.getvalue() == "0 partition(s) created, 0 archived.\n"
    assert len([n for n in partitions() if n != f"{ENTRIES}_default"]) == 6
    # each new month has every guard
    triggers = run(
        "SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal",
        (partition_name(ENTRIES, month_start(this_month(), 5)),),
    )
    assert {t for (t,) in triggers} == GUARDS


def test_a_posting_in_a_month_without_a_partition_is_booked_in_the_default_one(
    lan, monkeypatch
) -> None:
    # Given a posting dated a year ahead, past the months created ahead,
    later = month_start(this_month(), 12)
    tx = booked_in(later, monkeypatch, user=lan, amount=70, key="later")
    # it is booked, in the DEFAULT partition, and reconciled like any other;
    assert run(
        "SELECT DISTINCT tableoid::regclass::text FROM accounts_ledgerentry"
        " WHERE transaction_id = %s",
        (tx.pk,),
    ) == [(f"{ENTRIES}_default",)]
    assert wallet_balance(lan) == 1_070
    assert ledger_check() == (0, f"ledger ok ({len(LEDGER_CHECKS)} checks)\n")
    # but that month can no longer be created over it: the command creates the others and
    # says why it did not create that one.
    out = StringIO()
    with pytest.raises(CommandError, match="DEFAULT partition holds rows of that month") as err:
        call_command("partitions", "--ahead", "12", stdout=out)
    assert str(err.value).startswith(partition_name(ENTRIES, later))
    assert partition_name(ENTRIES, later) not in partitions()
    assert partition_name(ENTRIES, month_start(later, -1)) in partitions()
    assert partition_name("games_handevent", later) in out.getvalue()


def test_a_month_not_over_is_not_archived() -> None:
    with connection.cursor() as cursor, pytest.raises(ValueError, match="month is not over"):
        partitions_archive_before(cursor=cursor, before=month_start(this_month(), 1))


def test_an_archived_month_is_still_reconciled_and_tampering_in_it_is_found(
    lan, monkeypatch
) -> None:
    # Given entries booked two months ago, then more this month,
    old = month_start(this_month(), -2)
    run("SELECT chan_month_partition_create(%s, %s)", (ENTRIES, old))
    then = booked_in(old, monkeypatch, user=lan, amount=300, key="old")
    balance_adjust(user=lan, amount=-200, reason="now", key="now")
    # when that month is archived (its transactions' deferred checks run: long committed),
    run("SET CONSTRAINTS ALL IMMEDIATE")
    as_owner("SELECT chan_month_partition_archive(%s, %s)", [ENTRIES, old])
    table = f"chan_archive.{partition_name(ENTRIES, old)}"
    assert partition_name(ENTRIES, old) not in partitions()
    assert not LedgerEntry.objects.filter(transaction=then).exists()
    assert run(f"SELECT count(*) FROM {table}") == [(2,)]  # noqa: S608
    # the ledger still reconciles: balances, transactions, running sums, keys, chains,
    assert wallet_balance(lan) == 1_100
    assert ledger_check() == (0, f"ledger ok ({len(LEDGER_CHECKS)} checks)\n")
    # the application may read the archive, not write it,
    with (
        pytest.raises(ProgrammingError, match="permission denied"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f"UPDATE {table} SET amount = amount")  # noqa: S608
    # and when the owner moves an archived Quan behind its trigger, ledger_check finds it.
    as_owner("SET LOCAL session_replication_role = replica")  # no trigger fires
    as_owner(
        f"UPDATE {table} SET amount = amount + sign(amount) * 1"  # noqa: S608
        " WHERE transaction_id = %s",
        [then.pk],
    )
    as_owner("SET LOCAL session_replication_role = DEFAULT")
    code, out = ledger_check()
    assert code == 1
    assert f"chain: transaction {then.pk} (adjust:old:{lan.pk}): its hash is not" in out
    assert f"balance_matches_entries: account {wallet_for(lan).pk}" in out


@pytest.mark.slow(seconds=60)
@pytest.mark.django_db(transaction=True)
def test_the_migration_moves_existing_entries_back_and_forth(lan) -> None:
    # Given entries in the partitioned table,
    balance_adjust(user=lan, amount=-400, reason="spent", key="spend")
    fields = ("id", "transaction_id", "account_id", "amount", "balance_after")
    before = list(LedgerEntry.objects.order_by("id").values_list(*fields))
    migration = import_module("accounts.migrations.0022_ledger_entry_partitioned").Migration
    with connected_as_owner():
        executor = MigrationExecutor(connection)
        # when the migration is unapplied (its rows back in one plain table)
        executor.migrate(migration.dependencies[:1])
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT relkind, (SELECT count(*) FROM accounts_ledgerentry)"
                " FROM pg_class WHERE oid = 'accounts_ledgerentry'::regclass"
            )
            assert cursor.fetchone() == ("r", len(before))
            cursor.execute(
                "SELECT count(*) FROM pg_attribute WHERE attrelid = 'accounts_ledgerentry'"
                "::regclass AND attname = 'transaction_created_at' AND NOT attisdropped"
            )
            assert cursor.fetchone() == (0,)
        # and applied again over them,
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        app = getattr(settings, "CHAN_DATABASE_APP", None)
        if app:  # as `manage.py migrate` does after its run (core/db_roles.py)
            with connection.cursor() as cursor:
                app_role_grant(
                    cursor=cursor, role=app["USER"], database=connection.settings_dict["NAME"]
                )
    # then every entry is where it was, ids and balances unchanged, each in its month,
    after = list(LedgerEntry.objects.order_by("id").values_list(*fields))
    assert after == before
    assert {
        name for (name,) in run("SELECT DISTINCT tableoid::regclass::text FROM " + ENTRIES)
    } == {partition_name(ENTRIES, this_month())}
    assert ledger_problems() == []
    # and the next posting moves balances through the triggers as before.
    balance_adjust(user=lan, amount=50, reason="again", key="again")
    assert wallet_balance(lan) == 650
    assert ledger_problems() == []
