"""What a move costs PostgreSQL: its update of the hand stays
on the row's page, and its read of the events it missed is planned once a session.
Read from the server's own counters, not timed."""

from __future__ import annotations

import json

import pytest
from django.db import connection, transaction

from games import hand_store
from games.models import Hand
from games.services.hands import FINISH_FIELDS, MOVE_FIELDS, hand_lock, hand_move_apply
from tests.games.test_games_move_round_trips import _turn_move
from tests.games.test_games_services import deal, submit

pytestmark = pytest.mark.django_db(transaction=True)


def _xact_counts(table: str) -> tuple[int, int]:
    """Rows of ``table`` updated, and how many of them in place (HOT), by this backend since its
    counts last went to the statistics (at most once a second: read a difference)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_stat_get_xact_tuples_updated(%s::regclass),"
            " pg_stat_get_xact_tuples_hot_updated(%s::regclass)",
            [table, table],
        )
        return cursor.fetchone()


def test_a_moves_update_of_its_hand_stays_on_the_rows_page(make_user) -> None:
    # Given a dealt hand and the move of the seat whose turn it is
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=41)
    user, move = _turn_move(hand, users)
    # when the move is applied (its transaction still open, to read its counters)
    with transaction.atomic():
        locked = hand_lock(hand.pk)
        before, counted = locked.deadline_at, _xact_counts(Hand._meta.db_table)
        hand_move_apply(hand=locked, seat=locked.seat_of(user.pk), move_json=move)
        updated, in_place = (
            a - b for a, b in zip(_xact_counts(Hand._meta.db_table), counted, strict=True)
        )
    # then the hand's row was updated once (its seq and deadline moved) and in place: a HOT
    # update, no new entry in any of the table's indexes (every move's update went to a new
    # page and all eight indexes while the deadline was a key of one of them)
    assert locked.deadline_at != before
    assert (updated, in_place) == (1, 1)


def test_the_hands_table_leaves_room_for_its_rows_next_versions() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [Hand._meta.db_table])
        (options,) = cursor.fetchone()
    assert "fillfactor=60" in (options or [])


def test_the_read_of_missed_events_keeps_one_plan_a_session() -> None:
    # The read of the events after a kept state (every move's lock flight, a view whose state
    # is behind) names the partitioned log with its partition key as a parameter: PostgreSQL,
    # left to choose, planned it afresh at every execution (0.17 ms each). It goes through a
    # function that keeps one generic plan, which picks the partition as it runs.
    with connection.cursor() as cursor:
        cursor.execute("SELECT proconfig FROM pg_proc WHERE proname = 'games_handevent_since'")
        (config,) = cursor.fetchone()
    assert "plan_cache_mode=force_generic_plan" in config  # (beside its fixed search_path)
    assert "games_handevent_since(" in hand_store._EVENTS_SINCE_SQL


def test_the_read_of_missed_events_reads_them_all_in_order_and_no_other_hands(
    make_user,
) -> None:
    # Given two hands played a few moves each
    users = [make_user()[0] for _ in range(4)]
    others = [make_user()[0] for _ in range(4)]
    hand, other = deal(users, seed=43), deal(others, seed=44)
    for h, players in ((hand, users), (other, others), (hand, users), (hand, users)):
        user, move = _turn_move(h, players)
        assert submit(h, user, move).status == 201
    hand.refresh_from_db()
    # when the events after seq 1 of the first are read as a process behind reads them
    with connection.cursor() as cursor:
        cursor.execute(hand_store._EVENTS_SINCE_SQL, [hand.pk, hand.created_at, 1])
        rows = cursor.fetchall()
    # then they are its events 2 and 3, in order, as the log holds them
    logged = hand.events.filter(seq__gt=1).order_by("seq").values_list("seq", "type", "payload")
    assert [r[0] for r in rows] == [2, 3]
    assert [(s, t, json.loads(p) if isinstance(p, str) else p) for s, t, p in rows] == list(logged)


# The tables every move (or every hand) writes: an index whose columns begin another index's is
# an entry more to write with each row, for reads the longer one serves.
_MOVE_TABLES = ("games_hand", "games_handevent", "games_feedentry", "games_idempotencyrecord")
_PREFIX_INDEXES_SQL = """
    SELECT a.indexrelid::regclass::text, b.indexrelid::regclass::text
    FROM pg_index a
    JOIN pg_index b ON b.indrelid = a.indrelid AND b.indexrelid <> a.indexrelid
    JOIN pg_class ca ON ca.oid = a.indexrelid
    JOIN pg_class cb ON cb.oid = b.indexrelid
    WHERE a.indrelid = %s::regclass
      AND NOT a.indisunique AND a.indpred IS NULL AND b.indpred IS NULL
      AND ca.relam = cb.relam AND a.indnatts <= b.indnatts
      AND (a.indkey::int2[])[0:a.indnatts - 1] = (b.indkey::int2[])[0:a.indnatts - 1]
      AND (a.indclass::oid[])[0:a.indnatts - 1] = (b.indclass::oid[])[0:a.indnatts - 1]
"""


def test_the_tables_a_move_writes_keep_no_index_another_begins_with() -> None:
    with connection.cursor() as cursor:
        found = []
        for table in _MOVE_TABLES:
            cursor.execute(_PREFIX_INDEXES_SQL, [table])
            found += cursor.fetchall()
    assert found == []


def _before_update_triggers(table: str) -> dict[str, set[str]]:
    """The row triggers PostgreSQL runs before an UPDATE of ``table``, each with the columns
    whose naming in the SET list fires it (empty: every UPDATE fires it)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.tgname, array(SELECT a.attname FROM unnest(t.tgattr::int2[]) k"
            "  JOIN pg_attribute a ON a.attrelid = t.tgrelid AND a.attnum = k)"
            " FROM pg_trigger t WHERE t.tgrelid = %s::regclass AND NOT t.tgisinternal"
            " AND t.tgtype & 1 = 1 AND t.tgtype & 2 = 2 AND t.tgtype & 16 = 16",
            [table],
        )
        return {name: set(columns) for name, columns in cursor.fetchall()}


def _fired_by(triggers: dict[str, set[str]], fields: tuple[str, ...]) -> set[str]:
    return {name for name, columns in triggers.items() if not columns or columns & set(fields)}


def test_a_moves_update_of_its_hand_runs_the_seq_guard_alone() -> None:
    # Given the hand row's guards (games 0021, 0023, 0038, 0041)
    triggers = _before_update_triggers(Hand._meta.db_table)
    # then a move's update (its seq, times and deadline) runs the guard of the seq alone, and the
    # update that ends a hand that guard and the end's (its status: the ending event is there):
    # neither compares the deal's terms or seeds, which they never name (both guards ran on
    # every update before 0038)
    assert _fired_by(triggers, MOVE_FIELDS) == {"games_hand_guard"}
    assert _fired_by(triggers, FINISH_FIELDS) == {"games_hand_guard", "games_hand_end_guard"}
    # and every column a guard keeps still fires its guard when an UPDATE names it
    assert _fired_by(triggers, ("deck",)) == {"games_hand_terms_guard"}
    assert _fired_by(triggers, ("client_seeds",)) == {"games_hand_fair_deal_guard"}
    assert _fired_by(triggers, ("created_at",)) == {"games_hand_created_at_fixed"}
    guarded = set().union(*triggers.values())
    assert guarded >= {f.column for f in Hand._meta.concrete_fields} - {
        "last_event_at",
        "deadline_at",
        "updated_at",
        "seats_version",
        "void_reason",
    }
