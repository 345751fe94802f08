"""Input and output serializers of the live endpoints: the player's feed, waits on tables."""

from __future__ import annotations

from rest_framework import serializers

from chan_api.strict_input import QueryIntegerField
from games.live.kinds import FEED_KINDS
from games.selectors.feed import FEED_PAGE_MAX

MAX_FEED_SEQ = 10**18


class FeedQuerySerializer(serializers.Serializer):
    after = QueryIntegerField(
        min_value=0,
        max_value=MAX_FEED_SEQ,
        default=0,
        help_text="Cursor: entries after this seq (the previous page's `next_after`).",
    )
    limit = QueryIntegerField(min_value=1, max_value=FEED_PAGE_MAX, default=FEED_PAGE_MAX)
    wait = QueryIntegerField(
        min_value=0,
        max_value=30,
        default=0,
        help_text="Long-poll for up to this many seconds while there is no entry after `after`.",
    )


class WaitQuerySerializer(serializers.Serializer):
    wait = QueryIntegerField(
        min_value=0,
        max_value=30,
        default=0,
        help_text="With `If-None-Match`: answer as soon as the table changes (seats, ready, "
        "deal), at most after this many seconds (then 304).",
    )


class FeedEntrySerializer(serializers.Serializer):
    seq = serializers.IntegerField(help_text="1, 2, 3 … per player, in commit order.")
    kind = serializers.ChoiceField(choices=sorted(FEED_KINDS))
    table_id = serializers.IntegerField(allow_null=True)
    hand_id = serializers.IntegerField(allow_null=True)
    data = serializers.JSONField(help_text="The kind's fields (docs/api.md, the player's feed).")
    created_at = serializers.DateTimeField()


class FeedPageSerializer(serializers.Serializer):
    entries = FeedEntrySerializer(many=True)
    head = serializers.IntegerField(help_text="The feed's last seq when it was read.")
    next_after = serializers.IntegerField(help_text="The cursor of the next page.")
    has_more = serializers.BooleanField()
    truncated = serializers.BooleanField(
        help_text="Entries after the cursor were removed as older than the feed's retention "
        "(CHAN_FEED_RETENTION_DAYS, 30 days by default): this page does not follow on from it; "
        "read your tables' state again."
    )
