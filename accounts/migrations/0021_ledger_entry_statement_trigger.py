"""The entries' balances moved once per statement, not once per entry (a ledger that
keeps up; docs/decisions/ledger-one-statement-per-post.md).

Until now each entry's BEFORE INSERT trigger (0004, 0013) checked that its transaction was the
open one and this database transaction's own (a lookup of the transaction's ``xmin`` and a
PL/pgSQL call), moved its account's balance by an ``UPDATE`` of its own (the account guard, the
CHECKs and two ``set_config`` each time) and stored the result in ``balance_after``: six times
for a settlement of four wallets, the house and the pot, the largest cost of a post measured
(``bench/ledger_bench.py --profile``: ``accounts_ledgerentry_post`` 6.8 ms of the 10 ms its
functions took per settlement).

* ``accounts_ledgerentry_post_statement`` (AFTER INSERT FOR EACH STATEMENT, the statement's rows
  as the transition table ``new_entries``) does that work once per statement: the entries join
  the transaction just inserted (``chan.ledger_open_tx``, 0004) and that transaction was inserted
  by this database transaction (``chan_row_inserted_here``, 0013 — asked once, not once per
  entry); then one ``UPDATE … FROM new_entries`` moves every account by its entry, and each
  account's new balance must be its entry's ``balance_after``, else the statement is refused. A
  transaction has one entry per account (``accounts_ledgerentry_one_leg_per_account``) and a
  statement's entries join one transaction, so no two rows of a statement move one account.
* ``ledger_post`` sends each entry's ``balance_after`` (the balance it read under the account's
  row lock, plus the leg), so its entries need no row trigger at all. An entry inserted with
  ``balance_after`` 0 (a raw INSERT that leaves it to the database) still goes through
  ``accounts_ledgerentry_post`` (the same trigger and function names, BEFORE INSERT FOR EACH ROW,
  now ``WHEN (NEW.balance_after = 0)``), which checks the open transaction and reads the
  account's balance under its row lock (``FOR NO KEY UPDATE``) into ``balance_after``. Either
  way the stored value is the database's: computed when not given, refused when given wrong
  (before, a wrong one was silently replaced).
* The account guard (0004, 0014, 0017) lets a balance move when the transaction-local
  ``chan.ledger_posting`` lists ``<account id>:<amount>`` among the statement's legs
  (``,id:amount,id:amount,``), still only from inside a trigger (``pg_trigger_depth() > 1``).

A table partitioned later attaches the same two functions: the row trigger BEFORE INSERT FOR
EACH ROW and the statement trigger AFTER INSERT ``REFERENCING NEW TABLE AS new_entries`` FOR EACH
STATEMENT (on the partitioned parent, which PostgreSQL allows for statement triggers).
"""

from django.db import migrations

CREATE = r"""
CREATE OR REPLACE FUNCTION accounts_ledgerentry_post() RETURNS trigger AS $$
BEGIN
    IF current_setting('chan.ledger_open_tx', true) IS DISTINCT FROM NEW.transaction_id::text THEN
        RAISE EXCEPTION 'entries join only the ledger transaction just inserted (not %)',
            NEW.transaction_id USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    SELECT balance + NEW.amount INTO NEW.balance_after FROM accounts_ledgeraccount
        WHERE id = NEW.account_id FOR NO KEY UPDATE;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS accounts_ledgerentry_post ON accounts_ledgerentry;
CREATE TRIGGER accounts_ledgerentry_post
    BEFORE INSERT ON accounts_ledgerentry
    FOR EACH ROW WHEN (NEW.balance_after = 0)
    EXECUTE FUNCTION accounts_ledgerentry_post();

CREATE OR REPLACE FUNCTION accounts_ledgerentry_post_statement() RETURNS trigger AS $$
DECLARE
    open_tx text := current_setting('chan.ledger_open_tx', true);
    tx bigint;
    other bigint;
    tx_xmin xid;
    legs text;
    wrong bigint;
BEGIN
    SELECT min(e.transaction_id), max(e.transaction_id),
           string_agg(e.account_id || ':' || e.amount, ',')
        INTO tx, other, legs FROM new_entries e;
    IF legs IS NULL THEN
        RETURN NULL;  -- an INSERT of no rows
    END IF;
    IF tx::text IS DISTINCT FROM open_tx OR other::text IS DISTINCT FROM open_tx THEN
        RAISE EXCEPTION 'entries join only the ledger transaction just inserted (not %)',
            CASE WHEN tx::text IS DISTINCT FROM open_tx THEN tx ELSE other END
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    SELECT t.xmin INTO tx_xmin FROM accounts_ledgertransaction t WHERE t.id = tx;
    IF tx_xmin IS NULL OR NOT chan_row_inserted_here(tx_xmin) THEN
        RAISE EXCEPTION 'ledger transaction % was booked by another database transaction: '
            'entries join only a transaction inserted by their own', tx
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
$$ LANGUAGE plpgsql;

CREATE TRIGGER accounts_ledgerentry_post_statement
    AFTER INSERT ON accounts_ledgerentry
    REFERENCING NEW TABLE AS new_entries
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_ledgerentry_post_statement();

CREATE OR REPLACE FUNCTION accounts_ledgeraccount_guard() RETURNS trigger AS $$
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
$$ LANGUAGE plpgsql;
"""

# 0013's entry trigger and 0017's guard, as they were.
RESTORE = r"""
DROP TRIGGER IF EXISTS accounts_ledgerentry_post_statement ON accounts_ledgerentry;
DROP FUNCTION IF EXISTS accounts_ledgerentry_post_statement();
DROP TRIGGER IF EXISTS accounts_ledgerentry_post ON accounts_ledgerentry;
CREATE TRIGGER accounts_ledgerentry_post
    BEFORE INSERT ON accounts_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION accounts_ledgerentry_post();

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

CREATE OR REPLACE FUNCTION accounts_ledgeraccount_guard() RETURNS trigger AS $$
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
        AND current_setting('chan.ledger_posting', true)
            IS NOT DISTINCT FROM OLD.id || ':' || (NEW.balance - OLD.balance)
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
$$ LANGUAGE plpgsql;
"""


class Migration(migrations.Migration):
    dependencies = [("accounts", "0020_ledger_kinds_arenas_and_seasons")]

    operations = [migrations.RunSQL(CREATE, RESTORE)]
