"""``GET/PUT /api/v1/me/limits``, ``POST /me/cool-off``, ``POST /me/self-exclusion`` over HTTP,
and the admin's read-only pages of limits and their history."""

from __future__ import annotations

import datetime as dt
from unittest import mock

import pytest
from django.test import Client

from accounts.models import PlayerExclusion, PlayerLimitChange
from tests.games.conftest import client_with
from tests.games.test_games_hands_api import assert_problem

pytestmark = pytest.mark.django_db

T0 = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)


def at(when: dt.datetime) -> mock._patch:
    return mock.patch("django.utils.timezone.now", return_value=when)


@pytest.fixture
def player(make_user):
    user, token = make_user()
    return user, client_with(token)


def test_get_shows_no_limits_at_first(player) -> None:
    _, client = player
    body = client.get("/api/v1/me/limits").json()
    for kind in ("loss_limit_day", "loss_limit_week", "loss_limit_month", "max_stake"):
        assert body[kind] == {"value": None, "pending": None}
    assert body["losses"] == {"day": 0, "week": 0, "month": 0}
    assert body["cool_off"] is None and body["self_exclusion"] is None
    assert body["play_blocked"] is None


def test_put_lowers_at_once_and_raises_after_24_hours(player) -> None:
    _, client = player
    with at(T0):
        r = client.put("/api/v1/me/limits", {"max_stake": 100, "loss_limit_day": 500}, "json")
        assert r.status_code == 200, r.content
        assert r.json()["max_stake"] == {"value": 100, "pending": None}
        r = client.put("/api/v1/me/limits", {"max_stake": 1000, "loss_limit_day": None}, "json")
        body = r.json()
    assert body["max_stake"] == {
        "value": 100,
        "pending": {"value": 1000, "effective_at": "2026-12-02T10:00:00Z"},
    }
    assert body["loss_limit_day"]["pending"] == {
        "value": None,
        "effective_at": "2026-12-02T10:00:00Z",
    }
    with at(T0 + dt.timedelta(hours=24)):
        body = client.get("/api/v1/me/limits").json()
    assert body["max_stake"] == {"value": 1000, "pending": None}
    assert body["loss_limit_day"] == {"value": None, "pending": None}


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"max_stake": 0},
        {"max_stake": "100"},
        {"loss_limit_day": 1.5},
        {"reminder_minutes": 1},
        {"reminder_minutes": 10_000},
        {"loss_limit_weekly": 10},
    ],
)
def test_bad_limits_are_400_invalid(player, body) -> None:
    _, client = player
    r = client.put("/api/v1/me/limits", body, "json")
    problem = assert_problem(r, 400, "invalid")
    assert problem["errors"]


@pytest.mark.parametrize("body", [{}, {"days": 0}, {"days": 43}, {"days": None}, {"days": "3"}])
def test_bad_cool_off_is_400_invalid(player, body) -> None:
    _, client = player
    assert_problem(client.post("/api/v1/me/cool-off", body, "json"), 400, "invalid")
    assert not PlayerExclusion.objects.exists()


@pytest.mark.parametrize("body", [{}, {"days": 182}, {"days": -1}, {"days": 10**9}])
def test_bad_self_exclusion_is_400_invalid(player, body) -> None:
    _, client = player
    assert_problem(client.post("/api/v1/me/self-exclusion", body, "json"), 400, "invalid")


def test_cool_off_starts_at_once_and_blocks_play(player) -> None:
    user, client = player
    with at(T0):
        r = client.post("/api/v1/me/cool-off", {"days": 7}, "json")
        assert r.status_code == 201, r.content
        assert r.json() == {
            "kind": "cool_off",
            "days": 7,
            "starts_at": "2026-12-01T10:00:00Z",
            "ends_at": "2026-12-08T10:00:00Z",
            "permanent": False,
        }
        body = client.get("/api/v1/me/limits").json()
    assert body["cool_off"]["ends_at"] == "2026-12-08T10:00:00Z"
    assert body["play_blocked"]["code"] == "cooling_off"
    assert body["play_blocked"]["ends_at"] == "2026-12-08T10:00:00Z"
    assert PlayerLimitChange.objects.filter(user=user, kind="cool_off", new_value=7).exists()


def test_permanent_self_exclusion(player) -> None:
    _, client = player
    r = client.post("/api/v1/me/self-exclusion", {"days": None}, "json")
    assert r.status_code == 201, r.content
    assert r.json()["permanent"] is True and r.json()["ends_at"] is None
    body = client.get("/api/v1/me/limits").json()
    assert body["self_exclusion"]["permanent"] is True
    assert body["play_blocked"]["code"] == "self_excluded"


def test_a_cooling_off_player_cannot_claim_its_bonus(player) -> None:
    _, client = player
    client.post("/api/v1/me/cool-off", {"days": 1}, "json")
    assert_problem(client.post("/api/v1/me/bonus"), 409, "cooling_off")


def test_messages_are_in_vietnamese_when_asked(player) -> None:
    _, client = player
    client.post("/api/v1/me/self-exclusion", {"days": None}, "json")
    r = client.post("/api/v1/me/bonus", HTTP_ACCEPT_LANGUAGE="vi")
    body = assert_problem(r, 409, "self_excluded")
    assert "vĩnh viễn" in body["detail"]
    r = client.post("/api/v1/me/bonus", HTTP_ACCEPT_LANGUAGE="en")
    assert "permanently" in r.json()["detail"]


def test_limits_need_a_token(api_client) -> None:
    assert api_client.get("/api/v1/me/limits").status_code == 401


def test_staff_see_limits_exclusions_and_history_read_only(make_user, player) -> None:
    user, client = player
    client.put("/api/v1/me/limits", {"max_stake": 200}, "json")
    client.post("/api/v1/me/self-exclusion", {"days": 200}, "json")
    staff, _ = make_user(
        username="boss", password="pw-Secret-123", is_staff=True, is_superuser=True
    )
    browser = Client()
    assert browser.login(username="boss", password="pw-Secret-123")
    exclusion = PlayerExclusion.objects.get(user=user)
    for url in (
        "/admin/accounts/playerlimit/",
        "/admin/accounts/playerexclusion/",
        "/admin/accounts/playerlimitchange/",
        f"/admin/accounts/user/{user.pk}/change/",
    ):
        r = browser.get(url)
        assert r.status_code == 200, url
        assert b"self_exclusion" in r.content or b"max_stake" in r.content, url
    # nothing to change nor delete: the page of a self-exclusion has no form to shorten it
    page = browser.get(f"/admin/accounts/playerexclusion/{exclusion.pk}/change/")
    assert page.status_code == 200 and b'name="ends_at"' not in page.content
    r = browser.post(f"/admin/accounts/playerexclusion/{exclusion.pk}/delete/", {"post": "yes"})
    assert r.status_code == 403
    assert PlayerExclusion.objects.get(pk=exclusion.pk).ends_at == exclusion.ends_at
