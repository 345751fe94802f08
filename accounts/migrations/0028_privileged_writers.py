"""Balances and holds move by privilege, not by a setting the session could forge.

The application's role loses ``UPDATE`` on ``accounts_ledgeraccount.balance`` and ``.held``
(core/db_roles.py grants it the other columns only, after every migration). The two triggers that
move them run as the owner: ``accounts_ledgerentry_post_statement`` (a statement's entries move
their accounts' balances) and ``accounts_ledgerhold_post`` (a hold event moves what a wallet
holds) are ``SECURITY DEFINER``, owned by the role that migrates, with a fixed ``search_path``
and qualified names, and the entry row trigger too (it reads what only the owner may read).

The account guard no longer trusts ``pg_trigger_depth()``: a balance or a hold moves only when
the statement runs as a role of the table's owner (the definer's functions above; never the
application's role, which is no member of it) and, as a second line, when the setting the
writer sets for its own statement (``chan.ledger_posting``, ``chan.hold_posting``) lists the
move. The setting alone proves nothing any more; it only keeps the owner's functions honest.

The ledger transaction open for entries is recorded where the application's role cannot write:
``chan_private.ledger_open_tx``, one row a server process (``pg_backend_pid()``), naming the
database transaction (``pg_current_xact_id()``) that inserted the ledger transaction, written by
the transaction trigger (``SECURITY DEFINER``) and read by the entry triggers and the entries'
partition key default. The schema ``chan_private`` grants nothing to anybody but its owner, so
the grant after ``migrate`` (``GRANT … ON ALL TABLES IN SCHEMA public``) never reaches it.
``chan.ledger_open_tx`` is no longer read. The check that the transaction row was inserted by
this database transaction (``chan_row_inserted_here``, its ``xmin``) stays as a second line.
"""

from django.db import migrations

PATH = "SET search_path = pg_catalog, public, pg_temp"

