"""The hand log's chain trigger keeps one generic plan (issue 26; docs/decisions.md "The growth
bench at 10,000,000 events").

``games_handevent_chain`` looks up an event's predecessor in the partitioned ``games_handevent``
by ``(hand_id, seq, hand_created_at)``. PL/pgSQL planned that lookup afresh on every insert (a
custom plan: the generic one, costed over every partition, never looked cheaper), and planning
against the parent costs with the number of monthly partitions: 0.5 ms an event with 17 of them,
about five times the insert itself. With ``plan_cache_mode = force_generic_plan`` on the function
the plan is made once a session and the partition is chosen when it runs (run-time pruning);
48,750 inserts with the trigger took 26.3 s before and 5.3 s after (bench/growth_bench.py's
profile). The function's body, and so every check it makes, is unchanged.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("games", "0029_seasons_and_board_buckets")]

    operations = [
        migrations.RunSQL(
            "ALTER FUNCTION games_handevent_chain() SET plan_cache_mode = force_generic_plan",
            "ALTER FUNCTION games_handevent_chain() RESET plan_cache_mode",
        )
    ]
