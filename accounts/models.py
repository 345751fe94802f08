"""Users, their API tokens and the Quan ledger.

A token is shown to its owner once and stored only as a SHA-256 hash; its first characters
(``key_prefix``) are kept in clear so a request's token is found with one indexed lookup.

The ledger is double-entry: a :class:`LedgerTransaction` (one business event) holds
:class:`LedgerEntry` rows (signed integer Quan on one :class:`LedgerAccount` each) that sum to
zero. On PostgreSQL the database enforces it (migration accounts 0004): entries and transactions
are append-only, a transaction balances at commit, an entry moves its account's ``balance`` (the
only way it moves) and records ``balance_after``, and a non-issuance balance never goes below 0.
Only the services of ``accounts/ledger.py`` write these rows.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any, ClassVar

import pghistory
from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Length, Lower
from django.db.models.lookups import Exact
from django.utils import timezone
from oauth2_provider.settings import oauth2_settings

from accounts.scopes import all_scopes

TOKEN_PREFIX_LENGTH = 8
# secrets.token_urlsafe: the URL-safe base64 alphabet.
TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
HEX_DIGITS = "0123456789abcdef"
AUDIT_HANDS_PERMISSION = "accounts.audit_hands"


def only_chars(field: str, alphabet: str) -> Exact:
    """A check constraint that ``field`` holds only characters of ``alphabet`` (LTRIM strips
    them all): plain SQL that any client of the database can read, where a regex check would be
    PostgreSQL-specific syntax."""
    stripped = models.Func(
        F(field), Value(alphabet), function="LTRIM", output_field=models.CharField()
    )
    return Exact(stripped, Value(""))


def sha256_hex(field: str) -> Q:
    """A check constraint that ``field`` is a SHA-256 in lowercase hex."""
    return Q(Exact(Length(field), 64), only_chars(field, HEX_DIGITS))


# History (admin changes, with old and new values): what staff may change, never the password.
@pghistory.track(
    pghistory.InsertEvent(),
    pghistory.UpdateEvent(),
    fields=[
        "username",
        "email",
        "first_name",
        "last_name",
        "display_name",
        "is_active",
        "is_staff",
        "is_superuser",
        "vip",
        "vip_points",
        "badge",
        "banned_at",
        "ban_reason",
    ],
    model_name="UserEvent",
)
class User(AbstractUser):
    """A player (or staff member). Auditors hold the ``accounts.audit_hands`` permission."""

    display_name = models.CharField(max_length=64, blank=True)
    xp = models.PositiveIntegerField(default=0)
    level = models.PositiveIntegerField(default=1)
    vip = models.PositiveSmallIntegerField(
        default=0, help_text="VIP tier: 0 for none; sets the daily bonus (CHAN_DAILY_BONUS)."
    )
    vip_points = models.PositiveIntegerField(
        default=0, help_text="VIP points: some rooms ask for a minimum (RULES.md §11)."
    )
    badge = models.BooleanField(
        default=False, help_text="Reputation badge, granted by staff (Sập gụ VIP asks for it)."
    )
    banned_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When staff banned the player: no login, no token, no seat; history kept.",
    )
    ban_reason = models.CharField(max_length=200, blank=True)
    is_bot = models.BooleanField(
        default=False,
        help_text="A server bot of the practice tables: never logs in, holds no Quan.",
    )
    # Not a column: what the request's token may do, set by accounts.authentication (None for
    # a request without a token, an admin session).
    token_scopes: frozenset[str] | None = None
    signup_address = models.CharField(
        max_length=64,
        blank=True,
        editable=False,
        help_text="The client address that signed up, as HMAC-SHA256 keyed with SECRET_KEY "
        "(hex; the admin's search hashes a typed address): sign-ups per address are limited "
        "(CHAN_SIGNUPS_PER_ADDRESS_PER_DAY). Empty for accounts made otherwise.",
    )
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
            models.CheckConstraint(
                condition=Q(is_bot=False) | Q(is_staff=False, is_superuser=False, is_active=False),
                name="accounts_user_bot_not_staff_nor_active",
            ),
            models.CheckConstraint(
                condition=Q(signup_address="")
                | Q(Exact(Length("signup_address"), 64), only_chars("signup_address", HEX_DIGITS)),
                name="accounts_user_signup_address_hmac",
            ),
        ]
        indexes = [
            # The sign-ups of one address in the last 24 hours (the limit): one range scan.
            models.Index(
                fields=["signup_address", "created_at"],
                name="accounts_user_signup_addr",
                condition=~Q(signup_address=""),
            ),
        ]

    def __str__(self) -> str:
        return self.username

    @property
    def is_banned(self) -> bool:
        return self.banned_at is not None


def token_expiry() -> datetime | None:
    """When a token issued now expires: ``CHAN_TOKEN_TTL_DAYS`` from now (0: never)."""
    days = settings.CHAN_TOKEN_TTL_DAYS
    return timezone.now() + timedelta(days=days) if days > 0 else None


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
    expires_at = models.DateTimeField(
        null=True, blank=True, default=token_expiry, help_text="Empty: never expires."
    )
    scopes = ArrayField(
        models.CharField(max_length=32),
        default=all_scopes,
        help_text="What the token may do (accounts/scopes.py; docs/api.md: Scopes).",
    )

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
                condition=sha256_hex("key_hash"),
                name="accounts_apitoken_key_hash_sha256",
            ),
            models.CheckConstraint(
                condition=Q(revoked_at__isnull=True) | Q(revoked_at__gte=F("created_at")),
                name="accounts_apitoken_revoked_after_created",
            ),
            models.CheckConstraint(
                condition=Q(scopes__len__gte=1), name="accounts_apitoken_has_a_scope"
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

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()


class SpentAuthorizationCode(models.Model):
    """An OAuth authorization code already traded for tokens, kept as its SHA-256: presented
    again it is refused, and the tokens issued from it (its refresh tokens' ``token_family``)
    are revoked (RFC 6749 §4.1.2). Written by the exchange, in its transaction."""

    code_checksum = models.CharField(
        max_length=64, unique=True, help_text="SHA-256 hex of the authorization code."
    )
    application = models.ForeignKey(
        oauth2_settings.APPLICATION_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    token_family = models.UUIDField(
        null=True, blank=True, help_text="The family of the refresh tokens issued from it."
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=sha256_hex("code_checksum"),
                name="accounts_spentauthorizationcode_checksum_sha256",
            ),
        ]

    def __str__(self) -> str:
        return f"code …{self.code_checksum[-6:]} ({self.application_id})"

    @staticmethod
    def hash_code(code: str) -> str:
        return hashlib.sha256(code.encode("utf-8")).hexdigest()


class LedgerWriteError(Exception):
    """A ledger row was about to be changed or deleted through the ORM: the ledger is
    append-only, and balances move only with an entry."""


class AppendOnlyQuerySet(models.QuerySet[Any]):
    def update(self, **kwargs: Any) -> int:
        raise LedgerWriteError("Ledger rows are append-only.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise LedgerWriteError("Ledger rows are append-only.")


class LedgerAccount(models.Model):
    """Where Quan sits: a player's wallet, the house (collects fees), a table's gà góp pot, or
    the issuance account (the counterpart of grants, bonuses and admin adjustments, the only one
    allowed below zero). ``balance`` is the sum of the account's entries, kept by the database
    in the same transaction as each entry, so it is read in O(1)."""

    class Kind(models.TextChoices):
        WALLET = "wallet", "Player wallet"
        HOUSE = "house", "House"
        POT = "pot", "Gà góp pot"
        ISSUANCE = "issuance", "Issuance"
        PRIZE = "prize", "Season prize account"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="wallet",
    )
    table = models.OneToOneField(
        "games.Table",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ga_gop_pot",
    )
    # The house and the issuance account are families (accounts 0017): a parent (shard null,
    # holding what was booked before the split) and ``CHAN_HOUSE_SHARDS`` children that take
    # every new posting; the family's balance is the sum of its rows.
    parent = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="children",
        help_text="The house or issuance account this one is a sub-account (shard) of.",
    )
    shard = models.PositiveSmallIntegerField(null=True, blank=True)
    balance = models.BigIntegerField(default=0, editable=False)
    held = models.BigIntegerField(
        default=0,
        editable=False,
        help_text="Quan held for the seats the player takes (Σ of its open holds, kept by the "
        "database from the hold events); available = balance − held.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects: ClassVar[models.Manager[LedgerAccount]] = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["wallet", "house", "pot", "issuance", "prize"]),
                name="accounts_ledgeraccount_kind_known",
            ),
            models.CheckConstraint(
                condition=Q(balance__gte=0) | Q(kind="issuance"),
                name="accounts_ledgeraccount_balance_non_negative",
            ),
            models.CheckConstraint(
                condition=Q(kind="wallet", user__isnull=False)
                | (~Q(kind="wallet") & Q(user__isnull=True)),
                name="accounts_ledgeraccount_wallet_has_user",
            ),
            models.CheckConstraint(
                condition=Q(kind="pot", table__isnull=False)
                | (~Q(kind="pot") & Q(table__isnull=True)),
                name="accounts_ledgeraccount_pot_has_table",
            ),
            models.UniqueConstraint(
                fields=["kind"],
                condition=Q(kind__in=["house", "issuance"], parent__isnull=True),
                name="accounts_ledgeraccount_one_house_one_issuance",
            ),
            models.UniqueConstraint(
                fields=["kind"], condition=Q(kind="prize"), name="accounts_ledgeraccount_one_prize"
            ),
            models.UniqueConstraint(
                fields=["parent", "shard"],
                condition=Q(parent__isnull=False),
                name="accounts_ledgeraccount_one_child_per_shard",
            ),
            models.CheckConstraint(
                condition=Q(parent__isnull=True, shard__isnull=True)
                | Q(parent__isnull=False, shard__isnull=False, kind__in=["house", "issuance"]),
                name="accounts_ledgeraccount_shard_has_parent",
            ),
            # A hold is backed by Quan the account has: held never exceeds the balance.
            models.CheckConstraint(
                condition=Q(held__gte=0) & (Q(held=0) | Q(kind="wallet", balance__gte=F("held"))),
                name="accounts_ledgeraccount_held_within_balance",
            ),
        ]

    def __str__(self) -> str:
        owner = self.user_id or self.table_id
        if owner:
            return f"{self.kind} {owner}"
        return f"{self.kind} shard {self.shard}" if self.shard is not None else self.kind


class LedgerTransaction(models.Model):
    """One business event that moves Quan (a grant, a bonus, an adjustment, a hand's
    settlement …): its entries sum to zero. ``idempotency_key`` makes booking it twice
    impossible (``grant:welcome:<user id>``, ``bonus:<user id>:<date>``, ``hand:<id>:settle``)."""

    class Kind(models.TextChoices):
        WELCOME_GRANT = "welcome_grant", "Welcome grant"
        DAILY_BONUS = "daily_bonus", "Daily bonus"
        ADJUSTMENT = "adjustment", "Admin adjustment"
        HAND_SETTLEMENT = "hand_settlement", "Hand settlement"
        HAND_VOID = "hand_void", "Hand voided (settlement reversed)"
        GA_GOP = "ga_gop", "Gà góp pot contribution"
        GA_GOP_REFUND = "ga_gop_refund", "Gà góp pot refund"
        TRANSFER = "transfer", "Transfer"
        TOURNAMENT_ENTRY = "tournament_entry", "Arena entry fees into its pool"
        TOURNAMENT_PRIZE = "tournament_prize", "Arena pool paid as prizes"
        TOURNAMENT_REFUND = "tournament_refund", "Arena pool refunded (cancelled)"

        PRIZE_FUNDING = "prize_funding", "Prize account funded"
        SEASON_PRIZE = "season_prize", "Season prizes"

    kind = models.CharField(max_length=32, choices=Kind.choices)
    idempotency_key = models.CharField(max_length=200, unique=True)
    memo = models.CharField(max_length=255, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ledger_transactions",
        help_text="The player the event is about (grants, bonuses) or the staff member who "
        "made an adjustment.",
    )
    hand = models.ForeignKey(
        "games.Hand",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ledger_transactions",
    )
    table = models.ForeignKey(
        "games.Table",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ledger_transactions",
    )
    prev_hash = models.CharField(
        max_length=64, help_text="The previous transaction's hash (64 zeros for the first)."
    )
    hash = models.CharField(
        max_length=64, help_text="SHA-256 (hex) of this transaction's canonical content."
    )
    chain = models.PositiveSmallIntegerField(
        default=0,
        db_default=0,
        help_text="The hash chain (one per shard) this transaction extends: prev_hash is the "
        "hash of the chain's transaction before it.",
    )
    mac = models.CharField(
        max_length=64,
        blank=True,
        default="",
        db_default="",
        help_text="HMAC-SHA256 (hex) of its hash under the record key (games.rules.record_mac); "
        "empty on transactions booked before keys existed.",
    )
    mac_key = models.CharField(
        max_length=32,
        blank=True,
        default="",
        db_default="",
        help_text="The id of the record key its MAC is under.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects: ClassVar[models.Manager[LedgerTransaction]] = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        indexes = [
            # A chain's head (the chain trigger, ledger_post) and its walk (ledger_check).
            models.Index(fields=["chain", "-id"], name="accounts_ledgertx_chain"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=~Q(idempotency_key=""),
                name="accounts_ledgertransaction_key_not_empty",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.kind} ({self.idempotency_key})"


class LedgerEntry(models.Model):
    """One leg of a transaction: ``amount`` Quan (signed, never 0) on ``account``, and the
    account's balance just after it (set by the database, not by Python)."""

    # No index of their own: the unique constraint leads with the transaction, the statement
    # index with the account (accounts 0022).
    transaction = models.ForeignKey(
        LedgerTransaction, on_delete=models.PROTECT, related_name="entries", db_index=False
    )
    account = models.ForeignKey(
        LedgerAccount, on_delete=models.PROTECT, related_name="entries", db_index=False
    )
    amount = models.BigIntegerField()
    balance_after = models.BigIntegerField(default=0, editable=False)
    # The partition key (accounts 0022): the transaction's created_at, so all of a transaction's
    # entries lie in its month's partition; the database refuses any other value.
    transaction_created_at = models.DateTimeField(
        editable=False, help_text="The transaction's created_at: the entries' partition key."
    )

    objects: ClassVar[models.Manager[LedgerEntry]] = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "ledger entries"
        constraints = [
            models.CheckConstraint(
                condition=~Q(amount=0), name="accounts_ledgerentry_amount_not_zero"
            ),
            # one leg per account: the key is the transaction's, so the same constraint
            models.UniqueConstraint(
                fields=["transaction", "account", "transaction_created_at"],
                name="accounts_ledgerentry_one_leg_per_account",
            ),
        ]
        indexes = [
            # An account's statement, newest first (GET /me/ledger): one index range scan.
            models.Index(fields=["account", "-id"], name="accounts_ledgerentry_stmt"),
        ]

    def __str__(self) -> str:
        return f"{self.amount:+d} on {self.account_id} (tx {self.transaction_id})"


# --------------------------------------------------------------------------- self-set limits
# Limits players set for themselves (docs/decisions/player-limits.md). The services are
# accounts/limits.py, the reads accounts/limit_selectors.py.


class LimitKind(models.TextChoices):
    LOSS_LIMIT_DAY = "loss_limit_day", "Loss limit per day"
    LOSS_LIMIT_WEEK = "loss_limit_week", "Loss limit per week"
    LOSS_LIMIT_MONTH = "loss_limit_month", "Loss limit per month"
    MAX_STAKE = "max_stake", "Highest stake"
    REMINDER_MINUTES = "reminder_minutes", "Reality check every N minutes"


LIMIT_KINDS = [kind.value for kind in LimitKind]


class PlayerLimit(models.Model):
    """One limit of one player: the ``value`` in force (null: none) and, after a raise or a
    removal, the ``pending_value`` that replaces it at ``pending_at`` (24 hours after the
    request). A pending change whose time has come is in force as soon as it is read
    (``limit_selectors``); the next write folds it into ``value``."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="limits"
    )
    kind = models.CharField(max_length=32, choices=LimitKind.choices)
    value = models.PositiveBigIntegerField(null=True, blank=True)
    pending_value = models.PositiveBigIntegerField(null=True, blank=True)
    pending_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["user_id", "kind"]
        constraints = [
            models.UniqueConstraint(fields=["user", "kind"], name="accounts_playerlimit_one_kind"),
            models.CheckConstraint(
                condition=Q(kind__in=LIMIT_KINDS), name="accounts_playerlimit_kind_known"
            ),
            models.CheckConstraint(
                condition=Q(value__isnull=True) | Q(value__gte=1),
                name="accounts_playerlimit_value_positive",
            ),
            models.CheckConstraint(
                condition=Q(pending_at__isnull=False)
                | Q(pending_at__isnull=True, pending_value__isnull=True),
                name="accounts_playerlimit_pending_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind}={self.value} ({self.user_id})"


class AppendOnlyModel(models.Model):
    """A row written once: ``save()`` of a stored row and ``delete()`` are refused in Python,
    as the database refuses UPDATE and DELETE (migration accounts 0015)."""

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise LedgerWriteError(f"{type(self).__name__} rows are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise LedgerWriteError(f"{type(self).__name__} rows are append-only.")


class PlayerExclusion(AppendOnlyModel):
    """A cooling-off period or a self-exclusion: from ``starts_at`` to ``ends_at`` (null:
    permanent) the player cannot sit, quick-join, open tables or claim a bonus. Append-only,
    enforced by PostgreSQL (migration accounts 0015): nobody, staff included, shortens one."""

    class Kind(models.TextChoices):
        COOL_OFF = "cool_off", "Cooling off"
        SELF_EXCLUSION = "self_exclusion", "Self-exclusion"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="exclusions"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    days = models.PositiveIntegerField(null=True, blank=True, help_text="Empty: permanent.")
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField(null=True, blank=True, help_text="Empty: permanent.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects: ClassVar[models.Manager[PlayerExclusion]] = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["-starts_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["cool_off", "self_exclusion"]),
                name="accounts_playerexclusion_kind_known",
            ),
            models.CheckConstraint(
                condition=Q(kind="cool_off", days__gte=1, days__lte=42, ends_at__isnull=False)
                | Q(kind="self_exclusion", days__gte=183, ends_at__isnull=False)
                | Q(kind="self_exclusion", days__isnull=True, ends_at__isnull=True),
                name="accounts_playerexclusion_days_in_range",
            ),
            models.CheckConstraint(
                condition=Q(ends_at__isnull=True) | Q(ends_at__gt=F("starts_at")),
                name="accounts_playerexclusion_ends_after_start",
            ),
        ]
        indexes = [models.Index(fields=["user", "-starts_at"], name="accounts_excl_user")]

    def __str__(self) -> str:
        return f"{self.kind} {self.user_id} until {self.ends_at or 'forever'}"


class PlayerLimitChange(AppendOnlyModel):
    """The history of a player's limits, a row per change (append-only, enforced by
    PostgreSQL): which limit, the value before and after (null: none), when it takes effect
    and who asked (the player, or staff)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="limit_changes"
    )
    kind = models.CharField(max_length=32)
    old_value = models.PositiveBigIntegerField(null=True, blank=True)
    new_value = models.PositiveBigIntegerField(null=True, blank=True)
    effective_at = models.DateTimeField()
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField()

    objects: ClassVar[models.Manager[PlayerLimitChange]] = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=[*LIMIT_KINDS, "cool_off", "self_exclusion"]),
                name="accounts_playerlimitchange_kind_known",
            ),
            models.CheckConstraint(
                condition=Q(effective_at__gte=F("created_at")),
                name="accounts_playerlimitchange_not_backdated",
            ),
        ]
        indexes = [models.Index(fields=["user", "-created_at"], name="accounts_limchg_user")]

    def __str__(self) -> str:
        return f"{self.kind}: {self.old_value} → {self.new_value} ({self.user_id})"


