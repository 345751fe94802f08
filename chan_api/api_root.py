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

from accounts import scopes
from chan_api.schema import COMMON_HEADERS, problem_responses_for

# The entry points of the API by name: every route of /api/v1/ without a path parameter …
RESOURCES = {
    "register": "auth-register",
    "token": "auth-token",
    "check": "auth-check",
    "logout": "auth-logout",
    "tokens": "auth-tokens",
    "my_tokens": "me-tokens",
    "oauth_metadata": "oauth-server-metadata",
    "me": "me",
    "ledger": "me-ledger",
    "bonus": "me-bonus",
    "ledger_head": "ledger-head",
    "limits": "me-limits",
    "cool_off": "me-cool-off",
    "self_exclusion": "me-self-exclusion",
    "feed": "games:me-feed",
    "blocks": "games:me-blocks",
    "challenges": "games:challenge-list",
    "tournaments": "games:tournament-list",
    "integrity_flags": "games:integrity-flags",
    "my_hands": "games:me-hands",
    "rooms": "games:room-list",
    "tables": "games:table-list",
    "rules_presets": "games:rules-presets",
    "rules_score": "games:rules-score",
    "rules_evaluate": "games:rules-evaluate",
    "log_head": "log-head",
    "log_key": "log-key",
    "log_consistency": "log-consistency",
    "log_inclusion": "log-inclusion",
}
# … and every one with parameters, as an RFC 6570 URI template (``{hand_id}`` …).
TEMPLATES = {
    "token_revoke": ("auth-token-revoke", {"token_id": 0}),
    "my_token_revoke": ("me-token-revoke", {"token_id": 0}),
    "player": ("games:player-detail", {"username": "_"}),
    "player_hands": ("games:player-hands", {"username": "_"}),
    "room_quick_join": ("games:room-quick-join", {"slug": "_"}),
    "table": ("games:table-detail", {"table_id": 0}),
    "table_join": ("games:table-join", {"table_id": 0}),
    "table_leave": ("games:table-leave", {"table_id": 0}),
    "table_ready": ("games:table-ready", {"table_id": 0}),
    "table_hand": ("games:table-hand", {"table_id": 0}),
    "table_hands": ("games:table-hands", {"table_id": 0}),
    "hand": ("games:hand-detail", {"hand_id": 0}),
    "hand_events": ("games:hand-events", {"hand_id": 0}),
    "hand_moves": ("games:hand-moves", {"hand_id": 0}),
    "hand_replay": ("games:hand-replay", {"hand_id": 0}),
    "hand_export": ("games:hand-export", {"hand_id": 0}),
    "leaderboard": ("games:leaderboard", {"board": "_"}),
    "challenge": ("games:challenge-detail", {"challenge_id": 0}),
    "tournament": ("games:tournament-detail", {"tournament_id": 0}),
    "tournament_join": ("games:tournament-join", {"tournament_id": 0}),
    "tournament_leave": ("games:tournament-leave", {"tournament_id": 0}),
    "tournament_standings": ("games:tournament-standings", {"tournament_id": 0}),
    "challenge_accept": ("games:challenge-accept", {"challenge_id": 0}),
    "challenge_decline": ("games:challenge-decline", {"challenge_id": 0}),
    "challenge_cancel": ("games:challenge-cancel", {"challenge_id": 0}),
    "block": ("games:me-block", {"username": "_"}),
    "integrity_flag": ("games:integrity-flag", {"flag_id": 0}),
}
DOCS = {"schema": "schema", "docs": "swagger-ui", "redoc": "redoc"}


def _fields_of(keys: object, field: type[serializers.Field]) -> dict[str, serializers.Field]:
    return {key: field() for key in keys}  # type: ignore[attr-defined]


# One named field per link, so that the schema lists them (a client's `root.resources.tables`).
ApiRootResourcesSerializer = type(
    "ApiRootResourcesSerializer",
    (serializers.Serializer,),
    {
        "__doc__": "Absolute URLs of the API's entry points.",
        **_fields_of(RESOURCES, serializers.URLField),
    },
)
ApiRootTemplatesSerializer = type(
    "ApiRootTemplatesSerializer",
    (serializers.Serializer,),
    {
        "__doc__": "The URLs that take an id or a name, as RFC 6570 templates "
        "(`…/hands/{hand_id}`): fill in the braces.",
        **_fields_of(TEMPLATES, serializers.CharField),
    },
)


class ApiRootOutputSerializer(serializers.Serializer):
    resources = ApiRootResourcesSerializer(help_text="Absolute URLs of the API's entry points.")
    templates = ApiRootTemplatesSerializer(
        help_text="The URLs that take an id or a name, as RFC 6570 templates "
        "(`…/hands/{hand_id}`): fill in the braces."
    )
    schema = serializers.URLField(help_text="The OpenAPI 3 schema.")
    docs = serializers.URLField(help_text="Swagger UI.")
    redoc = serializers.URLField(help_text="ReDoc.")


class ApiRootApi(APIView):
    """Open to anyone; a stale bearer header does not matter."""

    required_scope = scopes.PUBLIC
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

        def template(name: str, sample: dict[str, object]) -> str:
            # Reverse with placeholder values, then put the {names} back in their place.
            path = reverse(name, kwargs=sample)
            for param, value in sample.items():
                path = path.replace(f"/{value}", f"/{{{param}}}", 1)
            return request.build_absolute_uri("/").removesuffix("/") + path  # braces unquoted

        body = {
            "resources": {key: url(name) for key, name in RESOURCES.items()},
            "templates": {key: template(*spec) for key, spec in TEMPLATES.items()},
            **{key: url(name) for key, name in DOCS.items()},
        }
        return Response(ApiRootOutputSerializer(body).data)


def site_root(request: HttpRequest) -> HttpResponseRedirect:
    """``GET /``: a browser lands on Swagger UI when the docs are public (``DEBUG``,
    ``CHAN_PUBLIC_API_DOCS``), else on the API root, which is always public and links the
    docs (they then want a signed-in user)."""
    name = "swagger-ui" if settings.CHAN_PUBLIC_API_DOCS else "api-root"
    return HttpResponseRedirect(reverse(name))
