"""OpenAPI pieces for drf-spectacular: the bearer scheme and the documented error bodies."""

from __future__ import annotations

from collections.abc import Mapping

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from accounts import scopes
from chan_api.schema import COMMON_DESCRIPTIONS, ProblemSerializer, problem_responses_for

_DESCRIPTIONS = {
    **COMMON_DESCRIPTIONS,
    400: COMMON_DESCRIPTIONS[400] + " Registration also refuses weak passwords (`invalid`).",
    404: "`not_found`: no such token among yours.",
    409: "`username_taken`.",
}
BAD_CREDENTIALS = {401: "`invalid_credentials`: the username or password is wrong."}
ACCOUNT_LOCKED = (
    COMMON_DESCRIPTIONS[429] + " `account_locked`: too many failed logins (here and at the "
    "admin, together) for this username or from this address; no token until `Retry-After` "
    "seconds have passed without another attempt."
)
SIGNUP_LIMIT = (
    COMMON_DESCRIPTIONS[429] + " `signup_limit`: this address made "
    "`CHAN_SIGNUPS_PER_ADDRESS_PER_DAY` accounts in the last 24 hours."
)


class BonusAlreadyClaimedSerializer(ProblemSerializer):
    """The problem body of ``409 bonus_already_claimed``."""

    next_claim_at = serializers.DateTimeField(
        required=False, help_text="UTC: when the next daily bonus can be claimed."
    )


def problem_responses(
    *statuses: int,
    authenticated: bool = True,
    request_body: bool = False,
    descriptions: Mapping[int, str] | None = None,
    body: type[serializers.Serializer] = ProblemSerializer,
) -> dict[tuple[int, str], OpenApiResponse]:
    """``responses=`` entries documenting problem+json errors for these statuses, plus 406, 429,
    500 and 503, 401 when ``authenticated`` and 400/413/415 with a ``request_body``."""
    return problem_responses_for(
        statuses,
        {**_DESCRIPTIONS, **(descriptions or {})},
        body,
        authenticated=authenticated,
        request_body=request_body,
    )


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Two ways to send the same ``Authorization: Bearer``: a personal token (``bearerAuth``)
    or an OAuth access token (``oauth2``, authorization code with PKCE). Each operation asks
    for the scope its view declares (``required_scope``; docs/api.md: Scopes)."""

    target_class = "accounts.authentication.BearerTokenAuthentication"
    name = ["bearerAuth", "oauth2"]

    def get_security_requirement(self, auto_schema):  # type: ignore[no-untyped-def]
        from chan_api.permissions import view_scope

        scope = view_scope(auto_schema.view, auto_schema.method.upper())
        wanted = [scope] if scope in scopes.SCOPES else []
        oauth = (
            [{"oauth2": wanted}]
            if scope not in scopes.SCOPES or scope in scopes.OAUTH_SCOPES
            else []
        )
        return [{"bearerAuth": []}, *oauth]

    def get_security_definition(self, auto_schema):  # type: ignore[no-untyped-def]
        table = "\n".join(f"- `{name}`: {text}" for name, text in scopes.SCOPES.items())
        return [
            {
                "type": "http",
                "scheme": "bearer",
                "description": "A personal token (`POST /api/v1/auth/token`, "
                "`POST /api/v1/me/tokens`) with its scopes; an operation needs the scope its "
                "`oauth2` requirement names (`403 missing_scope` otherwise):\n" + table,
            },
            {
                "type": "oauth2",
                "description": "A third-party app acting for a player: authorization code with "
                "PKCE (S256); metadata at `/.well-known/oauth-authorization-server`.",
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "/oauth/authorize/",
                        "tokenUrl": "/oauth/token/",
                        "refreshUrl": "/oauth/token/",
                        "scopes": {name: str(scopes.SCOPES[name]) for name in scopes.OAUTH_SCOPES},
                    }
                },
            },
        ]
