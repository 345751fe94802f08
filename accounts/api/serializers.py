"""Input and output serializers of the accounts API.

Input serializers are strict: an unknown field, a non-string where a string is expected or an
over-long string is a 400 naming the field, never silently dropped or coerced.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.ledger_selectors import LEDGER_PAGE_DEFAULT, LEDGER_PAGE_MAX
from accounts.limits import (
    COOL_OFF_DAYS,
    LIMIT_RANGES,
    SELF_EXCLUSION_MAX_DAYS,
    SELF_EXCLUSION_MIN_DAYS,
)
from accounts.models import ApiToken, LedgerTransaction, User
from accounts.scopes import ALL_SCOPES
from accounts.services import TOKEN_EXPIRES_IN_MAX, TOKEN_EXPIRES_IN_MIN
from chan_api.strict_input import (
    QueryIntegerField,
    StrictCharField,
    StrictInputSerializer,
    StrictIntegerField,
)
from transparency.api.serializers import LeafProofSerializer, TreeHeadSerializer

_USERNAME_MAX = User._meta.get_field("username").max_length
_DISPLAY_NAME_MAX = User._meta.get_field("display_name").max_length
_TOKEN_NAME_MAX = ApiToken._meta.get_field("name").max_length
_PASSWORD_MAX = 128


class RegisterInputSerializer(StrictInputSerializer):
    username = StrictCharField(min_length=1, max_length=_USERNAME_MAX)
    password = StrictCharField(min_length=1, max_length=_PASSWORD_MAX, trim_whitespace=False)
    display_name = StrictCharField(max_length=_DISPLAY_NAME_MAX, required=False, allow_blank=True)


class TokenCreateInputSerializer(StrictInputSerializer):
    username = StrictCharField(min_length=1, max_length=_USERNAME_MAX)
    password = StrictCharField(min_length=1, max_length=_PASSWORD_MAX, trim_whitespace=False)
    name = StrictCharField(max_length=_TOKEN_NAME_MAX, required=False, allow_blank=True)
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=list(ALL_SCOPES)),
        required=False,
        allow_empty=False,
        max_length=len(ALL_SCOPES),
        help_text="The new token's scopes (docs/api.md: Scopes); every scope if absent.",
    )


class MeTokenCreateInputSerializer(StrictInputSerializer):
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=list(ALL_SCOPES)),
        allow_empty=False,
        max_length=len(ALL_SCOPES),
        help_text="What the new token may do (docs/api.md: Scopes): at most what the token "
        "asking holds.",
    )
    name = StrictCharField(max_length=_TOKEN_NAME_MAX, required=False, allow_blank=True)
    expires_in = StrictIntegerField(
        required=False,
        allow_null=True,
        min_value=TOKEN_EXPIRES_IN_MIN,
        max_value=TOKEN_EXPIRES_IN_MAX,
        help_text="Seconds until it stops working; absent or null: `CHAN_TOKEN_TTL_DAYS`.",
    )


class TableHoldOutputSerializer(serializers.Serializer):
    """Reads an ``accounts.hold_selectors.TableHold``."""

    table_id = serializers.IntegerField()
    table_name = serializers.CharField()
    stake = serializers.IntegerField()
    amount = serializers.IntegerField(help_text="Quan held for my seat there.")
    since = serializers.DateTimeField(help_text="When the hold last changed.")


class MyRatingSerializer(serializers.Serializer):
    """A rating in one ruleset family (games.selectors.ratings; docs/api.md, "Ratings")."""

    family = serializers.CharField(help_text="The ruleset preset of the rated hands.")
    rating = serializers.IntegerField(help_text="1500 + 40 × (mu − 3·sigma), rounded.")
    hands = serializers.IntegerField(help_text="Rated hands in this family.")
    provisional = serializers.BooleanField(help_text="Fewer than 20 rated hands.")


class ProfileOutputSerializer(serializers.Serializer):
    """Reads a ``accounts.selectors.UserProfile``."""

    id = serializers.IntegerField()
    username = serializers.CharField()
    display_name = serializers.CharField()
    balance = serializers.IntegerField(help_text="Quan balance.")
    held = serializers.IntegerField(
        help_text="Quan held for my seats (15 × stake a table); not to be spent."
    )
    available = serializers.IntegerField(help_text="balance − held: what I may stake or spend.")
    holds = TableHoldOutputSerializer(many=True, help_text="My holds, one per table.")
    xp = serializers.IntegerField(help_text="Experience (RULES.md §11): +10 ù with gà, +3 ù, +1 …")
    level = serializers.IntegerField(
        help_text="Follows from xp (docs/decisions/rooms-lobby-progression.md: the level table)."
    )
    next_level_xp = serializers.IntegerField(
        allow_null=True, help_text="The xp of the next level; null at the top level."
    )
    vip = serializers.IntegerField(help_text="VIP tier (0: none).")
    vip_points = serializers.IntegerField(help_text="VIP points (some rooms ask for a minimum).")
    badge = serializers.BooleanField(help_text="Reputation badge, granted by staff.")
    is_staff = serializers.BooleanField()
    is_auditor = serializers.BooleanField(help_text="May replay any hand (accounts.audit_hands).")
    rating = MyRatingSerializer(
        allow_null=True, help_text="My rating in the family I played most; null before any."
    )
    ratings = MyRatingSerializer(many=True, help_text="Every ruleset family I am rated in.")


class TokenIssuedOutputSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="The bearer token. Shown this once; store it.")
    token_id = serializers.IntegerField()
    user = ProfileOutputSerializer()


class TokenOutputSerializer(serializers.Serializer):
    """A token as its owner may see it: never the hash, never the plaintext."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    key_prefix = serializers.CharField()
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked = serializers.BooleanField(source="is_revoked")
    expires_at = serializers.DateTimeField(
        allow_null=True, help_text="When it stops working (`CHAN_TOKEN_TTL_DAYS`); null: never."
    )
    expired = serializers.BooleanField(source="is_expired")
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=list(ALL_SCOPES)),
        help_text="What the token may do (docs/api.md: Scopes).",
    )


