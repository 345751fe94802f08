"""RULES.md §12: every decision has a deadline, and at it the server moves for the seat
(services.hands.hand_clock_tick, the Celery task's body; the worker itself is tested in
test_games_tasks.py and races in test_games_concurrency.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from test_games_services import deal, submit

from games.models import Hand, HandEvent, Seat
from games.selectors import hand_deadline, hand_state, hand_view_for_user
from games.services.hands import clock_sweep, hand_clock_tick
from games.services.tables import seat_leave

pytestmark = pytest.mark.django_db


def overdue(hand: Hand, seconds: float = 3600) -> Hand:
    """The hand as if its last turn event were ``seconds`` ago."""
    Hand.objects.filter(pk=hand.pk).update(
        last_event_at=timezone.now() - timedelta(seconds=seconds)
    )
    hand.refresh_from_db()
    return hand


def test_before_the_deadline_the_clock_does_nothing(make_user) -> None:
    hand = deal([make_user()[0] for _ in range(2)], seed=1)
    assert hand_clock_tick(hand_id=hand.pk, seq=0) is None
    assert HandEvent.objects.filter(hand=hand).count() == 1


def test_at_the_deadline_the_server_discards_for_the_dealer_once(make_user) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = overdue(deal(users, seed=2))
    # the tick plays one system move for the seat to act, however often it runs,
    assert hand_clock_tick(hand_id=hand.pk, seq=0) == 1
    assert hand_clock_tick(hand_id=hand.pk, seq=0) is None
    event = HandEvent.objects.get(hand=hand, seq=1)
    assert (event.type, event.system, event.actor_seat) == ("discard", True, hand.dealer)
    # and the next deadline runs from that move.
    hand.refresh_from_db()
    assert hand_clock_tick(hand_id=hand.pk, seq=1) is None


def test_an_idle_seat_draws_then_passes(make_user) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = overdue(deal(users, seed=3))
    hand_clock_tick(hand_id=hand.pk, seq=0)
    overdue(hand)
    assert hand_clock_tick(hand_id=hand.pk, seq=1) == 2
    overdue(hand)
    assert hand_clock_tick(hand_id=hand.pk, seq=2) == 3
    types = list(HandEvent.objects.filter(hand=hand, seq__gte=2).values_list("type", flat=True))
    assert types[0] == "draw" and types[1] in ("pass", "u", "eat", "chiu")


def test_the_clock_for_a_stale_seq_or_a_missing_hand_does_nothing(make_user) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = overdue(deal(users, seed=4))
    legal = hand_view_for_user(hand=hand, user=users[0])["legal_moves"]
    submit(hand, users[0], legal[-1])
    assert hand_clock_tick(hand_id=hand.pk, seq=0) is None
    assert hand_clock_tick(hand_id=10**9, seq=0) is None
    assert HandEvent.objects.filter(hand=hand).count() == 2


def test_a_hand_left_to_the_clock_ends(make_user) -> None:
    users = [make_user()[0] for _ in range(3)]
    hand = deal(users, seed=5)
    for _ in range(400):
        hand = overdue(hand)
        if hand.status == Hand.Status.ENDED:
            break
        assert hand_clock_tick(hand_id=hand.pk, seq=hand.seq) == hand.seq + 1
    assert hand.status == Hand.Status.ENDED
    assert HandEvent.objects.filter(hand=hand, seq__gt=0, system=False).count() == 0


def test_a_seat_that_left_is_played_after_the_auto_play_delay(make_user, settings) -> None:
    settings.CHAN_AUTO_PLAY_DELAY = 3
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=6)
    dealer_user = hand.seats[hand.dealer]["user"]
    table = hand.table
    turn = table.turn_timeout
    assert turn > 3
    seat_leave(table_id=table.pk, user=next(u for u in users if u.pk == dealer_user))
    assert Seat.objects.get(table=table, player_id=dealer_user).leaving
    state = hand_state(hand)
    due = hand_deadline(hand, table, state, actor_leaving=True)
    assert due == hand.last_event_at + timedelta(seconds=3)
    overdue(hand, seconds=4)  # past the delay, well before the turn timeout
    assert hand_clock_tick(hand_id=hand.pk, seq=0) == 1


def test_the_view_shows_the_deadline_the_clock_keeps(make_user) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=7)
    view = hand_view_for_user(hand=hand, user=users[1])
    expected = hand.last_event_at + timedelta(seconds=hand.table.turn_timeout)
    assert view["deadline"] == expected.isoformat()


def test_the_sweep_catches_up_on_lost_wake_ups(make_user) -> None:
    quiet = deal([make_user()[0] for _ in range(2)], seed=8)
    fresh = deal([make_user()[0] for _ in range(2)], seed=9)
    overdue(quiet)
    assert clock_sweep() == [quiet.pk]
    fresh.refresh_from_db()
    assert fresh.seq == 0
