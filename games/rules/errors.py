"""Typed errors of the rules core, each with a stable machine code and a translatable message.

A :class:`RuleError` carries ``code``, an English message ``template`` with ``%(name)s``
placeholders and its ``params``; ``message`` is the template filled in. The Django layer
translates ``template`` with gettext and fills it with ``params`` itself. Templates are marked at
their call site with :func:`gettext_noop` so that ``makemessages`` (xgettext) extracts them,
without the rules core importing anything from Django.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence


def gettext_noop(s: str) -> str:
    """Mark ``s`` as a message to translate (xgettext keyword); returns it unchanged."""
    return s


def fill(template: str, params: Mapping[str, object]) -> str:
    """``template`` with its ``%(name)s`` placeholders filled in from ``params``."""
    return template % params if params else template


def shown(value: object, limit: int = 20) -> str:
    """A value a client sent, for a message: in JSON's spelling (``null``, ``true``, ``"7X"``),
    never Python's (``None``, ``True``, ``'7X'``); strings cut at ``limit`` characters."""
    if isinstance(value, str):
        return json.dumps(value[:limit], ensure_ascii=False)
    try:
        return json.dumps(value, ensure_ascii=False)[:limit]
    except (TypeError, ValueError):  # not JSON at all (a direct caller's object): its type
        return type(value).__name__


class RuleError(ValueError):
    """A move or input the rules refuse. ``code`` is stable and used as the API error code;
    ``fields`` are the dotted paths of the input at fault (``cuoc.tom``, ``context.nhai`` …),
    none for a refused move; ``field`` is the first of them."""

    fields: tuple[str, ...] = ()

    @property
    def field(self) -> str | None:
        return self.fields[0] if self.fields else None

    def __init__(self, code: str, template: str, /, **params: object) -> None:
        message = fill(template, params)
        super().__init__(message)
        self.code = code
        self.template = template
        self.params: dict[str, object] = params
        self.message = message


class IllegalMove(RuleError):
    """The move is not allowed now (wrong phase, not your turn, card not in hand …)."""


class FaultRefused(IllegalMove):
    """Basic mode: the move would commit a fault (RULES.md §9); ``code`` is the fault's slug."""


class InvalidInput(RuleError):
    """Malformed input: unknown card codes, impossible hands, bad move JSON, no such seat."""


class InvalidField(InvalidInput):
    """Malformed input at known paths: ``fields`` are the dotted paths of the input at fault
    (``cuoc.tom``, ``hand``, ``context.nhai``, ``ruleset.preset`` …); ``str()`` names them before
    the message (``cuoc.tom: unknown cước slug``). Callers read ``field``/``fields``, never
    ``str()``."""

    def __init__(
        self, fields: str | Sequence[str], code: str, template: str, /, **params: object
    ) -> None:
        super().__init__(code, template, **params)
        self.fields = (fields,) if isinstance(fields, str) else tuple(fields)

    def __str__(self) -> str:
        return f"{', '.join(self.fields)}: {self.message}" if self.fields else self.message
