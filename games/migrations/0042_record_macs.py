"""Each hand event carries a MAC under the record key (``CHAN_RECORD_KEY``,
games.rules.record_mac), written by the insert that appends it: ``mac`` and ``mac_key``, empty on
the events appended before keys existed. ``games_handevent`` is partitioned (games 0028): a column
added to it is added to every attached partition; the months already archived (detached into
``chan_archive``) get the columns too, so a hand's archived log reads as a live one."""

from django.db import migrations, models

ARCHIVED = r"""
DO $do$
DECLARE
    t regclass;
BEGIN
    FOR t IN
        SELECT c.oid::regclass FROM pg_class c
        WHERE c.relnamespace = to_regnamespace('chan_archive') AND c.relkind = 'r'
          AND c.relname LIKE 'games\_handevent\_y%'
    LOOP
        EXECUTE format('ALTER TABLE %s ADD COLUMN IF NOT EXISTS mac varchar(64) NOT NULL'
                       ' DEFAULT '''', ADD COLUMN IF NOT EXISTS mac_key varchar(32) NOT NULL'
                       ' DEFAULT ''''', t);
    END LOOP;
END;
$do$;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0041_record_guards"),
    ]

    operations = [
        migrations.AddField(
            model_name="handevent",
            name="mac",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                help_text="HMAC-SHA256 (hex) of its hash under the record key "
                "(games.rules.record_mac); empty on events appended before keys existed.",
                max_length=64,
            ),
        ),
        migrations.AddField(
            model_name="handevent",
            name="mac_key",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                help_text="The id of the record key its MAC is under.",
                max_length=32,
            ),
        ),
        migrations.RunSQL(ARCHIVED, migrations.RunSQL.noop),
    ]
