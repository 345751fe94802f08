"""The transparency log's guards and feeds.

* Its leaves, nodes, keys and signed heads are append-only: UPDATE and DELETE are refused by a
  row trigger, TRUNCATE by a statement trigger unless ``chan.allow_log_truncate`` is on (the
  test databases only, as games 0004).
* What it logs is queued in the transaction that makes it, by triggers: every ledger
  transaction as it is inserted (its id and chain hash), and a hand's head as its ``settled`` or
  ``voided`` record is appended (the hand, the record's seq and hash). A trigger's ``WHEN``
  skips every other event of the hand log without calling a function, so a move pays nothing.
  The Celery beat's appender (``transparency.services.log_catch_up``) empties the queue in order.
* What was booked and settled before this migration is queued by it, in id order.
"""

from django.db import migrations

LOG_TABLES = (
    "transparency_logleaf",
    "transparency_lognode",
    "transparency_logkey",
    "transparency_treehead",
)

GUARD = r"""
CREATE OR REPLACE FUNCTION public.transparency_append_only() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'TRUNCATE'
       AND current_setting('chan.allow_log_truncate', true) IS NOT DISTINCT FROM 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION '% is append-only (% refused)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$;
"""

GUARD_TABLE = """
CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON public.{table}
    FOR EACH ROW EXECUTE FUNCTION public.transparency_append_only();
CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON public.{table}
    FOR EACH STATEMENT EXECUTE FUNCTION public.transparency_append_only();
"""

QUEUE = r"""
CREATE OR REPLACE FUNCTION public.transparency_queue_ledger() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO public.transparency_pendingleaf (kind, ref_id, seq, hash, created_at)
    VALUES ('ledger', NEW.id, NULL, NEW.hash, pg_catalog.now());
    RETURN NULL;
END;
$$;
CREATE OR REPLACE FUNCTION public.transparency_queue_hand() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO public.transparency_pendingleaf (kind, ref_id, seq, hash, created_at)
    VALUES ('hand', NEW.hand_id, NEW.seq, NEW.hash, pg_catalog.now());
    RETURN NULL;
END;
$$;
CREATE TRIGGER transparency_queue AFTER INSERT ON public.accounts_ledgertransaction
    FOR EACH ROW EXECUTE FUNCTION public.transparency_queue_ledger();
CREATE TRIGGER transparency_queue AFTER INSERT ON public.games_handevent
    FOR EACH ROW WHEN (NEW.type IN ('settled', 'voided'))
    EXECUTE FUNCTION public.transparency_queue_hand();

INSERT INTO public.transparency_pendingleaf (kind, ref_id, seq, hash, created_at)
SELECT kind, ref_id, seq, hash, pg_catalog.now() FROM (
    SELECT 'ledger' AS kind, id AS ref_id, NULL::integer AS seq, hash, created_at, id AS ord
    FROM public.accounts_ledgertransaction
    UNION ALL
    SELECT 'hand', hand_id, seq, hash, created_at, id
    FROM public.games_handevent WHERE type IN ('settled', 'voided')
) AS made ORDER BY created_at, kind, ord;
"""

DROP = """
DROP TRIGGER IF EXISTS transparency_queue ON public.games_handevent;
DROP TRIGGER IF EXISTS transparency_queue ON public.accounts_ledgertransaction;
DROP FUNCTION IF EXISTS public.transparency_queue_hand();
DROP FUNCTION IF EXISTS public.transparency_queue_ledger();
"""


def forwards(apps, schema_editor):
    schema_editor.execute(GUARD, params=None)
    for table in LOG_TABLES:
        schema_editor.execute(GUARD_TABLE.format(table=table), params=None)
    schema_editor.execute(QUEUE, params=None)


def backwards(apps, schema_editor):
    schema_editor.execute(DROP, params=None)
    for table in LOG_TABLES:
        schema_editor.execute(
            f"DROP TRIGGER IF EXISTS {table}_append_only ON public.{table};"
            f" DROP TRIGGER IF EXISTS {table}_no_truncate ON public.{table};",
            params=None,
        )
    schema_editor.execute("DROP FUNCTION IF EXISTS public.transparency_append_only()", params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("transparency", "0001_log"),
        ("accounts", "0023_ledger_locks_no_key"),
        ("games", "0039_hand_lock_as_kept"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
