"""Each hand keeps its room's fee schedule and xướng sai rule as they were at the deal: a room
edited mid-hand no longer changes what its playing hands settle, and an ended hand's export
verifies against the terms it was played under. Hands dealt before this migration get their
room's terms as they are now, the best there is."""

from django.db import migrations, models


def copy_room_terms(apps, schema_editor):
    Hand = apps.get_model("games", "Hand")
    Room = apps.get_model("games", "Room")
    for room in Room.objects.all():
        Hand.objects.filter(room_id=room.slug).update(
            fees=room.fees, xuong_sai_settled=room.xuong_sai_settled
        )


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0017_hand_seats_version"),
    ]

    operations = [
        migrations.AddField(
            model_name="hand",
            name="fees",
            field=models.JSONField(null=True),
        ),
        migrations.AddField(
            model_name="hand",
            name="xuong_sai_settled",
            field=models.BooleanField(null=True),
        ),
        migrations.RunPython(copy_room_terms, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="hand",
            name="fees",
            field=models.JSONField(
                help_text="The room's fee schedule at the deal: what this hand's settlement charges."
            ),
        ),
        migrations.AlterField(
            model_name="hand",
            name="xuong_sai_settled",
            field=models.BooleanField(
                help_text="The room's xướng sai rule at the deal: whether this hand settles one."
            ),
        ),
    ]
