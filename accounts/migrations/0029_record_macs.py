"""Each ledger transaction carries a MAC under the record key (``CHAN_RECORD_KEY``,
games.rules.record_mac), written by the insert that books it: ``mac`` and ``mac_key``, empty on
the transactions booked before keys existed. The entry and chain triggers already refuse any edit
of a booked transaction, these columns included."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0028_privileged_writers"),
    ]

    operations = [
        migrations.AddField(
            model_name="ledgertransaction",
            name="mac",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                help_text="HMAC-SHA256 (hex) of its hash under the record key "
                "(games.rules.record_mac); empty on transactions booked before keys existed.",
                max_length=64,
            ),
        ),
        migrations.AddField(
            model_name="ledgertransaction",
            name="mac_key",
            field=models.CharField(
                blank=True,
                db_default="",
                default="",
                help_text="The id of the record key its MAC is under.",
                max_length=32,
            ),
        ),
    ]
