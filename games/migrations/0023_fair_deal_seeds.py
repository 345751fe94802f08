"""The fair deal (games.rules.fair_deal; docs/audit.md "Players' seeds").

* ``Table.next_seed``: the next hand's server seed, drawn before any seat says ready; its
  SHA-256 is public on the table. Each existing table gets its own (the column's default is
  evaluated once for the whole table, so every row is drawn again here).
* ``Seat.client_seed``: the seed a seat gave with ready for the next deal (empty: none).
* ``Hand.client_seeds`` (every seat's seed, in seat order; null for hands dealt before) and
  ``Hand.next_seed_hash`` (the commitment to the next hand's server seed, made at this deal).
* A BEFORE UPDATE trigger keeps both hand columns as the deal wrote them (a separate function,
  so that games_hand_guard of 0021 stays as it is).
"""

from django.db import migrations, models

import games.rules.fair_deal

GUARD = """
CREATE OR REPLACE FUNCTION games_hand_fair_deal_guard() RETURNS trigger AS $$
BEGIN
    IF NEW.client_seeds IS DISTINCT FROM OLD.client_seeds
       OR NEW.next_seed_hash IS DISTINCT FROM OLD.next_seed_hash THEN
        RAISE EXCEPTION 'hand %: the seeds of its deal never change', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS games_hand_fair_deal_guard ON games_hand;
CREATE TRIGGER games_hand_fair_deal_guard
    BEFORE UPDATE ON games_hand
    FOR EACH ROW EXECUTE FUNCTION games_hand_fair_deal_guard();
"""

DROP_GUARD = """
DROP TRIGGER IF EXISTS games_hand_fair_deal_guard ON games_hand;
DROP FUNCTION IF EXISTS games_hand_fair_deal_guard();
"""


def draw_seeds(apps, schema_editor):
    """A server seed of its own for every existing table."""
    import secrets

    Table = apps.get_model("games", "Table")
    for pk in Table.objects.values_list("pk", flat=True).iterator():
        Table.objects.filter(pk=pk).update(next_seed=secrets.token_hex(32))


class Migration(migrations.Migration):
    dependencies = [("games", "0022_feed_entry")]

    operations = [
        migrations.AddField(
            model_name="table",
            name="next_seed",
            field=models.CharField(
                default=games.rules.fair_deal.new_server_seed,
                help_text="Secret: the next hand's server seed (hex); its SHA-256 is public.",
                max_length=64,
            ),
        ),
        migrations.RunPython(draw_seeds, migrations.RunPython.noop),
        migrations.AddField(
            model_name="seat",
            name="client_seed",
            field=models.CharField(
                blank=True,
                default="",
                help_text="Secret until the hand ends: the seed this seat gave with ready for the "
                "next deal (empty: none).",
                max_length=128,
            ),
        ),
        migrations.AddField(
            model_name="hand",
            name="client_seeds",
            field=models.JSONField(
                blank=True,
                help_text="Each hand seat's seed in seat order (empty: none), mixed into the "
                "deck; secret until the end.",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="hand",
            name="next_seed_hash",
            field=models.CharField(
                blank=True,
                default="",
                help_text="The commitment to the next hand's server seed, made at this deal (a "
                "chain; empty for hands dealt before the fair deal).",
                max_length=64,
            ),
        ),
        migrations.RunSQL(GUARD, DROP_GUARD),
    ]
