"""Input and output serializers of arenas."""

from __future__ import annotations

from rest_framework import serializers

from chan_api.strict_input import StrictCharField, StrictInputSerializer, StrictIntegerField
from games.api.serializers import (
    MAX_STAKE,
    ROOM_RE,
    RulesetSerializer,
    RulesetSpecField,
)
from games.models import DEFAULT_ROOM, MAX_SEATS, MIN_SEATS, Mode, Tournament
from games.services.tournaments import MAX_ENTRY_FEE


class TournamentCreateInputSerializer(StrictInputSerializer):
    name = StrictCharField(max_length=64)
    room = serializers.RegexField(ROOM_RE, max_length=32, default=DEFAULT_ROOM)
    stake = StrictIntegerField(min_value=1, max_value=MAX_STAKE, help_text="Quan per point.")
    entry_fee = StrictIntegerField(
        min_value=0, max_value=MAX_ENTRY_FEE, default=0, help_text="Quan, held on joining."
    )
    table_size = StrictIntegerField(min_value=MIN_SEATS, max_value=MAX_SEATS, default=MAX_SEATS)
    mode = serializers.ChoiceField(choices=Mode.choices, default=Mode.BASIC)
    ruleset = RulesetSpecField(required=False, help_text="The default preset if omitted.")
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()
    payout = serializers.ListField(
        child=StrictIntegerField(min_value=1, max_value=100),
        min_length=1,
        max_length=100,
        default=[50, 30, 20],
        help_text="Percent of the pool by rank (1st, 2nd …), not rising, summing to 100.",
    )


class TournamentListQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Tournament.Status.choices, required=False)


class StandingSerializer(serializers.Serializer):
    rank = serializers.IntegerField(
        allow_null=True, help_text="By score, then wins; equal on both: the same rank."
    )
    username = serializers.CharField()
    display_name = serializers.CharField()
    score = serializers.IntegerField(help_text="Arena points (docs/rules.md, Arena points).")
    hands = serializers.IntegerField()
    wins = serializers.IntegerField()
    active = serializers.BooleanField(help_text="False: withdrew (not seated any more).")
    prize = serializers.IntegerField(allow_null=True, help_text="Quan won, once it has ended.")


class TournamentOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    room = serializers.CharField()
    stake = serializers.IntegerField()
    table_size = serializers.IntegerField()
    mode = serializers.CharField()
    ruleset = RulesetSerializer()
    entry_fee = serializers.IntegerField()
    starts_at = serializers.CharField(help_text="UTC, ISO 8601.")
    ends_at = serializers.CharField(help_text="UTC, ISO 8601.")
    payout = serializers.ListField(child=serializers.IntegerField())
    status = serializers.ChoiceField(choices=Tournament.Status.choices)
    players = serializers.IntegerField(help_text="Entrants not withdrawn.")
    pool = serializers.IntegerField(
        help_text="Entry fees held (scheduled), in the pool (running) or paid out (finished)."
    )
    me = StandingSerializer(allow_null=True, help_text="My entry (null if I have none).")


class TournamentStandingsSerializer(serializers.Serializer):
    tournament_id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Tournament.Status.choices)
    starts_at = serializers.CharField()
    ends_at = serializers.CharField()
    pool = serializers.IntegerField()
    payout = serializers.ListField(child=serializers.IntegerField())
    tables_playing = serializers.IntegerField(help_text="Its tables whose hand is not scored.")
    hands = serializers.IntegerField(
        help_text="Hands that count: scored, less those voided before the payout."
    )
    hands_voided = serializers.IntegerField(
        help_text="Scored hands staff voided since (before the payout: their points taken off; "
        "after it: noted, the prizes stand)."
    )
    results = StandingSerializer(many=True)
