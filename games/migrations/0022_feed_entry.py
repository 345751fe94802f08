"""The players' feeds: ``games_feedentry``, one append-only row per thing that
concerns a player, numbered per player. PostgreSQL refuses an UPDATE of a row (a DELETE passes:
a deleted account takes its feed with it). Plain SQL, no pgtrigger: a fresh migrate stays fast."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

GUARD = """
CREATE OR REPLACE FUNCTION games_feedentry_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'games_feedentry is append-only (UPDATE refused)'
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER games_feedentry_append_only
    BEFORE UPDATE ON games_feedentry
    FOR EACH ROW EXECUTE FUNCTION games_feedentry_append_only();
"""
UNGUARD = """
DROP TRIGGER IF EXISTS games_feedentry_append_only ON games_feedentry;
DROP FUNCTION IF EXISTS games_feedentry_append_only();
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(GUARD)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(UNGUARD)


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0021_handevent_hash_chain"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="FeedEntry",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("seq", models.PositiveBigIntegerField()),
                ("kind", models.CharField(help_text="games.live.kinds.FEED_KINDS", max_length=32)),
                (
                    "key",
                    models.CharField(
                        help_text="The fact it reports, once per player.", max_length=100
                    ),
                ),
                ("table_id", models.BigIntegerField(blank=True, null=True)),
                ("hand_id", models.BigIntegerField(blank=True, null=True)),
                ("data", models.JSONField(default=dict)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="feed_entries",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["user_id", "seq"],
                "constraints": [
                    models.UniqueConstraint(fields=("user", "seq"), name="games_feed_unique_seq"),
                    models.UniqueConstraint(fields=("user", "key"), name="games_feed_unique_key"),
                    models.CheckConstraint(
                        condition=models.Q(("seq__gte", 1)), name="games_feed_seq_positive"
                    ),
                ],
            },
        ),
        migrations.RunPython(forwards, backwards),
    ]