FORWARD = f"""
CREATE SCHEMA chan_private;
REVOKE ALL ON SCHEMA chan_private FROM PUBLIC;

CREATE TABLE chan_private.ledger_open_tx (
    backend_pid integer PRIMARY KEY,
    xact xid8 NOT NULL,
    transaction_id bigint NOT NULL,
    transaction_created_at timestamptz NOT NULL
);
REVOKE ALL ON chan_private.ledger_open_tx FROM PUBLIC;

CREATE FUNCTION chan_private.ledger_open_tx_id() RETURNS bigint
LANGUAGE sql STABLE {PATH} AS $$
    SELECT o.transaction_id FROM chan_private.ledger_open_tx o
    WHERE o.backend_pid = pg_catalog.pg_backend_pid()
      AND o.xact = pg_catalog.pg_current_xact_id_if_assigned();
$$;
REVOKE ALL ON FUNCTION chan_private.ledger_open_tx_id() FROM PUBLIC;

CREATE OR REPLACE FUNCTION public.accounts_ledgertransaction_open() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER {PATH} AS $$
BEGIN
    INSERT INTO chan_private.ledger_open_tx AS o
        (backend_pid, xact, transaction_id, transaction_created_at)
    VALUES (pg_catalog.pg_backend_pid(), pg_catalog.pg_current_xact_id(), NEW.id, NEW.created_at)
    ON CONFLICT (backend_pid) DO UPDATE SET xact = EXCLUDED.xact,
        transaction_id = EXCLUDED.transaction_id,
        transaction_created_at = EXCLUDED.transaction_created_at;
    RETURN NEW;
END;
$$;

-- VOLATILE: a fresh snapshot, so it sees the transaction opened by the same statement (a
-- transaction and its entries in one INSERT … WITH), as the setting it replaces did.
CREATE OR REPLACE FUNCTION public.accounts_ledgerentry_key() RETURNS timestamptz
LANGUAGE sql VOLATILE SECURITY DEFINER {PATH} AS $$
    SELECT coalesce(
        (SELECT o.transaction_created_at FROM chan_private.ledger_open_tx o
         WHERE o.backend_pid = pg_catalog.pg_backend_pid()
           AND o.xact = pg_catalog.pg_current_xact_id_if_assigned()),
        pg_catalog.now());
$$;

CREATE OR REPLACE FUNCTION public.accounts_ledgerentry_post() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER {PATH} AS $$
BEGIN
    IF chan_private.ledger_open_tx_id() IS DISTINCT FROM NEW.transaction_id THEN
        RAISE EXCEPTION 'entries join only the ledger transaction just inserted (not %)',
            NEW.transaction_id USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    SELECT a.balance + NEW.amount INTO NEW.balance_after FROM public.accounts_ledgeraccount a
        WHERE a.id = NEW.account_id FOR NO KEY UPDATE;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE FUNCTION public.accounts_ledgerentry_post_statement() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER {PATH} AS $$
DECLARE
    open_tx bigint := chan_private.ledger_open_tx_id();
    tx bigint;
    other bigint;
    key_low timestamptz;
    key_high timestamptz;
    tx_xmin xid;
    tx_at timestamptz;
    legs text;
    wrong bigint;
BEGIN
    SELECT min(e.transaction_id), max(e.transaction_id),
           min(e.transaction_created_at), max(e.transaction_created_at),
           string_agg(e.account_id || ':' || e.amount, ',')
        INTO tx, other, key_low, key_high, legs FROM new_entries e;
    IF legs IS NULL THEN
        RETURN NULL;  -- an INSERT of no rows
    END IF;
    IF tx IS DISTINCT FROM open_tx OR other IS DISTINCT FROM open_tx THEN
        RAISE EXCEPTION 'entries join only the ledger transaction just inserted (not %)',
            CASE WHEN tx IS DISTINCT FROM open_tx THEN tx ELSE other END
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    SELECT t.xmin, t.created_at INTO tx_xmin, tx_at FROM public.accounts_ledgertransaction t
        WHERE t.id = tx;
    IF tx_xmin IS NULL OR NOT public.chan_row_inserted_here(tx_xmin) THEN
        RAISE EXCEPTION 'ledger transaction % was booked by another database transaction: '
            'entries join only a transaction inserted by their own', tx
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF key_low IS DISTINCT FROM tx_at OR key_high IS DISTINCT FROM tx_at THEN
        RAISE EXCEPTION 'entries of ledger transaction %: transaction_created_at is not the '
            'transaction''s created_at (the partition key)', tx
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    PERFORM pg_catalog.set_config('chan.ledger_posting', ',' || legs || ',', true);
    WITH moved AS (
        UPDATE public.accounts_ledgeraccount a SET balance = a.balance + e.amount
        FROM new_entries e WHERE a.id = e.account_id
        RETURNING e.id, e.balance_after, a.balance
    )
    SELECT m.id INTO wrong FROM moved m WHERE m.balance IS DISTINCT FROM m.balance_after LIMIT 1;
    PERFORM pg_catalog.set_config('chan.ledger_posting', '', true);
    IF wrong IS NOT NULL THEN
        RAISE EXCEPTION 'ledger entry %: balance_after is not its account''s new balance', wrong
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION public.accounts_ledgerhold_post() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER {PATH} AS $$
DECLARE
    acct_kind text;
    previous bigint;
    head text;
BEGIN
    SELECT a.kind INTO acct_kind FROM public.accounts_ledgeraccount a
        WHERE a.id = NEW.account_id FOR NO KEY UPDATE;
    IF acct_kind IS DISTINCT FROM 'wallet' THEN
        RAISE EXCEPTION 'only a wallet holds Quan for a seat (account %)', NEW.account_id
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT h.amount INTO previous FROM public.accounts_ledgerhold h
        WHERE h.account_id = NEW.account_id AND h.table_id = NEW.table_id
        ORDER BY h.id DESC LIMIT 1;
    previous := coalesce(previous, 0);
    IF (NEW.kind = 'placed' AND previous <> 0)
       OR (NEW.kind IN ('resized', 'released') AND previous = 0) THEN
        RAISE EXCEPTION 'hold event % on account % at table %: the hold there is %',
            NEW.kind, NEW.account_id, NEW.table_id, previous
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.hash IS NULL OR NEW.hash !~ '^[0-9a-f]{{64}}$' THEN
        RAISE EXCEPTION 'hold event has no hash' USING ERRCODE = 'check_violation';
    END IF;
    SELECT h.hash INTO head FROM public.accounts_ledgerhold h
        WHERE h.account_id = NEW.account_id ORDER BY h.id DESC LIMIT 1;
    IF NEW.prev_hash IS DISTINCT FROM coalesce(head, pg_catalog.repeat('0', 64)) THEN
        RAISE EXCEPTION 'hold event on account %: prev_hash is not its last hold event',
            NEW.account_id USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    NEW.delta := NEW.amount - previous;
    PERFORM pg_catalog.set_config('chan.hold_posting', NEW.account_id || ':' || NEW.delta, true);
    UPDATE public.accounts_ledgeraccount a SET held = a.held + NEW.delta
        WHERE a.id = NEW.account_id
        RETURNING a.held INTO NEW.held_after;
    PERFORM pg_catalog.set_config('chan.hold_posting', '', true);
    RETURN NEW;
END;
$$;

-- Whether the running statement writes as the owner of the table ``rel`` (or a role of it):
-- the owner's own SECURITY DEFINER functions do; the application's role never does.
CREATE FUNCTION public.chan_writes_as_owner(rel oid) RETURNS boolean
LANGUAGE sql STABLE {PATH} AS $$
    SELECT pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE')
    FROM pg_catalog.pg_class c WHERE c.oid = rel;
$$;

CREATE OR REPLACE FUNCTION public.accounts_ledgeraccount_guard() RETURNS trigger
LANGUAGE plpgsql {PATH} AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.balance <> 0 OR NEW.held <> 0 THEN
            RAISE EXCEPTION 'a ledger account opens at balance 0 and nothing held'
                USING ERRCODE = 'check_violation';
        END IF;
        IF NEW.parent_id IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM public.accounts_ledgeraccount p
            WHERE p.id = NEW.parent_id AND p.kind = NEW.kind AND p.parent_id IS NULL
        ) THEN
            RAISE EXCEPTION 'a % sub-account needs a % parent', NEW.kind, NEW.kind
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END IF;
    IF NEW.kind IS DISTINCT FROM OLD.kind OR NEW.user_id IS DISTINCT FROM OLD.user_id
       OR NEW.table_id IS DISTINCT FROM OLD.table_id OR NEW.id IS DISTINCT FROM OLD.id
       OR NEW.parent_id IS DISTINCT FROM OLD.parent_id
       OR NEW.shard IS DISTINCT FROM OLD.shard THEN
        RAISE EXCEPTION 'ledger account % cannot change its kind or owner', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.balance IS DISTINCT FROM OLD.balance AND NOT (
        public.chan_writes_as_owner(TG_RELID)
        AND pg_catalog.strpos(
            coalesce(pg_catalog.current_setting('chan.ledger_posting', true), ''),
            ',' || OLD.id || ':' || (NEW.balance - OLD.balance) || ','
        ) > 0
    ) THEN
        RAISE EXCEPTION 'the balance of ledger account % moves only with a ledger entry', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.held IS DISTINCT FROM OLD.held AND NOT (
        public.chan_writes_as_owner(TG_RELID)
        AND pg_catalog.current_setting('chan.hold_posting', true)
            IS NOT DISTINCT FROM OLD.id || ':' || (NEW.held - OLD.held)
    ) THEN
        RAISE EXCEPTION 'what ledger account % holds moves only with a hold event', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;

REVOKE EXECUTE ON FUNCTION public.accounts_ledgertransaction_open() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION public.accounts_ledgerentry_post() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION public.accounts_ledgerentry_post_statement() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION public.accounts_ledgerhold_post() FROM PUBLIC;
"""

