"""Database constraints and the append-only hand log."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DataError, IntegrityError, connection, transaction
from django.utils import timezone

from games.models import (
    EVENT_TYPES,
    AppendOnlyError,
    Hand,
    HandEvent,
    HandSeat,
    IdempotencyRecord,
    Seat,
    Table,
)
from games.rules.chain import event_hash
from games.rules.moves import MOVE_TYPES
from tests.games.conftest import hand_guard_off

pytestmark = pytest.mark.django_db


def make_table(owner, **fields) -> Table:
    return Table.objects.create(owner=owner, **{"name": "t", "stake": 1, **fields})


def log_event(hand: Hand, **fields) -> HandEvent:
    """Insert a hand event as given, hash-chained as the database wants (games 0021): the
    constraints under test, not the chain, then judge it."""
    values = {"actor_seat": None, "system": False, "bot": False, "payload": {}, "effects": []}
    values.update(fields)
    seq = values["seq"]
    if seq == 0:
        prev = hand.seed_hash
    else:
        prev = (
            HandEvent.objects.filter(hand=hand, seq=seq - 1).values_list("hash", flat=True).first()
            or ""
        )
    digest = event_hash(
        hand=hand.pk,
        seq=seq,
        type=values["type"],
        actor_seat=values["actor_seat"],
        system=values["system"],
        bot=values["bot"],
        payload=values["payload"],
        effects=values["effects"],
        prev=prev,
    )
    return HandEvent.objects.create(hand=hand, prev_hash=prev, hash=digest, **values)


def make_hand(table: Table, **fields) -> Hand:
    values = {
        "table": table,
        "number": 1,
        "n_seats": 2,
        "dealer": 0,
        "stake": 1,
        "room_id": "nen-dat",
        "fees": {},
        "xuong_sai_settled": False,
        "mode": "basic",
        "ruleset": {},
        "seed": "a" * 64,
        "seed_hash": "b" * 64,
        "last_event_at": timezone.now(),
        "deadline_at": timezone.now(),
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
        {"fixed_dealer": 3, "max_seats": 2, "fixed_deck": ["2N"] * 100},
        {"fixed_dealer": 0},
        {"fixed_deck": ["2N"] * 99},
        {"fixed_deck": []},
        {"name": ""},
    ],
)
def test_table_constraints(make_user, fields) -> None:
    owner, _ = make_user()
    with pytest.raises(IntegrityError), transaction.atomic():
        make_table(owner, **fields)


@pytest.mark.parametrize("fields", [{}, {"room_id": "sap-gu-vip"}, {"fixed_deck": ["2N"] * 100}])
def test_valid_tables_pass_the_constraints(make_user, fields) -> None:
    owner, _ = make_user()
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
        Seat.objects.create(table=table, player=other, number=1, ready=True)  # no ready_at


@pytest.mark.parametrize(
    "fields",
    [
        {"dealer": 2},
        {"n_seats": 5, "dealer": 0},
        {"previous_winner": 3},
        {"seed": "abc"},
        {"status": "ended"},
        {"result": {"outcome": None}},
        {"stake": 0},
        {"number": 0},
        {"seed": "A" * 64},
        {"seed": "g" * 64},
        {"seed": "a" * 63 + " "},
        {"seed_hash": "B" * 64},
        {"seed_hash": "b" * 63 + "-"},
        {"deck": ["2N"] * 99},
        {"deck": []},
    ],
)
def test_hand_constraints(make_user, fields) -> None:
    owner, _ = make_user()
    table = make_table(owner)
    with pytest.raises(IntegrityError), transaction.atomic():
        make_hand(table, **fields)


def test_a_table_or_hand_in_no_room_is_refused(make_user) -> None:
    owner, _ = make_user()
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # foreign keys are checked at commit
    with pytest.raises(IntegrityError), transaction.atomic():
        make_table(owner, room_id="no-such-room")
    with pytest.raises(IntegrityError), transaction.atomic():
        make_hand(make_table(owner), room_id="no-such-room")


def test_hand_seats_are_unique_per_position_user_and_table_seat(make_user) -> None:
    a, _ = make_user()
    b, _ = make_user()
    hand = make_hand(make_table(a))
    seat = {"hand": hand, "auto_u": True, "auto_chiu": True}
    HandSeat.objects.create(position=0, user=a, table_seat=0, **seat)
    for clash in (
        {"position": 0, "user": b, "table_seat": 1},
        {"position": 1, "user": a, "table_seat": 1},
        {"position": 1, "user": b, "table_seat": 0},
        {"position": 4, "user": b, "table_seat": 1},
    ):
        with pytest.raises(IntegrityError), transaction.atomic():
            HandSeat.objects.create(**clash, **seat)
    HandSeat.objects.create(position=1, user=b, table_seat=3, **seat)
    assert [s.user_id for s in hand.seat_list()] == [a.pk, b.pk] and hand.seat_of(b.pk) == 1


def test_a_hand_ends_after_it_was_created(make_user) -> None:
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    ended = {"status": "ended", "result": {"outcome": {"result": "hoa"}}, "deadline_at": None}
    with hand_guard_off():  # no ending event: only the constraint is tried
        with pytest.raises(IntegrityError, match="ended_after_created"), transaction.atomic():
            Hand.objects.filter(pk=hand.pk).update(
                **ended, ended_at=hand.created_at - timedelta(seconds=1)
            )
        Hand.objects.filter(pk=hand.pk).update(**ended, ended_at=hand.created_at)


def test_a_fixed_deck_hand_and_a_shuffled_one_pass_the_constraints(make_user) -> None:
    owner, _ = make_user()
    make_hand(make_table(owner), deck=["2N"] * 100)
    make_hand(make_table(owner), seed="0123456789abcdef" * 4, seed_hash="fedcba9876543210" * 4)


def test_a_table_plays_one_hand_at_a_time(make_user) -> None:
    owner, _ = make_user()
    table = make_table(owner)
    make_hand(table)
    with pytest.raises(IntegrityError), transaction.atomic():
        make_hand(table, number=2)
    with hand_guard_off():  # no ending event: faked ended
        Hand.objects.filter(table=table).update(
            status="ended",
            result={"outcome": {"result": "hoa"}},
            ended_at=timezone.now(),
            deadline_at=None,
        )
    make_hand(table, number=2)


def test_the_log_is_unique_by_seq_and_append_only(make_user) -> None:
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    deal = log_event(hand, seq=0, type="deal", system=True)
    log_event(hand, seq=1, type="draw", actor_seat=1, payload={"type": "draw", "seat": 1})
    with pytest.raises(IntegrityError), transaction.atomic():
        log_event(hand, seq=1, type="pass", actor_seat=1, payload={"type": "pass", "seat": 1})
    with pytest.raises(IntegrityError), transaction.atomic():
        log_event(hand, seq=2, type="pass")  # neither an actor nor system
    with pytest.raises(IntegrityError), transaction.atomic():
        log_event(hand, seq=3, type="deal", system=True)
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


def test_event_types_are_the_deal_the_rules_cores_moves_and_the_records() -> None:
    assert set(EVENT_TYPES) == {"deal", *MOVE_TYPES, "settled", "voided"}


@pytest.mark.parametrize("move_type", sorted(MOVE_TYPES))
def test_every_move_type_can_be_logged(make_user, move_type) -> None:
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    log_event(hand, seq=0, type="deal", system=True)
    log_event(hand, seq=1, type=move_type, actor_seat=0, payload={"type": move_type, "seat": 0})


@pytest.mark.parametrize(
    "fields",
    [
        {"seq": 1, "type": "peek", "actor_seat": 0, "payload": {"type": "peek", "seat": 0}},
        {"seq": 1, "type": "", "actor_seat": 0, "payload": {"type": "", "seat": 0}},
        {"seq": 0, "type": "deal", "system": False, "actor_seat": 0},
        {"seq": 0, "type": "deal", "system": True, "actor_seat": 0},
        {"seq": 1, "type": "draw", "system": True, "payload": {"type": "draw", "system": True}},
        {"seq": 1, "type": "draw", "actor_seat": 0, "payload": {"type": "pass", "seat": 0}},
        {"seq": 1, "type": "draw", "actor_seat": 0, "payload": {"seat": 0}},
        {"seq": 1, "type": "draw", "actor_seat": 0, "payload": {"type": "draw", "seat": 1}},
        {"seq": 1, "type": "draw", "actor_seat": 0, "payload": {"type": "draw"}},
    ],
)
def test_event_constraints(make_user, fields) -> None:
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    if fields["seq"] > 0:
        log_event(hand, seq=0, type="deal", system=True)
    with pytest.raises(IntegrityError) as refused, transaction.atomic():
        log_event(hand, **fields)
    assert "prev_hash" not in str(refused.value)  # a constraint refused it, not the chain


def test_a_system_move_names_its_seat(make_user) -> None:
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    log_event(hand, seq=0, type="deal", system=True)
    log_event(
        hand,
        seq=1,
        type="draw",
        system=True,
        actor_seat=1,
        payload={"type": "draw", "seat": 1, "system": True},
    )


def make_record(hand: Hand, user, **fields) -> IdempotencyRecord:
    values = {
        "user": user,
        "key": "k-1",
        "hand": hand,
        "request_hash": "c" * 64,
        "response_status": 201,
        "response_body": {},
    }
    values.update(fields)
    return IdempotencyRecord.objects.create(**values)


@pytest.mark.parametrize(
    "fields",
    [
        {"key": ""},
        {"key": "a b"},
        {"key": "clé"},
        {"request_hash": "C" * 64},
        {"request_hash": "c" * 63},
        {"response_status": 99},
    ],
)
def test_idempotency_record_constraints(make_user, fields) -> None:
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    with pytest.raises(IntegrityError), transaction.atomic():
        make_record(hand, owner, **fields)


def test_too_long_a_key_is_refused(make_user) -> None:
    # The column type refuses it (a DataError) before the check constraint would.
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    with pytest.raises(DataError), transaction.atomic():
        make_record(hand, owner, key="x" * 129)


def test_an_idempotency_key_is_any_visible_ascii(make_user) -> None:
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    make_record(hand, owner, key="".join(chr(c) for c in range(0x21, 0x7F)))
    make_record(hand, owner, key="k" * 128)


def test_postgresql_itself_refuses_to_change_the_log(make_user) -> None:
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    log_event(hand, seq=0, type="deal", system=True)
    for sql in (
        "UPDATE games_handevent SET type = 'x' WHERE hand_id = %s",
        "DELETE FROM games_handevent WHERE hand_id = %s",
    ):
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, [hand.pk])
    assert HandEvent.objects.get(hand=hand).type == "deal"


def test_postgresql_itself_refuses_to_truncate_the_log(make_user) -> None:
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    log_event(hand, seq=0, type="deal", system=True)
    with connection.cursor() as cursor:  # run the insert's deferred FK checks: TRUNCATE needs it
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    # the suite's own test database allows TRUNCATE (for Django's flush); a production one does not
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL chan.allow_log_truncate = 'off'")
        cursor.execute("TRUNCATE games_handevent")
    assert HandEvent.objects.filter(hand=hand).count() == 1
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def test_a_playing_hand_has_a_deadline_and_an_ended_one_none(make_user) -> None:
    owner, _ = make_user()
    hand = make_hand(make_table(owner))
    with pytest.raises(IntegrityError), transaction.atomic():
        Hand.objects.filter(pk=hand.pk).update(deadline_at=None)
    ended = {
        "status": "ended",
        "result": {"outcome": {"result": "hoa"}},
        "ended_at": timezone.now(),
    }
    with hand_guard_off():  # no ending event: only the constraint is tried
        with pytest.raises(IntegrityError, match="deadline_iff_playing"), transaction.atomic():
            Hand.objects.filter(pk=hand.pk).update(**ended)
        Hand.objects.filter(pk=hand.pk).update(**ended, deadline_at=None)
