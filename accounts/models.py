"""Users and their API tokens.

A token is shown to its owner once and stored only as a SHA-256 hash; its first characters
(``key_prefix``) are kept in clear so a request's token is found with one indexed lookup.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models.functions import Lower

TOKEN_PREFIX_LENGTH = 8
AUDIT_HANDS_PERMISSION = "accounts.audit_hands"


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

    def __str__(self) -> str:
        return f"{self.key_prefix}… ({self.user_id})"

    @staticmethod
    def hash_key(raw: str) -> str:
        """The stored form of a token: SHA-256 hex of the whole plaintext."""
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None
