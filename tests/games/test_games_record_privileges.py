"""What the application's own database credentials cannot bend in a hand's record (games 0041,
core/db_roles.py): a dealt seat keeps its player, and a hand ends only with the event that ends
it. Each attack is the SQL a client holding ``DATABASE_URL`` would send; the suite's connection
is that role."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings
from django.db import DatabaseError, connection, transaction

from games.models import Hand, HandSeat
from games.services import hands as hand_services
from games.services.quan_booking import hand_settle
from tests.db_owner import as_owner
from tests.games.test_games_hands_api import play, play_to_end

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL privileges"),
]

needs_app_role = pytest.mark.skipif(
    not getattr(settings, "CHAN_DATABASE_APP", None),
    reason="the suite runs as one role (DATABASE_URL without DATABASE_OWNER_URL)",
)


def refused(sql: str, params: tuple | list = (), match: str = "") -> None:
    """``sql`` fails in PostgreSQL; inside a savepoint, so the test goes on."""
    with (
        pytest.raises(DatabaseError, match=match),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, params)
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def seated(hand_id: int) -> list[int]:
    return list(
        HandSeat.objects.filter(hand_id=hand_id)
        .order_by("position")
        .values_list("user_id", flat=True)
    )


@needs_app_role
def test_a_seats_player_cannot_be_changed_after_the_deal(players, win_hand, make_player) -> None:
    # given a dealt hand and an outsider who would take seat 1's winnings
    hand_id = win_hand["hand"]
    outsider = make_player().user
    before = seated(hand_id)
    # then the application's role may not write who sits where
    refused(
        "UPDATE games_handseat SET user_id = %s WHERE hand_id = %s AND position = 1",
        (outsider.pk, hand_id),
        match="permission denied for table games_handseat",
    )
    refused(
        "UPDATE games_handseat SET position = 3 - position, table_seat = 3 - table_seat"
        " WHERE hand_id = %s",
        (hand_id,),
        match="permission denied for table games_handseat",
    )
    assert seated(hand_id) == before


def test_the_owner_cannot_change_a_seats_player_either(players, win_hand, make_player) -> None:
    # the trigger is the second line: it refuses the owner too
    hand_id = win_hand["hand"]
    outsider = make_player().user
    with pytest.raises(DatabaseError, match="who sits where never changes"), transaction.atomic():
        as_owner(
            "UPDATE games_handseat SET user_id = %s WHERE hand_id = %s AND position = 1",
            [outsider.pk, hand_id],
        )
    assert outsider.pk not in seated(hand_id)


def test_no_seat_is_added_to_or_taken_from_a_dealt_hand(players, win_hand, make_player) -> None:
    hand_id = win_hand["hand"]
    outsider = make_player().user
    before = seated(hand_id)
    refused(
        "DELETE FROM games_handseat WHERE hand_id = %s AND position = 1",
        (hand_id,),
        match="its seats are set at the deal",
    )
    refused(
        "INSERT INTO games_handseat"
        " (hand_id, position, user_id, table_seat, auto_u, auto_chiu, created_at, updated_at)"
        " VALUES (%s, 3, %s, 3, false, false, now(), now())",
        (hand_id, outsider.pk),
        match="its seats are set at the deal|games_handseat_unique",
    )
    assert seated(hand_id) == before


@needs_app_role
def test_an_outsider_put_in_a_seat_between_the_end_and_the_booking_is_refused(
    players, win_hand, make_player
) -> None:
    # given a hand played to its end and not booked yet
    play_to_end(players, win_hand)
    hand_id = win_hand["hand"]
    assert Hand.objects.get(pk=hand_id).settled_at is None
    outsider = make_player().user
    # when the client puts an outsider in each seat in turn, every one is refused
    for position in range(4):
        refused(
            "UPDATE games_handseat SET user_id = %s WHERE hand_id = %s AND position = %s",
            (outsider.pk, hand_id, position),
            match="permission denied for table games_handseat",
        )
    # then the booking pays the players who sat
    tx = hand_settle(hand_id=hand_id)
    assert tx is not None
    paid = set(
        tx.entries.filter(account__user__isnull=False).values_list("account__user", flat=True)
    )
    assert outsider.pk not in paid and paid <= {p.user.pk for p in players}


FORGED_RESULT = {
    "outcome": {"result": "u", "seat": 0},
    "win": {"seat": 0, "card": "9S", "source": "drawn", "by_chiu": False, "bach_thu": False},
    "declaration": None,
    "settlement": None,
}


@pytest.mark.django_db(transaction=True)  # the hand's events committed, as in production
@pytest.mark.parametrize(
    "result",
    [
        FORGED_RESULT,
        {"outcome": {"result": "hoa"}, "win": None, "declaration": None, "settlement": None},
    ],
)
def test_a_playing_hand_cannot_be_ended_without_its_ending_event(players, win_hand, result) -> None:
    # given a hand being played
    hand_id = win_hand["hand"]
    play(players, win_hand, 2)
    # when the client ends it with a result of its own, no event appended
    refused(
        "UPDATE games_hand SET status = 'ended', result = %s, ended_at = now(),"
        " deadline_at = NULL WHERE id = %s",
        (json.dumps(result), hand_id),
        match="ends only with the event that ends it",
    )
    # then the hand plays on
    hand = Hand.objects.get(pk=hand_id)
    assert hand.status == Hand.Status.PLAYING and hand.result is None


def test_the_end_is_refused_when_the_result_is_not_what_the_ending_event_says(
    players, win_hand, monkeypatch
) -> None:
    # given the server's own ending path, writing a result another seat won
    def forged(state: Any) -> dict[str, Any]:
        real = result_of(state)
        seat = (real["outcome"]["seat"] + 1) % 4
        return {
            **real,
            "outcome": {"result": "u", "seat": seat},
            "win": {**real["win"], "seat": seat},
        }

    result_of = hand_services.result_of
    monkeypatch.setattr(hand_services, "result_of", forged)
    # when the hand reaches its end, the move that ends it is refused whole
    with pytest.raises(DatabaseError, match="is not what its last event"):
        play_to_end(players, win_hand)
    monkeypatch.undo()
    hand = Hand.objects.get(pk=win_hand["hand"])
    assert hand.status == Hand.Status.PLAYING
    # and the true end passes
    play_to_end(players, win_hand)
    hand.refresh_from_db()
    assert hand.status == Hand.Status.ENDED and hand.result["outcome"]["result"] == "u"


def test_the_server_ends_a_hoa_hand_with_its_event(players, hoa_hand) -> None:
    play_to_end(players, hoa_hand)
    hand = Hand.objects.get(pk=hoa_hand["hand"])
    assert hand.status == Hand.Status.ENDED and hand.result["outcome"] == {"result": "hoa"}