class LedgerHold(models.Model):
    """One event of a seat's hold: Quan of a wallet set aside for a table while the
    player sits there. A hold moves no Quan; it lowers what is available (balance − held).
    Append-only: the hold at a table is the ``amount`` of its latest event; the database keeps
    the wallet's ``held`` (Σ of its open holds) from these rows and refuses a balance below it
    (migration accounts 0014). Each wallet's events chain their own previous one by hash."""

    class Kind(models.TextChoices):
        PLACED = "placed", "Placed"
        RESIZED = "resized", "Resized"
        RELEASED = "released", "Released"

    account = models.ForeignKey(LedgerAccount, on_delete=models.PROTECT, related_name="holds")
    table = models.ForeignKey("games.Table", on_delete=models.PROTECT, related_name="holds")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    amount = models.BigIntegerField(help_text="The hold at this table after the event.")
    delta = models.BigIntegerField(
        default=0, editable=False, help_text="Change of the hold (set by the database)."
    )
    held_after = models.BigIntegerField(
        default=0, editable=False, help_text="The wallet's total held just after (database)."
    )
    reason = models.CharField(max_length=64, blank=True)
    hand = models.ForeignKey(
        "games.Hand", on_delete=models.PROTECT, null=True, blank=True, related_name="holds"
    )
    prev_hash = models.CharField(max_length=64, help_text="The wallet's previous hold event.")
    hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    objects: ClassVar[models.Manager[LedgerHold]] = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(amount__gte=0), name="accounts_ledgerhold_amount_non_negative"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=["placed", "resized", "released"])
                & (~Q(kind="released") | Q(amount=0))
                & (~Q(kind="placed") | Q(amount__gt=0)),
                name="accounts_ledgerhold_kind_amount",
            ),
        ]
        indexes = [
            # The latest event of a wallet's hold at a table; a wallet's chain head.
            models.Index(fields=["account", "table", "-id"], name="accounts_hold_acct_table"),
            models.Index(fields=["account", "-id"], name="accounts_hold_acct"),
        ]

    def __str__(self) -> str:
        return f"hold {self.kind} {self.amount} on {self.account_id} at table {self.table_id}"


class LossReservation(AppendOnlyModel):
    """What a deal reserved of a player's loss limits for one seat (RULES.md §11, "limits at
    several tables"): ``amount`` Quan (the seat's hold, 15 × stake) of what the player may
    still lose in the period, from the deal of ``hand`` until its settlement, which takes at
    most this much from the seat. A reservation counts while its hand is not settled.
    Append-only, enforced by PostgreSQL (migration accounts 0024)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="loss_reservations"
    )
    table = models.ForeignKey("games.Table", on_delete=models.PROTECT, related_name="+")
    hand = models.ForeignKey("games.Hand", on_delete=models.PROTECT, related_name="+")
    amount = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    objects: ClassVar[models.Manager[LossReservation]] = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["hand", "user"], name="accounts_lossreserve_one_seat"),
            models.CheckConstraint(
                condition=Q(amount__gt=0), name="accounts_lossreservation_amount_positive"
            ),
        ]
        indexes = [models.Index(fields=["user", "-id"], name="accounts_lossreserve_user")]

    def __str__(self) -> str:
        return f"{self.amount} of {self.user_id}'s loss limits for hand {self.hand_id}"
