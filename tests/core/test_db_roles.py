"""The application's database role (core/db_roles.py): it owns nothing, so it cannot step around
the guards; the owner migrates and grants it the rows."""

from __future__ import annotations

from io import StringIO

import psycopg
import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from core.db_roles import GUARDED_COLUMNS, app_role_grant, app_role_problems
from tests.db_owner import owner_connect_params

pytestmark = pytest.mark.django_db

APP_ROLE = getattr(settings, "CHAN_DATABASE_APP", {}).get("USER")
needs_app_role = pytest.mark.skipif(
    APP_ROLE is None, reason="the suite runs as one role (DATABASE_URL without DATABASE_OWNER_URL)"
)


def refused(statement: str) -> str:
    with pytest.raises(DatabaseError) as caught, transaction.atomic(), connection.cursor() as c:
        c.execute(statement)
    return str(caught.value)


@needs_app_role
def test_the_suite_runs_as_the_application_role_which_owns_no_table() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user")
        assert cursor.fetchone() == (APP_ROLE, False)
        assert app_role_problems(cursor=cursor, database=connection.settings_dict["NAME"]) == []


@needs_app_role
@pytest.mark.parametrize(
    "statement",
    [
        "ALTER TABLE games_handevent DISABLE TRIGGER games_handevent_append_only",
        "ALTER TABLE accounts_ledgerentry DISABLE TRIGGER USER",
        "ALTER TABLE games_hand DISABLE TRIGGER games_hand_guard",
        "ALTER TABLE games_hand DISABLE TRIGGER games_hand_terms_guard",
        "DROP TRIGGER accounts_ledgertransaction_append_only ON accounts_ledgertransaction",
        "CREATE OR REPLACE FUNCTION chan_log_truncate_allowed(dbname text) RETURNS boolean"
        " AS 'SELECT true' LANGUAGE sql",
        "SET session_replication_role = replica",
        "CREATE TABLE games_shadow (id int)",
        "CREATE TEMP TABLE accounts_ledgertransaction (id bigint)",
        "CREATE TEMP TABLE games_shadow (id int)",
        "CREATE FUNCTION pg_temp.shadow() RETURNS int AS 'SELECT 1' LANGUAGE sql",
        "CREATE SCHEMA shadow",
    ],
)
def test_the_application_cannot_step_around_the_guards(statement: str) -> None:
    message = refused(statement)
    assert "permission denied" in message or "must be owner" in message


@needs_app_role
def test_the_application_cannot_let_truncate_through_for_its_database() -> None:
    name = connection.ops.quote_name(connection.settings_dict["NAME"])
    assert "must be owner" in refused(f"ALTER DATABASE {name} SET chan.allow_log_truncate = 'on'")


def test_db_role_check_passes_for_the_suites_connection() -> None:
    out = StringIO()
    if APP_ROLE is None:
        pytest.skip("the suite runs as one role")
    call_command("db_role_check", stdout=out)
    assert out.getvalue().startswith(f"ok: the application connects as {APP_ROLE}")


@pytest.fixture
def scratch_databases() -> list[str]:
    """Two scratch databases made by the owner: one named like a test database, one not."""
    suffix = connection.settings_dict["NAME"].removeprefix("test_")
    names = [f"test_roles_probe_{suffix}", f"chan_roles_probe_{suffix}"]
    with psycopg.connect(dbname="postgres", autocommit=True, **owner_connect_params()) as admin:
        for name in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
            admin.execute(f'CREATE DATABASE "{name}"')
    yield names
    with psycopg.connect(dbname="postgres", autocommit=True, **owner_connect_params()) as admin:
        for name in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_grant_gives_the_rows_and_truncate_only_in_a_test_database(scratch_databases) -> None:
    role = f"chan_roles_probe_{connection.settings_dict['NAME'].removeprefix('test_')}"
    for name in scratch_databases:
        with psycopg.connect(dbname=name, autocommit=True, **owner_connect_params()) as owner:
            owner.execute("CREATE TABLE games_handevent (id int)")
            app_role_grant(cursor=owner.cursor(), role=role, database=name)
            privileges = owner.execute(
                "SELECT has_table_privilege(%s, 'games_handevent', p)"
                " FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE',"
                " 'TRIGGER']) p",
                [role],
            ).fetchall()
            granted = [row[0] for row in privileges]
            assert granted == [True, True, True, True, name.startswith("test_"), False]
            # the grant runs after every migration: twice is the same
            assert app_role_grant(cursor=owner.cursor(), role=role, database=name) is False
    with psycopg.connect(
        dbname=scratch_databases[1], autocommit=True, **{**owner_connect_params(), "user": role}
    ) as app:
        problems = app_role_problems(cursor=app.cursor(), database=scratch_databases[1])
        assert problems == []
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            app.execute("TRUNCATE games_handevent")
        # nothing of its own, not even temporary (PostgreSQL grants PUBLIC TEMPORARY by default)
        for statement in ("CREATE TEMP TABLE games_handevent (id int)", "CREATE TABLE t (id int)"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                app.execute(statement)


def test_db_role_check_reports_a_role_that_may_create_temporary_tables_or_objects(
    scratch_databases,
) -> None:
    role = f"chan_roles_probe_{connection.settings_dict['NAME'].removeprefix('test_')}"
    name = scratch_databases[1]
    with psycopg.connect(dbname=name, autocommit=True, **owner_connect_params()) as owner:
        app_role_grant(cursor=owner.cursor(), role=role, database=name)
        for grant, check in (
            (f'GRANT TEMPORARY ON DATABASE "{name}" TO PUBLIC', "temporary"),
            (f'GRANT CREATE ON SCHEMA public TO "{role}"', "create"),
        ):
            owner.execute(grant)
            with psycopg.connect(
                dbname=name, autocommit=True, **{**owner_connect_params(), "user": role}
            ) as app:
                problems = app_role_problems(cursor=app.cursor(), database=name)
            assert check in {p.check for p in problems}, problems
        # the grant after the next migration takes both back
        app_role_grant(cursor=owner.cursor(), role=role, database=name)
    with psycopg.connect(
        dbname=name, autocommit=True, **{**owner_connect_params(), "user": role}
    ) as app:
        assert app_role_problems(cursor=app.cursor(), database=name) == []


def test_db_role_check_reports_an_owner_that_could_truncate(scratch_databases) -> None:
    name = scratch_databases[1]
    with psycopg.connect(dbname=name, autocommit=True, **owner_connect_params()) as owner:
        owner.execute("CREATE TABLE accounts_ledgerentry (id int)")
        checks = {p.check for p in app_role_problems(cursor=owner.cursor(), database=name)}
    if owner_connect_params()["user"] == "postgres":
        assert {"superuser", "owner", "truncate"} <= checks
    else:
        assert {"owner", "truncate"} <= checks


FIXED_SEARCH_PATH = "search_path=pg_catalog, public, pg_temp"


def test_every_function_of_ours_runs_with_a_fixed_search_path() -> None:
    # pg_temp listed last: unlisted, a temporary table would be searched before the schema's
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.oid::regprocedure::text, p.proconfig FROM pg_proc p"
            " JOIN pg_language l ON l.oid = p.prolang"
            " WHERE p.pronamespace = 'public'::regnamespace AND l.lanname IN ('plpgsql', 'sql')"
            " ORDER BY 1"
        )
        functions = cursor.fetchall()
    assert len(functions) > 20  # the guards, the chains, the partitions' functions …
    unfixed = [name for name, config in functions if FIXED_SEARCH_PATH not in (config or [])]
    assert unfixed == [], f"functions without SET {FIXED_SEARCH_PATH.replace('=', ' = ')}"


