"""OpenAPI pieces shared by every app: the problem+json error body, its responses and the headers
every operation documents."""

from __future__ import annotations

from collections.abc import Mapping

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers
from rest_framework.permissions import BasePermission

from chan_api.problems import PROBLEM_CONTENT_TYPE


class DocsPermission(BasePermission):
    """The schema, Swagger UI and ReDoc: anyone when ``CHAN_PUBLIC_API_DOCS`` is on, else a
    signed-in user (a token or an admin session). Read at each request, not at import."""

    def has_permission(self, request: object, view: object) -> bool:
        if settings.CHAN_PUBLIC_API_DOCS:
            return True
        user = getattr(request, "user", None)
        return bool(user is not None and user.is_authenticated)


class ProblemSerializer(serializers.Serializer):
    """An ``application/problem+json`` error body (RFC 9457; see chan_api/problems.py).

    Every error has this shape: also ``404 not_found`` for a URL outside the API and
    ``405 method_not_allowed`` for a method a path does not offer (its ``Allow`` header lists the
    methods it does).
    """

    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    code = serializers.CharField(help_text="Stable machine-readable error code.")
    detail = serializers.CharField(help_text="In the request's language (en or vi).")
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Field errors: the field's dotted path (`stake`, `timeouts.turn`, `deck.99`, "
        "`ruleset.overrides.ga_points`, `context.dealt_hand`) → messages. With `invalid` and "
        "the codes of a bad ruleset, cước or calculator input.",
    )
    request_id = serializers.CharField(
        required=False,
        help_text="The request's id, also in the `X-Request-ID` header and the server's logs.",
    )


COMMON_DESCRIPTIONS: dict[int, str] = {
    400: "Malformed input: `parse_error` (not JSON, or nested too deeply) or `invalid` (with "
    "`errors` per field).",
    401: "`not_authenticated` (no token) or `authentication_failed` (the token is invalid or "
    "revoked).",
    403: "`permission_denied`.",
    404: "`not_found`.",
    406: "`not_acceptable`: the `Accept` header or `?format=` names no representation the "
    "operation offers (JSON, `?format=json`; a feed's stream is asked for with `Accept`).",
    409: "Conflict.",
    413: "`body_too_large`: the body is larger than the server accepts (64 KiB by default).",
    415: "`unsupported_media_type`: the body is not application/json.",
    429: "`throttled`: too many requests; retry after `Retry-After` seconds.",
    500: "`server_error`: a bug on the server; the body says nothing more.",
    503: "`service_unavailable`: the database did not answer; nothing was done. Retry after "
    "`Retry-After` seconds (with the same `Idempotency-Key` for a move).",
}

# Statuses every operation can answer, whatever it does.
ALWAYS = (406, 429, 500, 503)
# Statuses of every operation that reads a JSON body (parse_error, invalid, too large, not JSON).
WITH_BODY = (400, 413, 415)

ACCEPT_LANGUAGE = OpenApiParameter(
    "Accept-Language",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="`vi` for Vietnamese error `detail`s; English otherwise.",
)
RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    OpenApiTypes.INT,
    OpenApiParameter.HEADER,
    response=[429, 503],
    description="Seconds to wait before the next request.",
)
# Header parameters of every operation: put them in each ``@extend_schema(parameters=…)``.
COMMON_HEADERS = [ACCEPT_LANGUAGE, RETRY_AFTER]


def problem_responses_for(
    statuses: tuple[int, ...],
    descriptions: Mapping[int, str] = COMMON_DESCRIPTIONS,
    body: type[serializers.Serializer] = ProblemSerializer,
    *,
    authenticated: bool = True,
    request_body: bool = False,
) -> dict[tuple[int, str], OpenApiResponse]:
    """``responses=`` entries documenting problem+json errors: these statuses, plus 406, 429,
    500 and 503 always, 401 when the endpoint needs a token and 400/413/415 when it reads a JSON body."""
    codes = set(statuses) | set(ALWAYS)
    if authenticated:
        codes |= {401, 403}
    if request_body:
        codes |= set(WITH_BODY)
    return {
        (status, PROBLEM_CONTENT_TYPE): OpenApiResponse(
            response=body,
            description=_description(status, descriptions, authenticated=authenticated),
        )
        for status in sorted(codes)
    }


def typed_schema_hook(result: dict, generator: object, request: object, public: bool) -> dict:
    """drf-spectacular postprocessing hook: the typed components of the rules core's JSON
    (games/api/schema.py) in place of free JSON, then an example on every operation
    (games/api/examples.py, accounts/api/examples.py, transparency/api/examples.py, by
    operation id)."""
    from accounts.api.examples import EXAMPLES as ACCOUNT_EXAMPLES
    from games.api.examples import EXAMPLES as GAME_EXAMPLES
    from games.api.schema import type_components
    from transparency.api.examples import EXAMPLES as LOG_EXAMPLES

    type_components(result)
    attach_examples(result, {**ACCOUNT_EXAMPLES, **GAME_EXAMPLES, **LOG_EXAMPLES})
    return result


def attach_examples(result: dict, examples: Mapping[str, Mapping[str, object]]) -> None:
    """Put each operation's examples in place: ``request`` on its JSON body, ``response`` on
    its first 2xx JSON response (``status`` picks another), ``parameters`` (name → value) on
    the operation's parameters."""
    schema = result  # the OpenAPI document (drf-spectacular's name for it)
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            spec = examples.get(operation["operationId"])
            if not spec:
                continue
            if "request" in spec:
                body = operation.get("requestBody", {}).get("content", {})
                for media in body.values():
                    media["examples"] = _named(spec["request"])
            if "response" in spec:
                responses = operation.get("responses", {})
                status = str(
                    spec.get("status")
                    or next(
                        (s for s in responses if s.startswith("2") and responses[s].get("content")),
                        "",
                    )
                )
                content = responses.get(status, {}).get("content", {})
                for media_type, media in content.items():
                    if "json" in media_type and "problem" not in media_type:
                        media["examples"] = _named(spec["response"])
            for param in operation.get("parameters", []):
                value = (spec.get("parameters") or {}).get(param.get("name"))
                if value is not None:
                    param["example"] = value


def _named(value: object) -> dict[str, dict[str, object]]:
    """``examples``: a mapping of name → value as given, or one example named ``default``."""
    if (
        isinstance(value, dict)
        and value
        and all(isinstance(v, dict) and "value" in v for v in value.values())
    ):
        return dict(value)  # type: ignore[arg-type]
    return {"default": {"value": value}}


MISSING_SCOPE = (
    "`missing_scope`: the token lacks the scope this operation needs (named in `scope`; "
    "docs/api.md: Scopes)."
)


def _description(status: int, descriptions: Mapping[int, str], *, authenticated: bool) -> str:
    text = descriptions.get(status) or COMMON_DESCRIPTIONS.get(status, "Error.")
    if status == 403 and authenticated:
        text = f"{text} {MISSING_SCOPE}"
    return text
