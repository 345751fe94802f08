"""What a token may do: the scopes of personal tokens and of OAuth access tokens.

Every API view declares one scope in ``required_scope`` (or a mapping of HTTP method to scope),
and :class:`chan_api.permissions.ScopePermission` refuses a token that does not carry it
(``403 missing_scope``). The same names gate personal tokens (``/api/v1/me/tokens``) and the
tokens third-party apps obtain through OAuth (``/oauth/``); docs/api.md lists them, and a test
holds that table to :data:`SCOPES`.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.translation import gettext_lazy as _

from core.errors import PermissionDenied

READ = "read"
PLAY = "play"
BOT_PLAY = "bot:play"
LEDGER_READ = "ledger:read"
AUDIT_READ = "audit:read"
LIMITS = "limits"
TOKENS = "tokens"

# A view open to anyone (it authenticates by its body, or not at all).
PUBLIC = "public"
# A view any valid token may use whatever its scopes (check itself, log itself out).
ANY = "any"

# The scopes, in the order docs/api.md lists them, with what each lets a token do.
SCOPES: dict[str, object] = {
    READ: _(
        "Read my profile, tables, rooms, players, my hands as my seat sees them, "
        "history and the rules calculators."
    ),
    PLAY: _(
        "Play: open and join tables, quick-join a room, claim the daily bonus, and "
        "everything bot:play allows."
    ),
    BOT_PLAY: _(
        "Play the hands at tables I already sit at: moves, ready, leave (no joining, "
        "no new stakes)."
    ),
    LEDGER_READ: _("Read my Quan statement and the ledger's head."),
    AUDIT_READ: _(
        "Use an auditor's powers (accounts.audit_hands): replay and export any hand at any time."
    ),
    LIMITS: _("Read and set my own play limits."),
    TOKENS: _("List, create and revoke my personal tokens (never granted to OAuth apps)."),
}

# A scope that brings others with it.
IMPLIES: dict[str, frozenset[str]] = {PLAY: frozenset({BOT_PLAY})}

# What only the player's own personal tokens may do: manage those tokens, and set the player's
# own limits (a cool-off, an irreversible self-exclusion), which are the player's decision alone.
PERSONAL_ONLY: frozenset[str] = frozenset({LIMITS, TOKENS})
# What a third-party app may ask for: everything else.
OAUTH_SCOPES: tuple[str, ...] = tuple(s for s in SCOPES if s not in PERSONAL_ONLY)
ALL_SCOPES: tuple[str, ...] = tuple(SCOPES)


def all_scopes() -> list[str]:
    """Every scope: the default of a token made without naming its scopes (a login's)."""
    return list(ALL_SCOPES)


def expand(scopes: Iterable[str]) -> frozenset[str]:
    """The scopes granted, with those they imply."""
    granted = set(scopes)
    for scope in list(granted):
        granted |= IMPLIES.get(scope, frozenset())
    return frozenset(granted)


def unknown(scopes: Iterable[str]) -> list[str]:
    """The names among ``scopes`` that are not scopes, in their order."""
    return [s for s in scopes if s not in SCOPES]


def satisfies(granted: Iterable[str], required: str) -> bool:
    """Whether a token holding ``granted`` may use a view that requires ``required``."""
    if required in (PUBLIC, ANY):
        return True
    return required in expand(granted)


def token_scopes(auth: object) -> frozenset[str] | None:
    """The scopes of a request's credential: a personal token's list, an OAuth access token's
    space-separated ``scope`` less what no app may hold (a token an app was given before that
    rule keeps none of it); None when the request carries no token (an admin session)."""
    scope = getattr(auth, "scope", None)  # an OAuth access token's (its ``scopes`` is a dict)
    if isinstance(scope, str):
        return frozenset(scope.split()) - PERSONAL_ONLY
    scopes = getattr(auth, "scopes", None)
    if scopes is not None:
        return frozenset(scopes)
    return None


def missing_scope(scope: str) -> PermissionDenied:
    """``403 missing_scope``: the token lacks ``scope`` (named in the body's ``scope``)."""
    return PermissionDenied(
        _("This token lacks the scope %(scope)s."),
        code="missing_scope",
        scope=scope,
        extra={"scope": scope},
    )
