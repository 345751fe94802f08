"""Deprecation policy (docs/api.md): a deprecated operation answers as before with Deprecation,
Sunset and Link headers and is ``deprecated`` in the schema; after its sunset it answers 410."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from chan_api import deprecations
from chan_api.deprecations import Deprecation

pytestmark = pytest.mark.django_db

PRESETS = Deprecation(
    url_name="games:rules-presets",
    operation_ids=("rules_presets",),
    deprecated_on=dt.date(2026, 1, 1),
    sunset_on=dt.date(2099, 1, 1),
    successor="/api/v1/rules/presets2",
)


@pytest.fixture
def api(django_user_model) -> Client:
    from accounts.services import token_create

    user = django_user_model.objects.create_user(username="dep", password="x" * 12)
    _token, secret = token_create(user=user, name="t")
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}")


def test_an_operation_not_deprecated_has_no_such_headers(api) -> None:
    response = api.get("/api/v1/rules/presets")
    assert response.status_code == 200
    assert "Deprecation" not in response and "Sunset" not in response


def test_a_deprecated_operation_still_answers_and_says_when_it_goes(api, monkeypatch) -> None:
    monkeypatch.setattr(deprecations, "DEPRECATIONS", (PRESETS,))
    response = api.get("/api/v1/rules/presets")
    assert response.status_code == 200
    assert response["Deprecation"] == "@1767225600"  # 2026-01-01T00:00:00Z (RFC 9745)
    assert response["Sunset"] == "Thu, 01 Jan 2099 00:00:00 GMT"  # RFC 8594
    assert 'rel="successor-version"' in response["Link"] and "/presets2" in response["Link"]
    schema = SchemaGenerator().get_schema(request=None, public=True)
    assert schema["paths"]["/api/v1/rules/presets"]["get"]["deprecated"] is True
    assert "deprecated" not in schema["paths"]["/api/v1/rules/evaluate"]["post"]


def test_after_its_sunset_it_is_gone_naming_its_successor(api, monkeypatch) -> None:
    retired = Deprecation(
        url_name=PRESETS.url_name,
        operation_ids=PRESETS.operation_ids,
        deprecated_on=dt.date(2025, 1, 1),
        sunset_on=dt.date(2026, 1, 1),
        successor=PRESETS.successor,
    )
    monkeypatch.setattr(deprecations, "DEPRECATIONS", (retired,))
    response = api.get("/api/v1/rules/presets", HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 410
    body = response.json()
    assert body["code"] == "gone" and body["successor"] == "/api/v1/rules/presets2"
    assert "2026-01-01" in body["detail"] and response["Sunset"]


def test_the_policy_gives_at_least_180_days_notice() -> None:
    with pytest.raises(ValueError):
        Deprecation(
            url_name="x",
            operation_ids=(),
            deprecated_on=dt.date(2026, 1, 1),
            sunset_on=dt.date(2026, 3, 1),
            successor="/y",
        )


def test_every_deprecation_names_a_real_url_and_operation() -> None:
    from django.urls import NoReverseMatch, reverse

    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = {
        op["operationId"]
        for item in schema["paths"].values()
        for op in item.values()
        if isinstance(op, dict) and "operationId" in op
    }
    for d in deprecations.DEPRECATIONS:
        assert set(d.operation_ids) <= operations, d
        try:
            reverse(d.url_name)
        except NoReverseMatch as e:
            assert "arguments" in str(e), d  # the name exists (it takes parameters)


def test_the_old_token_list_points_to_its_successor(api) -> None:
    response = api.get("/api/v1/auth/tokens")
    assert response.status_code == 200
    assert "</api/v1/me/tokens>" in response["Link"] and response["Sunset"].endswith("GMT")
    assert "Deprecation" not in api.get("/api/v1/me/tokens")


def test_the_schema_carries_the_changelog_the_deprecation_link_points_to() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    description = schema["info"]["description"]
    assert "# Changelog" in description and "# Deprecation policy" in description
    assert "/auth/tokens" in description.split("# Changelog", 1)[1]
    assert deprecations.CHANGELOG_URL.endswith("#section/Changelog")
