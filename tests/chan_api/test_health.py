"""/healthz and /readyz: the process answers; its database, cache and broker answer."""

from __future__ import annotations

import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"
NOBODY_LISTENS = "redis://127.0.0.1:1/0"  # port 1: connection refused at once


def test_healthz_answers_without_touching_anything(client, django_assert_num_queries) -> None:
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


def test_readyz_checks_the_database_the_cache_and_the_broker(client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "cache": "ok", "broker": "ok"},
    }


def test_readyz_names_an_unreachable_cache_in_a_503_problem(client) -> None:
    unreachable = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": NOBODY_LISTENS,
        }
    }
    with override_settings(CACHES=unreachable):
        response = client.get("/readyz")
    assert response.status_code == 503
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["code"] == "service_unavailable"
    assert body["failed"] == ["cache"]
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["cache"].startswith("failed")
    assert "cache" in body["detail"]
    assert body["request_id"] == response["X-Request-ID"]


def test_readyz_names_an_unreachable_broker(client) -> None:
    with override_settings(CELERY_BROKER_URL=NOBODY_LISTENS, CELERY_BROKER_TRANSPORT_OPTIONS={}):
        response = client.get("/readyz")
    assert response.status_code == 503
    assert response["Content-Type"] == PROBLEM
    assert response.json()["failed"] == ["broker"]
