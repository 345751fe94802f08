"""Input and output serializers of the accounts API.

Input serializers are strict: an unknown field, a non-string where a string is expected or an
over-long string is a 400 naming the field, never silently dropped or coerced.
"""

from __future__ import annotations

from rest_framework import serializers

from accounts.models import ApiToken, User
from chan_api.strict_input import StrictCharField, StrictInputSerializer

_USERNAME_MAX = User._meta.get_field("username").max_length
_DISPLAY_NAME_MAX = User._meta.get_field("display_name").max_length
_TOKEN_NAME_MAX = ApiToken._meta.get_field("name").max_length
_PASSWORD_MAX = 128


class RegisterInputSerializer(StrictInputSerializer):
    username = StrictCharField(max_length=_USERNAME_MAX)
    password = StrictCharField(max_length=_PASSWORD_MAX, trim_whitespace=False)
    display_name = StrictCharField(max_length=_DISPLAY_NAME_MAX, required=False, allow_blank=True)


class TokenCreateInputSerializer(StrictInputSerializer):
    username = StrictCharField(max_length=_USERNAME_MAX)
    password = StrictCharField(max_length=_PASSWORD_MAX, trim_whitespace=False)
    name = StrictCharField(max_length=_TOKEN_NAME_MAX, required=False, allow_blank=True)


class ProfileOutputSerializer(serializers.Serializer):
    """Reads a ``accounts.selectors.UserProfile``."""

    id = serializers.IntegerField()
    username = serializers.CharField()
    display_name = serializers.CharField()
    balance = serializers.IntegerField(help_text="Quan balance.")
    xp = serializers.IntegerField()
    level = serializers.IntegerField()
    is_staff = serializers.BooleanField()
    is_auditor = serializers.BooleanField(help_text="May replay any hand (accounts.audit_hands).")


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


class TokenCheckOutputSerializer(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    now = serializers.DateTimeField(help_text="The server's clock, for hand deadlines.")
