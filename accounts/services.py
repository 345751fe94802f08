"""Everything that writes users and tokens."""

from __future__ import annotations

import math
import secrets
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from axes.helpers import get_cool_off
from django.conf import settings
from django.contrib.auth import authenticate
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.signals import user_logged_in
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext_lazy as _

from accounts import scopes as token_scopes
from accounts.ledger import welcome_grant_book
from accounts.models import (
    TOKEN_PREFIX_LENGTH,
    ApiToken,
    SpentAuthorizationCode,
    User,
    token_expiry,
)
from accounts.signals import player_banned
from accounts.token_cache import token_cache_forget
from core.errors import (
    Conflict,
    InvalidInput,
    NotAuthenticated,
    NotFound,
    PermissionDenied,
    RateLimited,
)

# A token's last_used_at is refreshed at most this often, so reads do not each cost a write.
TOKEN_TOUCH_INTERVAL = timedelta(minutes=1)


def _username_taken() -> Conflict:
    return Conflict(_("This username is already taken."), code="username_taken")


@transaction.atomic
def user_register(
    *,
    username: str,
    password: str,
    display_name: str = "",
    address: str | None = None,
    password_hash: str = "",
) -> User:
    """Create a player after Django's username and password validators accept them, and book
    its welcome grant (``CHAN_WELCOME_GRANT`` Quan) in the same transaction.

    Usernames are unique case-insensitively (``Demo1`` and ``demo1`` are one name). A sign-up
    from a client ``address`` (the API's) keeps it hashed on the user and is refused with 429
    ``signup_limit`` beyond ``CHAN_SIGNUPS_PER_ADDRESS_PER_DAY`` sign-ups from that address in
    24 hours; the count is taken under a lock on the address until the transaction ends.
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
    # Hashed before the first query: the transaction (and, behind PgBouncer in transaction
    # mode, a server connection) starts with that query, not around a second of hashing.
    if password_hash:
        candidate.password = password_hash
    else:
        candidate.set_password(password)
    if User.objects.filter(username__iexact=username).exists():
        raise _username_taken()
    if address is not None:
        candidate.signup_address = signup_address_digest(address)
        _signup_limit_check(candidate.signup_address)
    try:
        with transaction.atomic():
            candidate.save()
    except IntegrityError as exc:  # lost a race with another registration of the same name
        raise _username_taken() from exc
    welcome_grant_book(user=candidate)
    return candidate


SIGNUP_WINDOW = timedelta(hours=24)
# pg_advisory_xact_lock(class, key): the first half says which of our locks this is.
_SIGNUP_LOCK_CLASS = 0x5167  # "sign-up"


def signup_address_digest(address: str) -> str:
    """The stored form of a sign-up's client address: HMAC-SHA256 keyed with ``SECRET_KEY``
    (hex), so the column alone does not give the address back (IPv4 is small enough to hash
    through), while staff holding the key can look an address up."""
    return salted_hmac("chan.signup-address", address, algorithm="sha256").hexdigest()


def _signup_limit_check(digest: str) -> None:
    """429 ``signup_limit`` if the address signed up ``CHAN_SIGNUPS_PER_ADDRESS_PER_DAY`` times
    in the last 24 hours. Takes a transaction-scoped advisory lock on the address first, so
    concurrent sign-ups from it (in any process) are counted one after the other."""
    limit = settings.CHAN_SIGNUPS_PER_ADDRESS_PER_DAY
    if limit <= 0:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s, %s)", [_SIGNUP_LOCK_CLASS, int(digest[:7], 16)]
        )
    now = timezone.now()
    recent = list(
        User.objects.filter(signup_address=digest, created_at__gt=now - SIGNUP_WINDOW)
        .order_by("created_at")
        .values_list("created_at", flat=True)
    )
    if len(recent) < limit:
        return
    # Allowed again once enough of them have left the window to bring the count under it.
    frees_at = recent[len(recent) - limit] + SIGNUP_WINDOW
    raise RateLimited(
        _("At most %(limit)s accounts a day can be made from one address; try again later."),
        code="signup_limit",
        retry_after=max(1, math.ceil((frees_at - now).total_seconds())),
        limit=limit,
    )


def login_lockout_seconds() -> int:
    """How long a login lockout lasts after the last counted attempt (``Retry-After``): each
    attempt during a lockout, even with the right password, starts the cool-off again."""
    cool_off = get_cool_off()
    return max(1, math.ceil(cool_off.total_seconds())) if cool_off else 3600


def _account_locked() -> RateLimited:
    seconds = login_lockout_seconds()
    return RateLimited(
        _(
            "Too many failed logins for this account or from this address; try again in "
            "%(minutes)s minutes."
        ),
        code="account_locked",
        retry_after=seconds,
        minutes=math.ceil(seconds / 60),
    )


def user_authenticate(*, username: str, password: str, request: Any) -> User:
    """The active user with these credentials, or 401 ``invalid_credentials``. ``request`` (the
    HTTP request) lets the login lockout count the failure and judge the account and the client
    address: 429 ``account_locked`` while either is locked out, whatever the password
    (chan_api/admin_lockout.py). A success is recorded as the admin's logins are (Django's
    ``user_logged_in``: the last login, the lockout's success)."""
    user = authenticate(request, username=username, password=password)
    if user is None:
        if getattr(request, "axes_locked_out", False):
            raise _account_locked()
        banned = User.objects.filter(username=username, banned_at__isnull=False).first()
        if banned is not None and banned.check_password(password):
            raise _player_banned()
        raise NotAuthenticated()
    user_ban_check(user)
    user_logged_in.send(sender=type(user), request=request, user=user, token_login=True)
    return user


