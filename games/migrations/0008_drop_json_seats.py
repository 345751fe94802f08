"""Tables belong to rooms; hands keep their room and stake; the JSON seats and prefs, the pickled
state cache and Seat.leaving (HandSeat.left_at replaces it) are gone."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("games", "0007_rooms_hand_seats")]

    operations = [
        migrations.AlterField(
            model_name="table",
            name="room",
            field=models.ForeignKey(default="nen-dat", on_delete=django.db.models.deletion.PROTECT, related_name="tables", to="games.room", to_field="slug"),
        ),
        migrations.RemoveConstraint(model_name="hand", name="games_hand_cache_not_ahead"),
        migrations.RemoveConstraint(model_name="hand", name="games_hand_seats_per_seat"),
        migrations.RemoveConstraint(model_name="hand", name="games_hand_prefs_per_seat"),
        migrations.RemoveConstraint(model_name="seat", name="games_seat_leaving_not_ready"),
        migrations.RemoveField(model_name="hand", name="seats"),
        migrations.RemoveField(model_name="hand", name="prefs"),
        migrations.RemoveField(model_name="hand", name="state_blob"),
        migrations.RemoveField(model_name="hand", name="state_seq"),
        migrations.RemoveField(model_name="seat", name="leaving"),
        migrations.RenameField(model_name="hand", old_name="room_new", new_name="room"),
        migrations.AlterField(
            model_name="hand",
            name="room",
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="hands", to="games.room", to_field="slug"),
        ),
        migrations.AlterField(
            model_name="hand",
            name="stake",
            field=models.PositiveIntegerField(help_text="Quan per point, frozen at the deal."),
        ),
        migrations.AddConstraint(
            model_name="hand",
            constraint=models.CheckConstraint(condition=models.Q(("stake__gt", 0)), name="games_hand_stake_positive"),
        ),
    ]
