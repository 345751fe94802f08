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


# A query of integers read without building its serializer: DRF deep-copies a serializer's
# declared fields on every instance (0.1–0.2 ms a request on the long polls' and reads' path,
# docs/decisions/lean-move.md). Only a query the serializer would take as it is (each
# parameter a declared one, given once, plain ASCII digits within its bounds) is read here; any
# other goes through the serializer, so every 400 is the serializer's own.
_Spec = dict[str, tuple[int | None, int | None, Any]]
_specs: dict[type, _Spec | None] = {}
_NO_DEFAULT = object()


def _int_query_spec(serializer_class: type) -> _Spec | None:
    if serializer_class not in _specs:
        fields = serializer_class().fields
        spec: _Spec | None = {}
        for name, f in fields.items():
            if type(f) is not QueryIntegerField or f.source != name:
                spec = None
                break
            default = _NO_DEFAULT if f.default is serializers.empty else f.default
            spec[name] = (f.min_value, f.max_value, default)
        _specs[serializer_class] = spec
    return _specs[serializer_class]


def plain_int_query(serializer_class: type, params: Any) -> dict[str, Any] | None:
    """``serializer_class``'s validated data for the query ``params`` (a ``QueryDict``) when the
    serializer declares only ``QueryIntegerField``\\ s and the query is plain; else None."""
    spec = _int_query_spec(serializer_class)
    if spec is None:
        return None
    out: dict[str, Any] = {}
    for name in params:
        bounds = spec.get(name)
        values = params.getlist(name)
        if bounds is None or len(values) != 1:
            return None
        value = ascii_int(values[0])
        low, high, _default = bounds
        if (
            value is None
            or (low is not None and value < low)
            or (high is not None and value > high)
        ):
            return None
        out[name] = value
    for name, (_low, _high, default) in spec.items():
        if name not in out and default is not _NO_DEFAULT:
            out[name] = default() if callable(default) else default
    return out
