"""The admin: tables and seats editable, hands and their logs read-only, seeds hidden in play."""

from __future__ import annotations

import pytest
from django.test import Client

from games.models import Hand, HandEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user) -> Client:
    user, _ = make_user(username="admin", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    return client


def test_the_admin_lists_tables_seats_hands_and_events(staff, win_hand) -> None:
    for model in ("table", "seat", "hand", "handevent", "idempotencyrecord"):
        r = staff.get(f"/admin/games/{model}/")
        assert r.status_code == 200, model
    assert staff.get(f"/admin/games/table/{win_hand['table']}/change/").status_code == 200


def test_a_hands_seed_is_hidden_until_it_ends(staff, win_hand) -> None:
    hand = Hand.objects.get(pk=win_hand["hand"])
    r = staff.get(f"/admin/games/hand/{hand.pk}/change/")
    assert r.status_code == 200
    assert (
        hand.seed not in r.content.decode() and "hidden until the hand ends" in r.content.decode()
    )
    Hand.objects.filter(pk=hand.pk).update(
        status="ended", result={"outcome": {"result": "hoa"}}, ended_at=hand.created_at
    )
    r = staff.get(f"/admin/games/hand/{hand.pk}/change/")
    assert hand.seed in r.content.decode()


def test_hands_and_events_cannot_be_changed_or_deleted_in_the_admin(staff, win_hand) -> None:
    event = HandEvent.objects.get(hand_id=win_hand["hand"], seq=0)
    r = staff.post(f"/admin/games/handevent/{event.pk}/change/", {"type": "x"})
    assert r.status_code == 403
    r = staff.post(f"/admin/games/handevent/{event.pk}/delete/", {"post": "yes"})
    assert r.status_code == 403
    r = staff.post(f"/admin/games/hand/{win_hand['hand']}/delete/", {"post": "yes"})
    assert r.status_code == 403
    assert HandEvent.objects.filter(pk=event.pk, type="deal").exists()
