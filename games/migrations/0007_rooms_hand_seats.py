"""Rooms as data (RULES.md §11), a hand's players as HandSeat rows, and its money terms frozen
on the hand: the new tables and columns, then the data (rooms seeded, tables moved into rooms,
the JSON seats of existing hands copied into rows). 0008 then drops what they replace."""

import django.db.models.deletion
import django.db.models.functions.text
import django.db.models.lookups
from django.conf import settings
from django.db import migrations, models

# slug, name, min balance, min level, min VIP points, badge, vip, fees, xướng sai settled
ROOMS = [
    ("nen-dat", "Nền đất", 0, 0, 0, False, False,
     {"declared": 5, "auto": 10}, False),
    ("chieu-coi", "Chiếu cói", 150_000, 0, 0, False, False,
     {"declared": 5, "auto": 5, "xuong_sai": {"2": 30, "3": 10, "4": 5}}, True),
    ("sap-gu-2", "Sập gụ 2", 20_000_000, 30, 50, False, False,
     {"declared": 5, "auto": 5, "xuong_sai": {"2": 30, "3": 10, "4": 5}}, True),
    ("sap-gu-vip", "Sập gụ VIP", 40_000_000, 50, 400, True, True,
     {"by_players": {"2": 4, "3": 3, "4": 2}}, True),
]


def forwards(apps, schema_editor):
    Room = apps.get_model("games", "Room")
    Table = apps.get_model("games", "Table")
    Hand = apps.get_model("games", "Hand")
    HandSeat = apps.get_model("games", "HandSeat")
    for position, (slug, name, balance, level, vip_points, badge, vip, fees, settled) in enumerate(
        ROOMS
    ):
        Room.objects.update_or_create(
            slug=slug,
            defaults=dict(
                name=name,
                position=position,
                min_balance=balance,
                min_level=level,
                min_vip_points=vip_points,
                needs_badge=badge,
                vip=vip,
                fees=fees,
                xuong_sai_settled=settled,
            ),
        )
    slugs = [r[0] for r in ROOMS]
    Table.objects.exclude(room__in=slugs).update(room="nen-dat")
    for hand in Hand.objects.select_related("table").iterator():
        hand.stake = hand.table.stake
        hand.room_new_id = hand.table.room
        hand.save(update_fields=["stake", "room_new"])
        for position, entry in enumerate(hand.seats):
            auto_u, auto_chiu = hand.prefs[position]
            HandSeat.objects.create(
                hand=hand,
                position=position,
                user_id=entry["user"],
                table_seat=entry["table_seat"],
                auto_u=bool(auto_u),
                auto_chiu=bool(auto_chiu),
                left_at=hand.ended_at or hand.last_event_at if entry.get("left") else None,
            )


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0006_hand_deadline_at"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Room",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("slug", models.SlugField(max_length=32, unique=True)),
                ("name", models.CharField(max_length=64)),
                ("position", models.PositiveSmallIntegerField(default=0, help_text="Order in the lobby.")),
                ("min_balance", models.PositiveBigIntegerField(default=0, help_text="Quan needed to enter.")),
                ("min_level", models.PositiveIntegerField(default=0)),
                ("min_vip_points", models.PositiveIntegerField(default=0)),
                ("needs_badge", models.BooleanField(default=False, help_text="A reputation badge is needed.")),
                ("vip", models.BooleanField(default=False)),
                ("fees", models.JSONField(default=dict)),
                ("xuong_sai_settled", models.BooleanField(default=True, help_text="False: a xướng sai is neither paid nor penalised here.")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "ordering": ["position", "slug"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            django.db.models.lookups.GreaterThanOrEqual(
                                django.db.models.functions.text.Length("slug"), 1
                            ),
                            django.db.models.lookups.Exact(
                                models.Func(
                                    models.F("slug"),
                                    models.Value("abcdefghijklmnopqrstuvwxyz0123456789-"),
                                    function="LTRIM",
                                    output_field=models.CharField(),
                                ),
                                models.Value(""),
                            ),
                        ),
                        name="games_room_slug_chars",
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="HandSeat",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("position", models.PositiveSmallIntegerField()),
                ("table_seat", models.PositiveSmallIntegerField()),
                ("auto_u", models.BooleanField()),
                ("auto_chiu", models.BooleanField()),
                ("left_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("hand", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="hand_seats", to="games.hand")),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="hand_seats", to=settings.AUTH_USER_MODEL)),
            ],
            options={
                "ordering": ["hand_id", "position"],
                "indexes": [models.Index(fields=["user", "-hand"], name="games_handseat_user_hands")],
                "constraints": [
                    models.UniqueConstraint(fields=("hand", "position"), name="games_handseat_unique_position"),
                    models.UniqueConstraint(fields=("hand", "user"), name="games_handseat_unique_user"),
                    models.UniqueConstraint(fields=("hand", "table_seat"), name="games_handseat_unique_table_seat"),
                    models.CheckConstraint(
                        condition=models.Q(("position__lt", 4), ("table_seat__lt", 4)),
                        name="games_handseat_seats_0_3",
                    ),
                ],
            },
        ),
        migrations.AddField(
            model_name="hand",
            name="stake",
            field=models.PositiveIntegerField(null=True, help_text="Quan per point, frozen at the deal."),
        ),
        migrations.AddField(
            model_name="hand",
            name="room_new",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name="hands", to="games.room", to_field="slug"),
        ),
        migrations.RemoveConstraint(model_name="table", name="games_table_room_slug"),
        migrations.RunPython(forwards, migrations.RunPython.noop),
    ]
