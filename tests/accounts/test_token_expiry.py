"""Bearer tokens expire ``CHAN_TOKEN_TTL_DAYS`` (30 by default) after they are issued; the owner
sees when in ``GET /auth/tokens``."""

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
