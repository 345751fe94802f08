"""Every refusal of the rules core is a RuleError; one about input names the input's path in
``field`` (callers read it, never parse ``str()``)."""

from __future__ import annotations

from typing import Any

import pytest

from games.rules.calculator import score_dict
from games.rules.errors import InvalidField, InvalidInput, RuleError
from games.rules.ruleset import PRESETS, RulesetError, build_ruleset
from games.rules.scoring import normalize_cuoc, score

CHAN_VAN_VAN = PRESETS["chan_van_van"]


@pytest.mark.parametrize(
    ("cuoc", "field", "message"),
    [
        ({"rong": 1}, "cuoc.rong", "unknown cước slug"),
        ({"tom": -1}, "cuoc.tom", "count must be a non-negative integer"),
        ({"tom": True}, "cuoc.tom", "count must be a non-negative integer"),
        ({"tom": 5}, "cuoc.tom", "count must be at most 4"),
        (["chi"], "cuoc", "must be an object {slug: count}"),
    ],
)
def test_a_bad_cuoc_is_a_rule_error_naming_its_field(cuoc: Any, field: str, message: str) -> None:
    for call in (lambda: normalize_cuoc(cuoc), lambda: score(CHAN_VAN_VAN, cuoc)):
        with pytest.raises(RuleError) as caught:
            call()
        assert isinstance(caught.value, InvalidInput)
        assert caught.value.code == "invalid_cuoc"
        assert caught.value.field == field and caught.value.fields == (field,)
        assert caught.value.message == message


def test_the_calculator_names_the_cuoc_field_from_the_error() -> None:
    with pytest.raises(InvalidField) as caught:
        score_dict(None, {"tom": 9})
    assert caught.value.fields == ("cuoc.tom",)
    assert caught.value.message == "cuoc.tom: count must be at most 4"


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ({"preset": "nope"}, "preset"),
        ({"overrides": {"cuoc": {"zzz": "on"}}}, "overrides.cuoc.zzz"),
        ({"pre": 1}, "pre"),
    ],
)
def test_a_refused_ruleset_is_a_rule_error_naming_its_field(spec: Any, key: str) -> None:
    with pytest.raises(RuleError) as caught:
        build_ruleset(spec)
    assert isinstance(caught.value, RulesetError)
    assert caught.value.code == "invalid_ruleset"
    assert caught.value.field == caught.value.key == key


def test_a_refused_move_names_no_field() -> None:
    exc = InvalidInput("invalid_move", "Expected a JSON object.")
    assert exc.field is None and exc.fields == ()
