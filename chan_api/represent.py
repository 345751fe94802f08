"""Output serializers built once per process.

``SomeSerializer(instance).data`` builds the serializer and deep-copies every declared field,
nested serializers' included, on every call: a third of the DRF work of a table read
(docs/decisions/lean-move.md). :func:`represented` gives the same
representation from one instance of the class kept for the process, whose fields are bound once.
``to_representation`` reads its fields and writes nothing on them, so threads may share it.

Only for output serializers whose fields read no ``context`` (no request, no view): a kept one has
none. A test holds ``represented`` equal to ``.data`` for each serializer it serves.
"""

from __future__ import annotations

from typing import Any

from rest_framework.serializers import Serializer

_kept: dict[type[Serializer], Serializer] = {}


def represented(serializer_class: type[Serializer], instance: Any) -> Any:
    """``serializer_class(instance).data``, from the process's one instance of the class."""
    kept = _kept.get(serializer_class)
    if kept is None:
        kept = serializer_class()
        _ = kept.fields  # bound now, once (a race binds two; the last one is kept)
        _kept[serializer_class] = kept
    return kept.to_representation(instance)
