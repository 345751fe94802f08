"""RULES.md §12: every decision has a deadline, and at it the server moves for the seat
(services.hands.hand_clock_tick, the Celery task's body; the worker itself is tested in
test_games_tasks.py and races in test_games_concurrency.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from test_games_services import deal, submit

from games.clock import clock_overdue
from games.export import hand_export
from games.models import Hand, HandEvent, HandSeat, Seat
from games.rules.verify import verify_export
from games.selectors.hands import hand_view_for_user, utc_iso
from games.services.hands import hand_clock_tick
from games.services.tables import seat_leave, seat_ready

pytestmark = pytest.mark.django_db


def overdue(hand: Hand) -> Hand:
    """The hand as if its deadline had passed an hour ago."""
    Hand.objects.filter(pk=hand.pk, status="playing").update(
        deadline_at=timezone.now() - timedelta(hours=1)
    )
    hand.refresh_from_db()
    return hand


def test_a_new_hand_gives_the_dealer_the_turn_timeout(make_user) -> None:
    hand = deal([make_user()[0] for _ in range(2)], seed=1)
    assert hand.deadline_at == hand.last_event_at + timedelta(seconds=hand.table.turn_timeout)
    assert hand_clock_tick(hand_id=hand.pk) is None  # not due yet
    assert HandEvent.objects.filter(hand=hand).count() == 1


def test_at_the_deadline_the_server_discards_for_the_dealer_once(make_user) -> None:
    hand = overdue(deal([make_user()[0] for _ in range(2)], seed=2))
    # the tick plays one system move for the seat to act, however often it runs,
    assert hand_clock_tick(hand_id=hand.pk) == 1
    assert hand_clock_tick(hand_id=hand.pk) is None
    event = HandEvent.objects.get(hand=hand, seq=1)
    assert (event.type, event.system, event.actor_seat) == ("discard", True, hand.dealer)
    # and the next seat's deadline runs from that move.
    hand.refresh_from_db()
    assert hand.deadline_at == hand.last_event_at + timedelta(seconds=hand.table.turn_timeout)


def test_an_idle_seat_draws_then_passes_or_wins(make_user) -> None:
    hand = overdue(deal([make_user()[0] for _ in range(2)], seed=3))
    for seq in (1, 2, 3):
        assert hand_clock_tick(hand_id=hand.pk) == seq
        overdue(hand)
    types = list(HandEvent.objects.filter(hand=hand, seq__in=(2, 3)).values_list("type", flat=True))
    assert types[0] == "draw" and types[1] in ("pass", "u")


def test_a_players_move_sets_the_next_deadline_and_the_old_wake_up_does_nothing(
    make_user,
) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=4)
    legal = hand_view_for_user(hand=hand, user=users[0])["legal_moves"]
    submit(hand, users[0], legal[-1])
    hand.refresh_from_db()
    assert hand.deadline_at > timezone.now()
    assert hand_clock_tick(hand_id=hand.pk) is None
    assert hand_clock_tick(hand_id=10**9) is None
    assert HandEvent.objects.filter(hand=hand).count() == 2


def test_set_prefs_neither_moves_nor_wakes_the_deadline(make_user) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=5)
    before = hand.deadline_at
    submit(hand, users[1], {"type": "set_prefs", "auto_u": False})
    hand.refresh_from_db()
    assert (hand.seq, hand.deadline_at) == (1, before)


def test_a_hand_left_to_the_clock_ends_and_its_deadline_clears(make_user) -> None:
    hand = deal([make_user()[0] for _ in range(3)], seed=6)
    for _ in range(400):
        hand = overdue(hand)
        if hand.status == Hand.Status.ENDED:
            break
        assert hand_clock_tick(hand_id=hand.pk) == hand.seq + 1
    assert hand.status == Hand.Status.ENDED and hand.deadline_at is None
    assert not HandEvent.objects.filter(hand=hand, seq__gt=0, system=False).exists()


def test_a_seat_that_leaves_on_its_turn_is_played_after_the_auto_play_delay(
    make_user, settings
) -> None:
    settings.CHAN_AUTO_PLAY_DELAY = 3
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=7)
    dealer = next(u for u in users if u.pk == hand.seat_list()[hand.dealer].user_id)
    assert hand.table.turn_timeout > 3
    # When the dealer leaves on its own turn, its deadline comes down to the delay,
    seat_leave(table_id=hand.table_id, user=dealer)
    assert HandSeat.objects.get(hand=hand, user=dealer).left_at is not None
    hand.refresh_from_db()
    assert hand.deadline_at == hand.last_event_at + timedelta(seconds=3)
    # and the view shows it, and who left.
    other = next(u for u in users if u is not dealer)
    view = hand_view_for_user(hand=hand, user=other)
    assert view["deadline"] == utc_iso(hand.deadline_at)
    assert [p["left"] for p in view["players"]] == [
        s.user_id == dealer.pk for s in hand.seat_list()
    ]
    # Its later turns get the delay too: after the server's discard and the other seat's turn,
    assert hand_clock_tick(hand_id=hand.pk, now=hand.deadline_at) == 1
    hand.refresh_from_db()
    assert hand.deadline_at == hand.last_event_at + timedelta(seconds=hand.table.turn_timeout)


def test_the_sweep_finds_hands_and_tables_whose_wake_up_was_lost(make_user) -> None:
    quiet = overdue(deal([make_user()[0] for _ in range(2)], seed=8))
    fresh = deal([make_user()[0] for _ in range(2)], seed=9)
    # a table with two of three ready, its ready deadline long past,
    users = [make_user()[0] for _ in range(3)]
    from games.services.tables import seat_join, table_create

    table = table_create(owner=users[0], name="r", stake=1)
    for u in users[1:]:
        seat_join(table_id=table.pk, user=u)
    for u in users[:2]:
        seat_ready(table_id=table.pk, user=u)
    Seat.objects.filter(table=table, ready=True).update(
        ready_at=timezone.now() - timedelta(hours=1)
    )
    hands, tables = clock_overdue(now=timezone.now())
    assert hands == [quiet.pk] and fresh.pk not in hands
    assert tables == [table.pk]


def test_a_system_move_records_its_cause_and_the_export_verifies(make_user) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = overdue(deal(users, seed=8))
    assert hand_clock_tick(hand_id=hand.pk) == 1
    first = HandEvent.objects.get(hand=hand, seq=1)
    # the server's move says why it was made, and the payload its schema version
    assert first.effects[-1] == {"type": "system", "seat": hand.dealer, "cause": "timeout"}
    assert first.payload["v"] == 2
    # a seat that left is played for that reason
    hand.refresh_from_db()
    leaver = next(u for u in users if u.pk != hand.seat_list()[hand.dealer].user_id)
    seat_leave(table_id=hand.table_id, user=leaver)
    for _ in range(400):
        hand = overdue(hand)
        if hand.status == Hand.Status.ENDED:
            break
        hand_clock_tick(hand_id=hand.pk)
    causes = {
        (e.actor_seat, e.effects[-1]["cause"])
        for e in HandEvent.objects.filter(hand=hand, seq__gt=0, type__in=["draw", "discard"])
    }
    left_seat = hand.seat_of(leaver.pk)
    assert (left_seat, "left") in causes and (1 - left_seat, "timeout") in causes
    hand.refresh_from_db()
    assert hand.status == Hand.Status.ENDED
    doc = hand_export(hand)
    assert verify_export(doc) is None
    # Without its chain (an older export), a cause the state does not allow is named at its seq.
    del doc["chain"]
    doc["events"][1]["effects"][-1]["cause"] = "bao"  # the dealer was not báo
    found = verify_export(doc)
    assert found is not None and found.seq == 1 and 'cause is "bao"' in found.reason
