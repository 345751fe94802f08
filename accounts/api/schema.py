"""OpenAPI pieces for drf-spectacular: the bearer scheme and the documented error bodies."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse

from chan_api.schema import COMMON_DESCRIPTIONS, problem_responses_for

_DESCRIPTIONS = {
    **COMMON_DESCRIPTIONS,
    400: COMMON_DESCRIPTIONS[400] + " Registration also refuses weak passwords (`invalid`).",
    404: "`not_found`: no such token among yours.",
    409: "`username_taken`.",
}


def problem_responses(*statuses: int) -> dict[tuple[int, str], OpenApiResponse]:
    """``responses=`` entries documenting problem+json errors for these statuses."""
    return problem_responses_for(statuses, _DESCRIPTIONS)


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):  # type: ignore[no-untyped-def]
        return {"type": "http", "scheme": "bearer"}
