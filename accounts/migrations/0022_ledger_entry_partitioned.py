"""The ledger's entries partitioned by month (docs/decisions/ledger-entries-partitioned.md).

``accounts_ledgerentry`` becomes a table partitioned by RANGE on a new column,
``transaction_created_at``: the ``created_at`` of the entry's transaction, so all of a
transaction's entries lie in one monthly partition (``accounts_ledgerentry_y2026m12``; a DEFAULT
partition takes what no month holds), as games 0028 did for the hand log. PostgreSQL wants the
partition key in every unique constraint, so the primary key is ``(id, transaction_created_at)``
and one leg per account is ``UNIQUE (transaction_id, account_id, transaction_created_at)`` — the
same thing, since the key is a function of the transaction: the statement trigger refuses
entries whose key is not their transaction's ``created_at``, and a transaction never changes
(append-only, 0004).

* The key's default is ``accounts_ledgerentry_key()``: the ``created_at`` of the transaction
  just inserted (``chan.ledger_open_tx``, 0004), else ``now()``. ``ledger_post`` sends the key
  itself (no call on the hot path); a raw INSERT that leaves it out still lands in its
  transaction's month.
* Every guard is kept, under its name: the check constraint (``LIKE … INCLUDING
  CONSTRAINTS``), both foreign keys (recreated by name, DEFERRABLE INITIALLY DEFERRED as
  Django made them), the row triggers on the parent (append-only, and the entry post WHEN
  ``balance_after`` = 0; PostgreSQL clones them onto each partition), and the statement triggers
  (the TRUNCATE guard and 0021's balance-moving ``accounts_ledgerentry_post_statement``): on the
  parent, and on each partition too, since PostgreSQL neither clones a statement trigger nor
  fires the parent's for a statement that names a partition — an INSERT straight into a
  partition would otherwise move no balance. ``chan_partition_statement_triggers(parent,
  partition)`` copies them (transition tables included); ``chan_month_partition_create`` (games
  0028) now calls it instead of ``chan_partition_truncate_guards`` (for the hand log, whose only
  statement trigger is its TRUNCATE guard, the same).
* The deferred balance check (``accounts_ledger_balanced``, 0004/0017) finds a transaction's
  entries in its month's partition alone (it filters on the key).

The old table's rows are copied as they are (ids, balances: the ledger's hash covers an entry's
account and amount, not the new column), triggers created and indexes built after the copy, then
the old table is dropped. ``manage.py partitions`` creates the months ahead and archives old
ones into ``chan_archive`` (core/partitions.py), where ``ledger_check`` still reads them
(accounts/ledger_archive.py).
"""

from importlib import import_module

from django.db import migrations, models

AHEAD_MONTHS = 3

# Every statement trigger of a partitioned parent, on one of its partitions (generalises games
# 0028's chan_partition_truncate_guards, which copied the TRUNCATE ones only).
STATEMENT_TRIGGERS = r"""
CREATE OR REPLACE FUNCTION chan_partition_statement_triggers(parent text, partition text)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    t record;
BEGIN
    FOR t IN
        SELECT tgname, tgfoid::regproc AS fn, tgtype, tgnewtable, tgoldtable FROM pg_trigger
        WHERE tgrelid = parent::regclass AND NOT tgisinternal AND (tgtype & 1) = 0
        ORDER BY tgname
    LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = partition::regclass
                       AND tgname = t.tgname) THEN
            EXECUTE format('CREATE TRIGGER %I %s %s ON %s %s FOR EACH STATEMENT EXECUTE FUNCTION %s()',
                t.tgname,
                CASE WHEN (t.tgtype & 2) <> 0 THEN 'BEFORE' ELSE 'AFTER' END,
                concat_ws(' OR ',
                    CASE WHEN (t.tgtype & 4) <> 0 THEN 'INSERT' END,
                    CASE WHEN (t.tgtype & 8) <> 0 THEN 'DELETE' END,
                    CASE WHEN (t.tgtype & 16) <> 0 THEN 'UPDATE' END,
                    CASE WHEN (t.tgtype & 32) <> 0 THEN 'TRUNCATE' END),
                partition::regclass,
                CASE WHEN t.tgnewtable IS NULL AND t.tgoldtable IS NULL THEN ''
                     ELSE 'REFERENCING ' || concat_ws(' ',
                        'NEW TABLE AS ' || quote_ident(t.tgnewtable),
                        'OLD TABLE AS ' || quote_ident(t.tgoldtable)) END,
                t.fn);
        END IF;
    END LOOP;
END;
$$;

CREATE OR REPLACE FUNCTION chan_month_partition_create(parent text, month date)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET lock_timeout = '10s'
AS $$
DECLARE
    first date := date_trunc('month', month)::date;
    name text := parent || to_char(first, '"_y"YYYY"m"MM');
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_partitioned_table WHERE partrelid = parent::regclass) THEN
        RAISE EXCEPTION '% is not a partitioned table', parent;
    END IF;
    IF to_regclass(name) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format(
        'CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', name, parent,
        first::timestamp AT TIME ZONE 'UTC', (first + interval '1 month')::timestamp AT TIME ZONE 'UTC');
    PERFORM chan_partition_statement_triggers(parent, name);
    RETURN true;
END;
$$;
"""

