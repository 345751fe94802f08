"""The one translation of a rules-core refusal (:class:`games.rules.errors.RuleError`) into a
domain error (:mod:`core.errors`), for the services and the selectors alike.

Bad input (an unknown cước, a malformed deck) is invalid input, "not now" a conflict, any other
refusal a rule refusal. The message is the rules core's English template, translated by gettext
and filled with the error's parameters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.functional import lazy
from django.utils.translation import gettext_lazy as _

from core.errors import Conflict, DomainError, InvalidInput, Message, RuleRefused
from games.rules.errors import InvalidInput as RulesInvalidInput
from games.rules.errors import RuleError

# Rule refusals that mean "not now" rather than "never": the client's picture is stale.
CONFLICT_CODES = frozenset({"not_your_turn", "wrong_phase", "hand_over"})


def rule_message(exc: RuleError) -> Message:
    """A rules-core refusal's message: its English template (marked by the core's
    ``gettext_noop``) through gettext, to be filled with ``exc.params``."""
    return _(exc.template)


def _filled(template: Message, params: Mapping[str, Any]) -> str:
    return str(template) % params if params else str(template)


_filled_lazy = lazy(_filled, str)


def rule_error(
    exc: RuleError,
    *,
    fields: Sequence[str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> DomainError:
    """``exc`` as a domain error. Its ``errors`` name the request fields at fault, each with the
    core's message: ``fields`` when given, else the error's own paths (``exc.fields``: none for
    a refused move). ``extra`` adds public fields to the problem (``seq`` on move refusals)."""
    family: type[DomainError]
    if isinstance(exc, RulesInvalidInput):
        family = InvalidInput
    elif exc.code in CONFLICT_CODES:
        family = Conflict
    else:
        family = RuleRefused
    at = exc.fields if fields is None else fields
    # Each field's message in the request's language, like the detail (filled when rendered).
    errors = {field: [_filled_lazy(rule_message(exc), exc.params)] for field in at} or None
    return family(rule_message(exc), code=exc.code, errors=errors, extra=extra, **exc.params)
