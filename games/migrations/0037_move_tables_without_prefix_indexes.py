"""The tables a move writes lose the indexes another index's leading column already gives
(docs/decisions/fixed-statements.md).

``games_feedentry.user_id`` (a move writes an entry for the player to act),
``games_idempotencyrecord.user_id`` (each move sent with a key writes its record) and
``games_hand.table_id`` (each deal, and each hand's end, which moves the row) each had an index
of their own, which Django makes for a foreign key, beside a unique index that begins with the
same column (``(user_id, seq)``, ``(user_id, key)``, ``(table_id, number)``): every read by
that column, and the foreign keys' checks when a player or a table is deleted, can use the
unique index. Each row written now writes one index entry fewer.

Only the indexes are dropped (``DROP INDEX``: a moment's exclusive lock on the table). Django's
own ``AlterField`` for ``db_index=False`` would drop and re-add each foreign key, validating every
row again, and on ``games_hand`` it would also drop ``games_hand_one_playing_per_table``, the
partial unique index on the same column: so the model's state changes here, and the database by
these statements alone.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

DROPPED = [
    ("games_feedentry", "user_id", "games_feedentry_user_id_042990e6"),
    ("games_idempotencyrecord", "user_id", "games_idempotencyrecord_user_id_4d445d0e"),
    ("games_hand", "table_id", "games_hand_table_id_e4ec9a60"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0036_handevent_since"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="feedentry",
                    name="user",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="feed_entries",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="hand",
                    name="table",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="hands",
                        to="games.table",
                    ),
                ),
                migrations.AlterField(
                    model_name="idempotencyrecord",
                    name="user",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="idempotency_records",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{index}"',
                    f'CREATE INDEX IF NOT EXISTS "{index}" ON "{table}" ("{column}")',
                )
                for table, column, index in DROPPED
            ],
        )
    ]
