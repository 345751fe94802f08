"""OAuth 2 for third-party apps (accounts/api/oauth.py): the authorization code grant with PKCE
S256, the consent page, refresh and revocation, the server's metadata, the same scopes as
personal tokens but the personal-only ones, a code that works once, and loopback redirects."""

from __future__ import annotations

import base64
import hashlib
import secrets
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)
from rest_framework.test import APIClient

from accounts import scopes
from accounts.api.oauth import ChanOAuth2Validator
from accounts.models import SpentAuthorizationCode

pytestmark = pytest.mark.django_db
REDIRECT = "http://127.0.0.1:8765/callback"
PASSWORD = "tam-van-cuu-sach-42"


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def register(redirect_uris: str = REDIRECT, name: str = "Bàn Phụ Tá") -> Any:
    """A public app with the code grant, as staff register one in the admin."""
    return get_application_model().objects.create(
        name=name,
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris=redirect_uris,
        algorithm="",
    )


@pytest.fixture
def app() -> Any:
    return register()


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


def consent(
    browser: Client,
    app: Any,
    challenge: str,
    scope: str,
    *,
    allow: bool = True,
    redirect: str = REDIRECT,
):
    """POST the consent form as the page would (its hidden fields, Allow or Refuse)."""
    form = {
        "client_id": app.client_id,
        "redirect_uri": redirect,
        "response_type": "code",
        "state": "s-123",
        "scope": scope,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    if allow:
        form["allow"] = "Authorize"
    return browser.post(authorize_query(app, challenge, scope, redirect), form)


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


def trade(app: Any, code: str, verifier: str, redirect: str = REDIRECT) -> Any:
    return Client().post(
        "/oauth/token/",
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect,
            "client_id": app.client_id,
            "code_verifier": verifier,
        },
    )


