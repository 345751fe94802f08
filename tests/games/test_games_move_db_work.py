"""What a move costs PostgreSQL (issue 23, the seventeenth round): its update of the hand stays
on the row's page, and its statements over the partitioned log are planned once a connection.
Read from the server's own counters, not timed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection, transaction

from games.models import Hand
from games.services.hands import hand_clock_tick, hand_lock, hand_move_apply
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


def _lock_plans() -> tuple[int, int]:
    """The custom and generic plans made so far on this connection for the move's lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT custom_plans, generic_plans FROM pg_prepared_statements"
            " WHERE statement LIKE %s",
            ["%FOR NO KEY UPDATE OF h%"],
        )
        rows = cursor.fetchall()
    assert len(rows) == 1, rows  # psycopg prepared it (DB_PREPARE_THRESHOLD, 5 by default)
    return rows[0]


def test_a_moves_lock_over_the_partitioned_log_is_planned_once(make_user) -> None:
    # Given a hand played for eight moves on this connection (the lock prepared by psycopg
    # after its fifth execution)
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=42)
    for _ in range(8):
        user, move = _turn_move(hand, users)
        assert submit(hand, user, move).status == 201
    custom, generic = _lock_plans()
    # when more moves and a clock's move are made
    for _ in range(3):
        user, move = _turn_move(hand, users)
        assert submit(hand, user, move).status == 201
    hand.refresh_from_db()
    assert hand_clock_tick(hand_id=hand.pk, now=hand.deadline_at + timedelta(seconds=1))
    # then none of them planned the lock afresh: PostgreSQL gives a statement over a
    # partitioned table a custom plan at every execution unless told not to, and the lock's
    # subquery reads the log's last hash from its partition
    assert _lock_plans() == (custom, generic + 4)
