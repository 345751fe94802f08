"""OpenAPI pieces for drf-spectacular: the bearer scheme and the documented error bodies."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse

from accounts.api.serializers import ProblemSerializer
from chan_api.problems import PROBLEM_CONTENT_TYPE

_PROBLEM_DESCRIPTIONS = {
    400: "Invalid input (code `invalid` with `errors` per field, or `parse_error`).",
    401: "Not authenticated, or the token is invalid or revoked.",
    404: "Not found.",
    409: "Conflict.",
    415: "The body is not application/json.",
    429: "Too many requests (`throttled`); see Retry-After.",
}


def problem_responses(*statuses: int) -> dict[tuple[int, str], OpenApiResponse]:
    """``responses=`` entries documenting problem+json errors for these statuses."""
    return {
        (status, PROBLEM_CONTENT_TYPE): OpenApiResponse(
            response=ProblemSerializer, description=_PROBLEM_DESCRIPTIONS.get(status, "Error.")
        )
        for status in statuses
    }


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):  # type: ignore[no-untyped-def]
        return {"type": "http", "scheme": "bearer"}
