"""Content negotiation (chan_api/negotiation.py): ``?format=`` naming nothing an operation renders
is ``406 not_acceptable``, as an unacceptable ``Accept`` is, and every operation of the schema
lists that answer. The operations are read from the generated schema, so a new one is walked
without touching this file."""

from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from accounts import scopes
from accounts.services import token_create

pytestmark = pytest.mark.django_db

HTTP_METHODS = ("get", "post", "put", "patch", "delete")
SCHEMA: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)
OPERATIONS = [
    (method, path, spec)
    for path, item in SCHEMA["paths"].items()
    for method, spec in item.items()
    if method in HTTP_METHODS
]
# Not a format at all, a format no operation renders, and a stream (asked for with Accept only).
BAD_FORMATS = ("å", "xml", "sse")


@pytest.fixture
def client(make_user: Any) -> APIClient:
    user, _ = make_user()
    _, raw = token_create(user=user, scopes=list(scopes.ALL_SCOPES))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


@pytest.mark.parametrize(
    ("method", "path", "spec"), OPERATIONS, ids=[spec["operationId"] for *_, spec in OPERATIONS]
)
def test_a_format_no_operation_renders_is_406_and_every_operation_lists_it(
    client: APIClient, method: str, path: str, spec: dict[str, Any]
) -> None:
    url = path
    for param in spec.get("parameters", []):
        if param["in"] == "path":
            url = url.replace("{" + param["name"] + "}", "1")
    for bad in BAD_FORMATS:
        response = getattr(client, method)(f"{url}?format={bad}")
        assert response.status_code == 406, (bad, response.status_code, response.content[:300])
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["code"] == "not_acceptable"
    assert "406" in spec["responses"]


def test_format_json_and_accept_still_choose_a_representation(client: APIClient) -> None:
    assert client.get("/api/v1/me?format=json").status_code == 200
    refused = client.get("/api/v1/me", HTTP_ACCEPT="application/xml")
    assert refused.status_code == 406 and refused.json()["code"] == "not_acceptable"
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200 and schema.json()["openapi"]
