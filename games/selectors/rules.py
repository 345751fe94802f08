"""Reading the rules: the presets, a ruleset built from its spec, a cước map's score and the
calculator (whether a hand wins, with what), for the API's rules endpoints and the services."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from core.errors import InvalidInput
from games.rule_errors import rule_error
from games.rules.errors import InvalidField
from games.rules.errors import InvalidInput as RulesInvalidInput
from games.rules.ruleset import Ruleset, RulesetError, build_ruleset, list_presets
from games.rules.scoring import score


def rules_presets() -> list[dict[str, Any]]:
    return list_presets()


def ruleset_from_spec(spec: Any) -> Ruleset:
    """Build a ruleset from its spec; 400 ``invalid_ruleset`` naming the bad key."""
    try:
        return build_ruleset(spec)
    except RulesetError as exc:
        raise InvalidInput(
            _("The ruleset is invalid: %(key)s: %(reason)s."),
            code="invalid_ruleset",
            errors={f"ruleset.{exc.key}": [exc.message]},
            key=exc.key,
            reason=exc.message,
        ) from exc


def rules_score(*, ruleset_spec: Any, cuoc: Any) -> dict[str, int]:
    """Score a cước map under a ruleset: ``{"base", "ga", "total"}``; 400 naming a bad key."""
    ruleset = ruleset_from_spec(ruleset_spec)
    try:
        return score(ruleset, cuoc).to_dict()
    except InvalidField as exc:
        raise InvalidInput(
            _("The cước are invalid: %(reason)s."),
            code="invalid_cuoc",
            errors={field: [exc.message] for field in exc.fields},
            reason=f"{exc.field}: {exc.message}",
        ) from exc


def rules_evaluate(
    *, ruleset_spec: Any, mat: Any, hand: Any, card: Any, source: Any, context: Any
) -> dict[str, Any]:
    """The calculator: whether ``hand`` + ``card`` wins, its cước and score; 400 on bad input,
    whose ``errors`` name the fields at fault (``hand``, ``mat``, ``context.dealt_hand`` …)."""
    from games.rules.calculator import evaluate

    ruleset = ruleset_from_spec(ruleset_spec)
    try:
        return evaluate(ruleset, mat=mat, hand=hand, card=card, source=source, context=context)
    except RulesInvalidInput as exc:
        raise rule_error(exc) from exc
