"""Banning a player (``accounts.services.user_ban``): no token, no login (API or admin), no seat;
its history untouched. Lifting the ban gives all of it back."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import User
from accounts.services import user_ban, user_unban
from games.models import Hand, HandSeat
from tests.games.conftest import Player, client_with, start_table

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user) -> User:
    user, _ = make_user(username="boss", is_staff=True, is_superuser=True)
    return user


def test_a_banned_player_cannot_use_its_token_log_in_or_sit(make_user, staff, api_client) -> None:
    player, token = make_user(username="cheat", password="a-Long-pass-42")
    other, _ = make_user(username="host")
    table = client_with(_ := make_user(username="owner")[1]).post(
        "/api/v1/tables", {"name": "t", "stake": 10}, format="json"
    )
    assert table.status_code == 201
    # when staff ban it,
    user_ban(user_id=player.pk, staff=staff, reason="bot play")
    player.refresh_from_db()
    assert player.banned_at is not None and "bot play" in player.ban_reason
    # its token is refused,
    assert client_with(token).get("/api/v1/me").status_code == 401
    # it cannot get a new one, with the right password,
    r = api_client.post(
        "/api/v1/auth/token", {"username": "cheat", "password": "a-Long-pass-42"}, format="json"
    )
    assert r.status_code == 403 and r.json()["code"] == "player_banned"
    # nor sign in to the admin,
    assert not Client().login(username="cheat", password="a-Long-pass-42")
    # and, were its token still live, sitting down is refused by the service itself.
    from core.errors import PermissionDenied
    from games.services.tables import seat_join, table_create

    with pytest.raises(PermissionDenied) as refused:
        seat_join(table_id=table.json()["id"], user=player)
    assert refused.value.code == "player_banned"
    with pytest.raises(PermissionDenied):
        table_create(owner=player, name="mine", stake=10)
    # Lifting the ban gives everything back.
    user_unban(user_id=player.pk, staff=staff, reason="appeal accepted")
    assert client_with(token).get("/api/v1/me").status_code == 200
    r = client_with(token).post(f"/api/v1/tables/{table.json()['id']}/join", {}, format="json")
    assert r.status_code == 200, r.content


def test_a_ban_keeps_the_players_hands(make_user, staff) -> None:
    players = [Player(user, token, client_with(token)) for user, token in map(make_user, "abcd")]
    ids = start_table(players)
    user_ban(user_id=players[1].user.pk, staff=staff, reason="abuse")
    assert Hand.objects.filter(pk=ids["hand"]).exists()
    assert HandSeat.objects.filter(hand_id=ids["hand"], user=players[1].user).exists()
    # its public history still lists it, seen by another player.
    r = players[0].client.get(f"/api/v1/hands/{ids['hand']}")
    assert r.status_code == 200


def test_the_admin_bans_with_a_reason_and_the_history_keeps_old_and_new(make_user, staff) -> None:
    player, _ = make_user(username="cheat")
    client = Client()
    client.force_login(staff)
    form = {"action": "ban", "_selected_action": [player.pk]}
    assert b"reason" in client.post("/admin/accounts/user/", form).content
    r = client.post("/admin/accounts/user/", {**form, "apply": "Ban", "reason": "multi-account"})
    assert r.status_code == 302
    player.refresh_from_db()
    assert player.banned_at is not None and not player.is_active
    # The history holds the row before and after, and who changed it from which page.
    import pghistory.models

    ban = pghistory.models.Events.objects.tracks(player).get(pgh_label="update")
    assert ban.pgh_diff["banned_at"][0] is None and ban.pgh_diff["banned_at"][1] is not None
    assert ban.pgh_diff["is_active"] == [True, False]
    assert ban.pgh_context["user"] == staff.pk and ban.pgh_context["url"] == "/admin/accounts/user/"
    # Both the history and Django's own log are browsable in the admin.
    assert client.get("/admin/pghistory/events/").status_code == 200
    r = client.get("/admin/admin/logentry/")
    assert r.status_code == 200 and b"multi-account" in r.content
