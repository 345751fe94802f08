"""Each hand keeps its room's fee schedule and xướng sai rule as they were at the deal: a room
edited mid-hand no longer changes what its playing hands settle, and an ended hand's export
verifies against the terms it was played under.

Hands dealt before this migration get their room's terms as they are now, the best there is.
The columns stay nullable: a process still running the older code during a rolling deploy
deals hands without them (``Hand.room_terms`` then reads the room's). The backfill runs outside
one big transaction, 10,000 hands at a time, so that play on the other hands goes on."""

from django.db import migrations, models

BATCH = 10_000


def copy_room_terms(apps, schema_editor):
    Hand = apps.get_model("games", "Hand")
    bounds = Hand.objects.aggregate(low=models.Min("id"), high=models.Max("id"))
    if bounds["low"] is None:
        return
    with schema_editor.connection.cursor() as cursor:
        for start in range(bounds["low"], bounds["high"] + 1, BATCH):
            cursor.execute(
                "UPDATE games_hand h SET fees = r.fees, xuong_sai_settled = r.xuong_sai_settled"
                " FROM games_room r WHERE r.slug = h.room_id AND h.fees IS NULL"
                " AND h.id >= %s AND h.id < %s",
                [start, start + BATCH],
            )


class Migration(migrations.Migration):
    atomic = False  # the columns first (a moment's lock), then the backfill in batches

    dependencies = [
        ("games", "0017_hand_seats_version"),
    ]

    operations = [
        migrations.AddField(
            model_name="hand",
            name="fees",
            field=models.JSONField(
                null=True,
                help_text="The room's fee schedule at the deal: what this hand's settlement charges.",
            ),
        ),
        migrations.AddField(
            model_name="hand",
            name="xuong_sai_settled",
            field=models.BooleanField(
                null=True,
                help_text="The room's xướng sai rule at the deal: whether this hand settles one.",
            ),
        ),
        migrations.RunPython(copy_room_terms, migrations.RunPython.noop),
    ]
