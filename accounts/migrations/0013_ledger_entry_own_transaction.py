"""An entry joins only a ledger transaction inserted by the same database transaction.

Until now the entry trigger (0004) trusted the session setting ``chan.ledger_open_tx``, which the
transaction trigger sets, but which any session may set too: ``SET chan.ledger_open_tx = '5'``
let a client append entries to transaction 5, booked months ago (the balance trigger still
balanced it with a second forged entry). The setting stays (an entry joins the transaction just
inserted), and the trigger now also asks PostgreSQL whose row the transaction is:

* ``chan_row_inserted_here(xmin)`` widens the row's 32-bit ``xmin`` to the ``xid8`` nearest
  the current transaction's and asks ``pg_xact_status``. A row visible to this session whose inserting
  transaction is still in progress can only be this session's own (MVCC hides the rows of
  others until they commit), savepoints included; a booked transaction's row is ``committed``.
  No setting, and no role short of the tables' owner (which the application is not:
  ``core/db_roles.py``), changes that answer.
"""

from django.db import migrations

CREATE = r"""
CREATE OR REPLACE FUNCTION chan_row_inserted_here(row_xmin xid) RETURNS boolean AS $$
DECLARE
    current_xid bigint := pg_current_xact_id()::text::bigint;
    widened bigint := (current_xid - (current_xid % 4294967296)) + row_xmin::text::bigint;
BEGIN
    -- the candidate nearest the current transaction's id (subtransactions come after it)
    IF widened - current_xid > 2147483648 THEN
        widened := widened - 4294967296;  -- inserted in the previous epoch
    ELSIF current_xid - widened > 2147483648 THEN
        widened := widened + 4294967296;  -- a subtransaction past an epoch's end
    END IF;
    IF widened < 3 THEN
        RETURN false;  -- frozen or bootstrap rows: long committed
    END IF;
    RETURN pg_xact_status(widened::text::xid8) IS NOT DISTINCT FROM 'in progress';
END;
$$ LANGUAGE plpgsql VOLATILE;

CREATE OR REPLACE FUNCTION accounts_ledgerentry_post() RETURNS trigger AS $$
DECLARE
    tx_xmin xid;
BEGIN
    IF current_setting('chan.ledger_open_tx', true) IS DISTINCT FROM NEW.transaction_id::text THEN
        RAISE EXCEPTION 'entries join only the ledger transaction just inserted (not %)',
            NEW.transaction_id USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    SELECT xmin INTO tx_xmin FROM accounts_ledgertransaction WHERE id = NEW.transaction_id;
    IF tx_xmin IS NULL OR NOT chan_row_inserted_here(tx_xmin) THEN
        RAISE EXCEPTION 'ledger transaction % was booked by another database transaction: '
            'entries join only a transaction inserted by their own', NEW.transaction_id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    PERFORM set_config('chan.ledger_posting', NEW.account_id || ':' || NEW.amount, true);
    UPDATE accounts_ledgeraccount SET balance = balance + NEW.amount
        WHERE id = NEW.account_id
        RETURNING balance INTO NEW.balance_after;
    PERFORM set_config('chan.ledger_posting', '', true);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""

# 0004's function as it was.
RESTORE = r"""
CREATE OR REPLACE FUNCTION accounts_ledgerentry_post() RETURNS trigger AS $$
BEGIN
    IF current_setting('chan.ledger_open_tx', true) IS DISTINCT FROM NEW.transaction_id::text THEN
        RAISE EXCEPTION 'entries join only the ledger transaction just inserted (not %)',
            NEW.transaction_id USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    PERFORM set_config('chan.ledger_posting', NEW.account_id || ':' || NEW.amount, true);
    UPDATE accounts_ledgeraccount SET balance = balance + NEW.amount
        WHERE id = NEW.account_id
        RETURNING balance INTO NEW.balance_after;
    PERFORM set_config('chan.ledger_posting', '', true);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
DROP FUNCTION IF EXISTS chan_row_inserted_here(xid);
"""


class Migration(migrations.Migration):
    dependencies = [("accounts", "0012_ledger_chain")]

    operations = [migrations.RunSQL(CREATE, RESTORE)]