class MeTokenCreatedOutputSerializer(TokenOutputSerializer):
    token = serializers.CharField(help_text="The bearer token. Shown this once; store it.")


class TokenCheckOutputSerializer(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    now = serializers.DateTimeField(help_text="The server's clock, for hand deadlines.")


# --------------------------------------------------------------------------- the Quan ledger

UTC_DATETIME = {"default_timezone": dt.UTC}


class BonusOutputSerializer(serializers.Serializer):
    """Reads a ``accounts.api.views.BonusClaimed``."""

    transaction_id = serializers.IntegerField()
    amount = serializers.IntegerField(help_text="Quan credited (by VIP tier).")
    balance = serializers.IntegerField(help_text="My Quan balance after the bonus.")
    claimed_at = serializers.DateTimeField(**UTC_DATETIME, help_text="UTC.")
    next_claim_at = serializers.DateTimeField(
        **UTC_DATETIME,
        help_text="UTC: the next midnight in Asia/Ho_Chi_Minh, when the next bonus opens.",
    )


class LedgerQuerySerializer(serializers.Serializer):
    cursor = serializers.RegexField(
        r"^[0-9]{1,18}\Z",
        trim_whitespace=False,
        required=False,
        help_text="The `next` cursor of the previous page (opaque); the newest entries without.",
    )
    limit = QueryIntegerField(min_value=1, max_value=LEDGER_PAGE_MAX, default=LEDGER_PAGE_DEFAULT)
    proofs = serializers.BooleanField(
        default=False,
        help_text="`true`: the page carries the latest signed head of the transparency log and "
        "each line its transaction's inclusion proof under it (docs/audit.md).",
    )


class LedgerEntryOutputSerializer(serializers.Serializer):
    """Reads an ``accounts.models.LedgerEntry`` of my wallet."""

    id = serializers.IntegerField()
    kind = serializers.ChoiceField(
        source="transaction.kind", choices=LedgerTransaction.Kind.choices
    )
    amount = serializers.IntegerField(help_text="Signed Quan: credited > 0, debited < 0.")
    balance_after = serializers.IntegerField(help_text="My balance just after this entry.")
    created_at = serializers.DateTimeField(source="transaction.created_at", **UTC_DATETIME)
    hand_id = serializers.IntegerField(source="transaction.hand_id", allow_null=True)
    table_id = serializers.IntegerField(source="transaction.table_id", allow_null=True)
    memo = serializers.CharField(source="transaction.memo")
    transaction_id = serializers.IntegerField(help_text="The ledger transaction of this entry.")
    transaction_hash = serializers.CharField(
        source="transaction.hash",
        help_text="Its hash in the ledger's chain (hex): its leaf in the transparency log is "
        "made of its id and this hash.",
    )
    inclusion = serializers.SerializerMethodField(
        help_text="With `proofs=true`: the transaction's inclusion proof under `log_head` (null: "
        "not yet in the log under that head, or `proofs` not asked)."
    )

    @extend_schema_field(LeafProofSerializer(allow_null=True))
    def get_inclusion(self, entry: Any) -> dict[str, Any] | None:
        """The proof the view found for this entry's transaction (context ``proofs``)."""
        return self.context.get("proofs", {}).get(entry.pk)


class LedgerPageOutputSerializer(serializers.Serializer):
    results = LedgerEntryOutputSerializer(many=True, source="entries")
    log_head = TreeHeadSerializer(
        allow_null=True,
        help_text="With `proofs=true`: the transparency log's latest signed head, which every "
        "line's `inclusion` is under (null: not asked, or no head signed yet).",
    )
    next = serializers.CharField(
        allow_null=True,
        source="next_cursor",
        help_text="Pass as `cursor` for the next (older) page; null on the last page.",
    )


class LedgerChainHeadOutputSerializer(serializers.Serializer):
    chain = serializers.IntegerField(help_text="The chain (one per shard of the house).")
    tx_id = serializers.IntegerField(help_text="The chain's last transaction's id.")
    hash = serializers.CharField(
        help_text="Its hash (hex), chaining every transaction of the chain before it."
    )
    count = serializers.IntegerField(help_text="How many transactions the chain has.")


class LedgerHeadOutputSerializer(serializers.Serializer):
    tx_id = serializers.IntegerField(
        allow_null=True, help_text="The last ledger transaction's id (null: an empty ledger)."
    )
    hash = serializers.CharField(
        help_text="Its hash (hex), chaining every transaction of its chain before it (64 zeros "
        "when empty)."
    )
    count = serializers.IntegerField(help_text="How many ledger transactions there are.")
    chains = LedgerChainHeadOutputSerializer(
        many=True, help_text="The head of each hash chain in use, by chain."
    )


# --------------------------------------------------------------------------- self-set limits


def _limit_field(kind: str, help_text: str) -> StrictIntegerField:
    low, high = LIMIT_RANGES[kind]
    return StrictIntegerField(
        min_value=low, max_value=high, allow_null=True, required=False, help_text=help_text
    )


class LimitsInputSerializer(StrictInputSerializer):
    """``PUT /me/limits``: the limits to change (any of them); ``null`` removes one."""

    loss_limit_day = _limit_field("loss_limit_day", "Most Quan to lose in a calendar day.")
    loss_limit_week = _limit_field("loss_limit_week", "… in a calendar week (from Monday).")
    loss_limit_month = _limit_field("loss_limit_month", "… in a calendar month.")
    max_stake = _limit_field("max_stake", "The highest stake of a table I may sit at or open.")
    reminder_minutes = _limit_field(
        "reminder_minutes", "A reality check every N minutes of play (5 to 1440)."
    )

    def validate(self, attrs: dict[str, object]) -> dict[str, object]:
        if not attrs:
            raise serializers.ValidationError(
                {"non_field_errors": [_("Name at least one limit to change.")]}
            )
        return attrs


class PendingLimitSerializer(serializers.Serializer):
    value = serializers.IntegerField(allow_null=True, help_text="Null: the limit is removed.")
    effective_at = serializers.DateTimeField(**UTC_DATETIME, help_text="UTC.")


class LimitOutputSerializer(serializers.Serializer):
    value = serializers.IntegerField(allow_null=True, help_text="In force now; null: none.")
    pending = PendingLimitSerializer(
        allow_null=True, help_text="A raise or removal waiting for its 24 hours."
    )


class LossesOutputSerializer(serializers.Serializer):
    day = serializers.IntegerField()
    week = serializers.IntegerField()
    month = serializers.IntegerField()


class ExclusionOutputSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["cool_off", "self_exclusion"])
    days = serializers.IntegerField(allow_null=True, help_text="Null: permanent.")
    starts_at = serializers.DateTimeField(**UTC_DATETIME)
    ends_at = serializers.DateTimeField(**UTC_DATETIME, allow_null=True, help_text="Null: never.")
    permanent = serializers.BooleanField()


