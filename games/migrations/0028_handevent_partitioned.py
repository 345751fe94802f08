"""The hand log partitioned by month (docs/decisions/hand-log-partitioned.md).

``games_handevent`` becomes a table partitioned by RANGE on a new column, ``hand_created_at``:
the ``created_at`` of the event's hand, so all of a hand's events lie in one monthly partition
(``games_handevent_y2026m12``; a DEFAULT partition takes what no month holds). PostgreSQL wants
the partition key in every unique constraint, so the primary key is ``(id, hand_created_at)``
and the uniqueness of ``(hand, seq)`` is ``(hand_id, seq, hand_created_at)`` — the same thing,
since the key is a function of the hand: the chain trigger refuses a deal whose key is not its
hand's ``created_at`` and a later event whose key is not its predecessor's, and a new trigger
refuses any change to a hand's ``created_at``.

The old table's rows are copied as they are (ids, hashes: the hash chain does not cover the
new column), then the old table is dropped. Every guard is kept: the check constraints (copied
by ``LIKE … INCLUDING CONSTRAINTS``), the foreign key to the hand, the append-only trigger and
the chain trigger (row triggers on the parent: PostgreSQL clones them onto each partition), and
the TRUNCATE guard (a statement trigger, which PostgreSQL does not clone: it is put on the parent
and, by ``chan_month_partition_create``, on each partition). Trigger function names are kept;
only ``games_handevent_chain`` changes body (it also checks the key, and finds the predecessor
in the hand's partition alone).

``chan_month_partition_create(parent, month)`` (SECURITY DEFINER: the application's role runs
it from the monthly Celery beat task, ``manage.py partitions``) creates one month's partition
of a partitioned table if it is missing, with the parent's TRUNCATE guards;
``chan_month_partition_archive(parent, month)`` (the owner's: ``manage.py partitions
--archive-before``) detaches one into the ``chan_archive`` schema, read-only, where
``audit_hands`` still reads it (``games.archive``).
"""

from importlib import import_module

from django.db import migrations, models

AHEAD_MONTHS = 3

PARTITION_CREATE = r"""
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
    PERFORM chan_partition_truncate_guards(parent, name);
    RETURN true;
END;
$$;

-- The parent's statement-level TRUNCATE triggers, on one of its partitions (PostgreSQL clones
-- row triggers onto partitions, not statement triggers, and a partition can be truncated alone).
CREATE OR REPLACE FUNCTION chan_partition_truncate_guards(parent text, partition text)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    guard record;
BEGIN
    FOR guard IN
        SELECT tgname, tgfoid::regproc AS fn, (tgtype & 2) <> 0 AS before FROM pg_trigger
        WHERE tgrelid = parent::regclass AND NOT tgisinternal AND (tgtype & 32) <> 0
    LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = partition::regclass
                       AND tgname = guard.tgname) THEN
            EXECUTE format('CREATE TRIGGER %I %s TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION %s()',
                guard.tgname, CASE WHEN guard.before THEN 'BEFORE' ELSE 'AFTER' END,
                partition::regclass, guard.fn);
        END IF;
    END LOOP;
END;
$$;
"""

# One month's partition detached into the archive schema, read-only: the parent's row guards
# against UPDATE and DELETE (dropped from a partition with its detachment) are put back on it
# for INSERT too, and whoever may read the parent may read it. The owner's alone (not PUBLIC's).
PARTITION_ARCHIVE = r"""
CREATE SCHEMA IF NOT EXISTS chan_archive;
CREATE OR REPLACE FUNCTION chan_month_partition_archive(parent text, month date)
RETURNS boolean
LANGUAGE plpgsql SET search_path = public, pg_temp SET lock_timeout = '10s'
AS $$
DECLARE
    name text := parent || to_char(date_trunc('month', month), '"_y"YYYY"m"MM');
    guard record;
    reader record;
BEGIN
    IF to_regclass(name) IS NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('ALTER TABLE %I DETACH PARTITION %I', parent, name);
    EXECUTE format('ALTER TABLE %I SET SCHEMA chan_archive', name);
    FOR guard IN
        SELECT DISTINCT tgname, tgfoid::regproc AS fn FROM pg_trigger
        WHERE tgrelid = parent::regclass AND NOT tgisinternal AND (tgtype & 1) <> 0
          AND (tgtype & 24) <> 0
    LOOP
        EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE OR DELETE ON chan_archive.%I'
                       ' FOR EACH ROW EXECUTE FUNCTION %s()', guard.tgname, name, guard.fn);
    END LOOP;
    EXECUTE format('REVOKE ALL ON chan_archive.%I FROM PUBLIC', name);
    FOR reader IN
        SELECT DISTINCT a.grantee::regrole AS role
        FROM pg_class c, aclexplode(c.relacl) a
        WHERE c.oid = parent::regclass AND a.privilege_type = 'SELECT' AND a.grantee <> 0
          AND a.grantee <> c.relowner
    LOOP
        EXECUTE format('REVOKE ALL ON chan_archive.%I FROM %s', name, reader.role);
        EXECUTE format('GRANT USAGE ON SCHEMA chan_archive TO %s', reader.role);
        EXECUTE format('GRANT SELECT ON chan_archive.%I TO %s', name, reader.role);
    END LOOP;
    RETURN true;
END;
$$;
REVOKE ALL ON FUNCTION chan_month_partition_archive(text, date) FROM PUBLIC;
"""

