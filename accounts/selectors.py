"""Everything that reads users and tokens for the API."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from django.db.models import Q, QuerySet
from django.utils import timezone

from accounts.ledger_selectors import wallet_balance
from accounts.models import AUDIT_HANDS_PERMISSION, TOKEN_PREFIX_LENGTH, ApiToken, User

TOKEN_LIST_LIMIT = 100


@dataclass(frozen=True, slots=True)
class UserProfile:
    """What ``GET /me`` shows."""

    id: int
    username: str
    display_name: str
    balance: int
    xp: int
    level: int
    is_staff: bool
    is_auditor: bool


def user_balance(user: User) -> int:
    """The user's Quan balance: its wallet's balance column (O(1))."""
    return wallet_balance(user)


def user_is_auditor(user: User) -> bool:
    """Auditors may replay any hand; it is the ``accounts.audit_hands`` permission."""
    return user.has_perm(AUDIT_HANDS_PERMISSION)


def user_profile(*, user: User) -> UserProfile:
    return UserProfile(
        id=user.pk,
        username=user.username,
        display_name=user.display_name,
        balance=user_balance(user),
        xp=user.xp,
        level=user.level,
        is_staff=user.is_staff,
        is_auditor=user_is_auditor(user),
    )


def token_list(*, user: User, limit: int = TOKEN_LIST_LIMIT) -> QuerySet[ApiToken]:
    """The user's tokens, newest first, revoked ones included (at most ``limit``)."""
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-id")[:limit]


def user_by_token(raw: str) -> tuple[User, ApiToken] | None:
    """The active user and live token for this plaintext token, or None.

    Found by its prefix, then matched on the hash in constant time. Revoked and expired tokens
    and inactive users never match.
    """
    if len(raw) <= TOKEN_PREFIX_LENGTH:
        return None
    wanted = ApiToken.hash_key(raw)
    candidates = ApiToken.objects.select_related("user").filter(
        Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()),
        key_prefix=raw[:TOKEN_PREFIX_LENGTH],
        revoked_at__isnull=True,
        user__is_active=True,
    )
    for token in candidates:
        if hmac.compare_digest(token.key_hash, wanted):
            return token.user, token
    return None
