"""A move made in one round trip on the hand as this process committed it (issue 23, the
eighteenth round; games 0039): the lock refuses a hand that is no longer so, and the move is
then made the two-flight way on the row as it is."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from prometheus_client import REGISTRY

from games import hand_store
from games.hand_store import hand_replay, hand_state
from games.models import Hand, HandEvent
from games.services.hands import NOT_AS_KEPT
from tests.db_trips import round_trips_counted
from tests.games.test_games_move_round_trips import _turn_move
from tests.games.test_games_services import deal, submit

pytestmark = pytest.mark.django_db(transaction=True)


def _flights(made: str) -> float:
    return REGISTRY.get_sample_value("chan_move_flights_total", {"made": made}) or 0.0


def _counted(fn: Any) -> tuple[Any, dict[str, float]]:
    before = {made: _flights(made) for made in ("one", "refused", "two")}
    result = fn()
    return result, {made: _flights(made) - n for made, n in before.items()}


def _log_is_whole(hand: Hand) -> None:
    """The hand's log is every seq once, its state the replay of it, its chain unbroken."""
    hand.refresh_from_db()
    seqs = list(HandEvent.objects.of_hand(hand).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(hand.seq + 1))
    assert hand_store.hand_store_problems(hand) == []
    assert hand_state(hand) == hand_replay(hand, upto=hand.seq)


def test_a_move_on_the_hand_as_this_process_committed_it_is_one_round_trip(make_user) -> None:
    # Given a hand whose last move this process committed
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=51)
    user, move = _turn_move(hand, users)
    submit(hand, user, move, idempotency_key="first")
    # when the next move is sent, with a key
    user, move = _turn_move(hand, users)
    with round_trips_counted() as trips:
        result, counted = _counted(lambda: submit(hand, user, move, idempotency_key="counted"))
    # then BEGIN, the lock of the hand as kept, the event, the hand's row, the feed, the key's
    # record and COMMIT went in one flight
    assert result.status == 201 and result.body["seq"] == 2
    assert counted == {"one": 1, "refused": 0, "two": 0}
    assert len(trips) == 1, trips.flights
    (flight,) = (" ".join(f) for f in trips.flights)
    assert (
        flight.index("BEGIN")
        < flight.index("games_hand_lock_as_kept")
        < flight.index("games_handevent")
        < flight.rindex("games_idempotencyrecord")
        < flight.index('"COMMIT"')
    ), flight
    _log_is_whole(hand)
    # and a retry with the key is answered from its record: on the hand as kept (after the
    # move) the move is not the seat's to make, so the two-flight way makes it, and finds the
    # record
    again, counted = _counted(lambda: submit(hand, user, move, idempotency_key="counted"))
    assert again.replayed and again.body == result.body
    assert counted == {"one": 0, "refused": 0, "two": 1}
    hand.refresh_from_db()
    assert hand.seq == 2


def test_a_move_after_another_process_moved_is_made_on_the_row(
    make_user,
) -> None:
    # Given a hand this process committed at seq 1, then moved on by "another process" (the
    # copy this process keeps is put back as it was at seq 1)
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=52)
    user, move = _turn_move(hand, users)
    submit(hand, user, move)
    stale = hand_store.hand_committed_last(hand.pk)
    assert stale is not None and stale.seq == 1
    user, move = _turn_move(hand, users)
    submit(hand, user, move)
    hand_store.hand_committed_keep(stale)
    # when the seat to act moves
    user, move = _turn_move(hand, users)
    result, counted = _counted(lambda: submit(hand, user, move))
    # then it was made on the row, not as kept (where it is not the seat's turn: declined
    # before any flight; a move the kept state also allows is refused by the lock, below), once
    assert counted["one"] == 0 and counted["refused"] + counted["two"] == 1
    assert result.status == 201 and result.body["seq"] == 3
    _log_is_whole(hand)


def test_a_refusal_comes_from_the_row_as_it_is_not_as_kept(make_user) -> None:
    # Given a hand this process committed at seq 1 and another process moved to seq 2
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=53)
    user, move = _turn_move(hand, users)
    submit(hand, user, move)
    stale = hand_store.hand_committed_last(hand.pk)
    user, move = _turn_move(hand, users)
    submit(hand, user, move)
    hand_store.hand_committed_keep(stale)
    # when a seat sends a move expecting seq 1 (as the kept copy is)
    user, move = _turn_move(hand, users)
    refused, counted = _counted(lambda: _refusal(hand, user, move, expected_seq=1))
    # then the refusal is the row's: stale at seq 2, from the two-flight way, nothing written
    assert refused.code == "stale_seq" and refused.extra["seq"] == 2
    assert counted == {"one": 0, "refused": 0, "two": 1}
    hand.refresh_from_db()
    assert hand.seq == 2


def _refusal(hand: Hand, user: Any, move: dict[str, Any], **kw: Any) -> Any:
    from core.errors import DomainError

    with pytest.raises(DomainError) as refused:
        submit(hand, user, move, **kw)
    return refused.value


def test_a_seat_that_left_since_makes_the_lock_refuse_the_hand_as_kept(make_user) -> None:
    # Given a hand this process committed, whose seats version then changed (a player left
    # mid-hand: the row's seats_version rises, as seat_leave raises it)
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=54)
    user, move = _turn_move(hand, users)
    submit(hand, user, move)
    # (an end faked by hand: no event, no result worth the name; corrupts_cache exempts it)
    Hand.objects.filter(pk=hand.pk).update(seats_version=hand.seats_version + 1)
    # when the next move is sent
    user, move = _turn_move(hand, users)
    result, counted = _counted(lambda: submit(hand, user, move))
    # then it was made on the row, not as kept
    assert counted["refused"] == 1 and result.status == 201
    _log_is_whole(hand)


def test_the_lock_as_kept_refuses_every_difference_and_locks_the_same(
    make_user, corrupts_cache
) -> None:
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=55)
    hand.refresh_from_db()
    table = hand.table
    as_kept = [hand.pk, hand.seq, hand.seats_version, hand.updated_at, table.updated_at]
    differs = {
        "seq": {1: hand.seq + 1},
        "seats": {2: hand.seats_version + 1},
        "hand written": {
            3: hand.updated_at.replace(microsecond=(hand.updated_at.microsecond + 1) % 10**6)
        },
        "table written": {4: table.updated_at.replace(year=table.updated_at.year - 1)},
        "no such hand": {0: hand.pk + 10_000},
    }
    for what, change in differs.items():
        params = [change.get(i, v) for i, v in enumerate(as_kept)]
        with (
            pytest.raises(DatabaseError) as refused,
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute("SELECT games_hand_lock_as_kept(%s, %s, %s, %s, %s)", params)
        assert refused.value.__cause__.sqlstate == NOT_AS_KEPT, what
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT games_hand_lock_as_kept(%s, %s, %s, %s, %s)", as_kept)
        cursor.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
            " WHERE l.pid = pg_backend_pid() AND c.relname = 'games_hand'"
            " AND l.mode = 'RowShareLock'"
        )
        assert cursor.fetchone() == (1,)  # the lock of FOR NO KEY UPDATE, as hand_lock takes
    # (an end faked by hand: no event, no result worth the name; corrupts_cache exempts it)
    Hand.objects.filter(pk=hand.pk).update(
        status=Hand.Status.ENDED, deadline_at=None, result={}, ended_at=timezone.now()
    )
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT games_hand_lock_as_kept(%s, %s, %s, %s, %s)", as_kept)
