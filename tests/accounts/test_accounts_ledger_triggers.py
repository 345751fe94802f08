"""PostgreSQL itself refuses what must never happen to the ledger (migration accounts 0004), even
to raw SQL that goes around the services."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from accounts.ledger import balance_adjust, house_account, issuance_account, wallet_for
from accounts.ledger_selectors import ledger_problems, wallet_balance
from accounts.models import LedgerTransaction, User
from tests.db_owner import as_owner, connected_as_owner

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL triggers"),
]


@pytest.fixture
def lan() -> User:
    user = User.objects.create_user(username="lan")
    balance_adjust(user=user, amount=1_000, reason="test funds", key="fund")
    return user


@pytest.fixture
def old_transaction_and_later(lan) -> tuple[LedgerTransaction, User]:
    """Lan's funding transaction, and a later player's wallet funded with 7 after it."""
    later = User.objects.create_user(username="later")
    balance_adjust(user=later, amount=7, reason="x", key="l")
    return LedgerTransaction.objects.get(idempotency_key=f"adjust:fund:{lan.pk}"), later


def append_to(past: LedgerTransaction, later: User) -> tuple[str, tuple]:
    """Two raw entries moving 5 from the later wallet to the house in the old transaction."""
    return (
        "INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after) "
        "VALUES (%s, %s, 5, 0), (%s, %s, -5, 0)",
        (past.pk, house_account().pk, past.pk, wallet_for(later).pk),
    )


def refused(sql: str, params: tuple | None = None, match: str = "", before: str = "") -> None:
    """``sql`` (after ``before``) fails in PostgreSQL; inside a savepoint, so the test goes on."""
    with (
        pytest.raises(DatabaseError, match=match),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        if before:
            cursor.execute(before)
        cursor.execute(sql, params)
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # run the deferred checks now


# A raw transaction's chain link as the chain trigger (accounts 0012) wants it: the head's hash
# as prev_hash, and some 64-hex hash (whether it is the content's is ledger_check's to say).
LINK = (
    "coalesce((SELECT hash FROM accounts_ledgertransaction WHERE chain = 0 ORDER BY id DESC LIMIT 1), "
    "repeat('0', 64)), md5(random()::text) || md5(random()::text)"
)

# Run the pending deferred checks first (PostgreSQL refuses TRUNCATE while any are pending).
NO_TRUNCATE = "SET CONSTRAINTS ALL IMMEDIATE; SET LOCAL chan.allow_log_truncate = 'off'"


def run(sql: str, params: tuple | None = None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def new_transaction(key: str) -> int:
    return run(
        "INSERT INTO accounts_ledgertransaction"
        " (kind, idempotency_key, memo, created_at, prev_hash, hash) "
        f"VALUES ('transfer', %s, '', now(), {LINK}) RETURNING id",
        (key,),
    )[0][0]


def test_entries_cannot_be_updated_deleted_or_truncated(lan):
    refused("UPDATE accounts_ledgerentry SET amount = amount * 2", match="append-only")
    refused("DELETE FROM accounts_ledgerentry", match="append-only")
    refused("TRUNCATE accounts_ledgerentry CASCADE", before=NO_TRUNCATE, match="append-only")
    assert wallet_balance(lan) == 1_000


def test_transactions_cannot_be_updated_deleted_or_truncated(lan):
    refused("UPDATE accounts_ledgertransaction SET memo = 'edited'", match="append-only")
    refused("UPDATE accounts_ledgertransaction SET idempotency_key = 'other'", match="append-only")
    refused("DELETE FROM accounts_ledgertransaction", match="append-only")
    refused("TRUNCATE accounts_ledgertransaction CASCADE", before=NO_TRUNCATE, match="append-only")
    assert LedgerTransaction.objects.get(idempotency_key=f"adjust:fund:{lan.pk}").memo


needs_app_role = pytest.mark.skipif(
    not getattr(settings, "CHAN_DATABASE_APP", None),
    reason="the suite runs as one role (DATABASE_URL without DATABASE_OWNER_URL)",
)


@needs_app_role
@pytest.mark.parametrize(
    ("column", "before"),
    [
        ("balance", ""),
        ("balance", "SET LOCAL chan.ledger_posting = '{wallet}:500'"),
        ("balance", "SET LOCAL chan.ledger_posting = ',{wallet}:500,'"),
        ("held", ""),
        ("held", "SET LOCAL chan.hold_posting = '{wallet}:500'"),
    ],
)
def test_the_application_cannot_update_a_balance_or_a_hold_whatever_the_session_sets(
    lan, column, before
):
    # given a client holding the application's credentials, forging the setting the writers
    # set for the account guard (or not)
    wallet = wallet_for(lan).pk
    # then PostgreSQL refuses the UPDATE itself: the role may not write the column at all
    refused(
        f"UPDATE accounts_ledgeraccount SET {column} = {column} + 500 WHERE id = %s",
        (wallet,),
        before=before.format(wallet=wallet),
        match="permission denied for table accounts_ledgeraccount",
    )
    assert wallet_balance(lan) == 1_000
    assert run("SELECT held FROM accounts_ledgeraccount WHERE id = %s", (wallet,)) == [(0,)]


# A trigger the owner made (not one of the ledger's SECURITY DEFINER writers), fired by the
# application: one trigger deep, with the guard's setting set, as the guard once trusted.
PROBE = (
    "CREATE TABLE public.probe_mint (id int)",
    "GRANT INSERT ON public.probe_mint TO {role}",
    "CREATE FUNCTION public.probe_mint() RETURNS trigger LANGUAGE plpgsql"
    " SET search_path = pg_catalog, public, pg_temp AS $$ BEGIN"
    " PERFORM set_config('chan.{setting}', '{posting}', true);"
    " UPDATE public.accounts_ledgeraccount SET {column} = {column} + 500 WHERE id = {account};"
    " RETURN NULL; END $$",
    "CREATE TRIGGER probe_mint AFTER INSERT ON public.probe_mint"
    " FOR EACH ROW EXECUTE FUNCTION public.probe_mint()",
)


@needs_app_role
@pytest.mark.parametrize(
    ("setting", "posting", "column"),
    [("ledger_posting", ",{account}:500,", "balance"), ("hold_posting", "{account}:500", "held")],
)
def test_a_trigger_deep_move_with_the_setting_is_no_writers_move(lan, setting, posting, column):
    # given a trigger of the owner's that sets the guard's setting and moves a balance or a hold
    wallet = wallet_for(lan).pk
    role = connection.ops.quote_name(settings.CHAN_DATABASE_APP["USER"])
    fields = {"setting": setting, "posting": posting.format(account=wallet), "column": column}
    with (
        pytest.raises(DatabaseError, match="permission denied for table accounts_ledgeraccount"),
        transaction.atomic(),
    ):
        for statement in PROBE:
            as_owner(statement.format(role=role, account=wallet, **fields))
        # when the application fires it (pg_trigger_depth() is 1 inside it)
        run("INSERT INTO probe_mint VALUES (1)")
    # then the move is refused: the trigger runs as the application's role, which may not
    # write the column; neither the depth nor the setting stands in for the privilege
    assert wallet_balance(lan) == 1_000
    assert run("SELECT held FROM accounts_ledgeraccount WHERE id = %s", (wallet,)) == [(0,)]


def test_the_writers_of_balances_and_holds_run_as_the_owner_and_nobody_calls_them():
    rows = run(
        "SELECT p.proname, p.prosecdef, has_function_privilege(current_user, p.oid, 'EXECUTE'),"
        " pg_has_role(current_user, p.proowner, 'USAGE')"
        " FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.proname = ANY(%s)"
        " ORDER BY 1",
        (
            [
                "accounts_ledgerentry_post",
                "accounts_ledgerentry_post_statement",
                "accounts_ledgerhold_post",
                "accounts_ledgertransaction_open",
            ],
        ),
    )
    app_role = bool(getattr(settings, "CHAN_DATABASE_APP", None))
    assert [r[:2] for r in rows] == [
        ("accounts_ledgerentry_post", True),
        ("accounts_ledgerentry_post_statement", True),
        ("accounts_ledgerhold_post", True),
        ("accounts_ledgertransaction_open", True),
    ]
    if app_role:
        assert {(r[2], r[3]) for r in rows} == {(False, False)}


def test_accounts_cannot_be_deleted_reowned_or_opened_with_money(lan):
    wallet = wallet_for(lan).pk
    refused("DELETE FROM accounts_ledgeraccount WHERE id = %s", (wallet,), match="append-only")
    refused(
        "UPDATE accounts_ledgeraccount SET kind = 'house', user_id = NULL WHERE id = %s",
        (wallet,),
        match="cannot change its kind or owner",
    )
    other = User.objects.create_user(username="other")
    refused(
        "INSERT INTO accounts_ledgeraccount (kind, user_id, balance, created_at) "
        "VALUES ('wallet', %s, 500, now())",
        (other.pk,),
        match="opens at balance 0",
    )
    refused("TRUNCATE accounts_ledgeraccount CASCADE", before=NO_TRUNCATE, match="append-only")


def test_an_unbalanced_transaction_is_refused_at_commit(lan):
    refused(
        "WITH tx AS (INSERT INTO accounts_ledgertransaction "
        "(kind, idempotency_key, memo, created_at, prev_hash, hash) "
        f"VALUES ('transfer', 'raw', '', now(), {LINK}) "
        "RETURNING id) "
        "INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after) "
        "SELECT id, %s, 5, 0 FROM tx",
        (wallet_for(lan).pk,),
        match="does not balance",
    )
    assert wallet_balance(lan) == 1_000


def test_a_transaction_without_entries_is_refused_at_commit():
    refused(
        "INSERT INTO accounts_ledgertransaction"
        " (kind, idempotency_key, memo, created_at, prev_hash, hash) "
        f"VALUES ('transfer', 'empty', '', now(), {LINK})",
        match="does not balance",
    )


def test_a_raw_balanced_insert_moves_balances_and_records_balance_after(lan):
    wallet, issuance = wallet_for(lan).pk, issuance_account().pk
    # a balance_after other than the database's is refused (accounts 0021) ...
    with pytest.raises(DatabaseError, match="balance_after is not"), transaction.atomic():
        tx = new_transaction("raw-wrong")
        run(
            "INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after) "
            "VALUES (%s, %s, 250, 999999), (%s, %s, -250, 0)",
            (tx, wallet, tx, issuance),
        )
    assert wallet_balance(lan) == 1_000
    # ... and left at 0 the database writes its own
    with transaction.atomic():
        tx = new_transaction("raw-ok")
        run(
            "INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after) "
            "VALUES (%s, %s, 250, 0), (%s, %s, -250, 0)",
            (tx, wallet, tx, issuance),
        )
        run("SET CONSTRAINTS ALL IMMEDIATE")
    assert wallet_balance(lan) == 1_250
    # balance_after is the database's
    assert run(
        "SELECT balance_after FROM accounts_ledgerentry WHERE transaction_id = %s "
        "AND account_id = %s",
        (tx, wallet),
    ) == [(1_250,)]
    # ... but its made-up hash is not that of its content: ledger_check says so
    assert [(p.check, f"({p.detail.split('(')[1]}") for p in ledger_problems()] == [
        ("chain", "(raw-ok): its hash is not that of its content and entries "),
        ("mac", "(raw-ok): it carries no MAC, after a row that does"),  # nor the record key's
    ]


def test_an_entry_cannot_take_a_wallet_below_zero(lan):
    wallet, issuance = wallet_for(lan).pk, issuance_account().pk
    with pytest.raises(DatabaseError, match="balance_non_negative"), transaction.atomic():
        tx = new_transaction("overdraw")
        run(
            "INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after) "
            "VALUES (%s, %s, -1001, 0), (%s, %s, 1001, 0)",
            (tx, wallet, tx, issuance),
        )
    assert wallet_balance(lan) == 1_000


def test_entries_cannot_be_added_to_a_past_transaction(lan):
    wallet, issuance = wallet_for(lan).pk, issuance_account().pk
    past = LedgerTransaction.objects.get(idempotency_key=f"adjust:fund:{lan.pk}").pk
    balance_adjust(user=User.objects.create_user(username="later"), amount=1, reason="x", key="l")
    refused(
        "INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after) "
        "VALUES (%s, %s, 5, 0), (%s, %s, -5, 0)",
        (past, wallet, past, issuance),
        match="entries join only the ledger transaction just inserted",
    )


def test_an_entry_of_zero_is_refused(lan):
    with pytest.raises(DatabaseError, match="amount_not_zero"), transaction.atomic():
        tx = new_transaction("zero")
        run(
            "INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after) "
            "VALUES (%s, %s, 0, 0)",
            (tx, wallet_for(lan).pk),
        )


@pytest.mark.django_db(transaction=True)  # the old transaction committed, as in production
def test_an_entry_appended_to_an_old_transaction_is_refused_whatever_the_session_sets(
    old_transaction_and_later,
):
    # given a client forging the setting that opens a transaction for entries (accounts 0013)
    past, later = old_transaction_and_later
    # then the database refuses the entries: no transaction was inserted here (the setting is
    # not read; what is open is recorded where the client cannot write)
    refused(
        *append_to(past, later),
        before=f"SET LOCAL chan.ledger_open_tx = '{past.pk}'",
        match="entries join only the ledger transaction just inserted",
    )
    assert wallet_balance(later) == 7
    assert ledger_problems() == []


def test_entries_join_a_transaction_inserted_under_a_savepoint_of_their_own_transaction(lan):
    # a transaction row inserted in a savepoint (released) is still this transaction's own
    with transaction.atomic():
        with transaction.atomic():
            tx = new_transaction("nested")
        run(
            "INSERT INTO accounts_ledgerentry (transaction_id, account_id, amount, balance_after) "
            "VALUES (%s, %s, 3, 0), (%s, %s, -3, 0)",
            (tx, house_account().pk, tx, wallet_for(lan).pk),
        )
    assert wallet_balance(lan) == 997


def test_a_transaction_off_the_chain_is_refused(lan):
    # a fork of the chain the grant of the fixture extends (a second genesis on it)
    refused(
        "INSERT INTO accounts_ledgertransaction"
        " (kind, idempotency_key, memo, created_at, prev_hash, hash, chain) "
        "SELECT 'transfer', 'fork2', '', now(), repeat('0', 64), repeat('a', 64), chain"
        " FROM accounts_ledgertransaction ORDER BY id DESC LIMIT 1",
        match="prev_hash is not the ledger head",
    )
    refused(
        "INSERT INTO accounts_ledgertransaction (kind, idempotency_key, memo, created_at) "
        "VALUES ('transfer', 'unhashed', '', now())",
        match="has no hash",
    )


def test_the_truncate_allowance_holds_only_in_a_test_database():
    # the suite's database is test_…: its flush may TRUNCATE with the setting on
    assert connection.settings_dict["NAME"].startswith("test_")
    rows = run(
        "SELECT chan_log_truncate_allowed(current_database()),"
        " chan_log_truncate_allowed('chan'), chan_log_truncate_allowed('chan_test_x')"
    )
    assert rows == [(True, False, False)]
    with transaction.atomic():  # the setting off: refused even here
        run("SET LOCAL chan.allow_log_truncate = 'off'")
        assert run("SELECT chan_log_truncate_allowed(current_database())") == [(False,)]


@pytest.mark.django_db(transaction=True)  # the migration runs as the owner, on committed rows
def test_the_migration_chains_the_transactions_booked_before_it(settings):
    settings.CHAN_HOUSE_SHARDS = 1  # before accounts 0017 there was one chain
    lan = User.objects.create_user(username="lan")
    balance_adjust(user=lan, amount=1_000, reason="test funds", key="fund")
    from importlib import import_module

    from django.apps import apps

    balance_adjust(user=User.objects.create_user(username="later"), amount=1, reason="x", key="l")
    chained = list(LedgerTransaction.objects.order_by("id").values_list("id", "prev_hash", "hash"))
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        as_owner(
            "ALTER TABLE accounts_ledgertransaction"
            " DISABLE TRIGGER accounts_ledgertransaction_append_only"
        )
        cursor.execute("UPDATE accounts_ledgertransaction SET prev_hash = '', hash = ''")
        as_owner(
            "ALTER TABLE accounts_ledgertransaction"
            " ENABLE TRIGGER accounts_ledgertransaction_append_only"
        )
    problems = ledger_problems()
    # (and the MACs, of the hashes as they were, no longer vouch for them)
    assert {p.check for p in problems} == {"chain", "mac"} and len(problems) >= len(chained)
    module = import_module("accounts.migrations.0012_ledger_chain")
    with connected_as_owner(), transaction.atomic():
        module.backfill_chain(apps, connection.schema_editor())
    after = list(LedgerTransaction.objects.order_by("id").values_list("id", "prev_hash", "hash"))
    assert after == chained
    assert ledger_problems() == []
    refused("UPDATE accounts_ledgertransaction SET hash = ''", match="append-only")


@needs_app_role
@pytest.mark.django_db(transaction=True)  # the old transaction committed, as in production
def test_a_temporary_table_cannot_shadow_the_transactions_for_the_entry_trigger(
    old_transaction_and_later,
):
    # given a client that would shadow the transactions with a temporary table of its own, so
    # that the entry trigger finds the old transaction "inserted here", and open it for entries
    past, later = old_transaction_and_later
    shadow = (
        "CREATE TEMP TABLE accounts_ledgertransaction (id bigint, created_at timestamptz);"
        " INSERT INTO accounts_ledgertransaction SELECT id, created_at"
        f" FROM public.accounts_ledgertransaction WHERE id = {past.pk};"
        f" SET LOCAL chan.ledger_open_tx = '{past.pk}'"
    )
    # then its first step is refused: the application's role makes no temporary table
    refused(
        *append_to(past, later),
        before=shadow,
        match="permission denied to create temporary tables",
    )
    assert wallet_balance(later) == 7
    assert ledger_problems() == []


MINT = """
CREATE TEMP TABLE mint (id int);
CREATE FUNCTION pg_temp.mint() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('chan.{setting}', '{posting}', true);
    UPDATE public.accounts_ledgeraccount SET {column} = {column} + 500 WHERE id = {account};
    RETURN NULL;
