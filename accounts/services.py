"""Everything that writes users and tokens."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.contrib.auth import authenticate
from django.contrib.auth.models import update_last_login
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.ledger import welcome_grant_book
from accounts.models import TOKEN_PREFIX_LENGTH, ApiToken, User
from chan_api.errors import Conflict, InvalidInput, NotAuthenticated, NotFound, PermissionDenied

# A token's last_used_at is refreshed at most this often, so reads do not each cost a write.
TOKEN_TOUCH_INTERVAL = timedelta(minutes=1)


def _username_taken() -> Conflict:
    return Conflict(_("This username is already taken."), code="username_taken")


@transaction.atomic
def user_register(
    *, username: str, password: str, display_name: str = "", password_hash: str = ""
) -> User:
    """Create a player after Django's username and password validators accept them, and book
    its welcome grant (``CHAN_WELCOME_GRANT`` Quan) in the same transaction.

    Usernames are unique case-insensitively (``Demo1`` and ``demo1`` are one name).
    ``password_hash`` is a hash of ``password`` already made (``make_password``), stored as is
    instead of hashing it again (demo_players: four players, one password).
    """
    username = User.normalize_username(username)
    candidate = User(username=username, display_name=display_name)
    errors: dict[str, list[str]] = {}
    try:
        candidate.clean_fields(exclude=["password"])
    except ValidationError as exc:
        errors.update({field: list(messages) for field, messages in exc.message_dict.items()})
    try:
        validate_password(password, user=candidate)
    except ValidationError as exc:
        errors["password"] = list(exc.messages)
    if errors:
        raise InvalidInput(errors=errors)
    if User.objects.filter(username__iexact=username).exists():
        raise _username_taken()

    if password_hash:
        candidate.password = password_hash
    else:
        candidate.set_password(password)
    try:
        with transaction.atomic():
            candidate.save()
    except IntegrityError as exc:  # lost a race with another registration of the same name
        raise _username_taken() from exc
    welcome_grant_book(user=candidate)
    return candidate


def user_authenticate(*, username: str, password: str) -> User:
    """The active user with these credentials, or 401 ``invalid_credentials``."""
    user = authenticate(username=username, password=password)
    if user is None:
        banned = User.objects.filter(username=username, banned_at__isnull=False).first()
        if banned is not None and banned.check_password(password):
            raise _player_banned()
        raise NotAuthenticated()
    user_ban_check(user)
    update_last_login(None, user)
    return user


def token_create(*, user: User, name: str = "") -> tuple[ApiToken, str]:
    """Issue a new token; the plaintext is returned here once and never stored."""
    raw = secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        key_prefix=raw[:TOKEN_PREFIX_LENGTH],
        key_hash=ApiToken.hash_key(raw),
    )
    return token, raw


def token_revoke(*, user: User, token_id: int) -> ApiToken:
    """Revoke one of the user's own tokens (404 for anyone else's). Revoking twice is a no-op."""
    token = ApiToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        raise NotFound(_("No such token."))
    if token.revoked_at is None:
        now = timezone.now()
        # Conditional update: a concurrent revoke keeps the first timestamp.
        ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now)
        token.refresh_from_db(fields=["revoked_at"])
    return token


def token_mark_used(*, token: ApiToken) -> None:
    """Record that the token was just used, at most once per ``TOKEN_TOUCH_INTERVAL``."""
    now = timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < TOKEN_TOUCH_INTERVAL:
        return
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    token.last_used_at = now


@transaction.atomic
def user_password_set(*, user: User, password: str) -> User:
    """Set a new password after the validators accept it."""
    try:
        validate_password(password, user=user)
    except ValidationError as exc:
        raise InvalidInput(errors={"password": list(exc.messages)}) from exc
    user.set_password(password)
    user.save(update_fields=["password", "updated_at"])
    return user


# --------------------------------------------------------------------------- bans


def _player_banned() -> PermissionDenied:
    return PermissionDenied(_("This player is banned."), code="player_banned")


def user_ban_check(user: User) -> None:
    """403 ``player_banned`` if staff banned the player (no token, no login, no seat)."""
    if getattr(user, "banned_at", None) is not None:
        raise _player_banned()


def _player_locked(user_id: int, reason: str) -> tuple[User, str]:
    """The player's row, locked, and the stripped reason (400 ``ban_reason_missing`` if none)."""
    reason = reason.strip()
    if not reason:
        raise InvalidInput(_("A ban or its lifting needs a reason."), code="ban_reason_missing")
    user = User.objects.select_for_update().filter(pk=user_id).first()
    if user is None:
        raise NotFound(_("No such player."))
    return user, reason


@transaction.atomic
def user_ban(*, user_id: int, staff: User, reason: str) -> User:
    """Ban a player: it can no longer sign in (admin or ``/auth/token``), use its tokens, or
    sit down; its hands, ledger and tables stay as they are. ``is_active`` goes off too, so
    Django logs its sessions out. Banning a banned player keeps the first ban."""
    user, reason = _player_locked(user_id, reason)
    if user.pk == staff.pk:
        raise Conflict(_("Staff cannot ban themselves."), code="ban_self")
    if user.banned_at is None:
        user.banned_at = timezone.now()
        user.ban_reason = f"{reason} (by {staff.username})"[:200]
        user.is_active = False
        user.save(update_fields=["banned_at", "ban_reason", "is_active", "updated_at"])
    return user


@transaction.atomic
def user_unban(*, user_id: int, staff: User, reason: str) -> User:
    """Lift a ban: the player may sign in, use its (unrevoked) tokens and sit again. The reason
    is kept in the change history (``ban_reason`` records the unban)."""
    user, reason = _player_locked(user_id, reason)
    if user.banned_at is not None:
        user.banned_at = None
        user.ban_reason = f"unbanned: {reason} (by {staff.username})"[:200]
        user.is_active = True
        user.save(update_fields=["banned_at", "ban_reason", "is_active", "updated_at"])
    return user
