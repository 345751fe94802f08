"""Strict input fields for every API: no coercion of wrong JSON types, no unknown fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from core.ascii_digits import ascii_int


class StrictCharField(serializers.CharField):
    """Refuses numbers and booleans instead of turning them into strings."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer only: no strings, floats or booleans."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class QueryIntegerField(serializers.IntegerField):
    """An integer query parameter: ASCII digits only (``after_seq=١`` is a 400 naming it)."""

    def to_internal_value(self, data: Any) -> int:
        value = ascii_int(data) if isinstance(data, str) else None
        if value is None:
            self.fail("invalid")
        return value


class StrictBooleanField(serializers.BooleanField):
    """JSON true or false only."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictInputSerializer(serializers.Serializer):
    """Refuses fields it does not declare (400 naming them) along with any other field error."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        unknown: dict[str, list[str]] = {}
        if isinstance(data, Mapping):
            unknown = {str(name): [_("Unknown field.")] for name in data if name not in self.fields}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if unknown and isinstance(exc.detail, dict):
                raise serializers.ValidationError({**unknown, **exc.detail}) from exc
            raise
        if unknown:
            raise serializers.ValidationError(unknown)
        return value
