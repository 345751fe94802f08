"""The hand log's chain trigger keeps one generic plan (docs/decisions/growth-bench.md).

``games_handevent_chain`` looks up an event's predecessor in the partitioned ``games_handevent``
by ``(hand_id, seq, hand_created_at)``. PL/pgSQL planned that lookup afresh on every insert (a
custom plan each time: forcing the generic plan removes the cost), and planning against the
parent costs with the number of monthly partitions: 0.5 ms an event with 16 of them, about 16
times the row's own insert (the same 48,750 rows without triggers: 1.5 s). With
``plan_cache_mode = force_generic_plan`` on the function the plan is made once a session and
the partition is chosen when it runs (run-time pruning);
48,750 inserts with the trigger took 26.3 s before and 5.3 s after (the profile in
docs/decisions/). The function's body, and so every check it makes, is unchanged.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("games", "0032_feed_retention_index")]

    operations = [
        migrations.RunSQL(
            "ALTER FUNCTION games_handevent_chain() SET plan_cache_mode = force_generic_plan",
            "ALTER FUNCTION games_handevent_chain() RESET plan_cache_mode",
        )
    ]
