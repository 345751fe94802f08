"""What a move costs PostgreSQL (issue 23, the seventeenth round): its update of the hand stays
on the row's page, and its read of the events it missed is planned once a connection.
Read from the server's own counters, not timed."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from games import hand_store
from games.hand_store import StateLru, hand_replay
from games.models import Hand
from games.services.hands import hand_lock, hand_move_apply
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


def _missed_events_plans() -> tuple[int, int]:
    """The custom and generic plans made so far on this connection for the read of the events
    a process missed (``hand_store._EVENTS_SINCE_SQL``, prepared by psycopg after its fifth
    execution: DB_PREPARE_THRESHOLD)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT custom_plans, generic_plans FROM pg_prepared_statements"
            " WHERE statement LIKE %s",
            ["%AND seq > $3 ORDER BY seq%"],
        )
        rows = cursor.fetchall()
    assert len(rows) == 1, rows
    return rows[0]


def _behind_by_one(hand: Hand, monkeypatch) -> None:
    """This process keeps the hand's state of one move ago, as if another process made the
    last move: the next move reads that move's event in its lock's flight."""
    hand.refresh_from_db()
    seen = hand.seq - 1
    kept = StateLru(8)
    kept.put((hand.pk, seen, hand.seed_hash), hand_replay(hand, upto=seen), hand.created_at)
    monkeypatch.setattr(hand_store, "state_lru", kept)


def test_the_read_of_missed_events_over_the_partitioned_log_is_planned_once(
    make_user, monkeypatch
) -> None:
    # Given a hand whose moves were each made after "another process's" move, six times (the
    # read prepared by psycopg after its fifth execution)
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=42)
    user, move = _turn_move(hand, users)
    assert submit(hand, user, move).status == 201
    for _ in range(6):
        user, move = _turn_move(hand, users)
        _behind_by_one(hand, monkeypatch)
        assert submit(hand, user, move).status == 201
    custom, generic = _missed_events_plans()
    # when three more moves read what they missed
    for _ in range(3):
        user, move = _turn_move(hand, users)
        _behind_by_one(hand, monkeypatch)
        assert submit(hand, user, move).status == 201
    # then none of them planned that read afresh: PostgreSQL, left to choose, gives this
    # statement over a partitioned table a custom plan at every execution (0.17 ms of planning
    # against 0.01 for the generic plan, which picks the partition when it runs)
    assert _missed_events_plans() == (custom, generic + 3)