KEY_DEFAULT = """
CREATE OR REPLACE FUNCTION accounts_ledgerentry_key() RETURNS timestamptz AS $$
    SELECT coalesce(
        (SELECT created_at FROM accounts_ledgertransaction
         WHERE id = nullif(current_setting('chan.ledger_open_tx', true), '')::bigint),
        now());
$$ LANGUAGE sql STABLE;
"""

# 0021's statement trigger, also checking the key (read with the transaction's xmin: no
# further lookup), and 0017's deferred balance check confined to the transaction's partition.
POST_STATEMENT = r"""
CREATE OR REPLACE FUNCTION accounts_ledgerentry_post_statement() RETURNS trigger AS $$
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
        RETURN NULL;  -- an INSERT of no rows
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
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION accounts_ledger_balanced() RETURNS trigger AS $$
DECLARE
    tx bigint;
    key timestamptz;
    total numeric;
    n integer;
BEGIN
    IF TG_TABLE_NAME = 'accounts_ledgertransaction' THEN
        tx := NEW.id;
        key := NEW.created_at;
    ELSE
        tx := NEW.transaction_id;
        key := NEW.transaction_created_at;
    END IF;
    SELECT coalesce(sum(amount), 0), count(*) INTO total, n
        FROM accounts_ledgerentry WHERE transaction_id = tx AND transaction_created_at = key;
    IF n < 2 OR total <> 0 THEN
        RAISE EXCEPTION 'ledger transaction % does not balance (% entries summing to %)',
            tx, n, total USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""

# The old table set aside under another name (its indexes and sequence too, to free theirs).
SET_ASIDE = """
ALTER TABLE accounts_ledgerentry RENAME TO accounts_ledgerentry_unpartitioned;
ALTER INDEX accounts_ledgerentry_pkey RENAME TO accounts_ledgerentry_unpartitioned_pkey;
ALTER INDEX accounts_ledgerentry_one_leg_per_account
    RENAME TO accounts_ledgerentry_unpartitioned_one_leg;
ALTER INDEX accounts_ledgerentry_stmt RENAME TO accounts_ledgerentry_unpartitioned_stmt;
ALTER SEQUENCE accounts_ledgerentry_id_seq RENAME TO accounts_ledgerentry_unpartitioned_id_seq;
"""

PARENT = """
CREATE TABLE accounts_ledgerentry (
    LIKE accounts_ledgerentry_unpartitioned
        INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY,
    transaction_created_at timestamptz NOT NULL DEFAULT accounts_ledgerentry_key()
) PARTITION BY RANGE (transaction_created_at);
CREATE TABLE accounts_ledgerentry_default PARTITION OF accounts_ledgerentry DEFAULT;
"""

# The months from the oldest transaction's to AHEAD_MONTHS after this one (UTC).
MONTHS = """
SELECT chan_month_partition_create('accounts_ledgerentry', m::date)
FROM generate_series(
    date_trunc('month', coalesce((SELECT min(created_at) FROM accounts_ledgertransaction), now())
               AT TIME ZONE 'UTC'),
    date_trunc('month', now() AT TIME ZONE 'UTC') + %s * interval '1 month',
    interval '1 month') AS m;
"""

COPY = """
INSERT INTO accounts_ledgerentry ({columns}, transaction_created_at)
SELECT {prefixed}, t.created_at
FROM accounts_ledgerentry_unpartitioned e JOIN accounts_ledgertransaction t ON t.id = e.transaction_id;
"""

FINISH = """
SELECT setval(pg_get_serial_sequence('accounts_ledgerentry', 'id'),
              coalesce((SELECT max(id) FROM accounts_ledgerentry), 0) + 1, false);