END $$;
CREATE TRIGGER mint AFTER INSERT ON mint FOR EACH ROW EXECUTE FUNCTION pg_temp.mint()
"""


@needs_app_role
@pytest.mark.parametrize(
    ("setting", "posting", "column"),
    [("ledger_posting", ",{account}:500,", "balance"), ("hold_posting", "{account}:500", "held")],
)
def test_a_trigger_of_the_clients_own_cannot_move_a_balance_or_a_hold(
    lan, setting, posting, column
):
    # given a client that would fire its own trigger (pg_trigger_depth() > 1 in the guard) that
    # sets the guard's setting and moves a balance, or what a wallet holds
    wallet = wallet_for(lan).pk
    mint = MINT.format(
        setting=setting, posting=posting.format(account=wallet), column=column, account=wallet
    )
    # then its first step is refused: the application's role makes no temporary table
    refused("INSERT INTO mint VALUES (1)", before=mint, match="permission denied to create temp")
    assert wallet_balance(lan) == 1_000
    assert run("SELECT held FROM accounts_ledgeraccount WHERE id = %s", (wallet,)) == [(0,)]


@needs_app_role
@pytest.mark.django_db(transaction=True)  # the old transaction committed, as in production
def test_a_temporary_table_in_the_session_does_not_shadow_a_table_inside_a_guard(
    old_transaction_and_later,
):
    # given a temporary table named like the transactions in the client's session (made by a
    # role that may: the application's may not), holding an old transaction, opened for entries
    # (as only the owner may: the xmin check behind the open transaction is what is tried)
    past, later = old_transaction_and_later
    role = connection.ops.quote_name(settings.CHAN_DATABASE_APP["USER"])
    with (
        pytest.raises(DatabaseError, match="was booked by another database transaction"),
        transaction.atomic(),
    ):
        as_owner(
            "CREATE TEMP TABLE accounts_ledgertransaction (id bigint, created_at timestamptz)"
            " ON COMMIT DROP"
        )
        as_owner(
            "INSERT INTO pg_temp.accounts_ledgertransaction SELECT id, created_at"
            " FROM public.accounts_ledgertransaction WHERE id = %s",
            [past.pk],
        )
        as_owner(f"GRANT ALL ON pg_temp.accounts_ledgertransaction TO {role}")
        as_owner(OPEN_AS_OWNER, [past.pk, past.created_at])
        # then the entry trigger reads the real transactions (its search_path lists pg_temp
        # last): the old one was booked by another database transaction
        run(
            *append_to(past, later),
        )
        run("SET CONSTRAINTS ALL IMMEDIATE")
    assert wallet_balance(later) == 7
    assert ledger_problems() == []


# What the transaction trigger records for the transaction it opens (accounts 0028), as the owner.
OPEN_AS_OWNER = (
    "INSERT INTO chan_private.ledger_open_tx VALUES"
    " (pg_backend_pid(), pg_current_xact_id(), %s, %s) ON CONFLICT (backend_pid) DO UPDATE"
    " SET xact = EXCLUDED.xact, transaction_id = EXCLUDED.transaction_id,"
    " transaction_created_at = EXCLUDED.transaction_created_at"
)


@needs_app_role
@pytest.mark.django_db(transaction=True)  # the old transaction committed, as in production
def test_the_application_cannot_open_an_old_transaction_for_entries(old_transaction_and_later):
    # given a client that would record an old transaction as the one its own just opened
    past, later = old_transaction_and_later
    # then it may neither write nor read where the open transaction is recorded
    refused(
        OPEN_AS_OWNER.replace("%s", "{}").format(past.pk, "now()"),
        match="permission denied for schema chan_private",
    )
    refused(
        "SELECT * FROM chan_private.ledger_open_tx",
        match="permission denied for schema chan_private",
    )
    assert wallet_balance(later) == 7
    assert ledger_problems() == []


@pytest.mark.django_db(transaction=True)  # the old transaction committed, as in production
def test_an_old_transaction_recorded_open_still_takes_no_entries(old_transaction_and_later):
    # given the owner's record naming an old transaction open for this database transaction
    past, later = old_transaction_and_later
    with (
        pytest.raises(DatabaseError, match="was booked by another database transaction"),
        transaction.atomic(),
    ):
        as_owner(OPEN_AS_OWNER, [past.pk, past.created_at])
        # then the second line refuses the entries: the row was not inserted here
        run(*append_to(past, later))
        run("SET CONSTRAINTS ALL IMMEDIATE")
    assert wallet_balance(later) == 7
