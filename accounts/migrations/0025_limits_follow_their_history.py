"""A limit is what its history says, in PostgreSQL (RULES.md §11: tightening at once, loosening
24 hours later): nobody — staff, a script, the application's own role with a plain UPDATE —
raises or removes a limit behind its history.

* ``accounts_playerlimitchange`` (append-only since 0015) also refuses a change that does not
  start from the value in force (its ``old_value``, a pending change whose time has come
  folded in) and a looser one (a higher value, or none) effective less than 24 hours after it
  is made.
* ``accounts_playerlimit`` refuses DELETE and TRUNCATE, and any INSERT or UPDATE whose value and
  pending change are not what its latest change made them: a change at once sets ``value``; a
  delayed one keeps ``old_value`` in force and sets ``pending_value`` at ``effective_at``. The
  service appends the change, then writes the row.

``manage.py limits_check`` replays each limit's history and reports a row that differs.
Every function has a fixed ``search_path`` and qualified names.
"""

from django.db import migrations

FORWARD = """
CREATE OR REPLACE FUNCTION public.accounts_playerlimitchange_guard() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    cur record;
    in_force bigint;
BEGIN
    IF NEW.kind IN ('cool_off', 'self_exclusion') THEN
        RETURN NEW;  -- a break's own row (accounts_playerexclusion) is the append-only one
    END IF;
    SELECT l.value, l.pending_value, l.pending_at INTO cur FROM public.accounts_playerlimit l
        WHERE l.user_id = NEW.user_id AND l.kind = NEW.kind;
    IF FOUND THEN
        in_force := cur.value;
        IF cur.pending_at IS NOT NULL AND cur.pending_at <= NEW.created_at THEN
            in_force := cur.pending_value;
        END IF;
    END IF;
    IF NEW.old_value IS DISTINCT FROM in_force THEN
        RAISE EXCEPTION 'a change of % for user % starts from its value in force (%), not %',
            NEW.kind, NEW.user_id, in_force, NEW.old_value
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF ((NEW.new_value IS NULL AND in_force IS NOT NULL) OR NEW.new_value > in_force)
       AND NEW.effective_at < NEW.created_at + interval '24 hours' THEN
        RAISE EXCEPTION 'loosening % for user % takes effect 24 hours after it is asked',
            NEW.kind, NEW.user_id USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER accounts_playerlimitchange_guard
    BEFORE INSERT ON public.accounts_playerlimitchange
    FOR EACH ROW EXECUTE FUNCTION public.accounts_playerlimitchange_guard();

CREATE OR REPLACE FUNCTION public.accounts_playerlimit_follows_history() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    last record;
    want_value bigint;
    want_pending bigint;
    want_at timestamptz;
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'accounts_playerlimit keeps its rows (DELETE refused)'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP = 'UPDATE' AND (NEW.id <> OLD.id OR NEW.user_id <> OLD.user_id
                             OR NEW.kind <> OLD.kind) THEN
        RAISE EXCEPTION 'limit % cannot change its player or kind', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    SELECT c.old_value, c.new_value, c.effective_at, c.created_at INTO last
        FROM public.accounts_playerlimitchange c
        WHERE c.user_id = NEW.user_id AND c.kind = NEW.kind ORDER BY c.id DESC LIMIT 1;
    IF NOT FOUND THEN
        want_value := NULL;
    ELSIF last.effective_at <= last.created_at THEN
        want_value := last.new_value;
    ELSE
        want_value := last.old_value;
        want_pending := last.new_value;
        want_at := last.effective_at;
    END IF;
    IF NEW.value IS DISTINCT FROM want_value OR NEW.pending_value IS DISTINCT FROM want_pending
       OR NEW.pending_at IS DISTINCT FROM want_at THEN
        RAISE EXCEPTION 'limit % of user % is what its latest change made it (% in force, % pending at %): append a change to accounts_playerlimitchange first',
            NEW.kind, NEW.user_id, want_value, want_pending, want_at
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER accounts_playerlimit_follows_history
    BEFORE INSERT OR UPDATE OR DELETE ON public.accounts_playerlimit
    FOR EACH ROW EXECUTE FUNCTION public.accounts_playerlimit_follows_history();
CREATE TRIGGER accounts_playerlimit_no_truncate
    BEFORE TRUNCATE ON public.accounts_playerlimit
    FOR EACH STATEMENT EXECUTE FUNCTION public.accounts_ledger_append_only();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS accounts_playerlimit_no_truncate ON public.accounts_playerlimit;
DROP TRIGGER IF EXISTS accounts_playerlimit_follows_history ON public.accounts_playerlimit;
DROP FUNCTION IF EXISTS public.accounts_playerlimit_follows_history();
DROP TRIGGER IF EXISTS accounts_playerlimitchange_guard ON public.accounts_playerlimitchange;
DROP FUNCTION IF EXISTS public.accounts_playerlimitchange_guard();
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FORWARD, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BACKWARD, params=None)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0024_loss_reservations")]

    operations = [migrations.RunPython(forwards, backwards)]
