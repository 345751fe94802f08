"""Tokens with scopes (accounts/scopes.py): every view declares one, a token without it gets
``403 missing_scope`` naming it, ``/api/v1/me/tokens`` mints tokens no stronger than the asker,
and docs/api.md's table lists exactly the scopes of the code."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from rest_framework.test import APIClient
from rest_framework.views import APIView

from accounts import scopes
from accounts.models import ApiToken
from accounts.services import token_create
from chan_api.permissions import ScopePermission, view_scope

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
# DRF views that are not the API's: the schema and its two viewers, gated by
# chan_api.schema.DocsPermission (public under DEBUG, else any signed-in user), not by a scope.
DOCS_VIEWS = {"SpectacularAPIView", "SpectacularSwaggerView", "OfflineRedocView"}


def client_with(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def scoped(make_user, *granted: str, **fields: Any) -> tuple[Any, APIClient]:
    user, _ = make_user(**fields)
    _, raw = token_create(user=user, scopes=list(granted))
    return user, client_with(raw)


def walk(patterns: list[Any], prefix: str = "") -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for entry in patterns:
        if isinstance(entry, URLResolver):
            found += walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            found.append((prefix + str(entry.pattern), entry.callback))
    return found


def test_every_api_view_declares_a_known_scope_for_each_of_its_methods() -> None:
    checked = 0
    for route, callback in walk(get_resolver().url_patterns):
        cls = getattr(callback, "cls", None)
        if cls is None or not issubclass(cls, APIView) or cls.__name__ in DOCS_VIEWS:
            continue
        methods = [m.upper() for m in cls.http_method_names if hasattr(cls, m) and m != "options"]
        for method in methods:
            scope = view_scope(cls, method)
            assert scope is not None, f"{cls.__name__} ({route}) declares no scope for {method}"
            assert scope in scopes.SCOPES or scope in (scopes.PUBLIC, scopes.ANY), (route, scope)
            if scope != scopes.PUBLIC:
                assert ScopePermission in [
                    p if isinstance(p, type) else type(p) for p in cls().get_permissions()
                ], f"{cls.__name__} ({route}) drops the scope check"
            checked += 1
    assert checked >= 30  # the walk found the API


def test_a_view_without_a_declared_scope_is_refused() -> None:
    class Undeclared(APIView):
        pass

    request = type("R", (), {"method": "GET", "auth": ApiToken(scopes=list(scopes.ALL_SCOPES))})
    assert ScopePermission().has_permission(request(), Undeclared()) is False


def test_a_missing_scope_is_403_problem_naming_it(make_user) -> None:
    # given a token that may only read
    _, client = scoped(make_user, scopes.READ)

    # then it reads, but may not open a table
    assert client.get("/api/v1/tables").status_code == 200
    response = client.post("/api/v1/tables", {"stake": 10}, format="json")
    assert response.status_code == 403
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["code"] == "missing_scope"
    assert body["scope"] == "play"
    assert "play" in body["detail"]


def test_the_missing_scope_is_named_in_vietnamese_too(make_user) -> None:
    _, client = scoped(make_user, scopes.READ)
    response = client.get("/api/v1/me/ledger", HTTP_ACCEPT_LANGUAGE="vi")
    assert response.status_code == 403
    assert response.json()["scope"] == "ledger:read"
    assert "ledger:read" in response.json()["detail"]
    assert "phạm vi" in response.json()["detail"]


def test_bot_play_plays_seated_hands_but_cannot_sit_or_stake(make_user) -> None:
    # given a table opened by another player, and a bot driver's token (read + bot:play)
    _, host = scoped(make_user, *scopes.ALL_SCOPES)
    table = host.post("/api/v1/tables", {"stake": 10}, format="json").json()["id"]
    user, bot = scoped(make_user, scopes.READ, scopes.BOT_PLAY)

    # then it may not join it (that takes `play`) …
    refused = bot.post(f"/api/v1/tables/{table}/join", {}, format="json")
    assert refused.status_code == 403 and refused.json()["scope"] == "play"
    # … but once the player sat down with a full token, the bot readies and leaves
    _, full = token_create(user=user)
    assert (
        client_with(full).post(f"/api/v1/tables/{table}/join", {}, format="json").status_code == 200
    )
    assert bot.post(f"/api/v1/tables/{table}/ready", {}, format="json").status_code == 200
    assert bot.post(f"/api/v1/tables/{table}/leave", {}, format="json").status_code in (200, 204)


def test_play_implies_bot_play() -> None:
    assert scopes.satisfies([scopes.PLAY], scopes.BOT_PLAY)
    assert not scopes.satisfies([scopes.BOT_PLAY], scopes.PLAY)
    assert not scopes.satisfies([scopes.READ], scopes.LEDGER_READ)


def test_logout_and_check_need_no_particular_scope(make_user) -> None:
    _, client = scoped(make_user, scopes.LIMITS)
    assert client.get("/api/v1/auth/check").status_code == 200
    assert client.post("/api/v1/auth/logout").status_code == 204
    assert client.get("/api/v1/auth/check").status_code == 401


def test_a_login_may_ask_for_fewer_scopes_and_gets_all_by_default(api_client, make_user) -> None:
    make_user(username="minh", password="tam-van-cuu-sach-42")
    full = api_client.post(
        "/api/v1/auth/token", {"username": "minh", "password": "tam-van-cuu-sach-42"}, format="json"
    ).json()
    assert ApiToken.objects.get(pk=full["token_id"]).scopes == list(scopes.ALL_SCOPES)
    narrow = api_client.post(
        "/api/v1/auth/token",
        {"username": "minh", "password": "tam-van-cuu-sach-42", "scopes": ["read"]},
        format="json",
    ).json()
    assert ApiToken.objects.get(pk=narrow["token_id"]).scopes == ["read"]


# ------------------------------------------------------------------------- /api/v1/me/tokens


def test_me_tokens_creates_a_scoped_token_shown_once_then_lists_and_revokes_it(make_user) -> None:
    # given a player's full token
    user, owner = scoped(make_user, *scopes.ALL_SCOPES)

    # when it mints a read-only token for a dashboard, valid one hour
    response = owner.post(
        "/api/v1/me/tokens",
        {"scopes": ["read", "ledger:read"], "name": "dashboard", "expires_in": 3600},
        format="json",
    )

    # then the secret is shown once, with the scopes and the expiry
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["scopes"] == ["read", "ledger:read"]
    assert created["name"] == "dashboard"
    expires = timezone.datetime.fromisoformat(created["expires_at"].replace("Z", "+00:00"))
    assert abs(expires - (timezone.now() + timedelta(hours=1))) < timedelta(minutes=1)
    dashboard = client_with(created["token"])
    assert dashboard.get("/api/v1/me/ledger").status_code == 200
    assert dashboard.post("/api/v1/me/bonus").json()["code"] == "missing_scope"
    # the list shows it without any secret
    listed = owner.get("/api/v1/me/tokens").json()
    assert listed[0]["id"] == created["id"] and "token" not in listed[0]
    assert listed[0]["scopes"] == ["read", "ledger:read"]
    # the new token cannot manage tokens (no `tokens` scope)
    assert dashboard.get("/api/v1/me/tokens").json()["scope"] == "tokens"

    # when the owner revokes it, it stops working
    assert owner.delete(f"/api/v1/me/tokens/{created['id']}").status_code == 204
    assert dashboard.get("/api/v1/me").status_code == 401
    assert owner.delete("/api/v1/me/tokens/999999").status_code == 404


def test_a_token_cannot_mint_a_stronger_one(make_user) -> None:
    _, client = scoped(make_user, scopes.TOKENS, scopes.READ)
    response = client.post("/api/v1/me/tokens", {"scopes": ["read", "play"]}, format="json")
    assert response.status_code == 403
    assert response.json() | {"code": "missing_scope", "scope": "play"} == response.json()
    # bot:play comes with play, so a play token may mint a bot:play one
    _, player = scoped(make_user, scopes.TOKENS, scopes.PLAY)
    assert (
        player.post("/api/v1/me/tokens", {"scopes": ["bot:play"]}, format="json").status_code == 201
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"scopes": ["read", "admin"]}, "scopes.1"),
        ({"scopes": []}, "scopes"),
        ({}, "scopes"),
        ({"scopes": ["read"], "expires_in": 5}, "expires_in"),
        ({"scopes": "read"}, "scopes"),
    ],
)
def test_bad_token_requests_are_400_naming_the_field(make_user, body, field) -> None:
    _, client = scoped(make_user, *scopes.ALL_SCOPES)
    response = client.post("/api/v1/me/tokens", body, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"], response.json()


def test_the_auditor_power_needs_audit_read_through_a_token(make_user) -> None:
    user, plain = scoped(make_user, scopes.READ)
    user.user_permissions.add(Permission.objects.get(codename="audit_hands"))
    _, raw = token_create(user=user, scopes=[scopes.READ, scopes.AUDIT_READ])
    assert plain.get("/api/v1/me").json()["is_auditor"] is False
    assert client_with(raw).get("/api/v1/me").json()["is_auditor"] is True


def test_tokens_from_before_scopes_keep_every_scope(make_user) -> None:
    from importlib import import_module

    from django.db import connection

    from tests.db_owner import as_owner

    # given a token as it stood before migration 0016 (no scopes; the constraint is the owner's
    # to drop, inside this test's transaction)
    user, _ = make_user()
    old, _ = token_create(user=user)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending checks before the ALTER
    as_owner("ALTER TABLE accounts_apitoken DROP CONSTRAINT accounts_apitoken_has_a_scope")
    ApiToken.objects.filter(pk=old.pk).update(scopes=[])

    # when the migration's data step runs
    migration = import_module("accounts.migrations.0016_apitoken_scopes")
    backfill = next(op for op in migration.Migration.operations if hasattr(op, "sql"))
    with connection.cursor() as cursor:
        for statement, params in backfill.sql:
            cursor.execute(statement, params)

    # then it holds every scope of that day, which are every scope the code knows today
    old.refresh_from_db()
    assert old.scopes == migration.SCOPES_AT_0016
    assert set(migration.SCOPES_AT_0016) == set(scopes.ALL_SCOPES)


def test_a_token_made_without_naming_scopes_has_every_scope(make_user) -> None:
    user, _ = make_user()
    token = ApiToken.objects.create(user=user, key_prefix="Ab-_0123", key_hash="ab" * 32)
    assert token.scopes == list(scopes.ALL_SCOPES)


# ------------------------------------------------------------------------------- the docs


def test_docs_api_scopes_table_matches_the_code() -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = text.split("### Scopes", 1)[1].split("\n#", 1)[0]
    documented = re.findall(r"^\| `([a-z:]+)` \|", section, re.M)
    assert documented == list(scopes.SCOPES)


def test_the_schema_declares_both_security_schemes_with_scopes(api_client) -> None:
    schema = api_client.get("/api/schema/?format=json").json()
    schemes = schema["components"]["securitySchemes"]
    assert schemes["bearerAuth"]["scheme"] == "bearer"
    flow = schemes["oauth2"]["flows"]["authorizationCode"]
    assert set(flow["scopes"]) == set(scopes.OAUTH_SCOPES)
    assert flow["authorizationUrl"] == "/oauth/authorize/"
    create = schema["paths"]["/api/v1/tables"]["post"]["security"]
    assert {"oauth2": ["play"]} in create and {"bearerAuth": []} in create
    listed = schema["paths"]["/api/v1/tables"]["get"]["security"]
    assert {"oauth2": ["read"]} in listed
    # managing tokens is for personal tokens only
    assert schema["paths"]["/api/v1/me/tokens"]["post"]["security"] == [{"bearerAuth": []}]


def test_a_missing_scope_tells_oauth_clients_in_www_authenticate(make_user) -> None:
    _, client = scoped(make_user, scopes.READ)
    response = client.post("/api/v1/me/bonus")
    assert response.status_code == 403
    assert response["WWW-Authenticate"] == 'Bearer error="insufficient_scope", scope="play"'
    # OPTIONS needs no particular scope
    assert client.options("/api/v1/me/bonus").status_code == 200
