"""Serving: the API root, ``/`` to the docs, Swagger UI and ReDoc without a CDN, static files
from the web process with DEBUG off (whitenoise), request ids, 404s as problems under DEBUG."""

from __future__ import annotations

import json
import re

import pytest
from django.test import override_settings
from django.urls import resolve

from transparency.services import log_publish

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"


def body_of(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_the_api_root_links_the_resources_the_schema_and_the_docs(client) -> None:
    response = client.get("/api/v1/")
    assert response.status_code == 200
    body = response.json()
    assert body["schema"] == "http://testserver/api/schema/"
    assert body["docs"] == "http://testserver/api/docs/"
    assert body["redoc"] == "http://testserver/api/redoc/"
    resources = body["resources"]
    assert resources["tables"] == "http://testserver/api/v1/tables"
    assert resources["token"] == "http://testserver/api/v1/auth/token"
    assert resources["rooms"] == "http://testserver/api/v1/rooms"
    assert resources["my_hands"] == "http://testserver/api/v1/me/hands"
    assert body["templates"]["hand"] == "http://testserver/api/v1/hands/{hand_id}"
    assert body["templates"]["player"] == "http://testserver/api/v1/players/{username}"


def _api_routes() -> list[tuple[str, object]]:
    """Every route under /api/v1/ as (its path pattern, its view class)."""
    from django.urls import URLPattern, URLResolver, get_resolver

    found = []

    def walk(patterns, prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern):
                found.append((prefix + str(p.pattern), getattr(p.callback, "view_class", None)))

    walk(get_resolver().url_patterns, "/")
    return [(path, view) for path, view in found if path.startswith("/api/v1/")]


def test_the_api_root_links_every_route_and_every_link_resolves(client, make_user) -> None:
    user, token = make_user()
    log_publish()  # the transparency log's first head (its head and key are 404 before it)
    body = client.get("/api/v1/").json()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    samples = {"{hand_id}": "1", "{table_id}": "1", "{token_id}": "1", "{slug}": "nen-dat"}
    samples.update({"{board}": "rating", "{challenge_id}": "1", "{flag_id}": "1"})
    samples["{tournament_id}"] = "1"
    samples["{username}"] = user.username
    linked = {}
    resources = set(body["resources"].values())
    for url in [*resources, *body["templates"].values()]:
        path = url.removeprefix("http://testserver")
        for placeholder, value in samples.items():
            path = path.replace(placeholder, value)
        assert "{" not in path, url
        linked[path] = url
        # every link exists: OPTIONS answers it, and a resource's GET where the route reads
        # (a template's object, id 1, may not exist: its route still answers OPTIONS)
        assert client.options(path, **auth).status_code == 200, path
        if url in resources and hasattr(resolve(path).func.view_class, "get"):
            assert client.get(path, **auth).status_code not in (404, 405), path
    # and every route of the URLconf under /api/v1/ is linked, with or without parameters
    pattern_of = re.compile(r"<(?:\w+:)?(\w+)>")
    for route, _view in _api_routes():
        if route == "/api/v1/":
            continue
        path = pattern_of.sub(lambda m: samples["{" + m.group(1) + "}"], route)
        assert path in linked, f"{route} is not linked from the API root"


def test_the_site_root_redirects_to_the_docs(client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/api/docs/"


@pytest.mark.parametrize(
    ("path", "asset"), [("/api/docs/", "swagger-ui"), ("/api/redoc/", "redoc")]
)
def test_the_docs_load_pinned_assets_from_our_static_files(client, path, asset) -> None:
    page = client.get(path)
    assert page.status_code == 200
    html = page.content.decode()
    assert "cdn.jsdelivr.net" not in html and "@latest" not in html
    assert "fonts.googleapis.com" not in html and "https://" not in html
    scripts = re.findall(
        r'src="(/static/drf_spectacular_sidecar/[^"]+\.js|/api/redoc/redoc\.standalone\.js)"', html
    )
    assert scripts and any(asset in s for s in scripts), html
    for src in scripts:
        served = client.get(src)
        assert served.status_code == 200, src
        assert len(body_of(served)) > 1000
        assert b"cdn.redoc.ly" not in body_of(served)  # ReDoc's logo is inlined


def test_static_files_are_served_with_debug_off(client, settings) -> None:
    assert not settings.DEBUG
    page = client.get("/admin/login/")
    (css,) = re.findall(r'href="(/static/admin/css/base[^"]*\.css)"', page.content.decode())
    response = client.get(css)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/css")
    assert b"body" in body_of(response)


def test_every_response_has_a_request_id_and_problems_carry_it(client) -> None:
    first, second = client.get("/api/v1/tables"), client.get("/api/v1/tables")
    assert first.status_code == 401
    assert re.fullmatch(r"[0-9a-f]{32}", first["X-Request-ID"])
    assert first["X-Request-ID"] != second["X-Request-ID"]
    assert first.json()["request_id"] == first["X-Request-ID"]
    assert client.get("/healthz")["X-Request-ID"]


@pytest.mark.parametrize(
    ("sent", "kept"),
    [("lb-7f3a9c2e-0001", True), ("short", False), ("has space 12345", False), ("x" * 65, False)],
)
def test_a_tame_request_id_from_the_caller_is_kept(client, sent, kept) -> None:
    response = client.get("/healthz", HTTP_X_REQUEST_ID=sent)
    assert (response["X-Request-ID"] == sent) is kept


@pytest.mark.parametrize("debug", [False, True])
def test_a_url_outside_every_route_is_a_problem_even_under_debug(client, debug) -> None:
    with override_settings(DEBUG=debug):
        response = client.get("/no/such/page")
    assert response.status_code == 404
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "not_found"
    assert response.json()["request_id"] == response["X-Request-ID"]


# ------------------------------------------------------------- every 4xx is a problem document

PRIVATE_DOCS = {"DEBUG": False, "CHAN_PUBLIC_API_DOCS": False}


def assert_problem_document(response, status: int) -> dict:
    assert response.status_code == status
    assert response["Content-Type"] == PROBLEM
    body = json.loads(body_of(response))
    assert {"type", "title", "status", "code"} <= set(body), body
    assert body["status"] == status and body["type"].endswith("/" + body["code"])
    return body


@pytest.mark.parametrize(
    "path", ["/api/docs/", "/api/redoc/", "/api/schema/", "/api/schema/?format=json"]
)
def test_private_docs_answer_a_stranger_with_a_problem_document(client, path) -> None:
    # Given the production defaults (DEBUG off, docs private), when a stranger opens the docs
    with override_settings(**PRIVATE_DOCS):
        response = client.get(path, HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    # then the 401 is a problem+json document, not the HTML renderer's "401 Unauthorized" text
    assert assert_problem_document(response, 401)["code"] == "not_authenticated"


def test_private_docs_open_for_a_signed_in_user(client, make_user) -> None:
    _, token = make_user()
    with override_settings(**PRIVATE_DOCS):
        for path in ("/api/docs/", "/api/redoc/", "/api/schema/"):
            assert client.get(path, HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 200


def test_other_4xx_of_non_json_views_are_problem_documents(client) -> None:
    with override_settings(DEBUG=False):
        assert_problem_document(client.post("/api/docs/"), 405)
        assert_problem_document(client.delete("/api/schema/"), 405)
        assert_problem_document(client.get("/api/v1/tables", HTTP_ACCEPT="text/csv"), 406)
        assert_problem_document(client.get("/no/such/page"), 404)


def test_the_site_root_sends_a_browser_to_the_api_root_when_the_docs_are_private(client) -> None:
    with override_settings(**PRIVATE_DOCS):
        response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/api/v1/"
    assert client.get("/api/v1/").status_code == 200  # public: it links the docs and the rest
