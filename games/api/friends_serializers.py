"""Input and output serializers of tables among friends: challenges and blocks."""

from __future__ import annotations

from rest_framework import serializers

from chan_api.strict_input import StrictCharField, StrictInputSerializer, StrictIntegerField
from games.api.serializers import MAX_STAKE, ROOM_RE, UserRefSerializer
from games.models import DEFAULT_ROOM, MAX_SEATS, MIN_SEATS, Challenge, Mode


class ChallengeCreateInputSerializer(StrictInputSerializer):
    username = StrictCharField(max_length=150, help_text="The player I challenge.")
    stake = StrictIntegerField(min_value=1, max_value=MAX_STAKE, help_text="Quan per point.")
    room = serializers.RegexField(ROOM_RE, max_length=32, default=DEFAULT_ROOM)
    max_seats = StrictIntegerField(
        min_value=MIN_SEATS,
        max_value=MAX_SEATS,
        default=MIN_SEATS,
        help_text="Seats of the table it opens (2 by default: the two of us; more leave room "
        "for others I invite with the code).",
    )
    mode = serializers.ChoiceField(choices=Mode.choices, default=Mode.BASIC)


class ChallengeListQuerySerializer(serializers.Serializer):
    box = serializers.ChoiceField(
        choices=["sent", "received"], required=False, help_text="Both without."
    )
    status = serializers.ChoiceField(
        choices=Challenge.Status.choices, required=False, help_text="As it reads now."
    )


class ChallengeOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    challenger = UserRefSerializer()
    challenged = UserRefSerializer()
    direction = serializers.ChoiceField(
        choices=["sent", "received"], help_text="Mine to the other (`sent`) or to me."
    )
    room = serializers.CharField()
    stake = serializers.IntegerField()
    max_seats = serializers.IntegerField()
    mode = serializers.ChoiceField(choices=Mode.choices)
    status = serializers.ChoiceField(
        choices=Challenge.Status.choices,
        help_text="`pending` until answered, cancelled by its challenger or `expires_at` "
        "(then `expired`).",
    )
    expires_at = serializers.DateTimeField()
    answered_at = serializers.DateTimeField(allow_null=True)
    table_id = serializers.IntegerField(
        allow_null=True, help_text="The private table it opened (accepted only)."
    )
    created_at = serializers.DateTimeField()


class BlockOutputSerializer(serializers.Serializer):
    user = UserRefSerializer(help_text="The player I block.")
    created_at = serializers.DateTimeField()
