"""Errors are problem+json everywhere: the global parser and exception handler cover every
endpoint of every app, and Django's own 400/404/500 pages are problem+json too."""

from __future__ import annotations

import json

import pytest
from django.test import RequestFactory
from django.utils import translation

from chan_api.problems import server_error

pytestmark = pytest.mark.django_db
PROBLEM = "application/problem+json"

BAD_BODIES = {
    "lone surrogate in a value": b'{"username": "\\ud800", "password": "x"}',
    "lone surrogate in a key": b'{"\\ud800": 1}',
    "malformed": b'{"username": ',
    "deep": b"[" * 30_000 + b"]" * 30_000,
    "huge": b'{"pad": "' + b"x" * 100_000 + b'"}',
    "not utf-8": b'{"username": "\xff\xfe"}',
    "not an object": b"[1, 2]",
}
EXPECTED = {"huge": (413, "body_too_large"), "deep": (400, "parse_error")}


@pytest.fixture
def authed(api_client, make_user):
    _, token = make_user()
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return api_client


@pytest.mark.parametrize("name", list(BAD_BODIES))
@pytest.mark.parametrize("url", ["/api/v1/auth/register", "/api/v1/auth/token"])
def test_bad_bodies_on_accounts_endpoints_are_problems(authed, url, name) -> None:
    r = authed.post(url, data=BAD_BODIES[name], content_type="application/json")

    assert 400 <= r.status_code < 500, (r.status_code, r.content[:200])
    assert r["Content-Type"] == PROBLEM
    body = r.json()
    if name in EXPECTED:
        assert (r.status_code, body["code"]) == EXPECTED[name]


def test_lone_surrogate_is_parse_error_not_500(api_client) -> None:
    r = api_client.post(
        "/api/v1/auth/register",
        data=BAD_BODIES["lone surrogate in a key"],
        content_type="application/json",
    )
    assert (r.status_code, r.json()["code"]) == (400, "parse_error")


def test_an_unknown_url_is_a_problem_json_404(api_client) -> None:
    r = api_client.get("/api/v1/no-such-thing")

    assert r.status_code == 404
    assert r["Content-Type"] == PROBLEM
    assert r.json()["code"] == "not_found"


def test_the_404_speaks_vietnamese_when_asked(api_client) -> None:
    r = api_client.get("/nowhere", HTTP_ACCEPT_LANGUAGE="vi")

    assert r.json()["detail"] == "Không tìm thấy."


def test_the_500_handler_is_problem_json_and_reveals_nothing() -> None:
    with translation.override("en"):
        r = server_error(RequestFactory().get("/api/v1/me"))

    assert r.status_code == 500
    assert r["Content-Type"] == PROBLEM
    assert json.loads(r.content) == {
        "type": "https://chan.example/problems/server_error",
        "title": "server error",
        "status": 500,
        "code": "server_error",
        "detail": "Internal server error.",
    }


def test_a_bad_host_header_is_a_problem_json_400(api_client, settings) -> None:
    settings.ALLOWED_HOSTS = ["api.example"]
    r = api_client.get("/api/v1/rules/presets", HTTP_HOST="evil.example")

    assert r.status_code == 400
    assert r["Content-Type"] == PROBLEM
