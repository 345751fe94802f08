"""The house and issuance accounts become families of sub-accounts, the ledger chain one chain per
shard (a ledger that keeps up).

* ``LedgerAccount.parent`` and ``shard``: a house or issuance child names its parent and its shard
  (``CHAN_HOUSE_SHARDS`` of them, created on first use by accounts/ledger.py). The existing house
  and issuance rows become the parents, with the balances they have (nothing moves, so every
  total reconciles as before: a family's balance is the sum of its rows). The guard trigger
  (0004, 0014) now also refuses a change of parent or shard, and a child whose parent is not a parent
  of the same kind.
* ``LedgerTransaction.chain``: the hash chain a transaction extends. Every transaction booked so
  far was on the one global chain, which becomes chain 0 (the column's default): no hash changes.
  The chain trigger (0012) takes the head of the transaction's own chain (the advisory lock
  ``LEDGER_HEAD_LOCK + chain``) and wants ``prev_hash`` to be that chain's last hash.
* The deferred balance check runs once per transaction at commit, no longer once per entry as
  well: since 0013 an entry joins only a transaction inserted by its own database transaction,
  whose check (``accounts_ledgertransaction_balanced``) sums all its entries at that commit, so
  the per-entry trigger checked the same sum five or six times over.
* ``chan_ledger_lock(account ids, chain, key)``: the first round trip of ``ledger_post`` — the
  accounts locked in ascending id, then the chain's head, then the key looked up under those
  locks — returning the locked accounts' kinds, balances and holds, the head's hash and any transaction
  already booked under the key.
"""

import django.db.models.deletion
from django.db import migrations, models

GENESIS = "0" * 64
LEDGER_HEAD_LOCK = 0x4C45444745525F48

CREATE = rf"""
CREATE OR REPLACE FUNCTION accounts_ledgertransaction_chain() RETURNS trigger AS $$
DECLARE
    head text;
BEGIN
    PERFORM pg_advisory_xact_lock({LEDGER_HEAD_LOCK} + NEW.chain);
    IF NEW.hash IS NULL OR NEW.hash !~ '^[0-9a-f]{{64}}$' THEN
        RAISE EXCEPTION 'ledger transaction % has no hash', NEW.id
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT hash INTO head FROM accounts_ledgertransaction
        WHERE chain = NEW.chain ORDER BY id DESC LIMIT 1;
    IF NEW.prev_hash IS DISTINCT FROM coalesce(head, '{GENESIS}') THEN
        RAISE EXCEPTION 'ledger transaction %: prev_hash is not the ledger head (chain %)',
            NEW.id, NEW.chain USING ERRCODE = 'integrity_constraint_violation';
    END IF;
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

DROP TRIGGER IF EXISTS accounts_ledgerentry_balanced ON accounts_ledgerentry;

CREATE OR REPLACE FUNCTION chan_ledger_lock(account_ids bigint[], chain_no integer, tx_key text)
RETURNS TABLE(
    o_ids bigint[], o_kinds text[], o_balances bigint[], o_held bigint[], o_head text,
    o_existing bigint
)
AS $$
DECLARE
    r record;
BEGIN
    o_ids := '{{}}'; o_kinds := '{{}}'; o_balances := '{{}}'; o_held := '{{}}';
    FOR r IN SELECT a.id, a.kind, a.balance, a.held FROM accounts_ledgeraccount a
             WHERE a.id = ANY(account_ids) ORDER BY a.id FOR UPDATE LOOP
        o_ids := o_ids || r.id;
        o_kinds := o_kinds || r.kind::text;
        o_balances := o_balances || r.balance;
        o_held := o_held || r.held;
    END LOOP;
    PERFORM pg_advisory_xact_lock({LEDGER_HEAD_LOCK} + chain_no);
    SELECT t.hash INTO o_head FROM accounts_ledgertransaction t
        WHERE t.chain = chain_no ORDER BY t.id DESC LIMIT 1;
    o_head := coalesce(o_head, '{GENESIS}');
    SELECT t.id INTO o_existing FROM accounts_ledgertransaction t
        WHERE t.idempotency_key = tx_key;
    RETURN NEXT;
END;
$$ LANGUAGE plpgsql VOLATILE;
"""

# 0012's chain trigger and 0014's guard, as they were.
DROP = rf"""
DROP FUNCTION IF EXISTS chan_ledger_lock(bigint[], integer, text);
DROP TRIGGER IF EXISTS accounts_ledgerentry_balanced ON accounts_ledgerentry;
CREATE CONSTRAINT TRIGGER accounts_ledgerentry_balanced
    AFTER INSERT ON accounts_ledgerentry
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION accounts_ledger_balanced();
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


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0016_apitoken_scopes"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="ledgeraccount",
            name="accounts_ledgeraccount_one_house_one_issuance",
        ),
        migrations.AddField(
            model_name="ledgeraccount",
            name="parent",
            field=models.ForeignKey(
                blank=True,
                help_text="The house or issuance account this one is a sub-account (shard) of.",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="children",
                to="accounts.ledgeraccount",
            ),
        ),
        migrations.AddField(
            model_name="ledgeraccount",
            name="shard",
            field=models.PositiveSmallIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="ledgertransaction",
            name="chain",
            field=models.PositiveSmallIntegerField(
                db_default=0,
                default=0,
                help_text="The hash chain (one per shard) this transaction extends: prev_hash is the hash of the chain's transaction before it.",
            ),
        ),
        migrations.AddIndex(
            model_name="ledgertransaction",
            index=models.Index(fields=["chain", "-id"], name="accounts_ledgertx_chain"),
        ),
        migrations.AddConstraint(
            model_name="ledgeraccount",
            constraint=models.UniqueConstraint(
                condition=models.Q(("kind__in", ["house", "issuance"]), ("parent__isnull", True)),
                fields=("kind",),
                name="accounts_ledgeraccount_one_house_one_issuance",
            ),
        ),
        migrations.AddConstraint(
            model_name="ledgeraccount",
            constraint=models.UniqueConstraint(
                condition=models.Q(("parent__isnull", False)),
                fields=("parent", "shard"),
                name="accounts_ledgeraccount_one_child_per_shard",
            ),
        ),
        migrations.AddConstraint(
            model_name="ledgeraccount",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("parent__isnull", True), ("shard__isnull", True)),
                    models.Q(
                        ("kind__in", ["house", "issuance"]),
                        ("parent__isnull", False),
                        ("shard__isnull", False),
                    ),
                    _connector="OR",
                ),
                name="accounts_ledgeraccount_shard_has_parent",
            ),
        ),
        migrations.RunSQL(CREATE, DROP),
    ]
