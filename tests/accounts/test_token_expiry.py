"""Bearer tokens expire ``CHAN_TOKEN_TTL_DAYS`` (30 by default) after they are issued, or when
the token that minted them does if sooner; the owner sees when in ``GET /auth/tokens``."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.services import token_create

pytestmark = pytest.mark.django_db


def bearer(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_a_token_expires_thirty_days_after_it_is_issued_by_default(make_user: Any) -> None:
    user, raw = make_user()
    rows = bearer(raw).get("/api/v1/auth/tokens").json()
    (row,) = rows
    expires_at = parse_datetime(row["expires_at"])
    created_at = parse_datetime(row["created_at"])
    assert expires_at is not None and created_at is not None
    assert abs((expires_at - created_at) - timedelta(days=30)) < timedelta(seconds=5)
    assert row["expired"] is False


def test_an_expired_token_is_refused(make_user: Any) -> None:
    # Given a token past its expiry,
    user, raw = make_user()
    ApiToken.objects.filter(user=user).update(expires_at=timezone.now() - timedelta(seconds=1))
    # the API refuses it like a revoked one.
    response = bearer(raw).get("/api/v1/me")
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"
    # and the owner's other, live token lists it as expired.
    _, live = token_create(user=user, name="new")
    rows = bearer(live).get("/api/v1/auth/tokens").json()
    assert [row["expired"] for row in rows] == [False, True]


def test_the_lifetime_is_a_setting_and_zero_means_never(make_user: Any, settings: Any) -> None:
    user, _ = make_user()
    settings.CHAN_TOKEN_TTL_DAYS = 7
    week, _ = token_create(user=user)
    assert week.expires_at is not None
    assert abs(week.expires_at - timezone.now() - timedelta(days=7)) < timedelta(seconds=5)
    settings.CHAN_TOKEN_TTL_DAYS = 0
    forever, raw = token_create(user=user)
    assert forever.expires_at is None
    response = bearer(raw).get("/api/v1/auth/tokens")
    assert response.json()[0]["expires_at"] is None
    assert bearer(raw).get("/api/v1/me").status_code == 200


def test_a_token_never_mints_one_that_outlives_it(make_user: Any) -> None:
    # given a token that may mint tokens and expires in a minute
    user, _ = make_user()
    asker, raw = token_create(user=user, scopes=["tokens", "read"], expires_in=60)
    assert asker.expires_at is not None
    client = bearer(raw)

    # when it asks for a token of a year, or of the default lifetime
    for body in ({"scopes": ["read"], "expires_in": 366 * 24 * 3600}, {"scopes": ["read"]}):
        response = client.post("/api/v1/me/tokens", body, format="json")

        # then the new token expires when the asking one does, as the answer says
        assert response.status_code == 201, response.content
        assert parse_datetime(response.json()["expires_at"]) == asker.expires_at
        minted = ApiToken.objects.get(pk=response.json()["id"])
        assert minted.expires_at == asker.expires_at

    # a shorter lifetime than the asker's stays as asked
    asker.expires_at = timezone.now() + timedelta(hours=2)
    asker.save(update_fields=["expires_at"])
    short = client.post("/api/v1/me/tokens", {"scopes": ["read"], "expires_in": 60}, format="json")
    expires_at = parse_datetime(short.json()["expires_at"])
    assert expires_at is not None and expires_at - timezone.now() < timedelta(seconds=65)


def test_a_token_that_never_expires_mints_what_it_asks_for(make_user: Any, settings: Any) -> None:
    settings.CHAN_TOKEN_TTL_DAYS = 0
    user, _ = make_user()
    asker, raw = token_create(user=user, scopes=["tokens", "read"])
    assert asker.expires_at is None
    forever = bearer(raw).post("/api/v1/me/tokens", {"scopes": ["read"]}, format="json")
    assert forever.status_code == 201 and forever.json()["expires_at"] is None
    year = bearer(raw).post(
        "/api/v1/me/tokens", {"scopes": ["read"], "expires_in": 366 * 24 * 3600}, format="json"
    )
    expires_at = parse_datetime(year.json()["expires_at"])
    assert expires_at is not None and expires_at - timezone.now() > timedelta(days=365)