DROP TABLE accounts_ledgerentry_unpartitioned;
ALTER TABLE accounts_ledgerentry ADD CONSTRAINT accounts_ledgerentry_pkey
    PRIMARY KEY (id, transaction_created_at);
ALTER TABLE accounts_ledgerentry ADD CONSTRAINT accounts_ledgerentry_one_leg_per_account
    UNIQUE (transaction_id, account_id, transaction_created_at);
CREATE INDEX accounts_ledgerentry_stmt ON accounts_ledgerentry (account_id, id DESC);
ALTER TABLE accounts_ledgerentry ADD CONSTRAINT {fk_account}
    FOREIGN KEY (account_id) REFERENCES accounts_ledgeraccount (id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE accounts_ledgerentry ADD CONSTRAINT {fk_transaction}
    FOREIGN KEY (transaction_id) REFERENCES accounts_ledgertransaction (id)
    DEFERRABLE INITIALLY DEFERRED;
CREATE TRIGGER accounts_ledgerentry_append_only
    BEFORE UPDATE OR DELETE ON accounts_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_ledgerentry_no_truncate
    BEFORE TRUNCATE ON accounts_ledgerentry
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_ledgerentry_post
    BEFORE INSERT ON accounts_ledgerentry
    FOR EACH ROW WHEN (NEW.balance_after = 0)
    EXECUTE FUNCTION accounts_ledgerentry_post();
CREATE TRIGGER accounts_ledgerentry_post_statement
    AFTER INSERT ON accounts_ledgerentry
    REFERENCING NEW TABLE AS new_entries
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_ledgerentry_post_statement();
SELECT chan_partition_statement_triggers('accounts_ledgerentry', i.inhrelid::regclass::text)
FROM pg_inherits i WHERE i.inhparent = 'accounts_ledgerentry'::regclass;
"""


def _foreign_keys(cursor) -> dict[str, str]:
    """``{column: constraint name}`` of the entries' foreign keys."""
    cursor.execute(
        "SELECT a.attname, c.conname FROM pg_constraint c"
        " JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]"
        " WHERE c.conrelid = 'accounts_ledgerentry'::regclass AND c.contype = 'f'"
    )
    return dict(cursor.fetchall())


def _columns(cursor) -> str:
    cursor.execute(
        "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute"
        " WHERE attrelid = 'accounts_ledgerentry'::regclass AND attnum > 0 AND NOT attisdropped"
    )
    return cursor.fetchone()[0]


def forwards(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        fks = _foreign_keys(cursor)
        columns = _columns(cursor)
        prefixed = ", ".join(f"e.{c.strip()}" for c in columns.split(","))
        cursor.execute(STATEMENT_TRIGGERS + KEY_DEFAULT + POST_STATEMENT + SET_ASIDE + PARENT)
        cursor.execute(MONTHS, [AHEAD_MONTHS])
        cursor.execute(COPY.format(columns=columns, prefixed=prefixed))
        cursor.execute(
            FINISH.format(fk_account=fks["account_id"], fk_transaction=fks["transaction_id"])
        )


# Backwards: the rows copied into one plain table again (the archive, if any, is refused).
UNSET = """
ALTER TABLE accounts_ledgerentry RENAME TO accounts_ledgerentry_partitioned;
ALTER INDEX accounts_ledgerentry_pkey RENAME TO accounts_ledgerentry_partitioned_pkey;
ALTER INDEX accounts_ledgerentry_one_leg_per_account
    RENAME TO accounts_ledgerentry_partitioned_one_leg;
ALTER INDEX accounts_ledgerentry_stmt RENAME TO accounts_ledgerentry_partitioned_stmt;
ALTER SEQUENCE accounts_ledgerentry_id_seq RENAME TO accounts_ledgerentry_partitioned_id_seq;
CREATE TABLE accounts_ledgerentry (
    LIKE accounts_ledgerentry_partitioned
        INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY
);
ALTER TABLE accounts_ledgerentry DROP COLUMN transaction_created_at;
"""

UNFINISH = """
SELECT setval(pg_get_serial_sequence('accounts_ledgerentry', 'id'),
              coalesce((SELECT max(id) FROM accounts_ledgerentry), 0) + 1, false);
DROP TABLE accounts_ledgerentry_partitioned;
DROP FUNCTION accounts_ledgerentry_key();
ALTER TABLE accounts_ledgerentry ADD CONSTRAINT accounts_ledgerentry_pkey PRIMARY KEY (id);
ALTER TABLE accounts_ledgerentry ADD CONSTRAINT accounts_ledgerentry_one_leg_per_account
    UNIQUE (transaction_id, account_id);
CREATE INDEX accounts_ledgerentry_stmt ON accounts_ledgerentry (account_id, id DESC);
ALTER TABLE accounts_ledgerentry ADD CONSTRAINT {fk_account}
    FOREIGN KEY (account_id) REFERENCES accounts_ledgeraccount (id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE accounts_ledgerentry ADD CONSTRAINT {fk_transaction}
    FOREIGN KEY (transaction_id) REFERENCES accounts_ledgertransaction (id)
    DEFERRABLE INITIALLY DEFERRED;
CREATE INDEX {account_index} ON accounts_ledgerentry (account_id);
CREATE INDEX {transaction_index} ON accounts_ledgerentry (transaction_id);
CREATE TRIGGER accounts_ledgerentry_append_only
    BEFORE UPDATE OR DELETE ON accounts_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_ledgerentry_no_truncate
    BEFORE TRUNCATE ON accounts_ledgerentry
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_ledgerentry_post
    BEFORE INSERT ON accounts_ledgerentry
    FOR EACH ROW WHEN (NEW.balance_after = 0)
    EXECUTE FUNCTION accounts_ledgerentry_post();
CREATE TRIGGER accounts_ledgerentry_post_statement
    AFTER INSERT ON accounts_ledgerentry
    REFERENCING NEW TABLE AS new_entries
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_ledgerentry_post_statement();
DROP FUNCTION chan_partition_statement_triggers(text, text);
"""

# 0017's deferred balance check as it was (0021's statement function is restored from 0021).
BALANCED_0017 = """
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
"""


def _function_of(sql: str, name: str) -> str:
    """The ``CREATE OR REPLACE FUNCTION name`` statement of an older migration's SQL."""
    start = sql.index(f"CREATE OR REPLACE FUNCTION {name}(")
    end = sql.index("$$ LANGUAGE plpgsql;", start) + len("$$ LANGUAGE plpgsql;")
    return sql[start:end] + "\n"


def backwards(apps, schema_editor):
    post_0021 = _function_of(
        import_module("accounts.migrations.0021_ledger_entry_statement_trigger").CREATE,
        "accounts_ledgerentry_post_statement",
    )
    create_0028 = import_module("games.migrations.0028_handevent_partitioned").PARTITION_CREATE
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'chan_archive'"
            " AND tablename LIKE 'accounts\\_ledgerentry\\_%'"
        )
        if cursor.fetchone()[0]:
            raise RuntimeError("archived ledger entries in chan_archive: not folded back")
        fks = _foreign_keys(cursor)
        cursor.execute(UNSET)
        columns = _columns(cursor)
        cursor.execute(
            f"INSERT INTO accounts_ledgerentry ({columns})"  # noqa: S608 (catalog names)
            f" SELECT {columns} FROM accounts_ledgerentry_partitioned"
        )
        cursor.execute(
            post_0021
            + BALANCED_0017
            + create_0028
            + UNFINISH.format(
                fk_account=fks["account_id"],
                fk_transaction=fks["transaction_id"],
                account_index=schema_editor._create_index_name(
                    "accounts_ledgerentry", ["account_id"]
                ),
                transaction_index=schema_editor._create_index_name(
                    "accounts_ledgerentry", ["transaction_id"]
                ),
            )
        )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0021_ledger_entry_statement_trigger"),
        ("games", "0028_handevent_partitioned"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forwards, backwards)],
            state_operations=[
                migrations.AddField(
                    model_name="ledgerentry",
                    name="transaction_created_at",
                    field=models.DateTimeField(
                        editable=False,
                        help_text="The transaction's created_at: the entries' partition key.",
                    ),
                    preserve_default=False,
                ),
                migrations.AlterField(
                    model_name="ledgerentry",
                    name="account",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=models.deletion.PROTECT,
                        related_name="entries",
                        to="accounts.ledgeraccount",
                    ),
                ),
                migrations.AlterField(
                    model_name="ledgerentry",
                    name="transaction",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=models.deletion.PROTECT,
                        related_name="entries",
                        to="accounts.ledgertransaction",
                    ),
                ),
                migrations.RemoveConstraint(
                    model_name="ledgerentry", name="accounts_ledgerentry_one_leg_per_account"
                ),
                migrations.AddConstraint(
                    model_name="ledgerentry",
                    constraint=models.UniqueConstraint(
                        fields=("transaction", "account", "transaction_created_at"),
                        name="accounts_ledgerentry_one_leg_per_account",
                    ),
                ),
            ],
        ),
    ]
