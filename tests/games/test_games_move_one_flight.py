"""A move made in one round trip on the hand as this process committed it (games 0039): the lock refuses a hand that is no longer so, and the move is
then made the two-flight way on the row as it is."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from prometheus_client import REGISTRY

from core.pipeline import StatementAfterCommit
from games import hand_store
from games.hand_store import hand_replay, hand_state
from games.models import Hand, HandEvent
from games.selectors.hands import hand_view_for_user
from games.services.hands import NOT_AS_KEPT
from tests.db_trips import round_trips_counted
from tests.games.conftest import hand_guard_off
from tests.games.test_games_move_round_trips import _turn_move
from tests.games.test_games_services import deal, submit

pytestmark = pytest.mark.django_db(transaction=True)


def _flights(made: str) -> float:
    return REGISTRY.get_sample_value("chan_move_flights_total", {"made": made}) or 0.0


def _counted(fn: Any) -> tuple[Any, dict[str, float]]:
    before = {made: _flights(made) for made in ("one", "refused", "two")}
    result = fn()
    return result, {made: _flights(made) - n for made, n in before.items()}


def _moved_once(make_user: Any, *, seed: Any) -> tuple[list[Any], Hand]:
    """Four players and their hand, dealt and moved once by this process (which keeps it)."""
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=seed)
    user, move = _turn_move(hand, users)
    submit(hand, user, move)
    return users, hand


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
    # then BEGIN, the event (whose statement takes the lock of the hand as kept before its
    # row is made), the hand's row, the feed, the key's record and COMMIT went in one flight
    assert result.status == 201 and result.body["seq"] == 2
    assert counted == {"one": 1, "refused": 0, "two": 0}
    assert len(trips) == 1, trips.flights
    statements = trips.flights[0]
    (event,) = [s for s in statements if "games_handevent" in s]
    assert "games_hand_lock_as_kept" in event
    assert not any("games_hand_lock_as_kept" in s for s in statements if s is not event)
    flight = " ".join(statements)
    assert (
        flight.index("BEGIN")
        < flight.index("games_handevent")
        < flight.index('UPDATE "games_hand"')
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
    users, hand = _moved_once(make_user, seed=52)
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
    users, hand = _moved_once(make_user, seed=53)
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
    users, hand = _moved_once(make_user, seed=54)
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
    # (an end faked by hand past the row's guards: no event, no result worth the name;
    # corrupts_cache exempts it)
    with hand_guard_off():
        Hand.objects.filter(pk=hand.pk).update(
            status=Hand.Status.ENDED, deadline_at=None, result={}, ended_at=timezone.now()
        )
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT games_hand_lock_as_kept(%s, %s, %s, %s, %s)", as_kept)


def _statement_refused() -> bool:
    """Whether a statement sent now is refused because the move's COMMIT is queued."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except StatementAfterCommit:
        return True
    return False


@pytest.mark.parametrize("way", ["one flight", "two flights"])
def test_a_move_without_a_key_is_answered_while_the_server_commits_it(make_user, way) -> None:
    # Given a hand whose last move this process committed (or, for the two-flight way, whose
    # copy it has forgotten)
    users, hand = _moved_once(make_user, seed=56 if way == "one flight" else 57)
    if way == "two flights":
        hand_store.hand_committed_forget(hand.pk)
    seen: list[tuple[int, bool]] = []

    def render(h: Hand, state: Any) -> dict[str, Any]:
        seen.append((h.seq, _statement_refused()))
        return hand_view_for_user(hand=h, user=user, state=state)

    # when the next move is sent without a key, then with one
    user, move = _turn_move(hand, users)
    first = _submitted_with(hand, user, move, render)
    user, move = _turn_move(hand, users)
    second = _submitted_with(hand, user, move, render, idempotency_key="keyed")
    # then the first was rendered once its COMMIT was queued (a statement there is refused);
    # the second before it (its key's record keeps the answer, in the move's transaction)
    assert (first.status, second.status) == (201, 201)
    assert seen == [(2, True), (3, False)]
    assert (first.body["seq"], second.body["seq"]) == (2, 3)
    _log_is_whole(hand)


def _submitted_with(hand: Hand, user: Any, move: dict[str, Any], render: Any, **kw: Any) -> Any:
    from games.services.hands import move_submit
    from tests.games.test_games_services import request_hash

    return move_submit(
        hand_id=hand.pk,
        user=user,
        move_json=move,
        request_hash=request_hash(move),
        render=render,
        **kw,
    )


def test_an_answer_that_fails_after_the_commit_leaves_the_move_made_and_published(
    make_user,
) -> None:
    # Given a hand whose last move this process committed
    users, hand = _moved_once(make_user, seed=58)

    def render(h: Hand, state: Any) -> dict[str, Any]:
        raise ValueError("the view failed")

    # when the next move's view fails (after its COMMIT was queued)
    user, move = _turn_move(hand, users)
    with pytest.raises(ValueError, match="the view failed"):
        _submitted_with(hand, user, move, render)
    # then the move is made, whole, and its commit's hooks ran: the process keeps the hand at
    # its new seq (the next move is one flight again)
    hand.refresh_from_db()
    assert hand.seq == 2
    kept = hand_store.hand_committed_last(hand.pk)
    assert kept is not None and kept.seq == 2
    _log_is_whole(hand)
