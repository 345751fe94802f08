"""A hand locked only as a process kept it: the check of a move sent in one flight (the
lean move; docs/decisions/fixed-statements.md).

A move was two round trips: the hand's lock (its row read back, with its table and the hash
of its last event), then the writes with the COMMIT. The process that committed a hand's last
move keeps the hand as it committed it (``games.hand_store.hand_committed_keep``), and under
bench/load_bench.py that process also served the hand's next move 89 % of the time (74 % under
bench/api_bench.py). It can check and apply the move on what it keeps and send the lock, the
writes and the COMMIT in one flight, provided the lock refuses the hand when it is no longer as
kept: ``games_hand_lock_as_kept`` locks the row (``FOR NO KEY UPDATE``, as the lock of a move
does) if its seq, seats version and ``updated_at`` and its table's ``updated_at`` are those
given and it is still being played, and otherwise raises SQLSTATE ``CH409``. The error aborts
the flight before its writes are run (the transaction rolls back, nothing was written), and the
move is made again the two-round-trip way, on the row as it is.

A row locked by another transaction is waited for and then checked as that transaction left it
(PostgreSQL re-reads the row's latest version for ``FOR NO KEY UPDATE``), so a move made
meanwhile elsewhere is seen.
"""

from django.db import migrations

LOCK_AS_KEPT = """
CREATE FUNCTION games_hand_lock_as_kept(
    p_hand bigint, p_seq integer, p_seats_version integer, p_updated_at timestamptz,
    p_table_updated_at timestamptz
) RETURNS void AS $$
BEGIN
    PERFORM 1 FROM games_hand h JOIN games_table t ON t.id = h.table_id
        WHERE h.id = p_hand AND h.seq = p_seq AND h.seats_version = p_seats_version
          AND h.updated_at = p_updated_at AND h.status = 'playing'
          AND t.updated_at = p_table_updated_at
        FOR NO KEY UPDATE OF h;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'hand %: not as kept at seq %', p_hand, p_seq USING ERRCODE = 'CH409';
    END IF;
END;
$$ LANGUAGE plpgsql;
"""


class Migration(migrations.Migration):
    dependencies = [("games", "0038_hand_guards_by_column")]

    operations = [
        migrations.RunSQL(
            LOCK_AS_KEPT,
            "DROP FUNCTION games_hand_lock_as_kept(bigint, integer, integer, timestamptz,"
            " timestamptz)",
        )
    ]
