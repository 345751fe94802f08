"""What browser and API clients see in the headers: ``RateLimit-*`` on throttled endpoints and
CORS for the origins on the allow-list (none by default)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import override_settings

pytestmark = pytest.mark.django_db

ORIGIN = "https://app.example"


@pytest.fixture(autouse=True)
def _fresh_throttle_counts() -> None:
    cache.clear()


def test_a_throttled_endpoint_tells_its_quota(client) -> None:
    first, second = client.get("/api/v1/"), client.get("/api/v1/")
    assert first["RateLimit-Limit"] == "60"  # THROTTLE_ANON
    assert first["RateLimit-Policy"] == "60;w=60"
    assert (int(first["RateLimit-Remaining"]), int(second["RateLimit-Remaining"])) == (59, 58)
    assert 0 < int(first["RateLimit-Reset"]) <= 60


def test_the_tightest_throttle_speaks_and_a_429_says_none_remain(client, monkeypatch) -> None:
    # Given login at 2 a minute (THROTTLE_AUTH),
    monkeypatch.setenv("THROTTLE_AUTH", "2/min")
    body = {"username": "nobody", "password": "wrong-password"}
    answers = [
        client.post("/api/v1/auth/token", body, content_type="application/json") for _ in range(3)
    ]
    # the third attempt is refused, and every answer told the quota.
    assert [a.status_code for a in answers] == [401, 401, 429]
    assert [a["RateLimit-Remaining"] for a in answers] == ["1", "0", "0"]
    assert {a["RateLimit-Limit"] for a in answers} == {"2"}
    assert int(answers[2]["RateLimit-Reset"]) >= int(answers[2]["Retry-After"]) - 1


def test_unthrottled_paths_have_no_ratelimit_headers(client) -> None:
    assert "RateLimit-Limit" not in client.get("/healthz")


def test_no_origin_is_allowed_by_default(client, settings) -> None:
    assert settings.CORS_ALLOWED_ORIGINS == []
    response = client.options(
        "/api/v1/tables", HTTP_ORIGIN=ORIGIN, HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST"
    )
    assert "Access-Control-Allow-Origin" not in response


def test_an_origin_on_the_allow_list_may_call_the_api(client) -> None:
    with override_settings(CORS_ALLOWED_ORIGINS=[ORIGIN]):
        preflight = client.options(
            "/api/v1/hands/1/moves",
            HTTP_ORIGIN=ORIGIN,
            HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
            HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, content-type, idempotency-key",
        )
        response = client.get("/api/v1/", HTTP_ORIGIN=ORIGIN)
        other = client.get("/api/v1/", HTTP_ORIGIN="https://evil.example")
    assert preflight["Access-Control-Allow-Origin"] == ORIGIN
    assert "idempotency-key" in preflight["Access-Control-Allow-Headers"]
    assert response["Access-Control-Allow-Origin"] == ORIGIN
    exposed = {h.strip().lower() for h in response["Access-Control-Expose-Headers"].split(",")}
    assert {"x-request-id", "ratelimit-remaining", "retry-after", "etag"} <= exposed
    assert "Access-Control-Allow-Origin" not in other
