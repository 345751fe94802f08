"""The arenas' admin: staff schedule one, edit it before its start only, and cancel
it with a reason (the entry fees' holds released) — all through the services."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from accounts.hold_selectors import wallet_funds
from games.models import Tournament
from games.services.tournaments import tournament_join

pytestmark = pytest.mark.django_db
URL = "/admin/games/tournament/"


def local(moment: dt.datetime) -> dict[str, str]:
    moment = timezone.localtime(moment)
    return {"0": moment.strftime("%Y-%m-%d"), "1": moment.strftime("%H:%M:%S")}


def form(**over: str) -> dict[str, str]:
    now = timezone.now()
    start, end = local(now + dt.timedelta(hours=1)), local(now + dt.timedelta(hours=2))
    data = {
        "name": "Giải sáng Chủ nhật",
        "room": "nen-dat",
        "stake": "1",
        "table_size": "4",
        "mode": "basic",
        "ruleset": '{"preset": "chan_van_van", "overrides": {}}',
        "entry_fee": "200",
        "starts_at_0": start["0"],
        "starts_at_1": start["1"],
        "ends_at_0": end["0"],
        "ends_at_1": end["1"],
        "payout": "[60, 40]",
        "entries-TOTAL_FORMS": "0",
        "entries-INITIAL_FORMS": "0",
        "entries-MIN_NUM_FORMS": "0",
        "entries-MAX_NUM_FORMS": "1000",
    }
    data.update(over)
    return data


@pytest.fixture
def staff(make_user) -> tuple[Client, object]:
    user, _ = make_user(username="admin", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    return client, user


def test_staff_schedule_edit_and_cancel_an_arena(staff, make_user) -> None:
    client, _ = staff
    r = client.post(f"{URL}add/", form())
    assert r.status_code == 302, r.content.decode()[:3000]
    t = Tournament.objects.get()
    assert (t.entry_fee, t.payout, t.ledger_table.status) == (200, [60, 40], "closed")
    # a payout that does not sum to 100 is refused on the form
    r = client.post(f"{URL}{t.pk}/change/", form(payout="[60, 30]"))
    assert r.status_code == 200 and "100" in r.content.decode()
    r = client.post(f"{URL}{t.pk}/change/", form(name="Giải mới"))
    assert r.status_code == 302
    t.refresh_from_db()
    assert t.name == "Giải mới"
    # a player enters; staff cancel: its hold is released
    player, _ = make_user()
    before = wallet_funds(player)
    tournament_join(tournament_id=t.pk, user=player)
    assert wallet_funds(player).held == before.held + 200
    data = {"action": "cancel", "_selected_action": [t.pk], "apply": "1", "reason": "bão"}
    r = client.post(URL, data)
    assert r.status_code == 302
    t.refresh_from_db()
    assert t.status == "cancelled" and t.cancel_reason == "bão"
    assert wallet_funds(player) == before
