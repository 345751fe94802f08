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


def test_a_ban_unseats_the_player_and_refunds_its_pot_share(
    make_user, staff, django_capture_on_commit_callbacks
) -> None:
    from django.core.management import call_command

    from accounts.ledger_selectors import wallet_balance
    from accounts.models import LedgerAccount
    from core.errors import PermissionDenied
    from games.models import PotShare, Seat
    from games.services.quan_booking import hand_settle
    from games.services.tables import seat_join
    from tests.games.decks import HOA_DECK
    from tests.games.test_games_hands_api import play_to_end

    # Given a gà góp table between hands whose first hand (a hòa) put a share of each seat in
    # the pot,
    players = [Player(user, token, client_with(token)) for user, token in map(make_user, "abcd")]
    ids = start_table(
        players, HOA_DECK, ruleset={"preset": "chan_van_van", "overrides": {"ga_gop": True}}
    )
    play_to_end(players, ids)
    hand_settle(hand_id=ids["hand"])
    cheat = players[2].user
    share = PotShare.objects.get(table_id=ids["table"], user=cheat).amount
    pot = LedgerAccount.objects.get(kind="pot", table_id=ids["table"])
    before, pot_before = wallet_balance(cheat), pot.balance
    assert share > 0
    # when staff ban one of its players,
    with django_capture_on_commit_callbacks(execute=True):
        user_ban(user_id=cheat.pk, staff=staff, reason="collusion")
    # its seat is free, its share back in its wallet and out of the pot (the ledger balances),
    assert not Seat.objects.filter(table_id=ids["table"], player=cheat).exists()
    assert Seat.objects.filter(table_id=ids["table"]).count() == 3
    assert not PotShare.objects.filter(table_id=ids["table"], user=cheat).exists()
    assert wallet_balance(cheat) == before + share
    pot.refresh_from_db()
    assert pot.balance == pot_before - share
    call_command("ledger_check")
    # and it cannot sit again (its token is refused; the service refuses it too).
    r = players[2].client.post(f"/api/v1/tables/{ids['table']}/join", {}, format="json")
    assert r.status_code == 401
    with pytest.raises(PermissionDenied) as refused:
        seat_join(table_id=ids["table"], user=cheat)
    assert refused.value.code == "player_banned"


def test_a_ban_mid_hand_marks_the_player_as_leaving(
    make_user, staff, django_capture_on_commit_callbacks
) -> None:
    from games.models import Seat

    players = [Player(user, token, client_with(token)) for user, token in map(make_user, "abcd")]
    ids = start_table(players)
    cheat = players[1].user
    with django_capture_on_commit_callbacks(execute=True):
        user_ban(user_id=cheat.pk, staff=staff, reason="abuse")
    # As a player leaving mid-hand: gone from the hand (the server plays its seat to the end),
    # its table seat freed when the hand ends.
    gone = HandSeat.objects.get(hand_id=ids["hand"], user=cheat)
    assert gone.left_at is not None
    assert Seat.objects.filter(table_id=ids["table"], player=cheat).exists()
    assert Hand.objects.get(pk=ids["hand"]).status == Hand.Status.PLAYING
