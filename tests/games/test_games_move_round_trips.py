"""A move's round trips to PostgreSQL: counted from libpq's trace, not timed."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from games import hand_store
from games.hand_store import StateLru, hand_replay, hand_state
from games.models import Hand, Seat, Table
from games.rules import Phase, apply
from games.rules.bots import HeuristicBot
from games.selectors.hands import hand_view_for_user
from games.services.hands import hand_clock_tick
from games.services.tables import seat_join, seat_ready, table_create
from tests.db_trips import round_trips_counted
from tests.games.test_games_services import deal, submit

pytestmark = pytest.mark.django_db(transaction=True)


def _turn_move(hand: Hand, users: list) -> tuple[object, dict]:
    """The user whose turn it is in ``hand`` (seat i is users[i]) and a move of theirs other
    than a change of preferences."""
    hand.refresh_from_db()
    user = users[hand_state(hand).turn]
    legal = hand_view_for_user(hand=hand, user=user)["legal_moves"]
    return user, next(m for m in legal if m["type"] != "set_prefs")


def test_a_move_with_an_idempotency_key_is_two_round_trips(make_user) -> None:
    # Given a dealt hand whose state and seats this process already holds (one move played),
    # whose last move another process made (this one keeps no copy of the hand as committed:
    # else the move is one round trip, tests/games/test_games_move_one_flight.py)
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=31)
    user, move = _turn_move(hand, users)
    submit(hand, user, move, idempotency_key="warm-up")
    hand_store.hand_committed_forget(hand.pk)
    # when the next move is sent with a key
    user, move = _turn_move(hand, users)
    with round_trips_counted() as trips:
        result = submit(hand, user, move, idempotency_key="counted")
    assert result.status == 201
    # then it is BEGIN, the hand's lock and the key's lookup; the event, the hand's row, the
    # feed, the key's record and COMMIT (ten round trips before the pipeline)
    assert len(trips) == 2, trips.flights
    lock, writes = (" ".join(f) for f in trips.flights)
    assert (
        lock.index("BEGIN")
        < lock.index("FOR NO KEY UPDATE")
        < lock.index("games_idempotencyrecord")
    )
    assert writes.rindex("games_idempotencyrecord") < writes.index('"COMMIT"'), writes
    for table in ("games_handevent", "games_hand", "games_feedentry", "games_idempotencyrecord"):
        assert table in writes, (table, writes)
    # and a retry of it is answered from its record
    again = submit(hand, user, move, idempotency_key="counted")
    assert again.replayed and again.body == result.body


def test_the_clocks_move_is_two_round_trips(make_user) -> None:
    # Given a hand whose turn's deadline has passed (one move played: the state is held)
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=32)
    user, move = _turn_move(hand, users)
    submit(hand, user, move)
    hand.refresh_from_db()
    seq = hand.seq
    # when the clock plays the seat's move
    with round_trips_counted() as trips:
        played = hand_clock_tick(hand_id=hand.pk, now=hand.deadline_at + timedelta(seconds=1))
    # then it is BEGIN and the lock; the event, the hand's row, the feed and COMMIT
    assert played == seq + 1
    assert len(trips) == 2, trips.flights
    writes = " ".join(trips.flights[1])
    for sent in ("games_handevent", "games_hand", "games_feedentry", '"COMMIT"'):
        assert sent in writes, (sent, writes)


def test_a_move_after_another_process_moved_reads_the_missed_events_in_the_locks_flight(
    make_user, monkeypatch
) -> None:
    # Given a hand this process last saw one move ago: another process played the last move
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=33)
    user, move = _turn_move(hand, users)
    submit(hand, user, move)
    hand.refresh_from_db()
    seen_seq, seen = hand.seq, hand_state(hand)
    user, move = _turn_move(hand, users)
    submit(hand, user, move)  # "the other process"
    user, move = _turn_move(hand, users)
    kept = StateLru(8)
    kept.put((hand.pk, seen_seq, hand.seed_hash), seen, hand.created_at)
    monkeypatch.setattr(hand_store, "state_lru", kept)
    hand_store.hand_committed_forget(hand.pk)  # nor does it keep the hand as committed
    # when this process plays the next move
    with round_trips_counted() as trips:
        result = submit(hand, user, move)
    # then the events it missed are read in the lock's flight: still two round trips
    assert result.status == 201
    assert len(trips) == 2, trips.flights
    lock = " ".join(trips.flights[0])
    assert lock.index("FOR NO KEY UPDATE") < lock.index("games_handevent_since("), lock
    # and the state it kept is the replay of the whole log
    hand.refresh_from_db()
    assert kept.get((hand.pk, hand.seq, hand.seed_hash)) == hand_replay(hand, upto=hand.seq)


def test_the_move_that_ends_the_hand_is_two_round_trips_as_any_move(make_user) -> None:
    # Given a hand played by bots up to its last move (this process holds its state)
    users = [make_user()[0] for _ in range(4)]
    hand = deal(users, seed=33)
    bot = HeuristicBot(random.Random(33))
    while True:
        hand.refresh_from_db()
        state = hand_state(hand)
        move = bot.choose(state, state.turn)
        if apply(state, move).phase is Phase.ENDED:
            break
        assert submit(hand, users[state.turn], move.to_dict()).status == 201
    # when that last move is sent
    with round_trips_counted() as trips:
        result = submit(hand, users[state.turn], move.to_dict())
    # then the end of the hand (the table's lock, its seats made not ready, the table open
    # again, the hand's result) goes in the move's last flight, with its COMMIT
    assert result.status == 201 and result.body["state"]["status"] == "ended"
    assert len(trips) == 2, trips.flights
    writes = " ".join(trips.flights[1])
    for sent in ("games_table", "games_seat", "games_handevent", "games_feedentry", '"COMMIT"'):
        assert sent in writes, (sent, writes)
    hand.refresh_from_db()
    assert hand.status == Hand.Status.ENDED and hand.result and hand.ended_at is not None
    assert hand.table.status == Table.Status.OPEN
    assert not Seat.objects.filter(table=hand.table, ready=True).exists()


def test_the_deal_sends_its_writes_in_one_flight(make_user) -> None:
    # Given a table of four, three of them ready
    users = [make_user()[0] for _ in range(4)]
    table = table_create(owner=users[0], name="t", stake=1, max_seats=4)
    for user in users[1:]:
        seat_join(table_id=table.pk, user=user)
    for user in users[:3]:
        assert seat_ready(table_id=table.pk, user=user) is None
    # when the fourth says ready
    with round_trips_counted() as trips:
        hand = seat_ready(table_id=table.pk, user=users[3])
    # then the deal's writes after the hand's row (its seats, its first event, the table,
    # the spent seeds, the players' feeds) go in one flight
    assert hand is not None
    (flight,) = [
        " ".join(f) for f in trips.flights if 'INSERT INTO "games_handseat"' in " ".join(f)
    ]
    for sent in ("games_handevent", 'UPDATE "games_table"', "client_seed", "games_feedentry"):
        assert sent in flight, (sent, flight)
    # and the seat's own UPDATE goes with the read of the table's seats
    (ready,) = [" ".join(f) for f in trips.flights if 'SET "ready"' in " ".join(f)]
    assert 'FROM "games_seat"' in ready.split('SET "ready"', 1)[1], ready
    assert hand.seat_list() == sorted(hand.hand_seats.all(), key=lambda s: s.position)
    assert [s.user_id for s in hand.seat_list()] == [u.pk for u in users]
    assert not Seat.objects.filter(table=table).exclude(client_seed="").exists()