# A personal token asked for with ``expires_in`` lives at least a minute and at most a year.
TOKEN_EXPIRES_IN_MIN = 60
TOKEN_EXPIRES_IN_MAX = 366 * 24 * 3600


def token_create(
    *,
    user: User,
    name: str = "",
    scopes: Iterable[str] | None = None,
    expires_in: int | None = None,
    granted_by: Iterable[str] | None = None,
    expires_by: datetime | None = None,
) -> tuple[ApiToken, str]:
    """Issue a new token; the plaintext is returned here once and never stored.

    ``scopes`` default to every scope (a login's token does all the player may). ``granted_by``
    are the scopes of the token asking for this one, when a token asks: a token never mints a
    token that can do more than itself (``403 missing_scope``). ``expires_in`` (seconds)
    replaces the ``CHAN_TOKEN_TTL_DAYS`` default. ``expires_by`` is when the asking token
    expires: nor does a token outlive the token that minted it, its expiry is cut to that time.
    """
    wanted = list(dict.fromkeys(scopes)) if scopes is not None else list(token_scopes.ALL_SCOPES)
    if not wanted:
        raise InvalidInput(
            _("A token needs at least one scope."),
            code="invalid",
            errors={"scopes": [_("A token needs at least one scope.")]},
        )
    if bad := token_scopes.unknown(wanted):
        raise InvalidInput(
            _("Unknown scope: %(scope)s."),
            code="unknown_scope",
            errors={"scopes": [_("Unknown scope: %(scope)s.") % {"scope": bad[0]}]},
            scope=bad[0],
            extra={"scope": bad[0]},
        )
    if granted_by is not None:
        held = token_scopes.expand(granted_by)
        for scope in wanted:
            if scope not in held:
                raise token_scopes.missing_scope(scope)
    fields: dict[str, Any] = {}
    if expires_in is not None:
        if not TOKEN_EXPIRES_IN_MIN <= expires_in <= TOKEN_EXPIRES_IN_MAX:
            raise InvalidInput(
                code="invalid",
                errors={
                    "expires_in": [
                        _("Between %(low)s and %(high)s seconds.")
                        % {"low": TOKEN_EXPIRES_IN_MIN, "high": TOKEN_EXPIRES_IN_MAX}
                    ]
                },
            )
        fields["expires_at"] = timezone.now() + timedelta(seconds=expires_in)
    if expires_by is not None:
        expires_at = fields["expires_at"] if "expires_at" in fields else token_expiry()
        fields["expires_at"] = expires_by if expires_at is None else min(expires_at, expires_by)
    raw = secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        key_prefix=raw[:TOKEN_PREFIX_LENGTH],
        key_hash=ApiToken.hash_key(raw),
        scopes=wanted,
        **fields,
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
        token_id = token.pk
        transaction.on_commit(lambda: token_cache_forget(token_id=token_id), robust=True)
        token_cache_forget(token_id=token_id)  # and at once (no transaction: the commit was)
    return token


