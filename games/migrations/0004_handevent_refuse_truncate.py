"""The database also refuses TRUNCATE of games_handevent (a statement-level trigger;
row-level triggers do not fire on TRUNCATE).

The only way past it is deliberate: a session that sets ``chan.allow_log_truncate = 'on'``. The
test suite sets it on its own test database, whose tables Django's flush empties with TRUNCATE
after each transactional test; production databases never have it.
"""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION games_handevent_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE'
       AND current_setting('chan.allow_log_truncate', true) IS NOT DISTINCT FROM 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'games_handevent is append-only (% refused)', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS games_handevent_no_truncate ON games_handevent;
CREATE TRIGGER games_handevent_no_truncate
    BEFORE TRUNCATE ON games_handevent
    FOR EACH STATEMENT EXECUTE FUNCTION games_handevent_append_only();
"""

# Back to 0002's function (UPDATE and DELETE refused, TRUNCATE not watched).
DROP = """
DROP TRIGGER IF EXISTS games_handevent_no_truncate ON games_handevent;
CREATE OR REPLACE FUNCTION games_handevent_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'games_handevent is append-only (% refused)', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
"""


def forwards(apps, schema_editor):
    schema_editor.execute(CREATE, params=None)


def backwards(apps, schema_editor):
    schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("games", "0003_more_check_constraints")]

    operations = [migrations.RunPython(forwards, backwards)]
