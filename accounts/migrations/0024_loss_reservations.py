"""What each deal reserves of a player's loss limits for its seat (RULES.md §11, "limits at
several tables"): a row per (hand, player with a loss limit), counted against the player's
budget until the hand is settled. Append-only in PostgreSQL, as the limits' history is
(migration 0015): UPDATE and DELETE refused by a row trigger, TRUNCATE by a statement trigger.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


APPEND_ONLY = """
CREATE TRIGGER accounts_lossreservation_append_only
    BEFORE UPDATE OR DELETE ON accounts_lossreservation
    FOR EACH ROW EXECUTE FUNCTION accounts_ledger_append_only();
CREATE TRIGGER accounts_lossreservation_no_truncate
    BEFORE TRUNCATE ON accounts_lossreservation
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_ledger_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS accounts_lossreservation_append_only ON accounts_lossreservation;
DROP TRIGGER IF EXISTS accounts_lossreservation_no_truncate ON accounts_lossreservation;
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(APPEND_ONLY, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0023_ledger_locks_no_key"),
        ("games", "0039_hand_lock_as_kept"),
    ]

    operations = [
        migrations.CreateModel(
            name="LossReservation",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("amount", models.PositiveBigIntegerField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "hand",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="games.hand",
                    ),
                ),
                (
                    "table",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="games.table",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="loss_reservations",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-id"],
                "indexes": [models.Index(fields=["user", "-id"], name="accounts_lossreserve_user")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("hand", "user"), name="accounts_lossreserve_one_seat"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("amount__gt", 0)),
                        name="accounts_lossreservation_amount_positive",
                    ),
                ],
            },
        ),
        migrations.RunPython(forwards, backwards),
    ]
