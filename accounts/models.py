"""Users and their API tokens.

A token is shown to its owner once and stored only as a SHA-256 hash; its first characters
(``key_prefix``) are kept in clear so a request's token is found with one indexed lookup.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Length, Lower
from django.db.models.lookups import Exact

TOKEN_PREFIX_LENGTH = 8
# secrets.token_urlsafe: the URL-safe base64 alphabet.
TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
HEX_DIGITS = "0123456789abcdef"
AUDIT_HANDS_PERMISSION = "accounts.audit_hands"


def only_chars(field: str, alphabet: str) -> Exact:
    """A check constraint that ``field`` holds only characters of ``alphabet`` (LTRIM strips
    them all). Portable where a regex is not: SQLite has no native REGEXP (Django registers a
    Python one on its own connections only); LTRIM(text, characters) is built into SQLite and
    PostgreSQL."""
    stripped = models.Func(
        F(field), Value(alphabet), function="LTRIM", output_field=models.CharField()
    )
    return Exact(stripped, Value(""))


class User(AbstractUser):
    """A player (or staff member). Auditors hold the ``accounts.audit_hands`` permission."""

    display_name = models.CharField(max_length=64, blank=True)
    xp = models.PositiveIntegerField(default=0)
    level = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta(AbstractUser.Meta):
        ordering = ["id"]
        permissions = [("audit_hands", "Can replay any hand as an auditor")]
        constraints = [
            # "Demo1" and "demo1" are one player: no look-alike accounts.
            models.UniqueConstraint(Lower("username"), name="accounts_user_username_ci_unique"),
            models.CheckConstraint(
                condition=models.Q(level__gte=1), name="accounts_user_level_gte_1"
            ),
            models.CheckConstraint(
                condition=~Q(username=""), name="accounts_user_username_not_empty"
            ),
        ]

    def __str__(self) -> str:
        return self.username


class ApiToken(models.Model):
    """A bearer token of one user; revoked tokens are kept (with ``revoked_at``) for the record."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=64, blank=True, help_text="A label chosen by the owner.")
    key_prefix = models.CharField(max_length=TOKEN_PREFIX_LENGTH, db_index=True)
    key_hash = models.CharField(max_length=64, unique=True, help_text="SHA-256 hex of the token.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "API token"
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    Exact(Length("key_prefix"), TOKEN_PREFIX_LENGTH),
                    only_chars("key_prefix", TOKEN_CHARS),
                ),
                name="accounts_apitoken_key_prefix_8_urlsafe",
            ),
            models.CheckConstraint(
                condition=Q(Exact(Length("key_hash"), 64), only_chars("key_hash", HEX_DIGITS)),
                name="accounts_apitoken_key_hash_sha256",
            ),
            models.CheckConstraint(
                condition=Q(revoked_at__isnull=True) | Q(revoked_at__gte=F("created_at")),
                name="accounts_apitoken_revoked_after_created",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key_prefix}… ({self.user_id})"

    @staticmethod
    def hash_key(raw: str) -> str:
        """The stored form of a token: SHA-256 hex of the whole plaintext."""
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None
