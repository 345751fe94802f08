"""PostgreSQL enforces the ledger's guarantees itself, whatever the Python code does.

* An entry's BEFORE INSERT trigger moves its account's ``balance`` by ``amount`` and stores the
  result in ``balance_after``: the balance column is the running sum of the entries, kept in the
  same transaction, and the CHECK ``balance >= 0 unless issuance`` then refuses an overdrawn
  wallet, house or pot. An entry may only join the ledger transaction inserted last in the same
  database transaction (no entries added to a past transaction).
* A DEFERRABLE INITIALLY DEFERRED constraint trigger checks at commit that every transaction
  touched has at least two entries and sums to zero.
* ``accounts_ledgertransaction`` and ``accounts_ledgerentry`` refuse UPDATE and DELETE (row
  triggers) and TRUNCATE (statement triggers); ``accounts_ledgeraccount`` refuses DELETE and
  TRUNCATE, opens at balance 0, never changes its kind, user or table, and its balance changes
  only from the entry trigger (``pg_trigger_depth() > 1`` and the transaction-local setting
  ``chan.ledger_posting`` = ``<account id>:<amount>`` that the trigger sets for its own UPDATE).

TRUNCATE passes only in a session with ``chan.allow_log_truncate = 'on'`` (the test database, as
for the hand log, games 0004). SQLite (the embedded dev default) relies on the services and the
model guards only.
"""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION accounts_ledger_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE'
       AND current_setting('chan.allow_log_truncate', true) IS NOT DISTINCT FROM 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION '% is append-only (% refused)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER accounts_ledgertransaction_append_only
    BEFORE UPDATE OR DELETE ON accounts_ledgertransaction
    FOR EACH ROW EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_ledgertransaction_no_truncate
    BEFORE TRUNCATE ON accounts_ledgertransaction
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_ledgerentry_append_only
    BEFORE UPDATE OR DELETE ON accounts_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_ledgerentry_no_truncate
    BEFORE TRUNCATE ON accounts_ledgerentry
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_ledgeraccount_no_delete
    BEFORE DELETE ON accounts_ledgeraccount
    FOR EACH ROW EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_ledgeraccount_no_truncate
    BEFORE TRUNCATE ON accounts_ledgeraccount
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_ledger_append_only();

CREATE OR REPLACE FUNCTION accounts_ledgeraccount_guard() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.balance <> 0 THEN
            RAISE EXCEPTION 'a ledger account opens at balance 0, not %', NEW.balance
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    END IF;
    IF NEW.kind IS DISTINCT FROM OLD.kind OR NEW.user_id IS DISTINCT FROM OLD.user_id
       OR NEW.table_id IS DISTINCT FROM OLD.table_id OR NEW.id IS DISTINCT FROM OLD.id THEN
        RAISE EXCEPTION 'ledger account % cannot change its kind or owner', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NEW.balance IS DISTINCT FROM OLD.balance AND NOT (
        pg_trigger_depth() > 1
        AND current_setting('chan.ledger_posting', true)
            IS NOT DISTINCT FROM OLD.id || ':' || (NEW.balance - OLD.balance)
    ) THEN
        RAISE EXCEPTION 'the balance of ledger account % moves only with a ledger entry', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER accounts_ledgeraccount_guard
    BEFORE INSERT OR UPDATE ON accounts_ledgeraccount
    FOR EACH ROW EXECUTE FUNCTION accounts_ledgeraccount_guard();

CREATE OR REPLACE FUNCTION accounts_ledgertransaction_open() RETURNS trigger AS $$
BEGIN
    PERFORM set_config('chan.ledger_open_tx', NEW.id::text, true);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER accounts_ledgertransaction_open
    BEFORE INSERT ON accounts_ledgertransaction
    FOR EACH ROW EXECUTE FUNCTION accounts_ledgertransaction_open();

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
CREATE TRIGGER accounts_ledgerentry_post
    BEFORE INSERT ON accounts_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION accounts_ledgerentry_post();

CREATE OR REPLACE FUNCTION accounts_ledger_balanced() RETURNS trigger AS $$
DECLARE
    tx bigint;
    total numeric;
    n integer;
BEGIN
    IF TG_TABLE_NAME = 'accounts_ledgerentry' THEN
        tx := NEW.transaction_id;
    ELSE
        tx := NEW.id;
    END IF;
    SELECT coalesce(sum(amount), 0), count(*) INTO total, n
        FROM accounts_ledgerentry WHERE transaction_id = tx;
    IF n < 2 OR total <> 0 THEN
        RAISE EXCEPTION 'ledger transaction % does not balance (% entries summing to %)',
            tx, n, total USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE CONSTRAINT TRIGGER accounts_ledgertransaction_balanced
    AFTER INSERT ON accounts_ledgertransaction
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION accounts_ledger_balanced();
CREATE CONSTRAINT TRIGGER accounts_ledgerentry_balanced
    AFTER INSERT ON accounts_ledgerentry
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION accounts_ledger_balanced();
"""

DROP = """
DROP TRIGGER IF EXISTS accounts_ledgerentry_balanced ON accounts_ledgerentry;
DROP TRIGGER IF EXISTS accounts_ledgertransaction_balanced ON accounts_ledgertransaction;
DROP TRIGGER IF EXISTS accounts_ledgerentry_post ON accounts_ledgerentry;
DROP TRIGGER IF EXISTS accounts_ledgertransaction_open ON accounts_ledgertransaction;
DROP TRIGGER IF EXISTS accounts_ledgeraccount_guard ON accounts_ledgeraccount;
DROP TRIGGER IF EXISTS accounts_ledgeraccount_no_truncate ON accounts_ledgeraccount;
DROP TRIGGER IF EXISTS accounts_ledgeraccount_no_delete ON accounts_ledgeraccount;
DROP TRIGGER IF EXISTS accounts_ledgerentry_no_truncate ON accounts_ledgerentry;
DROP TRIGGER IF EXISTS accounts_ledgerentry_append_only ON accounts_ledgerentry;
DROP TRIGGER IF EXISTS accounts_ledgertransaction_no_truncate ON accounts_ledgertransaction;
DROP TRIGGER IF EXISTS accounts_ledgertransaction_append_only ON accounts_ledgertransaction;
DROP FUNCTION IF EXISTS accounts_ledger_balanced();
DROP FUNCTION IF EXISTS accounts_ledgerentry_post();
DROP FUNCTION IF EXISTS accounts_ledgertransaction_open();
DROP FUNCTION IF EXISTS accounts_ledgeraccount_guard();
DROP FUNCTION IF EXISTS accounts_ledger_append_only();
"""


def forwards(apps, schema_editor):
    schema_editor.execute(CREATE, params=None)


def backwards(apps, schema_editor):
    schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0003_ledger")]

    operations = [migrations.RunPython(forwards, backwards)]