class LimitsOutputSerializer(serializers.Serializer):
    """Reads ``accounts.limit_selectors.limits_view``."""

    loss_limit_day = LimitOutputSerializer()
    loss_limit_week = LimitOutputSerializer()
    loss_limit_month = LimitOutputSerializer()
    max_stake = LimitOutputSerializer()
    reminder_minutes = LimitOutputSerializer()
    losses = LossesOutputSerializer(
        help_text="Quan lost in settled hands this day, week and month (Asia/Ho_Chi_Minh)."
    )
    cool_off = ExclusionOutputSerializer(allow_null=True)
    self_exclusion = ExclusionOutputSerializer(allow_null=True)
    play_blocked = serializers.JSONField(
        allow_null=True,
        help_text="Why I may not sit now (`code`, `detail` and the error's fields), or null.",
    )
    now = serializers.DateTimeField(**UTC_DATETIME)


class CoolOffInputSerializer(StrictInputSerializer):
    days = StrictIntegerField(min_value=COOL_OFF_DAYS[0], max_value=COOL_OFF_DAYS[1])


class SelfExclusionInputSerializer(StrictInputSerializer):
    days = StrictIntegerField(
        min_value=SELF_EXCLUSION_MIN_DAYS,
        max_value=SELF_EXCLUSION_MAX_DAYS,
        allow_null=True,
        help_text="183 days or more; null: permanent.",
    )