@needs_app_role
def test_the_application_cannot_update_a_column_only_the_owners_functions_write() -> None:
    # every column the application's role may UPDATE, as information_schema shows them (a
    # table-wide grant shows as each of its columns)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name::text, column_name::text FROM information_schema.column_privileges"
            " WHERE table_schema = 'public' AND privilege_type = 'UPDATE' AND grantee = %s",
            [APP_ROLE],
        )
        writable = set(cursor.fetchall())
    guarded = {(table, column) for table, columns in GUARDED_COLUMNS.items() for column in columns}
    assert writable & guarded == set()
    # and it still may lock those rows (FOR NO KEY UPDATE wants UPDATE on some column)
    assert ("accounts_ledgeraccount", "kind") in writable
    assert ("games_handseat", "left_at") in writable


def test_every_security_definer_function_of_ours_is_the_owners_with_a_fixed_search_path() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.oid::regprocedure::text, r.rolname, p.proconfig FROM pg_proc p"
            " JOIN pg_roles r ON r.oid = p.proowner"
            " WHERE p.prosecdef AND p.pronamespace IN ('public'::regnamespace,"
            " to_regnamespace('chan_private')) ORDER BY 1"
        )
        functions = cursor.fetchall()
    names = {name.split("(")[0] for name, _, _ in functions}
    assert {"accounts_ledgerentry_post_statement", "accounts_ledgerhold_post"} <= names
    owner = settings.DATABASES["default"]["USER"]
    assert [(n, r) for n, r, _ in functions if r != owner] == []
    assert [n for n, _, config in functions if FIXED_SEARCH_PATH not in (config or [])] == []


def test_db_role_check_reports_a_role_that_may_update_a_guarded_column(scratch_databases) -> None:
    role = f"chan_roles_probe_{connection.settings_dict['NAME'].removeprefix('test_')}"
    name = scratch_databases[1]
    with psycopg.connect(dbname=name, autocommit=True, **owner_connect_params()) as owner:
        owner.execute(
            "CREATE TABLE accounts_ledgeraccount (id int, kind text, balance bigint, held bigint)"
        )
        app_role_grant(cursor=owner.cursor(), role=role, database=name)

        def problems() -> list:
            with psycopg.connect(
                dbname=name, autocommit=True, **{**owner_connect_params(), "user": role}
            ) as app:
                return app_role_problems(cursor=app.cursor(), database=name)

        assert problems() == []
        owner.execute(f'GRANT UPDATE (balance) ON accounts_ledgeraccount TO "{role}"')
        found = problems()
        assert [(p.check, p.detail) for p in found] == [
            ("column", f"{role} may UPDATE accounts_ledgeraccount.balance")
        ]
        owner.execute(f'GRANT UPDATE ON accounts_ledgeraccount TO "{role}"')
        assert problems()[0].detail.endswith(
            "accounts_ledgeraccount.balance, accounts_ledgeraccount.held"
        )
        # the grant after the next migration takes it back
        app_role_grant(cursor=owner.cursor(), role=role, database=name)
        assert problems() == []
