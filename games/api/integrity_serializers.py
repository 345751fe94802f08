"""Input and output of the auditors' integrity API (games/api/integrity_views.py)."""

from __future__ import annotations

from rest_framework import serializers

from chan_api.strict_input import QueryIntegerField
from games.integrity.signals import SIGNALS
from games.models import IntegrityFlag
from games.selectors.integrity import INTEGRITY_PAGE_MAX


class IntegrityFlagQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=IntegrityFlag.Status.choices, required=False)
    signal = serializers.ChoiceField(choices=list(SIGNALS), required=False)
    cursor = QueryIntegerField(min_value=1, required=False, help_text="A page's `next`.")
    limit = QueryIntegerField(min_value=1, max_value=INTEGRITY_PAGE_MAX, default=50)


class IntegrityActionSerializer(serializers.Serializer):
    action = serializers.CharField(help_text="clear, freeze or ban")
    status = serializers.CharField(help_text="The flag's status after it.")
    staff = serializers.CharField(source="staff.username", allow_null=True)
    notes = serializers.CharField()
    created_at = serializers.DateTimeField()


class IntegrityFlagSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    signal = serializers.CharField(help_text="docs/audit.md § Integrity signals.")
    player = serializers.CharField(source="player.username")
    partner = serializers.CharField(source="partner.username", allow_null=True)
    statistic = serializers.FloatField()
    threshold = serializers.FloatField()
    detail = serializers.DictField(
        child=serializers.FloatField(), help_text="The numbers behind the statistic."
    )
    window_start = serializers.DateTimeField()
    window_end = serializers.DateTimeField()
    hand_ids = serializers.ListField(
        child=serializers.IntegerField(), help_text="The evidence hands (replay or export them)."
    )
    status = serializers.ChoiceField(choices=IntegrityFlag.Status.choices)
    reviewer = serializers.CharField(source="reviewer.username", allow_null=True)
    notes = serializers.CharField()
    created_at = serializers.DateTimeField()


class IntegrityFlagDetailSerializer(IntegrityFlagSerializer):
    actions = IntegrityActionSerializer(source="actions.all", many=True)


class IntegrityFlagPageSerializer(serializers.Serializer):
    results = IntegrityFlagSerializer(many=True)
    next = serializers.CharField(
        allow_null=True, help_text="Pass as `cursor` for the next (older) page; null on the last."
    )
