"""OpenAPI pieces shared by every app: the problem+json error body and its responses."""

from __future__ import annotations

from collections.abc import Mapping

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from chan_api.problems import PROBLEM_CONTENT_TYPE


class ProblemSerializer(serializers.Serializer):
    """An ``application/problem+json`` error body (see chan_api/problems.py)."""

    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    code = serializers.CharField(help_text="Stable machine-readable error code.")
    detail = serializers.CharField(help_text="In the request's language (en or vi).")
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Field name -> messages, for code 'invalid'.",
    )


COMMON_DESCRIPTIONS: dict[int, str] = {
    400: "Malformed input: `parse_error` (not JSON, or nested too deeply) or `invalid` (with "
    "`errors` per field).",
    401: "Not authenticated, or the token is invalid or revoked.",
    403: "`permission_denied`.",
    404: "`not_found`.",
    409: "Conflict.",
    413: "`body_too_large`: the body is larger than the server accepts.",
    415: "`unsupported_media_type`: the body is not application/json.",
    429: "Too many requests (`throttled`); see Retry-After.",
}


def problem_responses_for(
    statuses: tuple[int, ...],
    descriptions: Mapping[int, str] = COMMON_DESCRIPTIONS,
    body: type[serializers.Serializer] = ProblemSerializer,
) -> dict[tuple[int, str], OpenApiResponse]:
    """``responses=`` entries documenting problem+json errors for these statuses."""
    return {
        (status, PROBLEM_CONTENT_TYPE): OpenApiResponse(
            response=body,
            description=descriptions.get(status) or COMMON_DESCRIPTIONS.get(status, "Error."),
        )
        for status in statuses
    }
