"""The database itself refuses UPDATE and DELETE on games_handevent (append-only)."""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION games_handevent_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'games_handevent is append-only (% refused)', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS games_handevent_append_only ON games_handevent;
CREATE TRIGGER games_handevent_append_only
    BEFORE UPDATE OR DELETE ON games_handevent
    FOR EACH ROW EXECUTE FUNCTION games_handevent_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS games_handevent_append_only ON games_handevent;
DROP FUNCTION IF EXISTS games_handevent_append_only();
"""


def forwards(apps, schema_editor):
    schema_editor.execute(CREATE, params=None)


def backwards(apps, schema_editor):
    schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("games", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards)]
