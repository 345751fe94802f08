"""A stream's or a long poll's credential, checked again while it is open.

Django judges a long poll or a stream once, when it opens: the token, the player's ban, the
view's scope. The wait that follows (games/live/long_poll.py, games/live/streams.py) may last
30 s, a stream 10 minutes, and a token may be revoked, expire, or its player be banned
meanwhile. So before anything is delivered (a hand's view, an event, a feed page: hidden
information) and, for a stream, at least every ``CHAN_TOKEN_CACHE_SECONDS`` (at least a
second), the credential is judged again as Django would judge it now
(:class:`accounts.authentication.BearerTokenAuthentication`: the token memory while it holds
the token, else the database; :class:`chan_api.permissions.ScopePermission`). A long poll that
fails it is answered by Django (its 401, or its 403 ``missing_scope``); a stream ends with a
final event naming the reason (:func:`games.live.streams.closing`).

A revoke or a ban is seen at once in the process that made it (it forgets the token memory's
entry) and within ``CHAN_TOKEN_CACHE_SECONDS`` in the others, as for Django's own requests.
"""

from __future__ import annotations

import logging
import time
from types import SimpleNamespace
from typing import Any, NamedTuple

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone
from rest_framework.exceptions import AuthenticationFailed

from accounts.authentication import BearerTokenAuthentication, credential_key
from accounts.models import ApiToken
from accounts.scopes import satisfies, token_scopes
from accounts.token_cache import token_cache_entry
from chan_api.permissions import view_scope
from core.threads import in_thread

logger = logging.getLogger(__name__)

# Why a stream ended (its final event's ``reason``): the credential's verdicts first.
TOKEN_REVOKED = "token_revoked"  # revoked, or no longer a token of this server
TOKEN_EXPIRED = "token_expired"
PLAYER_BANNED = "player_banned"
MISSING_SCOPE = "missing_scope"
UNAVAILABLE = "unavailable"  # the credential could not be checked (the database away)

_UNKNOWN = object()  # the token memory cannot say: read it


class Credential(NamedTuple):
    """Who Django let in, and what the view required."""

    user: int
    key: str  # accounts.authentication.credential_key: "t<id>", "o<id>"
    scope: str | None  # the view's required scope (None: none to hold)
    token: str  # the bearer token as the client sent it


def credential_marked(request: Any) -> list[Any] | None:
    """For the view's pending answer (``Pending.credential``): the user, the credential's key
    and the scope the view required; None without a token."""
    key = credential_key(getattr(request, "auth", None))
    user = getattr(request, "user", None)
    if key is None or user is None or user.pk is None:
        return None
    view = (getattr(request, "parser_context", None) or {}).get("view")
    return [int(user.pk), key, view_scope(view, request.method) if view is not None else None]


def credential_of(scope: dict[str, Any], marked: list[Any] | None) -> Credential | None:
    """The credential of the ASGI request ``scope`` that Django let in as ``marked``."""
    if not marked:
        return None
    sent = [v for k, v in scope.get("headers", ()) if k == b"authorization"]
    parts = sent[0].decode("latin-1").split() if len(sent) == 1 else []
    token = parts[1] if len(parts) == 2 and parts[0].lower() == "bearer" else ""
    user, key, required = marked
    return Credential(int(user), str(key), required, token)


def recheck_seconds() -> float:
    """How often an open stream judges its credential again when it has nothing to deliver."""
    return max(float(getattr(settings, "CHAN_TOKEN_CACHE_SECONDS", 0) or 0), 1.0)


def _scope_refusal(granted: frozenset[str] | None, required: str | None) -> str | None:
    if required is None or granted is None or satisfies(granted, required):
        return None
    return MISSING_SCOPE


def _remembered(c: Credential) -> Any:
    """The verdict from the token memory, in the event loop; ``_UNKNOWN`` when it does not hold
    this token (an OAuth token, an entry expired or never made)."""
    entry = token_cache_entry(ApiToken.hash_key(c.token)) if c.key.startswith("t") else None
    if entry is None:
        return _UNKNOWN
    until, user, token = entry
    if time.monotonic() >= until or f"t{token.pk}" != c.key or user.pk != c.user:
        return _UNKNOWN
    if token.expires_at is not None and token.expires_at <= timezone.now():
        return TOKEN_EXPIRED
    if user.banned_at is not None:
        return PLAYER_BANNED
    return _scope_refusal(token_scopes(token), c.scope)


def _why_refused(c: Credential) -> str:
    """Why DRF refused the token now: revoked, expired, or its player banned."""
    token = ApiToken.objects.select_related("user").filter(key_hash=ApiToken.hash_key(c.token))
    found = token.first()
    if found is None or found.revoked_at is not None:
        return TOKEN_REVOKED
    if found.expires_at is not None and found.expires_at <= timezone.now():
        return TOKEN_EXPIRED
    if found.user.banned_at is not None:
        return PLAYER_BANNED
    return TOKEN_REVOKED


def _read(c: Credential) -> str | None:
    """The verdict as DRF reaches it (in a worker thread): the token memory, else the database."""
    try:
        request = SimpleNamespace(META={"HTTP_AUTHORIZATION": f"Bearer {c.token}"})
        try:
            found = BearerTokenAuthentication().authenticate(request)  # type: ignore[arg-type]
        except AuthenticationFailed:
            return _why_refused(c)
        if found is None:
            return TOKEN_REVOKED
        user, auth = found
        if credential_key(auth) != c.key or user.pk != c.user:
            return TOKEN_REVOKED
        return _scope_refusal(token_scopes(auth), c.scope)
    except Exception:
        logger.warning("an open stream's credential could not be checked", exc_info=True)
        return UNAVAILABLE
    finally:
        close_old_connections()


async def credential_refusal(c: Credential | None) -> str | None:
    """None when Django would still let ``c`` in; else why not (a reason above)."""
    if c is None:
        return None
    if not c.token:
        return TOKEN_REVOKED
    found = _remembered(c)
    if found is not _UNKNOWN:
        return found  # type: ignore[no-any-return]
    return await in_thread(_read, c)
