"""A move's update of its hand stays on the row's page (the lean move;
docs/decisions/fixed-statements.md).

Every move updates its hand's row (``seq``, ``last_event_at``, ``deadline_at``, ``updated_at``).
``deadline_at`` was a key of ``games_hand_playing_deadline``, so no such update could be a HOT
update: each wrote a new tuple elsewhere and a new entry in all eight of the table's indexes
(0 of 318 moves' updates were HOT in one api_bench run). Without that index the move's columns
are in no index; with room left on each page (fillfactor 60: a hand's row is about 2 KB, so two
rows a page and room for their next versions) the update stays on its page and touches no
index. The clock's sweep, the index's one reader, finds overdue hands among the playing ones
through ``games_hand_one_playing_per_table`` (a partial index of the playing hands: one a table).

The guard's check that a new seq has its event probed every monthly partition of
``games_handevent`` (it named no ``hand_created_at``); it now names the hand's ``created_at``
(which every event of the hand carries: the chain trigger holds each event to its predecessor's,
and the first to the hand's), so one partition is read, and keeps one generic plan, as
``games_handevent_chain`` does since 0033. What it checks is unchanged.

Only pages written from now on get the room (as 0034), which is enough: hands are dealt onto new
pages, and the ones in play turn over within minutes (docs/operations.md).
"""

from importlib import import_module

from django.db import migrations

# The guard as 0021 made it (its whole CREATE, the trigger's too), and with the partition named.
HAND_GUARD = import_module("games.migrations.0021_handevent_hash_chain").HAND_GUARD
UNPARTITIONED = "SELECT 1 FROM games_handevent WHERE hand_id = NEW.id AND seq = NEW.seq)"
BY_PARTITION = (
    "SELECT 1 FROM games_handevent WHERE hand_id = NEW.id AND seq = NEW.seq\n"
    "          AND hand_created_at = NEW.created_at)"
)
assert UNPARTITIONED in HAND_GUARD


class Migration(migrations.Migration):
    dependencies = [("games", "0034_boardbucket_fillfactor")]

    operations = [
        migrations.RemoveIndex(model_name="hand", name="games_hand_playing_deadline"),
        migrations.RunSQL(
            "ALTER TABLE games_hand SET (fillfactor = 60)",
            "ALTER TABLE games_hand RESET (fillfactor)",
        ),
        migrations.RunSQL(
            HAND_GUARD.replace(UNPARTITIONED, BY_PARTITION)
            + "ALTER FUNCTION games_hand_guard() SET plan_cache_mode = force_generic_plan;",
            HAND_GUARD,
        ),
    ]
