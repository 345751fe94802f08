"""Database constraints and the append-only hand log."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from games.models import AppendOnlyError, Hand, HandEvent, Seat, Table

pytestmark = pytest.mark.django_db


def make_table(owner, **fields) -> Table:
    return Table.objects.create(name="t", stake=fields.pop("stake", 1), owner=owner, **fields)


def make_hand(table: Table, **fields) -> Hand:
    values = {
        "table": table,
        "number": 1,
        "n_seats": 2,
        "dealer": 0,
        "seats": [],
        "mode": "basic",
        "ruleset": {},
        "prefs": [],
        "seed": "a" * 64,
        "seed_hash": "b" * 64,
        "last_event_at": timezone.now(),
    }
    values.update(fields)
    return Hand.objects.create(**values)


@pytest.mark.parametrize(
    "fields",
    [
        {"stake": 0},
        {"max_seats": 5},
        {"max_seats": 1},
        {"mode": "expert"},
        {"status": "gone"},
        {"turn_timeout": 0},
        {"fixed_dealer": 3, "max_seats": 2, "fixed_deck": []},
        {"fixed_dealer": 0},
    ],
)
def test_table_constraints(make_user, fields) -> None:
    owner, _ = make_user()
    with pytest.raises(IntegrityError), transaction.atomic():
        make_table(owner, **fields)


def test_a_seat_number_and_a_player_are_unique_per_table(make_user) -> None:
    owner, _ = make_user()
    other, _ = make_user()
    table = make_table(owner)
    Seat.objects.create(table=table, player=owner, number=0)
    with pytest.raises(IntegrityError), transaction.atomic():
        Seat.objects.create(table=table, player=other, number=0)
    with pytest.raises(IntegrityError), transaction.atomic():
        Seat.objects.create(table=table, player=owner, number=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Seat.objects.create(table=table, player=other, number=4)
    with pytest.raises(IntegrityError), transaction.atomic():
        Seat.objects.create(table=table, player=other, number=1, ready=True, leaving=True)


@pytest.mark.parametrize(
    "fields",
    [
        {"dealer": 2},
        {"n_seats": 5, "dealer": 0},
        {"previous_winner": 3},
        {"seed": "abc"},
        {"status": "ended"},
        {"result": {"outcome": None}},
        {"seq": 1, "state_seq": 2},
    ],
)
def test_hand_constraints(make_user, fields) -> None:
    owner, _ = make_user()
    table = make_table(owner)
    with pytest.raises(IntegrityError), transaction.atomic():
        make_hand(table, **fields)


def test_a_table_plays_one_hand_at_a_time(make_user) -> None:
    owner, _ = make_user()
    table = make_table(owner)
    make_hand(table)
    with pytest.raises(IntegrityError), transaction.atomic():
        make_hand(table, number=2)
    Hand.objects.filter(table=table).update(
        status="ended", result={"outcome": {"result": "hoa"}}, ended_at=timezone.now()
    )
    make_hand(table, number=2)


def test_the_log_is_unique_by_seq_and_append_only(make_user) -> None:
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    deal = HandEvent.objects.create(hand=hand, seq=0, type="deal", system=True)
    HandEvent.objects.create(hand=hand, seq=1, type="draw", actor_seat=1, payload={"type": "draw"})
    with pytest.raises(IntegrityError), transaction.atomic():
        HandEvent.objects.create(hand=hand, seq=1, type="pass", actor_seat=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        HandEvent.objects.create(hand=hand, seq=2, type="pass")  # neither an actor nor system
    with pytest.raises(IntegrityError), transaction.atomic():
        HandEvent.objects.create(hand=hand, seq=3, type="deal", system=True)
    deal.type = "other"
    with pytest.raises(AppendOnlyError):
        deal.save()
    with pytest.raises(AppendOnlyError):
        deal.delete()
    with pytest.raises(AppendOnlyError):
        HandEvent.objects.filter(hand=hand).update(type="x")
    with pytest.raises(AppendOnlyError):
        HandEvent.objects.filter(hand=hand).delete()
    assert list(HandEvent.objects.filter(hand=hand).values_list("seq", "type")) == [
        (0, "deal"),
        (1, "draw"),
    ]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL trigger")
def test_postgresql_itself_refuses_to_change_the_log(make_user) -> None:
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    HandEvent.objects.create(hand=hand, seq=0, type="deal", system=True)
    for sql in (
        "UPDATE games_handevent SET type = 'x' WHERE hand_id = %s",
        "DELETE FROM games_handevent WHERE hand_id = %s",
    ):
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, [hand.pk])
    assert HandEvent.objects.get(hand=hand).type == "deal"
