"""OAuth 2 for third-party apps (accounts/api/oauth.py): the authorization code grant with PKCE
S256, the consent page, refresh and revocation, the server's metadata, and the same scopes as
personal tokens."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model
from rest_framework.test import APIClient

from accounts import scopes

pytestmark = pytest.mark.django_db
REDIRECT = "http://127.0.0.1:8765/callback"
PASSWORD = "tam-van-cuu-sach-42"


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@pytest.fixture
def app() -> Any:
    return get_application_model().objects.create(
        name="Bàn Phụ Tá",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris=REDIRECT,
        algorithm="",
    )


def authorize_query(
    app: Any, challenge: str, scope: str = "read bot:play", redirect: str = REDIRECT, **extra: str
) -> str:
    params = {
        "response_type": "code",
        "client_id": app.client_id,
        "redirect_uri": redirect,
        "scope": scope,
        "state": "s-123",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        **extra,
    }
    return "/oauth/authorize/?" + urlencode(params)


def consent(browser: Client, app: Any, challenge: str, scope: str, *, allow: bool = True):
    """POST the consent form as the page would (its hidden fields, Allow or Refuse)."""
    form = {
        "client_id": app.client_id,
        "redirect_uri": REDIRECT,
        "response_type": "code",
        "state": "s-123",
        "scope": scope,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    if allow:
        form["allow"] = "Authorize"
    return browser.post(authorize_query(app, challenge, scope), form)


def code_for(make_user, app: Any, scope: str = "read bot:play") -> tuple[Any, str, str]:
    user, _ = make_user(password=PASSWORD)
    browser = Client()
    browser.force_login(user)
    verifier, challenge = pkce()
    response = consent(browser, app, challenge, scope)
    assert response.status_code == 302, response.content
    query = parse_qs(urlparse(response["Location"]).query)
    assert query["state"] == ["s-123"] and query["iss"]  # RFC 9207: the issuer, against mix-ups
    return user, query["code"][0], verifier


def trade(app: Any, code: str, verifier: str) -> Any:
    return Client().post(
        "/oauth/token/",
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "client_id": app.client_id,
            "code_verifier": verifier,
        },
    )


def api(access: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {access}")
    return client


def test_the_metadata_names_the_endpoints_s256_and_the_scopes() -> None:
    response = Client().get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200
    meta = response.json()
    assert meta["authorization_endpoint"].endswith("/oauth/authorize/")
    assert meta["token_endpoint"].endswith("/oauth/token/")
    assert meta["revocation_endpoint"].endswith("/oauth/revoke_token/")
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["response_types_supported"] == ["code"]
    assert set(meta["grant_types_supported"]) == {"authorization_code", "refresh_token"}
    assert meta["scopes_supported"] == sorted(scopes.OAUTH_SCOPES)
    assert "tokens" not in meta["scopes_supported"]
    assert "introspection_endpoint" not in meta


def test_a_player_not_signed_in_is_sent_to_the_login_page_first(app, make_user) -> None:
    make_user(username="lan", password=PASSWORD)
    browser = Client()
    _, challenge = pkce()
    url = authorize_query(app, challenge)
    response = browser.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/oauth/login/?next=")
    signed_in = browser.post(
        "/oauth/login/", {"username": "lan", "password": PASSWORD, "next": url}
    )
    assert signed_in.status_code == 302 and signed_in["Location"] == url
    page = browser.get(url)
    assert page.status_code == 200
    assert "Bàn Phụ Tá" in page.content.decode()


def test_a_banned_player_cannot_sign_in_to_give_access(app, make_user) -> None:
    user, _ = make_user(username="ban", password=PASSWORD)
    user.banned_at = timezone.now()
    user.save(update_fields=["banned_at"])
    response = Client().post("/oauth/login/?lang=en", {"username": "ban", "password": PASSWORD})
    assert response.status_code == 200
    assert "This player is banned." in response.content.decode()


def test_the_consent_page_describes_the_scopes_in_vietnamese_or_english(app, make_user) -> None:
    user, _ = make_user()
    browser = Client()
    browser.force_login(user)
    _, challenge = pkce()
    vi = browser.get(authorize_query(app, challenge, "read ledger:read", lang="vi")).content
    assert "Cho phép Bàn Phụ Tá thay bạn hành động?" in vi.decode()
    assert str(scopes.SCOPES["ledger:read"]) not in vi.decode()  # the English is not shown
    assert "Xem sao kê Quan của tôi" in vi.decode()
    en = browser.get(authorize_query(app, challenge, "read ledger:read", lang="en")).content
    assert "Allow Bàn Phụ Tá to act for you?" in en.decode()
    assert "Read my Quan statement" in en.decode()


def test_the_code_flow_gives_a_token_with_the_consented_scopes_only(app, make_user) -> None:
    # given a player who allowed the app `read bot:play`
    user, code, verifier = code_for(make_user, app)

    # when the app trades the code with its PKCE verifier
    response = trade(app, code, verifier)

    # then it holds an access token and a refresh token with those scopes
    assert response.status_code == 200, response.content
    issued = response.json()
    assert issued["token_type"] == "Bearer"
    assert set(issued["scope"].split()) == {"read", "bot:play"}
    assert issued["refresh_token"]
    # stored hashed, never in clear
    stored = get_access_token_model().objects.get(user=user)
    assert (
        stored.token == ""
        and stored.token_checksum == hashlib.sha256(issued["access_token"].encode()).hexdigest()
    )
    # and the API answers it as the player, gated by the same scopes
    client = api(issued["access_token"])
    me = client.get("/api/v1/me")
    assert me.status_code == 200 and me.json()["username"] == user.username
    refused = client.post("/api/v1/tables", {"stake": 10}, format="json")
    assert refused.status_code == 403
    assert refused.json()["code"] == "missing_scope" and refused.json()["scope"] == "play"
    assert client.get("/api/v1/me/ledger").json()["scope"] == "ledger:read"
    # an app never manages the player's personal tokens
    assert client.get("/api/v1/me/tokens").json()["scope"] == "tokens"
    # a code works once
    assert trade(app, code, verifier).status_code == 400


def test_the_code_needs_the_right_verifier(app, make_user) -> None:
    _, code, _ = code_for(make_user, app)
    wrong, _ = pkce()
    response = trade(app, code, wrong)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


@pytest.mark.parametrize(
    "change",
    [
        {"code_challenge": None},  # no PKCE at all
        {"code_challenge_method": "plain"},  # PKCE without hashing
        {"response_type": "token"},  # the implicit grant
    ],
)
def test_authorize_refuses_without_pkce_s256_or_for_another_grant(app, make_user, change) -> None:
    user, _ = make_user()
    browser = Client()
    browser.force_login(user)
    _, challenge = pkce()
    params = {
        "response_type": "code",
        "client_id": app.client_id,
        "redirect_uri": REDIRECT,
        "scope": "read",
        "state": "s",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    for key, value in change.items():
        if value is None:
            params.pop(key)
            params.pop("code_challenge_method")
        else:
            params[key] = value
    response = browser.get("/oauth/authorize/?" + urlencode(params))
    # refused: an error back to the app, never a consent form
    if response.status_code == 302:
        assert "error=" in response["Location"] and "code=" not in response["Location"]
    else:
        assert 'id="authorizationForm"' not in response.content.decode()


def test_the_tokens_scope_cannot_be_asked_for(app, make_user) -> None:
    user, _ = make_user()
    browser = Client()
    browser.force_login(user)
    _, challenge = pkce()
    response = browser.get(authorize_query(app, challenge, "read tokens"))
    assert response.status_code == 302
    assert "error=invalid_scope" in response["Location"]


def test_refusing_sends_access_denied_back(app, make_user) -> None:
    user, _ = make_user()
    browser = Client()
    browser.force_login(user)
    _, challenge = pkce()
    response = consent(browser, app, challenge, "read", allow=False)
    assert response.status_code == 302
    query = parse_qs(urlparse(response["Location"]).query)
    assert query["error"] == ["access_denied"] and query["state"] == ["s-123"]


def test_refresh_rotates_and_revocation_ends_the_token(app, make_user) -> None:
    _, code, verifier = code_for(make_user, app, "read")
    first = trade(app, code, verifier).json()

    # refreshing gives a new pair; the old refresh token is spent
    refreshed = Client().post(
        "/oauth/token/",
        {
            "grant_type": "refresh_token",
            "refresh_token": first["refresh_token"],
            "client_id": app.client_id,
        },
    )
    assert refreshed.status_code == 200, refreshed.content
    second = refreshed.json()
    assert second["access_token"] != first["access_token"]
    assert second["refresh_token"] != first["refresh_token"]
    assert api(second["access_token"]).get("/api/v1/me").status_code == 200
    assert api(first["access_token"]).get("/api/v1/me").status_code == 401

    # revoking the access token ends it
    revoked = Client().post(
        "/oauth/revoke_token/",
        {"token": second["access_token"], "client_id": app.client_id},
    )
    assert revoked.status_code == 200
    assert api(second["access_token"]).get("/api/v1/me").status_code == 401


def test_logout_with_an_oauth_token_ends_it_and_its_refresh_token(app, make_user) -> None:
    _, code, verifier = code_for(make_user, app, "read")
    issued = trade(app, code, verifier).json()
    assert api(issued["access_token"]).post("/api/v1/auth/logout").status_code == 204
    assert api(issued["access_token"]).get("/api/v1/me").status_code == 401
    again = Client().post(
        "/oauth/token/",
        {
            "grant_type": "refresh_token",
            "refresh_token": issued["refresh_token"],
            "client_id": app.client_id,
        },
    )
    assert again.status_code == 400


def test_a_banned_players_app_token_stops_working(app, make_user) -> None:
    user, code, verifier = code_for(make_user, app, "read")
    issued = trade(app, code, verifier).json()
    user.banned_at = timezone.now()
    user.save(update_fields=["banned_at"])
    assert api(issued["access_token"]).get("/api/v1/me").status_code == 401
    refresh = Client().post(
        "/oauth/token/",
        {
            "grant_type": "refresh_token",
            "refresh_token": issued["refresh_token"],
            "client_id": app.client_id,
        },
    )
    assert refresh.status_code == 400


def test_apps_are_registered_in_the_admin(admin_client) -> None:
    response = admin_client.get("/admin/oauth2_provider/application/add/")
    assert response.status_code == 200


def test_not_you_signs_out_and_returns_to_the_same_request(app, make_user) -> None:
    user, _ = make_user()
    browser = Client()
    browser.force_login(user)
    _, challenge = pkce()
    url = authorize_query(app, challenge, "read")
    assert 'id="consent-switch"' in browser.get(url).content.decode()
    response = browser.post("/oauth/logout/", {"next": url})
    assert response.status_code == 302 and response["Location"] == url
    assert browser.get(url)["Location"].startswith("/oauth/login/")