# The definitions of accounts 0021/0022/0027 (with the fixed search_path), for the way back.
BACKWARD = """
CREATE OR REPLACE FUNCTION public.accounts_ledgertransaction_open() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    PERFORM set_config('chan.ledger_open_tx', NEW.id::text, true);
    RETURN NEW;
END;
$$;

CREATE OR REPLACE FUNCTION public.accounts_ledgerentry_key() RETURNS timestamptz
LANGUAGE sql STABLE SECURITY INVOKER SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT coalesce(
        (SELECT created_at FROM accounts_ledgertransaction
         WHERE id = nullif(current_setting('chan.ledger_open_tx', true), '')::bigint),
        now());
$$;

CREATE OR REPLACE FUNCTION public.accounts_ledgerentry_post() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    IF current_setting('chan.ledger_open_tx', true) IS DISTINCT FROM NEW.transaction_id::text THEN
        RAISE EXCEPTION 'entries join only the ledger transaction just inserted (not %)',
            NEW.transaction_id USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    SELECT balance + NEW.amount INTO NEW.balance_after FROM accounts_ledgeraccount
        WHERE id = NEW.account_id FOR NO KEY UPDATE;
    RETURN NEW;
END;
$$;

CREATE OR REPLACE FUNCTION public.accounts_ledgerentry_post_statement() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    open_tx text := current_setting('chan.ledger_open_tx', true);
    tx bigint;
    other bigint;
    key_low timestamptz;
    key_high timestamptz;
    tx_xmin xid;
    tx_at timestamptz;
    legs text;
    wrong bigint;
BEGIN
    SELECT min(e.transaction_id), max(e.transaction_id),
           min(e.transaction_created_at), max(e.transaction_created_at),
           string_agg(e.account_id || ':' || e.amount, ',')
        INTO tx, other, key_low, key_high, legs FROM new_entries e;
    IF legs IS NULL THEN
        RETURN NULL;
    END IF;
    IF tx::text IS DISTINCT FROM open_tx OR other::text IS DISTINCT FROM open_tx THEN
        RAISE EXCEPTION 'entries join only the ledger transaction just inserted (not %)',
            CASE WHEN tx::text IS DISTINCT FROM open_tx THEN tx ELSE other END
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    SELECT t.xmin, t.created_at INTO tx_xmin, tx_at FROM accounts_ledgertransaction t
        WHERE t.id = tx;
    IF tx_xmin IS NULL OR NOT chan_row_inserted_here(tx_xmin) THEN
        RAISE EXCEPTION 'ledger transaction % was booked by another database transaction: '
            'entries join only a transaction inserted by their own', tx
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF key_low IS DISTINCT FROM tx_at OR key_high IS DISTINCT FROM tx_at THEN
        RAISE EXCEPTION 'entries of ledger transaction %: transaction_created_at is not the '
            'transaction''s created_at (the partition key)', tx
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    PERFORM set_config('chan.ledger_posting', ',' || legs || ',', true);
    WITH moved AS (
        UPDATE accounts_ledgeraccount a SET balance = a.balance + e.amount
        FROM new_entries e WHERE a.id = e.account_id
        RETURNING e.id, e.balance_after, a.balance
    )
    SELECT m.id INTO wrong FROM moved m WHERE m.balance IS DISTINCT FROM m.balance_after LIMIT 1;
    PERFORM set_config('chan.ledger_posting', '', true);
    IF wrong IS NOT NULL THEN
        RAISE EXCEPTION 'ledger entry %: balance_after is not its account''s new balance', wrong
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION public.accounts_ledgerhold_post() RETURNS trigger
LANGUAGE plpgsql SECURITY INVOKER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    acct_kind text;
    previous bigint;
    head text;
BEGIN
    SELECT kind INTO acct_kind FROM accounts_ledgeraccount WHERE id = NEW.account_id FOR NO KEY UPDATE;
    IF acct_kind IS DISTINCT FROM 'wallet' THEN
        RAISE EXCEPTION 'only a wallet holds Quan for a seat (account %)', NEW.account_id
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT amount INTO previous FROM accounts_ledgerhold
        WHERE account_id = NEW.account_id AND table_id = NEW.table_id ORDER BY id DESC LIMIT 1;
    previous := coalesce(previous, 0);
    IF (NEW.kind = 'placed' AND previous <> 0)
       OR (NEW.kind IN ('resized', 'released') AND previous = 0) THEN
        RAISE EXCEPTION 'hold event % on account % at table %: the hold there is %',
            NEW.kind, NEW.account_id, NEW.table_id, previous
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.hash IS NULL OR NEW.hash !~ '^[0-9a-f]{64}$' THEN
        RAISE EXCEPTION 'hold event has no hash' USING ERRCODE = 'check_violation';
    END IF;
    SELECT hash INTO head FROM accounts_ledgerhold
        WHERE account_id = NEW.account_id ORDER BY id DESC LIMIT 1;
    IF NEW.prev_hash IS DISTINCT FROM coalesce(head, repeat('0', 64)) THEN
        RAISE EXCEPTION 'hold event on account %: prev_hash is not its last hold event',
            NEW.account_id USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    NEW.delta := NEW.amount - previous;
    PERFORM set_config('chan.hold_posting', NEW.account_id || ':' || NEW.delta, true);
    UPDATE accounts_ledgeraccount SET held = held + NEW.delta
        WHERE id = NEW.account_id
        RETURNING held INTO NEW.held_after;
    PERFORM set_config('chan.hold_posting', '', true);
    RETURN NEW;
END;
$$;

CREATE OR REPLACE FUNCTION public.accounts_ledgeraccount_guard() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.balance <> 0 OR NEW.held <> 0 THEN
            RAISE EXCEPTION 'a ledger account opens at balance 0 and nothing held'
                USING ERRCODE = 'check_violation';
        END IF;
        IF NEW.parent_id IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM accounts_ledgeraccount p
            WHERE p.id = NEW.parent_id AND p.kind = NEW.kind AND p.parent_id IS NULL
        ) THEN
            RAISE EXCEPTION 'a % sub-account needs a % parent', NEW.kind, NEW.kind
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END IF;
    IF NEW.kind IS DISTINCT FROM OLD.kind OR NEW.user_id IS DISTINCT FROM OLD.user_id
       OR NEW.table_id IS DISTINCT FROM OLD.table_id OR NEW.id IS DISTINCT FROM OLD.id
       OR NEW.parent_id IS DISTINCT FROM OLD.parent_id
       OR NEW.shard IS DISTINCT FROM OLD.shard THEN
        RAISE EXCEPTION 'ledger account % cannot change its kind or owner', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.balance IS DISTINCT FROM OLD.balance AND NOT (
        pg_trigger_depth() > 1
        AND strpos(
            coalesce(current_setting('chan.ledger_posting', true), ''),
            ',' || OLD.id || ':' || (NEW.balance - OLD.balance) || ','
        ) > 0
    ) THEN
        RAISE EXCEPTION 'the balance of ledger account % moves only with a ledger entry', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.held IS DISTINCT FROM OLD.held AND NOT (
        pg_trigger_depth() > 1
        AND current_setting('chan.hold_posting', true)
            IS NOT DISTINCT FROM OLD.id || ':' || (NEW.held - OLD.held)
    ) THEN
        RAISE EXCEPTION 'what ledger account % holds moves only with a hold event', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$;

DROP FUNCTION public.chan_writes_as_owner(oid);
DROP SCHEMA chan_private CASCADE;
"""


class Migration(migrations.Migration):
    dependencies = [("accounts", "0027_functions_fixed_search_path")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