CHAIN = r"""
CREATE OR REPLACE FUNCTION games_handevent_chain() RETURNS trigger AS $$
DECLARE
    wanted text;
    dealt timestamptz;
BEGIN
    IF NEW.hash IS NULL OR NEW.hash !~ '^[0-9a-f]{64}$' THEN
        RAISE EXCEPTION 'hand event %/% has no hash', NEW.hand_id, NEW.seq
            USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.seq = 0 THEN
        SELECT seed_hash, created_at INTO wanted, dealt FROM games_hand WHERE id = NEW.hand_id;
        IF dealt IS DISTINCT FROM NEW.hand_created_at THEN
            RAISE EXCEPTION 'hand event %/%: hand_created_at is not its hand''s created_at',
                NEW.hand_id, NEW.seq USING ERRCODE = 'integrity_constraint_violation';
        END IF;
    ELSE
        -- the predecessor, in the hand's partition: a later event carries its deal's key
        SELECT hash INTO wanted FROM games_handevent
            WHERE hand_id = NEW.hand_id AND seq = NEW.seq - 1
              AND hand_created_at = NEW.hand_created_at;
    END IF;
    IF wanted IS NULL OR NEW.prev_hash IS DISTINCT FROM wanted THEN
        RAISE EXCEPTION 'hand event %/%: prev_hash is not the previous event''s hash (or its hand_created_at not its predecessor''s)',
            NEW.hand_id, NEW.seq USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""

HAND_CREATED_AT_FIXED = """
CREATE OR REPLACE FUNCTION games_hand_created_at_fixed() RETURNS trigger AS $$
BEGIN
    IF NEW.created_at IS DISTINCT FROM OLD.created_at THEN
        RAISE EXCEPTION 'hand %: created_at never changes (its log''s partition key)', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER games_hand_created_at_fixed
    BEFORE UPDATE OF created_at ON games_hand
    FOR EACH ROW EXECUTE FUNCTION games_hand_created_at_fixed();
"""

# The old table set aside under another name (its indexes and sequence too, to free theirs).
SET_ASIDE = """
ALTER TABLE games_handevent RENAME TO games_handevent_unpartitioned;
ALTER INDEX games_handevent_pkey RENAME TO games_handevent_unpartitioned_pkey;
ALTER INDEX games_handevent_unique_seq RENAME TO games_handevent_unpartitioned_unique_seq;
ALTER SEQUENCE games_handevent_id_seq RENAME TO games_handevent_unpartitioned_id_seq;
"""

PARENT = """
CREATE TABLE games_handevent (
    LIKE games_handevent_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY,
    hand_created_at timestamptz NOT NULL
) PARTITION BY RANGE (hand_created_at);
CREATE TRIGGER games_handevent_no_truncate
    BEFORE TRUNCATE ON games_handevent
    FOR EACH STATEMENT EXECUTE FUNCTION games_handevent_append_only();
CREATE TABLE games_handevent_default PARTITION OF games_handevent DEFAULT;
SELECT chan_partition_truncate_guards('games_handevent', 'games_handevent_default');
"""

# The months from the oldest hand's to AHEAD_MONTHS after this one (UTC).
MONTHS = """
SELECT chan_month_partition_create('games_handevent', m::date)
FROM generate_series(
    date_trunc('month', coalesce((SELECT min(created_at) FROM games_hand), now()) AT TIME ZONE 'UTC'),
    date_trunc('month', now() AT TIME ZONE 'UTC') + %s * interval '1 month',
    interval '1 month') AS m;
"""

COPY = """
INSERT INTO games_handevent ({columns}, hand_created_at)
SELECT {prefixed}, h.created_at
FROM games_handevent_unpartitioned e JOIN games_hand h ON h.id = e.hand_id;
"""

FINISH = """
SELECT setval(pg_get_serial_sequence('games_handevent', 'id'),
              coalesce((SELECT max(id) FROM games_handevent), 0) + 1, false);
DROP TABLE games_handevent_unpartitioned;
ALTER TABLE games_handevent ADD CONSTRAINT games_handevent_pkey PRIMARY KEY (id, hand_created_at);
ALTER TABLE games_handevent ADD CONSTRAINT games_handevent_unique_seq
    UNIQUE (hand_id, seq, hand_created_at);
ALTER TABLE games_handevent ADD CONSTRAINT {fk}
    FOREIGN KEY (hand_id) REFERENCES games_hand (id) DEFERRABLE INITIALLY DEFERRED;
CREATE TRIGGER games_handevent_append_only
    BEFORE UPDATE OR DELETE ON games_handevent
    FOR EACH ROW EXECUTE FUNCTION games_handevent_append_only();
