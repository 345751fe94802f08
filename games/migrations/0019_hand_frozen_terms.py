"""Each hand keeps its complete ruleset by value (``Ruleset.to_dict()``: every cước's điểm and
dịch, the gà table, every option, the preset and its version), no longer the spec
``{preset, overrides}`` that was rebuilt from today's presets on every replay.

Hands dealt before this migration get the table their spec gives with the presets as they stand
(every preset at version 1: the migration refuses to guess if a preset has moved on since, and
there are hands to fill). Their fee schedule is copied from the room where a rolling deploy
left it empty, as 0018 did. Both backfills run outside one big transaction, 10,000 hands at a
time, so that play on the other hands goes on.

Reversible: going back writes the spec ``{preset, overrides}`` from the stored table (what the
older code reads; the values of a preset changed since are then lost, as they were before)."""

import json

from django.db import migrations, models

BATCH = 10_000
FILLED_FROM_VERSION = 1


def _bounds(cursor):
    cursor.execute("SELECT min(id), max(id) FROM games_hand")
    return cursor.fetchone()


def freeze_rulesets(apps, schema_editor):
    from games.rules.ruleset import PRESETS, build_ruleset

    with schema_editor.connection.cursor() as cursor:
        low, high = _bounds(cursor)
        if low is None:
            return
        cursor.execute("SELECT DISTINCT ruleset FROM games_hand WHERE NOT (ruleset ? 'cuoc')")
        specs = [row[0] if isinstance(row[0], dict) else json.loads(row[0]) for row in cursor]
        for spec in specs:
            ruleset = build_ruleset(spec)
            if PRESETS[ruleset.preset].preset_version != FILLED_FROM_VERSION:
                raise RuntimeError(
                    f"preset {ruleset.preset} is at version {ruleset.preset_version}, not "
                    f"{FILLED_FROM_VERSION}: the hands dealt before 0019 were played under "
                    "version 1; fill them from that table, not from today's"
                )
            frozen = json.dumps(ruleset.to_dict())
            for start in range(low, high + 1, BATCH):
                cursor.execute(
                    "UPDATE games_hand SET ruleset = %s::jsonb"
                    " WHERE ruleset = %s::jsonb AND id >= %s AND id < %s",
                    [frozen, json.dumps(spec), start, start + BATCH],
                )
        for start in range(low, high + 1, BATCH):
            cursor.execute(
                "UPDATE games_hand h SET fees = r.fees, xuong_sai_settled = r.xuong_sai_settled"
                " FROM games_room r WHERE r.slug = h.room_id"
                " AND (h.fees IS NULL OR h.xuong_sai_settled IS NULL)"
                " AND h.id >= %s AND h.id < %s",
                [start, start + BATCH],
            )


def thaw_rulesets(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        low, high = _bounds(cursor)
        if low is None:
            return
        for start in range(low, high + 1, BATCH):
            cursor.execute(
                "UPDATE games_hand SET ruleset = jsonb_build_object("
                "'preset', ruleset->'preset', 'overrides', ruleset->'overrides')"
                " WHERE ruleset ? 'cuoc' AND id >= %s AND id < %s",
                [start, start + BATCH],
            )


class Migration(migrations.Migration):
    atomic = False  # the backfill in batches, each its own statement

    dependencies = [
        ("games", "0018_hand_room_terms"),
    ]

    operations = [
        migrations.AlterField(
            model_name="hand",
            name="ruleset",
            field=models.JSONField(
                help_text="The complete ruleset at the deal, by value (Ruleset.to_dict(): every "
                "cước, the gà table, every option, the preset and its version)."
            ),
        ),
        migrations.RunPython(freeze_rulesets, thaw_rulesets),
    ]