def refresh(app: Any, refresh_token: str, **extra: str) -> Any:
    return Client().post(
        "/oauth/token/",
        {
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": app.client_id,
            **extra,
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


# ------------------------------------------------------------ scopes only the player's tokens hold


@pytest.mark.parametrize("scope", sorted(scopes.PERSONAL_ONLY))
def test_a_personal_only_scope_is_refused_at_every_step_of_authorization(
    app, make_user, scope
) -> None:
    # not offered: neither in the metadata nor in the schema's oauth2 flow
    meta = Client().get("/.well-known/oauth-authorization-server").json()
    assert scope not in meta["scopes_supported"]
    assert scope not in scopes.OAUTH_SCOPES
    user, _ = make_user()
    browser = Client()
    browser.force_login(user)
    _, challenge = pkce()
    # asked for on the consent page: an error back to the app, no form
    shown = browser.get(authorize_query(app, challenge, f"read {scope}"))
    assert shown.status_code == 302 and "error=invalid_scope" in shown["Location"]
    # a consent posted anyway: an error back, no code
    posted = consent(browser, app, challenge, f"read {scope}")
    assert posted.status_code == 302
    assert "error=invalid_scope" in posted["Location"] and "code=" not in posted["Location"]
    assert not get_grant_model().objects.filter(user=user).exists()


@pytest.mark.parametrize("scope", sorted(scopes.PERSONAL_ONLY))
def test_a_code_granted_a_personal_only_scope_gives_no_token(app, make_user, scope) -> None:
    # given a code granted `limits` before the rule (the grant as it was stored)
    user, _ = make_user()
    verifier, challenge = pkce()
    get_grant_model().objects.create(
        application=app,
        user=user,
        code="old-code-with-a-personal-scope",
        expires=timezone.now() + timedelta(seconds=60),
        redirect_uri=REDIRECT,
        scope=f"read {scope}",
        code_challenge=challenge,
        code_challenge_method="S256",
    )
    # when the app trades it, then it is refused and nothing is issued
    response = trade(app, "old-code-with-a-personal-scope", verifier)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_scope"
    assert not get_access_token_model().objects.filter(user=user).exists()


def test_a_refresh_never_brings_a_personal_only_scope(app, make_user) -> None:
    _, code, verifier = code_for(make_user, app, "read")
    issued = trade(app, code, verifier).json()
    # asking for `limits` on refresh: refused (not within the grant)
    asked = refresh(app, issued["refresh_token"], scope="read limits")
    assert asked.status_code == 400 and asked.json()["error"] == "invalid_scope"
    # a token an app was given `limits` with before the rule: refreshing it is refused
    get_access_token_model().objects.filter(
        token_checksum=hashlib.sha256(issued["access_token"].encode()).hexdigest()
    ).update(scope="read limits")
    refused = refresh(app, issued["refresh_token"])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_scope"


def test_an_app_token_holding_limits_from_before_cannot_touch_the_limits(app, make_user) -> None:
    # given an app token issued `read limits` before the rule
    _, code, verifier = code_for(make_user, app, "read")
    issued = trade(app, code, verifier).json()
    get_access_token_model().objects.filter(
        token_checksum=hashlib.sha256(issued["access_token"].encode()).hexdigest()
    ).update(scope="read limits")
    client = api(issued["access_token"])
    # then it reads the profile and the limits (`read`), but changes none of them
    assert client.get("/api/v1/me").status_code == 200
    assert client.get("/api/v1/me/limits").status_code == 200
    for response in (
        client.put("/api/v1/me/limits", {}, format="json"),
        client.post("/api/v1/me/cool-off", {"days": 1}, format="json"),
        client.post("/api/v1/me/self-exclusion", {}, format="json"),
    ):
        assert response.status_code == 403
        assert response.json()["code"] == "missing_scope" and response.json()["scope"] == "limits"


# ------------------------------------------------------------------------ a code works once


def test_a_reused_code_is_refused_and_revokes_every_token_issued_from_it(app, make_user) -> None:
    # given an app that traded its code, then refreshed (the family rotated once)
    user, code, verifier = code_for(make_user, app, "read")
    first = trade(app, code, verifier).json()
    second = refresh(app, first["refresh_token"]).json()
    assert api(second["access_token"]).get("/api/v1/me").status_code == 200
    # and another grant of the same player, which is not the code's
    _, other_code, other_verifier = code_for(make_user, app, "read")
    other = trade(app, other_code, other_verifier).json()

    # when the code is presented again
    again = trade(app, code, verifier)

    # then it is refused, and what it gave stops working: access and refresh tokens
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert api(second["access_token"]).get("/api/v1/me").status_code == 401
    assert refresh(app, second["refresh_token"]).status_code == 400
    # while the other grant's tokens live on
    assert api(other["access_token"]).get("/api/v1/me").status_code == 200
    assert refresh(app, other["refresh_token"]).status_code == 200


# The steps of an exchange after which the other exchange may complete: the code's check (the
# grant is gone by the PKCE check) and the redirect URI's (the grant is gone when it is spent).
@pytest.mark.parametrize("step", ["validate_code", "confirm_redirect_uri"])
def test_of_two_exchanges_racing_on_one_code_the_second_issues_nothing_and_revokes(
    app, make_user, monkeypatch, step
) -> None:
    # given a second exchange of the code, and the first completing right after its `step`
    user, code, verifier = code_for(make_user, app, "read")
    checked = getattr(ChanOAuth2Validator, step)
    first: dict[str, Any] = {}

    def first_exchange_meanwhile(self, *args: Any, **kwargs: Any) -> bool:
        passed = checked(self, *args, **kwargs)
        if not first:
            first["started"] = True  # once: the first exchange passes here too
            first.update(trade(app, code, verifier).json())
        return passed

    monkeypatch.setattr(ChanOAuth2Validator, step, first_exchange_meanwhile)

    # when the second exchange goes on
    second = trade(app, code, verifier)

    # then it is refused, issued nothing, and the first exchange's tokens are revoked
    assert first["access_token"] and second.status_code == 400
    assert second.json()["error"] == "invalid_grant"
    assert not get_access_token_model().objects.filter(user=user).exists()
    assert not get_refresh_token_model().objects.filter(user=user, revoked__isnull=True).exists()
    assert api(first["access_token"]).get("/api/v1/me").status_code == 401


def test_a_code_is_remembered_by_its_hash_and_bound_to_its_app(app, make_user) -> None:
    _, code, verifier = code_for(make_user, app, "read")
    issued = trade(app, code, verifier).json()
    spent = SpentAuthorizationCode.objects.get(application=app)
    assert spent.code_checksum == hashlib.sha256(code.encode()).hexdigest()
    assert code not in spent.code_checksum
    # another app presenting the code is refused without touching this app's tokens
    stranger = register(name="Kẻ Lạ")
    assert trade(stranger, code, verifier).status_code == 400
    assert api(issued["access_token"]).get("/api/v1/me").status_code == 200
    # a code never issued changes nothing either
    assert trade(app, "never-issued-code", verifier).status_code == 400
    assert api(issued["access_token"]).get("/api/v1/me").status_code == 200
    assert get_refresh_token_model().objects.filter(revoked__isnull=True).count() == 1


# --------------------------------------------------------------------------- redirect URIs


@pytest.mark.parametrize(
    ("registered", "used"),
    [
        ("http://127.0.0.1:9/cb", "http://127.0.0.1:9/cb"),
        ("http://127.0.0.1:9/cb", "http://127.0.0.1:50123/cb"),  # any port (RFC 8252 §7.3)
        ("http://[::1]/cb", "http://[::1]:61000/cb"),
    ],
)
def test_a_native_app_gets_its_code_on_a_loopback_http_redirect(
    make_user, registered, used
) -> None:
    # the suite runs the production settings: DEBUG off
    assert django_settings.DEBUG is False
    app = register(registered)
    user, _ = make_user()
    browser = Client()
    browser.force_login(user)
    verifier, challenge = pkce()
    assert browser.get(authorize_query(app, challenge, "read", used)).status_code == 200
    allowed = consent(browser, app, challenge, "read", redirect=used)
    assert allowed.status_code == 302, allowed.content
    assert allowed["Location"].startswith(used + "?")
    code = parse_qs(urlparse(allowed["Location"]).query)["code"][0]
    assert trade(app, code, verifier, used).status_code == 200


@pytest.mark.parametrize(
    ("registered", "used"),
    [
        ("http://app.example/cb", "http://app.example/cb"),  # plain http off loopback
        ("http://localhost:9/cb", "http://localhost:9/cb"),  # a name, not an address (§8.3)
        ("http://localhost:9/cb", "http://localhost:50123/cb"),
        ("http://127.0.0.1:9/cb", "https://127.0.0.1:9/other"),  # not the registered path
    ],
)
def test_plain_http_elsewhere_than_loopback_never_gets_a_redirect(
    make_user, registered, used
) -> None:
    app = register(registered)
    user, _ = make_user()
    browser = Client()
    browser.force_login(user)
    _, challenge = pkce()
    shown = browser.get(authorize_query(app, challenge, "read", used))
    assert shown.status_code == 400
    assert 'id="authorizationForm"' not in shown.content.decode()
    posted = consent(browser, app, challenge, "read", redirect=used)
    assert posted.status_code == 400 and not posted.has_header("Location")
    # nor by leaving redirect_uri out, which would take the registered one
    _, bare_challenge = pkce()
    query = authorize_query(app, bare_challenge, "read").replace(
        "redirect_uri=" + urlencode({"": REDIRECT})[1:], "x="
    )
    if not registered.startswith("http://127."):
        assert browser.get(query).status_code == 400


def test_plain_http_anywhere_under_debug(make_user, settings) -> None:
    settings.DEBUG = True
    app = register("http://localhost:8000/cb")
    user, _ = make_user()
    browser = Client()
    browser.force_login(user)
    _, challenge = pkce()
    allowed = consent(browser, app, challenge, "read", redirect="http://localhost:8000/cb")
    assert allowed.status_code == 302
    assert allowed["Location"].startswith("http://localhost:8000/cb?code=")


@pytest.mark.parametrize(
    ("uris", "accepted"),
    [
        ("https://app.example/cb http://127.0.0.1/cb http://[::1]:8080/cb", True),
        ("http://app.example/cb", False),
        ("https://app.example/cb http://localhost/cb", False),
    ],
)
def test_the_admin_registers_https_or_loopback_redirects_only(admin_client, uris, accepted) -> None:
    response = admin_client.post(
        "/admin/oauth2_provider/application/add/",
        {
            "client_id": "native-app",
            "client_type": "public",
            "authorization_grant_type": "authorization-code",
            "redirect_uris": uris,
            "post_logout_redirect_uris": "",
            "allowed_origins": "",
            "client_secret": "",
            "name": "Ứng Dụng",
            "algorithm": "",
        },
    )
    created = get_application_model().objects.filter(client_id="native-app").exists()
    assert created is accepted, response.content.decode()[:3000]
    if not accepted:
        assert response.status_code == 200
        assert "loopback" in response.content.decode()
