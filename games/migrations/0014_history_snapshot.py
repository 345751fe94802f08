"""A first history row ("insert") for every row that existed before the history triggers
were installed, so the first change after them shows its old values too (pgh_diff)."""

from django.db import migrations

TRACKED = [
    ("accounts", "User", "UserEvent"),
    ("games", "Room", "RoomEvent"),
    ("games", "Table", "TableEvent"),
    ("games", "Seat", "SeatEvent"),
]


def snapshot(apps, schema_editor):
    for app, model_name, event_name in TRACKED:
        model = apps.get_model(app, model_name)
        event = apps.get_model(app, event_name)
        copied = [f.attname for f in event._meta.fields if not f.name.startswith("pgh_")]
        rows = [
            event(pgh_label="insert", pgh_obj_id=obj.pk, **{a: getattr(obj, a) for a in copied})
            for obj in model.objects.all().iterator()
        ]
        event.objects.bulk_create(rows, batch_size=1000)


class Migration(migrations.Migration):

    dependencies = [
        ("games", "0013_history"),
        ("accounts", "0009_history"),
    ]

    operations = [
        migrations.RunPython(snapshot, migrations.RunPython.noop),
    ]
