"""Every function of ours runs with a fixed ``search_path``: ``pg_catalog, public, pg_temp``.

A function without one resolves its unqualified names with its caller's path, where ``pg_temp``
comes first unless it is listed: a client's temporary table named ``accounts_ledgertransaction``
shadowed the real one inside the ledger's entry trigger. Listed last, ``pg_temp`` is searched last
for relations and never for functions or operators; ``pg_catalog`` first, so no table or function
of ``public`` stands in for a built-in.

The functions are read from ``pg_proc`` (every routine of schema ``public`` owned by the role that
migrates, extensions' aside), so none is missed; a function added by a later migration sets the
path itself, and tests/core/test_db_roles.py fails on one that does not.

With ``pg_catalog`` first, an unqualified ``CREATE`` inside a function would make its object in
``pg_catalog`` (the first schema listed): ``chan_month_partition_create`` (accounts 0022) now names
``public`` for the partition it creates.
"""

from importlib import import_module

from django.db import migrations

SEARCH_PATH = "pg_catalog, public, pg_temp"

FIX = f"""
DO $do$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace
          AND p.proowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
          AND p.prokind IN ('f', 'p')
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                          AND d.objid = p.oid AND d.deptype = 'e')
    LOOP
        EXECUTE format('ALTER ROUTINE %s SET search_path = {SEARCH_PATH}', f);
    END LOOP;
END;
$do$;
"""

UNQUALIFIED_CREATE = "'CREATE TABLE %I PARTITION OF %I "
QUALIFIED_CREATE = "'CREATE TABLE public.%I PARTITION OF public.%I "


def partition_functions() -> str:
    """0022's partition functions, the partition they create named in ``public``."""
    source = import_module("accounts.migrations.0022_ledger_entry_partitioned").STATEMENT_TRIGGERS
    assert source.count(UNQUALIFIED_CREATE) == 1
    return source.replace(UNQUALIFIED_CREATE, QUALIFIED_CREATE)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0026_oauth_spent_authorization_codes"),
        ("games", "0040_tournamententry_pairings_waited"),
        ("transparency", "0002_log_append_only_and_queued"),
    ]

    operations = [
        # Kept on the way back: a fixed path and a qualified name are right at any migration.
        migrations.RunSQL(partition_functions() + FIX, migrations.RunSQL.noop),
    ]