def oauth_token_revoke(*, access: Any) -> None:
    """End an OAuth access token (``/auth/logout`` made with it) and the refresh token issued
    with it, so the app must ask the player again."""
    refresh = getattr(access, "refresh_token", None)
    if refresh is not None:
        refresh.revoke()  # revokes its access token too
    else:
        access.revoke()


def oauth_code_spend(*, code: str, application: Any, token_family: uuid.UUID | None) -> None:
    """Remember an authorization code just traded for tokens, with their refresh tokens'
    family; called in the exchange's transaction. Codes spent longer ago than a refresh token
    lives (``OAUTH_REFRESH_TOKEN_SECONDS``) are forgotten on the way."""
    from oauth2_provider.settings import oauth2_settings

    kept = oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS
    if kept:
        cutoff = timezone.now() - timedelta(seconds=int(kept))
        SpentAuthorizationCode.objects.filter(created_at__lt=cutoff).delete()
    SpentAuthorizationCode.objects.create(
        code_checksum=SpentAuthorizationCode.hash_code(code),
        application=application,
        token_family=token_family,
    )


def oauth_code_reuse_revoke(*, code: str, application: Any) -> bool:
    """A code of ``application`` presented again after it was traded (RFC 6749 §4.1.2): revoke
    every token issued from it, the refresh tokens of its family (rotated ones included) and
    their access tokens. Whether the code had been spent; one that never was changes nothing."""
    from oauth2_provider.models import get_refresh_token_model

    spent = SpentAuthorizationCode.objects.filter(
        code_checksum=SpentAuthorizationCode.hash_code(code), application=application
    ).first()
    if spent is None:
        return False
    get_refresh_token_model().revoke_family(spent.token_family)
    return True


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
    user = User.objects.select_for_update(no_key=True).filter(pk=user_id).first()
    if user is None:
        raise NotFound(_("No such player."))
    return user, reason


@transaction.atomic
def user_ban(*, user_id: int, staff: User, reason: str) -> User:
    """Ban a player: it can no longer sign in (admin or ``/auth/token``), use its tokens, or
    sit down; its hands and ledger stay as they are. ``is_active`` goes off too, so
    Django logs its sessions out. Banning a banned player keeps the first ban.

    Once the ban commits, ``player_banned`` stands the player up at every table it sits at, as
    leaving does (its gà góp share refunded; mid-hand the server plays its seat to the end of
    the hand). After the commit, not inside it: unseating locks hands and tables, which the
    settlement locks before players' rows, so doing it under this row's lock could deadlock."""
    user, reason = _player_locked(user_id, reason)
    if user.pk == staff.pk:
        raise Conflict(_("Staff cannot ban themselves."), code="ban_self")
    if user.banned_at is None:
        user.banned_at = timezone.now()
        user.ban_reason = f"{reason} (by {staff.username})"[:200]
        user.is_active = False
        user.save(update_fields=["banned_at", "ban_reason", "is_active", "updated_at"])
        banned_id = user.pk
        transaction.on_commit(lambda: token_cache_forget(user_id=banned_id), robust=True)
        transaction.on_commit(
            lambda: player_banned.send(sender=User, user_id=banned_id), robust=True
        )
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
        unbanned_id = user.pk
        transaction.on_commit(lambda: token_cache_forget(user_id=unbanned_id), robust=True)
    return user
