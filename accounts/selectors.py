"""Everything that reads users and tokens for the API."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from math import isqrt
from typing import Any

from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from accounts.hold_selectors import TableHold, wallet_funds, wallet_holds
from accounts.ledger_selectors import wallet_balance
from accounts.models import AUDIT_HANDS_PERMISSION, TOKEN_PREFIX_LENGTH, ApiToken, User
from accounts.scopes import AUDIT_READ, satisfies

TOKEN_LIST_LIMIT = 100
# Level L needs 5 × L × (L − 1) XP: level 2 at 10 XP, 3 at 30, 5 at 100, 10 at 450, 20 at 1,900,
# 30 at 4,350 (Sập gụ 2), 50 at 12,250 (Sập gụ VIP), up to MAX_LEVEL at 49,500.
MAX_LEVEL = 100


def xp_for_level(level: int) -> int:
    """The XP a player needs to reach ``level`` (1 needs none)."""
    return 5 * level * (level - 1)


def level_for_xp(xp: int) -> int:
    """The level a player with ``xp`` XP has: the highest ``L`` with ``xp_for_level(L) <= xp``."""
    level = (1 + isqrt(1 + 4 * max(xp, 0) // 5)) // 2
    while xp_for_level(level + 1) <= xp:
        level += 1
    while level > 1 and xp_for_level(level) > xp:
        level -= 1
    return min(max(level, 1), MAX_LEVEL)


def next_level_xp(level: int) -> int | None:
    """The XP of the next level, None at the top."""
    return xp_for_level(level + 1) if level < MAX_LEVEL else None


@dataclass(frozen=True, slots=True)
class UserProfile:
    """What ``GET /me`` shows."""

    id: int
    username: str
    display_name: str
    balance: int
    xp: int
    level: int
    next_level_xp: int | None
    vip: int
    vip_points: int
    badge: bool
    is_staff: bool
    is_auditor: bool
    held: int = 0
    available: int = 0
    holds: tuple[TableHold, ...] = ()
    rating: dict[str, Any] | None = None  # games.selectors.ratings.rating_json
    ratings: tuple[dict[str, Any], ...] = ()


def user_balance(user: User) -> int:
    """The user's Quan balance: its wallet's balance column (O(1))."""
    return wallet_balance(user)


def user_is_auditor(user: User) -> bool:
    """Auditors may replay any hand; it is the ``accounts.audit_hands`` permission. Through a
    token (personal or OAuth) the power also needs the token's ``audit:read`` scope; an admin
    session has no token and keeps it."""
    scopes = getattr(user, "token_scopes", None)
    if scopes is not None and not satisfies(scopes, AUDIT_READ):
        return False
    return user.has_perm(AUDIT_HANDS_PERMISSION)


def user_profile(*, user: User) -> UserProfile:
    # The ratings are the games app's; imported here, as accounts loads first.
    from games.selectors.ratings import player_ratings

    funds = wallet_funds(user)
    ratings = tuple(player_ratings(user_id=user.pk))
    return UserProfile(
        id=user.pk,
        username=user.username,
        display_name=user.display_name,
        balance=funds.balance,
        held=funds.held,
        available=funds.available,
        holds=tuple(wallet_holds(user)) if funds.held else (),
        xp=user.xp,
        level=user.level,
        next_level_xp=next_level_xp(user.level),
        vip=user.vip,
        vip_points=user.vip_points,
        badge=user.badge,
        is_staff=user.is_staff,
        is_auditor=user_is_auditor(user),
        rating=ratings[0] if ratings else None,
        ratings=ratings,
    )


def token_list(*, user: User, limit: int = TOKEN_LIST_LIMIT) -> QuerySet[ApiToken]:
    """The user's tokens, newest first, revoked ones included (at most ``limit``)."""
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-id")[:limit]


def _columns(model: type[Any], alias: str) -> tuple[list[str], str]:
    names = [f.attname for f in model._meta.concrete_fields]
    return names, ", ".join(f'{alias}."{f.column}"' for f in model._meta.concrete_fields)


_TOKEN_FIELDS, _TOKEN_COLUMNS = _columns(ApiToken, "t")
_USER_FIELDS, _USER_COLUMNS = _columns(User, "u")
# Every authenticated request runs this fixed statement: compiling the equivalent ORM query
# (a join and four conditions) cost more than running it (bench/api_bench.py).
_TOKEN_SQL = f"""
    SELECT {_TOKEN_COLUMNS}, {_USER_COLUMNS}
    FROM {ApiToken._meta.db_table} t JOIN {User._meta.db_table} u ON u.id = t.user_id
    WHERE t.key_prefix = %s AND t.revoked_at IS NULL AND u.is_active
      AND (t.expires_at IS NULL OR t.expires_at > %s)
"""


def user_by_token(raw: str) -> tuple[User, ApiToken] | None:
    """The active user and live token for this plaintext token, or None.

    Found by its prefix, then matched on the hash in constant time. Revoked and expired tokens
    and inactive users never match.
    """
    if len(raw) <= TOKEN_PREFIX_LENGTH:
        return None
    wanted = ApiToken.hash_key(raw)
    with connection.cursor() as cursor:
        cursor.execute(_TOKEN_SQL, [raw[:TOKEN_PREFIX_LENGTH], timezone.now()])
        rows = cursor.fetchall()
    split = len(_TOKEN_FIELDS)
    for row in rows:
        token = ApiToken.from_db(connection.alias, _TOKEN_FIELDS, row[:split])
        if hmac.compare_digest(token.key_hash, wanted):
            token.user = User.from_db(connection.alias, _USER_FIELDS, row[split:])
            return token.user, token
    return None


def oauth_access_token(raw: str) -> Any | None:
    """The live OAuth access token (django-oauth-toolkit) for this plaintext, with its user and
    app, or None: found by its SHA-256 checksum; expired ones, tokens of no user (client
    credentials) and inactive users never match."""
    from oauth2_provider.models import get_access_token_model

    checksum = hashlib.sha256(raw.encode("utf-8")).hexdigest()
    access = (
        get_access_token_model()
        .objects.select_related("user", "application")
        .filter(token_checksum=checksum)
        .first()
    )
    if access is None or access.is_expired() or access.user is None or not access.user.is_active:
        return None
    return access
