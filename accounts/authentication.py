"""``Authorization: Bearer <token>`` authentication for the API."""

from __future__ import annotations

import re

from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from accounts.models import ApiToken, User
from accounts.selectors import user_by_token
from accounts.services import token_mark_used

# secrets.token_urlsafe output; anything else cannot be one of our tokens.
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{16,128}$")


class BearerTokenAuthentication(BaseAuthentication):
    """No header: anonymous. A header that is not a live bearer token: 401."""

    keyword = "bearer"

    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        parts = header.split() if header.isascii() else []
        if len(parts) != 2 or parts[0].lower() != self.keyword or not _TOKEN_RE.match(parts[1]):
            raise AuthenticationFailed("Malformed Authorization header.")
        found = user_by_token(parts[1])
        if found is None:
            raise AuthenticationFailed("The token is invalid or revoked.")
        user, token = found
        if user.banned_at is not None:
            raise AuthenticationFailed("This player is banned.")
        token_mark_used(token=token)
        return user, token

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'