CREATE TRIGGER games_handevent_chain
    BEFORE INSERT ON games_handevent
    FOR EACH ROW EXECUTE FUNCTION games_handevent_chain();
"""


def forwards(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'games_handevent'::regclass"
            " AND contype = 'f'"
        )
        (fk,) = cursor.fetchone()
        cursor.execute(
            "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute"
            " WHERE attrelid = 'games_handevent'::regclass AND attnum > 0 AND NOT attisdropped"
        )
        (columns,) = cursor.fetchone()
        prefixed = ", ".join(f"e.{c.strip()}" for c in columns.split(","))
        cursor.execute(PARTITION_CREATE + PARTITION_ARCHIVE + CHAIN + SET_ASIDE + PARENT)
        cursor.execute(MONTHS, [AHEAD_MONTHS])
        cursor.execute(COPY.format(columns=columns, prefixed=prefixed))
        cursor.execute(FINISH.format(fk=fk) + HAND_CREATED_AT_FIXED)


# Backwards: the rows copied into one plain table again (the archive, if any, is refused).
UNSET = """
ALTER TABLE games_handevent RENAME TO games_handevent_partitioned;
ALTER INDEX games_handevent_pkey RENAME TO games_handevent_partitioned_pkey;
ALTER INDEX games_handevent_unique_seq RENAME TO games_handevent_partitioned_unique_seq;
ALTER SEQUENCE games_handevent_id_seq RENAME TO games_handevent_partitioned_id_seq;
CREATE TABLE games_handevent (
    LIKE games_handevent_partitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY
);
ALTER TABLE games_handevent DROP COLUMN hand_created_at;
"""

UNFINISH = """
SELECT setval(pg_get_serial_sequence('games_handevent', 'id'),
              coalesce((SELECT max(id) FROM games_handevent), 0) + 1, false);
DROP TABLE games_handevent_partitioned;
ALTER TABLE games_handevent ADD CONSTRAINT games_handevent_pkey PRIMARY KEY (id);
ALTER TABLE games_handevent ADD CONSTRAINT games_handevent_unique_seq UNIQUE (hand_id, seq);
ALTER TABLE games_handevent ADD CONSTRAINT {fk}
    FOREIGN KEY (hand_id) REFERENCES games_hand (id) DEFERRABLE INITIALLY DEFERRED;
CREATE INDEX {fk_index} ON games_handevent (hand_id);
CREATE TRIGGER games_handevent_append_only
    BEFORE UPDATE OR DELETE ON games_handevent
    FOR EACH ROW EXECUTE FUNCTION games_handevent_append_only();
CREATE TRIGGER games_handevent_no_truncate
    BEFORE TRUNCATE ON games_handevent
    FOR EACH STATEMENT EXECUTE FUNCTION games_handevent_append_only();
DROP TRIGGER games_hand_created_at_fixed ON games_hand;
DROP FUNCTION games_hand_created_at_fixed();
DROP FUNCTION chan_month_partition_create(text, date);
DROP FUNCTION chan_month_partition_archive(text, date);
DROP FUNCTION chan_partition_truncate_guards(text, text);
"""


def backwards(apps, schema_editor):
    chain_0021 = import_module("games.migrations.0021_handevent_hash_chain").CHAIN
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'chan_archive'"
            " AND tablename LIKE 'games\\_handevent\\_%'"
        )
        if cursor.fetchone()[0]:
            raise RuntimeError("archived hand events in chan_archive: not folded back")
        cursor.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'games_handevent'::regclass"
            " AND contype = 'f'"
        )
        (fk,) = cursor.fetchone()
        cursor.execute(UNSET)
        cursor.execute(
            "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute"
            " WHERE attrelid = 'games_handevent'::regclass AND attnum > 0 AND NOT attisdropped"
        )
        (columns,) = cursor.fetchone()
        cursor.execute(
            f"INSERT INTO games_handevent ({columns})"
            f" SELECT {columns} FROM games_handevent_partitioned"
        )
        fk_index = schema_editor._create_index_name("games_handevent", ["hand_id"])
        cursor.execute(UNFINISH.format(fk=fk, fk_index=fk_index) + chain_0021)


class Migration(migrations.Migration):
    dependencies = [("games", "0027_tournaments")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forwards, backwards)],
            state_operations=[
                migrations.AddField(
                    model_name="handevent",
                    name="hand_created_at",
                    field=models.DateTimeField(
                        editable=False,
                        help_text="The hand's created_at: the log's partition key.",
                    ),
                    preserve_default=False,
                ),
                migrations.AlterField(
                    model_name="handevent",
                    name="hand",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=models.deletion.PROTECT,
                        related_name="events",
                        to="games.hand",
                    ),
                ),
                migrations.RemoveConstraint(
                    model_name="handevent", name="games_handevent_unique_seq"
                ),
                migrations.AddConstraint(
                    model_name="handevent",
                    constraint=models.UniqueConstraint(
                        fields=("hand", "seq", "hand_created_at"),
                        name="games_handevent_unique_seq",
                    ),
                ),
            ],
        ),
    ]
