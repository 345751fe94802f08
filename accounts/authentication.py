"""``Authorization: Bearer <token>`` authentication for the API: a personal token
(:class:`accounts.models.ApiToken`) or an access token a third-party app obtained through OAuth
(``/oauth/token/``, django-oauth-toolkit). Either way the request's user carries the token's
scopes in ``token_scopes`` (accounts/scopes.py), which ``chan_api.permissions.ScopePermission``
and the auditor's powers read."""

from __future__ import annotations

import re
from typing import Any

from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from accounts.models import ApiToken, User
from accounts.scopes import token_scopes
from accounts.selectors import oauth_access_token, user_by_token
from accounts.services import token_mark_used
from accounts.token_cache import token_cache_get, token_cache_put, token_cache_touched

# secrets.token_urlsafe output; anything else cannot be one of our tokens.
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{16,128}$")


class BearerTokenAuthentication(BaseAuthentication):
    """No header: anonymous. A header that is not a live bearer token: 401."""

    keyword = "bearer"

    def authenticate(self, request: Request) -> tuple[User, ApiToken | Any] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        parts = header.split() if header.isascii() else []
        if len(parts) != 2 or parts[0].lower() != self.keyword or not _TOKEN_RE.match(parts[1]):
            raise AuthenticationFailed("Malformed Authorization header.")
        key_hash = ApiToken.hash_key(parts[1])
        found = token_cache_get(key_hash)  # a few seconds' memory (accounts/token_cache.py)
        if found is None:
            found = user_by_token(parts[1])
            if found is not None:
                token_cache_put(key_hash, *found)
        if found is None:
            access = oauth_access_token(parts[1])
            if access is None:
                raise AuthenticationFailed("The token is invalid or revoked.")
            user = access.user
            if user.banned_at is not None:
                raise AuthenticationFailed("This player is banned.")
            user.token_scopes = token_scopes(access)
            return user, access
        user, token = found
        if user.banned_at is not None:
            raise AuthenticationFailed("This player is banned.")
        used = token.last_used_at
        token_mark_used(token=token)
        if token.last_used_at != used:
            token_cache_touched(key_hash, token.last_used_at)
        user.token_scopes = token_scopes(token)
        return user, token

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


def credential_key(auth: Any) -> str | None:
    """A request's credential as one key across both kinds (per-token budgets such as the
    long polls' waiting slots): ``t<id>`` for a personal token, ``o<id>`` for an OAuth access
    token, whose ids are separate sequences; None without a token."""
    pk = getattr(auth, "pk", None)
    if pk is None:
        return None
    return f"t{pk}" if isinstance(auth, ApiToken) else f"o{pk}"
