"""The accounts API over HTTP: register, log in, tokens, /me, and the error shapes."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from accounts.models import ApiToken, User

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"
STRONG = "tam-van-cuu-sach-42"


def register(client: APIClient, **body):
    body = {"username": "lan", "password": STRONG, **body}
    return client.post("/api/v1/auth/register", body, format="json")


def bearer(client: APIClient, token: str) -> APIClient:
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def test_register_returns_a_token_that_works_on_me(api_client):
    # given a new player registers
    response = register(api_client, display_name="Lan Chắn")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["user"]["username"] == "lan"
    assert isinstance(body["token_id"], int)

    # when they call /me with the token
    me = bearer(APIClient(), body["token"]).get("/api/v1/me")

    # then they see their profile
    assert me.status_code == 200
    assert me.json() == {
        "id": body["user"]["id"],
        "username": "lan",
        "display_name": "Lan Chắn",
        "balance": 50_000,  # the welcome grant
        "held": 0,  # no seat holds any of it
        "available": 50_000,
        "holds": [],
        "xp": 0,
        "level": 1,
        "next_level_xp": 10,
        "vip": 0,
        "vip_points": 0,
        "badge": False,
        "is_staff": False,
        "is_auditor": False,
        "rating": None,  # no rated hand yet (tests/games/test_games_ratings.py)
        "ratings": [],
    }


def test_register_rejects_common_and_short_passwords_with_field_errors(api_client):
    response = register(api_client, password="password")
    assert response.status_code == 400
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["code"] == "invalid"
    assert "password" in body["errors"]
    assert not User.objects.filter(username="lan").exists()


def test_register_rejects_a_numeric_password(api_client):
    response = register(api_client, password="83920174615")
    assert response.status_code == 400
    assert "password" in response.json()["errors"]


def test_register_rejects_a_password_like_the_username(api_client):
    response = register(api_client, username="nguyenvanlan", password="nguyenvanlan1")
    assert response.status_code == 400
    assert "password" in response.json()["errors"]


def test_register_rejects_a_bad_username(api_client):
    response = register(api_client, username="has space")
    assert response.status_code == 400
    assert "username" in response.json()["errors"]


def test_duplicate_username_is_409_even_in_another_case(api_client):
    assert register(api_client).status_code == 201
    for name in ("lan", "LAN"):
        response = register(api_client, username=name)
        assert response.status_code == 409
        assert response["Content-Type"] == PROBLEM
        assert response.json()["code"] == "username_taken"
    assert User.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"username": "lan", "password": STRONG, "is_staff": True}, "is_staff"),
        ({"username": 12345, "password": STRONG}, "username"),
        ({"username": "lan", "password": True}, "password"),
        ({"username": ["lan"], "password": STRONG}, "username"),
        ({"username": "lan", "password": STRONG, "display_name": "x" * 65}, "display_name"),
        ({"username": "x" * 151, "password": STRONG}, "username"),
        ({"username": "lan", "password": "p" * 129}, "password"),
        ({"username": "lan", "password": STRONG, "display_name": None}, "display_name"),
        ({"password": STRONG}, "username"),
    ],
)
def test_register_rejects_bad_fields_by_name(api_client, body, field):
    response = api_client.post("/api/v1/auth/register", body, format="json")
    assert response.status_code == 400
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "invalid"
    assert field in response.json()["errors"]
    assert not User.objects.exists()


def test_a_body_that_is_not_an_object_is_400(api_client):
    response = api_client.post("/api/v1/auth/register", ["lan", STRONG], format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"


def test_malformed_json_is_400_problem(api_client):
    response = api_client.post(
        "/api/v1/auth/register", data='{"username": "lan",', content_type="application/json"
    )
    assert response.status_code == 400
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "parse_error"


def test_a_form_body_is_415(api_client):
    response = api_client.post("/api/v1/auth/register", {"username": "lan", "password": STRONG})
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"


def test_login_with_good_credentials_issues_a_new_named_token(api_client):
    register(api_client)
    response = api_client.post(
        "/api/v1/auth/token",
        {"username": "lan", "password": STRONG, "name": "phone"},
        format="json",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["user"]["username"] == "lan"
    assert ApiToken.objects.get(pk=body["token_id"]).name == "phone"
    assert bearer(APIClient(), body["token"]).get("/api/v1/me").status_code == 200


@pytest.mark.parametrize(
    ("username", "password"), [("lan", "wrong-password-1"), ("nobody", STRONG), ("LAN", STRONG)]
)
def test_login_with_bad_credentials_is_401(api_client, username, password):
    register(api_client)
    response = api_client.post(
        "/api/v1/auth/token", {"username": username, "password": password}, format="json"
    )
    assert response.status_code == 401
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "invalid_credentials"


def test_login_of_an_inactive_user_is_401(api_client, make_user):
    make_user(username="gone", password=STRONG, is_active=False)
    response = api_client.post(
        "/api/v1/auth/token", {"username": "gone", "password": STRONG}, format="json"
    )
    assert response.status_code == 401


def test_login_ignores_a_stale_bearer_header(api_client):
    register(api_client)
    bearer(api_client, "revoked-or-garbage-token-value")
    response = api_client.post(
        "/api/v1/auth/token", {"username": "lan", "password": STRONG}, format="json"
    )
    assert response.status_code == 201


def test_logout_revokes_the_token_used(api_client):
    # given a player with two tokens
    token = register(api_client).json()["token"]
    other = api_client.post(
        "/api/v1/auth/token", {"username": "lan", "password": STRONG}, format="json"
    ).json()["token"]
    client = bearer(APIClient(), token)

    # when they log out with the first
    assert client.post("/api/v1/auth/logout").status_code == 204

    # then the first no longer works, as a 401 problem with a Bearer challenge
    response = client.get("/api/v1/me")
    assert response.status_code == 401
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "authentication_failed"
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    # and the other still does
    assert bearer(APIClient(), other).get("/api/v1/me").status_code == 200


def test_no_credentials_is_401_not_403(api_client):
    response = api_client.get("/api/v1/me")
    assert response.status_code == 401
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer ",
        "Bearer a b",
        "Token abcdefghijklmnopqrstuvwxyz",
        "Basic bGFuOnBhc3M=",
        "Bearer short",
        "Bearer not*a*token*at*all*!!",
        "Bearer " + "a" * 200,
        "Bearer abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",  # well-formed, unknown
    ],
)
def test_a_malformed_or_unknown_authorization_header_is_401(api_client, header):
    api_client.credentials(HTTP_AUTHORIZATION=header)
    response = api_client.get("/api/v1/me")
    assert response.status_code == 401
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "authentication_failed"


def test_a_non_ascii_authorization_header_is_401(api_client):
    api_client.credentials(HTTP_AUTHORIZATION="Bearer mã-truy-cập-không-hợp-lệ")
    assert api_client.get("/api/v1/me").status_code == 401


def test_the_bearer_keyword_is_case_insensitive(make_user, api_client):
    _, token = make_user()
    api_client.credentials(HTTP_AUTHORIZATION=f"bearer {token}")
    assert api_client.get("/api/v1/me").status_code == 200


def test_token_list_shows_own_tokens_without_secrets(api_client, make_user):
    # given a player with a revoked and a live token, and another player
    token = register(api_client).json()["token"]
    stranger, _ = make_user()
    revoked = bearer(APIClient(), token)
    second = api_client.post(
        "/api/v1/auth/token", {"username": "lan", "password": STRONG, "name": "tab"}, format="json"
    ).json()
    revoked.post("/api/v1/auth/logout")

    # when they list their tokens
    response = bearer(APIClient(), second["token"]).get("/api/v1/auth/tokens")

    # then they see their two tokens, newest first, and nothing secret
    assert response.status_code == 200
    rows = response.json()
    assert [row["revoked"] for row in rows] == [False, True]
    assert rows[0]["id"] == second["token_id"]
    assert rows[0]["name"] == "tab"
    assert {tuple(sorted(row)) for row in rows} == {
        (
            "created_at",
            "expired",
            "expires_at",
            "id",
            "key_prefix",
            "last_used_at",
            "name",
            "revoked",
            "scopes",
        )
    }
    text = response.content.decode()
    for row in ApiToken.objects.all():
        assert row.key_hash not in text
    assert token not in text and second["token"] not in text
    assert not ApiToken.objects.filter(user=stranger, pk__in=[row["id"] for row in rows]).exists()


def test_revoke_own_token(api_client):
    body = register(api_client).json()
    client = bearer(APIClient(), body["token"])
    assert client.delete(f"/api/v1/auth/tokens/{body['token_id']}").status_code == 204
    assert ApiToken.objects.get(pk=body["token_id"]).revoked_at is not None
    assert client.get("/api/v1/me").status_code == 401


def test_revoke_someone_elses_token_is_404(api_client, make_user):
    victim, _ = make_user()
    victim_token = ApiToken.objects.get(user=victim)
    _, token = make_user()
    response = bearer(api_client, token).delete(f"/api/v1/auth/tokens/{victim_token.pk}")
    assert response.status_code == 404
    assert response["Content-Type"] == PROBLEM
    victim_token.refresh_from_db()
    assert victim_token.revoked_at is None


def test_revoke_a_token_that_never_existed_is_404(api_client, make_user):
    _, token = make_user()
    client = bearer(api_client, token)
    assert client.delete("/api/v1/auth/tokens/99999999").status_code == 404
    assert client.delete(f"/api/v1/auth/tokens/{2**63}").status_code == 404


def test_vietnamese_detail_with_accept_language_vi(api_client):
    register(api_client)
    response = api_client.post(
        "/api/v1/auth/token",
        {"username": "lan", "password": "wrong-password-1"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="vi",
    )
    assert response.status_code == 401
    assert response.json()["detail"] == "Sai tên đăng nhập hoặc mật khẩu."

    english = api_client.post(
        "/api/v1/auth/token",
        {"username": "lan", "password": "wrong-password-1"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert english.json()["detail"] == "The username or password is wrong."


def test_vietnamese_detail_for_a_missing_token(api_client):
    response = api_client.get("/api/v1/me", HTTP_ACCEPT_LANGUAGE="vi")
    assert response.json()["detail"] == "Chưa cung cấp thông tin xác thực."


def test_me_shows_an_auditor(api_client, make_user):
    from django.contrib.auth.models import Permission

    user, token = make_user(is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="audit_hands"))
    body = bearer(api_client, token).get("/api/v1/me").json()
    assert body["is_auditor"] is True
    assert body["is_staff"] is True


def test_auth_endpoints_are_throttled(api_client, monkeypatch):
    monkeypatch.setenv("THROTTLE_AUTH", "2/min")
    body = {"username": "nobody", "password": STRONG}
    statuses = [
        api_client.post("/api/v1/auth/token", body, format="json").status_code for _ in range(3)
    ]
    assert statuses == [401, 401, 429]
    response = api_client.post("/api/v1/auth/register", body, format="json")
    assert response.status_code == 429
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "throttled"
    assert "Retry-After" in response


def test_the_openapi_schema_documents_the_endpoints(api_client):
    response = api_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in ("/api/v1/auth/register", "/api/v1/auth/token", "/api/v1/me"):
        assert path in paths
    register_401 = paths["/api/v1/auth/token"]["post"]["responses"]["401"]
    assert PROBLEM in register_401["content"]


def test_the_openapi_schema_documents_every_accounts_error(api_client):
    paths = api_client.get("/api/schema/?format=json").json()["paths"]
    authenticated = [
        ("/api/v1/me", "get"),
        ("/api/v1/auth/check", "get"),
        ("/api/v1/auth/tokens", "get"),
        ("/api/v1/auth/tokens/{token_id}", "delete"),
        ("/api/v1/auth/logout", "post"),
    ]
    for path, method in authenticated:
        responses = paths[path][method]["responses"]
        assert {"401", "429", "500"} <= set(responses), path
        assert "Retry-After" in responses["429"]["headers"], path
    for path in ("/api/v1/auth/register", "/api/v1/auth/token"):
        responses = paths[path]["post"]["responses"]
        assert {"400", "413", "415", "429", "500"} <= set(responses), path
        for status in ("400", "413", "415", "429", "500"):
            assert PROBLEM in responses[status]["content"], (path, status)
    assert (
        "invalid_credentials"
        in paths["/api/v1/auth/token"]["post"]["responses"]["401"]["description"]
    )


def test_auth_check_names_the_user_and_the_server_clock_in_one_query(
    api_client, make_user, django_assert_num_queries
):
    from datetime import datetime, timedelta

    from django.utils import timezone

    user, token = make_user()
    client = bearer(api_client, token)
    client.get("/api/v1/auth/check")  # the first use stamps last_used_at
    with django_assert_num_queries(1):
        response = client.get("/api/v1/auth/check")
    assert response.status_code == 200
    body = response.json()
    assert (body["user_id"], body["username"]) == (user.pk, user.username)
    assert abs(datetime.fromisoformat(body["now"]) - timezone.now()) < timedelta(seconds=5)


def test_auth_check_refuses_a_revoked_token(api_client, make_user):
    _, token = make_user()
    client = bearer(api_client, token)
    assert client.post("/api/v1/auth/logout").status_code == 204
    response = client.get("/api/v1/auth/check")
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


def test_a_client_far_over_its_limit_is_still_told_when_to_retry(api_client, monkeypatch):
    # Given a limit of 2/min and a history already over it (the limit was lowered, say),
    monkeypatch.setenv("THROTTLE_AUTH", "2/min")
    body = {"username": "nobody", "password": STRONG}
    for _ in range(2):
        api_client.post("/api/v1/auth/token", body, format="json")
    monkeypatch.setenv("THROTTLE_AUTH", "1/min")
    # when it calls again, the 429 still says how long to wait.
    response = api_client.post("/api/v1/auth/token", body, format="json")
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 60


def test_a_forged_x_forwarded_for_does_not_escape_the_throttle(api_client, monkeypatch):
    monkeypatch.setenv("THROTTLE_AUTH", "2/min")
    body = {"username": "nobody", "password": STRONG}
    statuses = [
        api_client.post(
            "/api/v1/auth/token", body, format="json", HTTP_X_FORWARDED_FOR=f"10.0.0.{i}"
        ).status_code
        for i in range(3)
    ]
    assert statuses == [401, 401, 429]
