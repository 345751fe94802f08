"""Holds: Quan of a wallet set aside for a seat, as append-only events of their own.

* ``accounts_ledgeraccount.held`` is Σ of the wallet's open holds. The CHECK
  ``accounts_ledgeraccount_held_within_balance`` refuses a balance below it (and a hold on
  anything but a wallet): at every statement, as TigerBeetle's ``debits_pending + debits_posted
  <= credits_posted``.
* ``accounts_ledgerhold`` rows are events (placed, resized, released) carrying the hold's new
  ``amount`` at their table. A BEFORE INSERT trigger locks the wallet row, reads the hold's
  previous amount (its latest event at that table), refuses an event of the wrong kind (placed on
  an open hold, resized or released on none), refuses a ``prev_hash`` that is not the wallet's
  previous hold event's ``hash`` (64 zeros for the first) and moves ``held`` by the difference,
  storing ``delta`` and ``held_after``. The row is append-only (0004's function).
* The account guard (0004) now also refuses a change of ``held`` except from that trigger
  (``pg_trigger_depth() > 1`` and the transaction-local ``chan.hold_posting``).

Plain ``RunSQL`` (no pgtrigger/pghistory): a fresh ``migrate`` stays fast.
"""

import django.db.models.deletion
from django.db import migrations, models


GENESIS = "0" * 64

GUARD = r"""
CREATE OR REPLACE FUNCTION accounts_ledgeraccount_guard() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.balance <> 0 OR NEW.held <> 0 THEN
            RAISE EXCEPTION 'a ledger account opens at balance 0 and nothing held'
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

GUARD_0004 = r"""
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
"""

HOLDS = rf"""
CREATE OR REPLACE FUNCTION accounts_ledgerhold_post() RETURNS trigger AS $$
DECLARE
    acct_kind text;
    previous bigint;
    head text;
BEGIN
    SELECT kind INTO acct_kind FROM accounts_ledgeraccount WHERE id = NEW.account_id FOR UPDATE;
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
    IF NEW.hash IS NULL OR NEW.hash !~ '^[0-9a-f]{{64}}$' THEN
        RAISE EXCEPTION 'hold event has no hash' USING ERRCODE = 'check_violation';
    END IF;
    SELECT hash INTO head FROM accounts_ledgerhold
        WHERE account_id = NEW.account_id ORDER BY id DESC LIMIT 1;
    IF NEW.prev_hash IS DISTINCT FROM coalesce(head, '{GENESIS}') THEN
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
$$ LANGUAGE plpgsql;
CREATE TRIGGER accounts_ledgerhold_post
    BEFORE INSERT ON accounts_ledgerhold
    FOR EACH ROW EXECUTE FUNCTION accounts_ledgerhold_post();
CREATE TRIGGER accounts_ledgerhold_append_only
    BEFORE UPDATE OR DELETE ON accounts_ledgerhold
    FOR EACH ROW EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_ledgerhold_no_truncate
    BEFORE TRUNCATE ON accounts_ledgerhold
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_ledger_append_only();
"""

DROP_HOLDS = """
DROP TRIGGER IF EXISTS accounts_ledgerhold_no_truncate ON accounts_ledgerhold;
DROP TRIGGER IF EXISTS accounts_ledgerhold_append_only ON accounts_ledgerhold;
DROP TRIGGER IF EXISTS accounts_ledgerhold_post ON accounts_ledgerhold;
DROP FUNCTION IF EXISTS accounts_ledgerhold_post();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0013_ledger_entry_own_transaction"),
        ("games", "0021_handevent_hash_chain"),
    ]

    operations = [
        migrations.CreateModel(
            name="LedgerHold",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("placed", "Placed"),
                            ("resized", "Resized"),
                            ("released", "Released"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "amount",
                    models.BigIntegerField(help_text="The hold at this table after the event."),
                ),
                (
                    "delta",
                    models.BigIntegerField(
                        default=0,
                        editable=False,
                        help_text="Change of the hold (set by the database).",
                    ),
                ),
                (
                    "held_after",
                    models.BigIntegerField(
                        default=0,
                        editable=False,
                        help_text="The wallet's total held just after (database).",
                    ),
                ),
                ("reason", models.CharField(blank=True, max_length=64)),
                (
                    "prev_hash",
                    models.CharField(help_text="The wallet's previous hold event.", max_length=64),
                ),
                ("hash", models.CharField(max_length=64)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["id"],
            },
        ),
        migrations.AddField(
            model_name="ledgeraccount",
            name="held",
            field=models.BigIntegerField(
                default=0,
                editable=False,
                help_text="Quan held for the seats the player takes (Σ of its open holds, kept by the database from the hold events); available = balance − held.",
            ),
        ),
        migrations.AddConstraint(
            model_name="ledgeraccount",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("held__gte", 0),
                    models.Q(
                        ("held", 0),
                        models.Q(("balance__gte", models.F("held")), ("kind", "wallet")),
                        _connector="OR",
                    ),
                ),
                name="accounts_ledgeraccount_held_within_balance",
            ),
        ),
        migrations.AddField(
            model_name="ledgerhold",
            name="account",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="holds",
                to="accounts.ledgeraccount",
            ),
        ),
        migrations.AddField(
            model_name="ledgerhold",
            name="hand",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="holds",
                to="games.hand",
            ),
        ),
        migrations.AddField(
            model_name="ledgerhold",
            name="table",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="holds", to="games.table"
            ),
        ),
        migrations.AddIndex(
            model_name="ledgerhold",
            index=models.Index(fields=["account", "table", "-id"], name="accounts_hold_acct_table"),
        ),
        migrations.AddIndex(
            model_name="ledgerhold",
            index=models.Index(fields=["account", "-id"], name="accounts_hold_acct"),
        ),
        migrations.AddConstraint(
            model_name="ledgerhold",
            constraint=models.CheckConstraint(
                condition=models.Q(("amount__gte", 0)),
                name="accounts_ledgerhold_amount_non_negative",
            ),
        ),
        migrations.AddConstraint(
            model_name="ledgerhold",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("kind__in", ["placed", "resized", "released"]),
                    models.Q(
                        models.Q(("kind", "released"), _negated=True),
                        ("amount", 0),
                        _connector="OR",
                    ),
                    models.Q(
                        models.Q(("kind", "placed"), _negated=True),
                        ("amount__gt", 0),
                        _connector="OR",
                    ),
                ),
                name="accounts_ledgerhold_kind_amount",
            ),
        ),
        migrations.RunSQL(GUARD + HOLDS, reverse_sql=DROP_HOLDS + GUARD_0004),
    ]
