"""Each ledger transaction chains the one before it (accounts/ledger_hash.py).

* ``prev_hash`` and ``hash`` are added and the existing transactions chained in id order,
  ``BATCH`` at a time. The append-only trigger refuses UPDATE, so this migration disables it for
  itself inside its own transaction (as the owner; the ``ALTER TABLE`` lock keeps every other
  session out until it commits, when the trigger is enabled again).
* A BEFORE INSERT trigger takes the ledger head (the advisory lock ``LEDGER_HEAD_LOCK``, the one
  ``ledger_post`` takes) and refuses a transaction whose ``hash`` is not 64 lowercase hex digits
  or whose ``prev_hash`` is not the last transaction's ``hash`` (64 zeros for the first).
  Whether a hash is the SHA-256 of its content (and of the entries added afterwards) is checked
  by ``manage.py ledger_check``, which recomputes the chain.
* TRUNCATE of the ledger tables passes with ``chan.allow_log_truncate = 'on'`` only in a
  database whose name starts with ``test_`` (``chan_log_truncate_allowed``, as games 0021).
"""

from django.db import migrations, models

BATCH = 5_000
GENESIS = "0" * 64
LEDGER_HEAD_LOCK = 0x4C45444745525F48

TRUNCATE_ALLOWED = r"""
CREATE OR REPLACE FUNCTION chan_log_truncate_allowed(dbname text) RETURNS boolean AS $$
    SELECT dbname LIKE 'test\_%'
       AND current_setting('chan.allow_log_truncate', true) IS NOT DISTINCT FROM 'on';
$$ LANGUAGE sql STABLE;

CREATE OR REPLACE FUNCTION accounts_ledger_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' AND chan_log_truncate_allowed(current_database()) THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION '% is append-only (% refused)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
"""

TRUNCATE_ANY = """
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
"""

CHAIN = rf"""
CREATE OR REPLACE FUNCTION accounts_ledgertransaction_chain() RETURNS trigger AS $$
DECLARE
    head text;
BEGIN
    PERFORM pg_advisory_xact_lock({LEDGER_HEAD_LOCK});
    IF NEW.hash IS NULL OR NEW.hash !~ '^[0-9a-f]{{64}}$' THEN
        RAISE EXCEPTION 'ledger transaction % has no hash', NEW.id
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT hash INTO head FROM accounts_ledgertransaction ORDER BY id DESC LIMIT 1;
    IF NEW.prev_hash IS DISTINCT FROM coalesce(head, '{GENESIS}') THEN
        RAISE EXCEPTION 'ledger transaction %: prev_hash is not the ledger head', NEW.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS accounts_ledgertransaction_chain ON accounts_ledgertransaction;
CREATE TRIGGER accounts_ledgertransaction_chain
    BEFORE INSERT ON accounts_ledgertransaction
    FOR EACH ROW EXECUTE FUNCTION accounts_ledgertransaction_chain();
"""

DROP = """
DROP TRIGGER IF EXISTS accounts_ledgertransaction_chain ON accounts_ledgertransaction;
DROP FUNCTION IF EXISTS accounts_ledgertransaction_chain();
"""


def backfill_chain(apps, schema_editor):
    from accounts.ledger_hash import ledger_tx_hash

    Tx = apps.get_model("accounts", "LedgerTransaction")
    Entry = apps.get_model("accounts", "LedgerEntry")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "ALTER TABLE accounts_ledgertransaction"
            " DISABLE TRIGGER accounts_ledgertransaction_append_only"
        )
        prev = GENESIS
        last_id = 0
        columns = ("id", "kind", "idempotency_key", "memo", "user_id", "hand_id", "table_id")
        while True:
            batch = list(
                Tx.objects.filter(id__gt=last_id).order_by("id").values_list(*columns)[:BATCH]
            )
            if not batch:
                break
            last_id = batch[-1][0]
            legs: dict[int, list[tuple[int, int]]] = {}
            for tx_id, account, amount in Entry.objects.filter(
                transaction_id__gte=batch[0][0], transaction_id__lte=last_id
            ).values_list("transaction_id", "account_id", "amount"):
                legs.setdefault(tx_id, []).append((account, amount))
            rows = []
            for pk, kind, key, memo, user, hand, table in batch:
                digest = ledger_tx_hash(
                    prev=prev,
                    kind=kind,
                    key=key,
                    memo=memo,
                    user=user,
                    hand=hand,
                    table=table,
                    entries=legs.get(pk, []),
                )
                rows.append((prev, digest, pk))
                prev = digest
            cursor.executemany(
                "UPDATE accounts_ledgertransaction SET prev_hash = %s, hash = %s WHERE id = %s",
                rows,
            )
        cursor.execute(
            "ALTER TABLE accounts_ledgertransaction"
            " ENABLE TRIGGER accounts_ledgertransaction_append_only"
        )


def forwards(apps, schema_editor):
    schema_editor.execute(TRUNCATE_ALLOWED + CHAIN, params=None)


def backwards(apps, schema_editor):
    schema_editor.execute(DROP + TRUNCATE_ANY, params=None)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0011_user_signup_address")]

    operations = [
        migrations.AddField(
            model_name="ledgertransaction",
            name="prev_hash",
            field=models.CharField(
                default="",
                help_text="The previous transaction's hash (64 zeros for the first).",
                max_length=64,
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="ledgertransaction",
            name="hash",
            field=models.CharField(
                default="",
                help_text="SHA-256 (hex) of this transaction's canonical content.",
                max_length=64,
            ),
            preserve_default=False,
        ),
        migrations.RunPython(backfill_chain, migrations.RunPython.noop),
        migrations.RunPython(forwards, backwards),
    ]
