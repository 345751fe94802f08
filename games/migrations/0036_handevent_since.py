"""The events of a hand after a seq, read through a function that keeps one generic plan (issue
23, the lean move; docs/decisions/fixed-statements.md).

A process that keeps a hand's state reads only the events after it (``games.hand_store``: in
every move's lock flight, and when a view or a long poll's answer finds its state behind). The
statement names the partitioned ``games_handevent`` with its partition key as a parameter, and
PostgreSQL, left to choose, planned it afresh at every execution — a custom plan: 0.17 ms of
planning against 0.01 for the generic plan, which picks the partition as it runs (measured with
``EXPLAIN (ANALYZE, SUMMARY)`` of the prepared statement on a bench database). Called through
``games_handevent_since``, which carries ``plan_cache_mode = force_generic_plan`` as the chain
trigger does since 0033, the plan is made once a session. Rows and order are the statement's.
"""

from django.db import migrations

SINCE = """
CREATE OR REPLACE FUNCTION games_handevent_since(
    p_hand bigint, p_hand_created_at timestamptz, p_after integer
) RETURNS TABLE (seq integer, type varchar, payload jsonb) AS $$
BEGIN
    RETURN QUERY
        SELECT e.seq, e.type, e.payload FROM games_handevent e
        WHERE e.hand_id = p_hand AND e.hand_created_at = p_hand_created_at AND e.seq > p_after
        ORDER BY e.seq;
END;
$$ LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan;
"""


class Migration(migrations.Migration):
    dependencies = [("games", "0035_hand_updates_stay_on_their_page")]

    operations = [
        migrations.RunSQL(
            SINCE, "DROP FUNCTION IF EXISTS games_handevent_since(bigint, timestamptz, integer)"
        )
    ]
