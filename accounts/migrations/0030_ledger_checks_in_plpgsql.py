"""Two small checks of accounts 0028 as PL/pgSQL, whose plan each session keeps: a SQL function
with a ``SET`` clause is never inlined and plans its query again at every call, which cost about
a tenth of a settlement's database time (bench/ledger_bench.py ``--profile``: 112 µs a
settlement in ``chan_writes_as_owner``'s six calls, 81 µs in ``ledger_open_tx_id``). Same
answers, same owner, same fixed ``search_path``."""

from django.db import migrations

PATH = "SET search_path = pg_catalog, public, pg_temp"

FORWARD = f"""
CREATE OR REPLACE FUNCTION chan_private.ledger_open_tx_id() RETURNS bigint
LANGUAGE plpgsql STABLE {PATH} AS $$
BEGIN
    RETURN (SELECT o.transaction_id FROM chan_private.ledger_open_tx o
            WHERE o.backend_pid = pg_catalog.pg_backend_pid()
              AND o.xact = pg_catalog.pg_current_xact_id_if_assigned());
END;
$$;

CREATE OR REPLACE FUNCTION public.chan_writes_as_owner(rel oid) RETURNS boolean
LANGUAGE plpgsql STABLE {PATH} AS $$
BEGIN
    RETURN (SELECT pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE')
            FROM pg_catalog.pg_class c WHERE c.oid = rel);
END;
$$;
"""

BACKWARD = f"""
CREATE OR REPLACE FUNCTION chan_private.ledger_open_tx_id() RETURNS bigint
LANGUAGE sql STABLE {PATH} AS $$
    SELECT o.transaction_id FROM chan_private.ledger_open_tx o
    WHERE o.backend_pid = pg_catalog.pg_backend_pid()
      AND o.xact = pg_catalog.pg_current_xact_id_if_assigned();
$$;

CREATE OR REPLACE FUNCTION public.chan_writes_as_owner(rel oid) RETURNS boolean
LANGUAGE sql STABLE {PATH} AS $$
    SELECT pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE')
    FROM pg_catalog.pg_class c WHERE c.oid = rel;
$$;
"""


class Migration(migrations.Migration):
    dependencies = [("accounts", "0029_record_macs")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
