"""``GET /api/v1/``: where everything is — the resources, the schema and the docs."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chan_api.schema import COMMON_HEADERS, problem_responses_for

# The entry points of the API by name (the other URLs are reached from their answers).
RESOURCES = {
    "register": "auth-register",
    "token": "auth-token",
    "tokens": "auth-tokens",
    "me": "me",
    "ledger": "me-ledger",
    "bonus": "me-bonus",
    "tables": "games:table-list",
    "rules_presets": "games:rules-presets",
    "rules_score": "games:rules-score",
    "rules_evaluate": "games:rules-evaluate",
}
DOCS = {"schema": "schema", "docs": "swagger-ui", "redoc": "redoc"}


class ApiRootOutputSerializer(serializers.Serializer):
    resources = serializers.DictField(
        child=serializers.URLField(), help_text="Absolute URLs of the API's entry points."
    )
    schema = serializers.URLField(help_text="The OpenAPI 3 schema.")
    docs = serializers.URLField(help_text="Swagger UI.")
    redoc = serializers.URLField(help_text="ReDoc.")


class ApiRootApi(APIView):
    """Open to anyone; a stale bearer header does not matter."""

    authentication_classes = ()
    permission_classes = (AllowAny,)

    @extend_schema(
        operation_id="api_root",
        tags=["meta"],
        summary="Links to the resources, the schema and the docs",
        parameters=COMMON_HEADERS,
        responses={
            200: ApiRootOutputSerializer,
            **problem_responses_for((), authenticated=False),
        },
    )
    def get(self, request: Request) -> Response:
        def url(name: str) -> str:
            return request.build_absolute_uri(reverse(name))

        body = {
            "resources": {key: url(name) for key, name in RESOURCES.items()},
            **{key: url(name) for key, name in DOCS.items()},
        }
        return Response(ApiRootOutputSerializer(body).data)


def site_root(request: HttpRequest) -> HttpResponseRedirect:
    """``GET /``: a browser lands on Swagger UI when the docs are public (``DEBUG``,
    ``CHAN_PUBLIC_API_DOCS``), else on the API root, which is always public and links the
    docs (they then want a signed-in user)."""
    name = "swagger-ui" if settings.CHAN_PUBLIC_API_DOCS else "api-root"
    return HttpResponseRedirect(reverse(name))
