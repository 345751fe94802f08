"""Rule errors: a stable code, an English template marked for gettext and its params; bad direct
input to the public functions is an InvalidInput, never an IndexError or a TypeError."""

from __future__ import annotations

import ast
import pathlib
from typing import Any

import pytest

from games.rules import faults as fault_rules
from games.rules.calculator import score_dict
from games.rules.deck import CANONICAL_DECK
from games.rules.engine import apply, new_hand
from games.rules.errors import IllegalMove, InvalidField, InvalidInput, RuleError
from games.rules.moves import Discard, move_from_dict
from games.rules.ruleset import PRESETS, RulesetError, build_ruleset
from games.rules.scoring import normalize_cuoc, score
from games.rules.state import HandConfig
from games.rules.views import view_for

RULES_DIR = pathlib.Path(__file__).resolve().parents[2] / "games" / "rules"
CHAN_VAN_VAN = PRESETS["chan_van_van"]
ERROR_CALLS = {"IllegalMove", "InvalidInput", "FaultRefused", "RuleError", "InvalidField", "_bad"}


def test_a_rule_error_carries_code_template_and_params() -> None:
    state = new_hand(HandConfig(n_seats=2), CANONICAL_DECK, 0)
    with pytest.raises(IllegalMove) as err:
        apply(state, Discard(3, 0))
    e = err.value
    assert (e.code, e.template, e.params) == (
        "no_such_seat",
        "There is no seat %(seat)s.",
        {"seat": 3},
    )
    assert e.message == str(e) == "There is no seat 3."
    assert not hasattr(e, "message_vi")


def test_a_template_without_params_is_the_message() -> None:
    e = RuleError("x", "100% sure")
    assert e.message == "100% sure" and e.params == {}


def test_fault_messages_are_english_templates() -> None:
    for slug in fault_rules.FAULTS:
        assert fault_rules.message(slug) == fault_rules.MESSAGES[slug] != slug


def test_every_error_message_is_a_gettext_noop_literal_at_its_call_site() -> None:
    # so that Django's makemessages (xgettext, keyword gettext_noop) extracts every template:
    # no error is built from a bare string with words in it or from an f-string
    marked = 0
    for path in sorted(RULES_DIR.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            where = f"{path.name}:{node.lineno}"
            if node.func.id == "gettext_noop":
                assert len(node.args) == 1 and isinstance(node.args[0], ast.Constant), where
                assert isinstance(node.args[0].value, str), where
                marked += 1
            elif node.func.id in ERROR_CALLS:
                for arg in node.args:  # strings there are codes and field names only
                    parts = arg.values if isinstance(arg, ast.JoinedStr) else [arg]
                    for part in parts:
                        if isinstance(part, ast.Constant) and isinstance(part.value, str):
                            assert " " not in part.value, where
    assert marked > 60


# --- bad direct input ---------------------------------------------------------------------


@pytest.mark.parametrize("seat", [-1, 4, 7, True])
def test_view_for_refuses_a_seat_that_is_not_at_the_table(seat: int) -> None:
    state = new_hand(HandConfig(n_seats=4), CANONICAL_DECK, 0)
    with pytest.raises(InvalidInput) as err:
        view_for(state, seat)
    assert err.value.code == "no_such_seat"


def test_new_hand_refuses_too_few_prefs() -> None:
    with pytest.raises(InvalidInput) as err:
        new_hand(HandConfig(n_seats=4, prefs=((True, True),) * 3), CANONICAL_DECK, 0)
    assert err.value.code == "bad_prefs" and err.value.params == {"n": 4, "given": 3}


@pytest.mark.parametrize(
    "deck",
    [
        [code for code in ("2V", "2N", "2S", "3V") for _ in range(25)],
        "2V" * 50,
        [0] * 100,
        list(CANONICAL_DECK[:-1]) + [25],
        list(CANONICAL_DECK[:-1]) + [-1],
        list(CANONICAL_DECK[:-1]) + [True],
        list(CANONICAL_DECK[:50]),
    ],
)
def test_new_hand_refuses_anything_but_a_deck_of_kinds(deck: object) -> None:
    with pytest.raises(InvalidInput) as err:
        new_hand(HandConfig(n_seats=4), deck, 0)  # type: ignore[arg-type]
    assert err.value.code == "invalid_deck"


@pytest.mark.parametrize("n, dealer", [(1, 0), (5, 0), (4, 4), (4, -1)])
def test_new_hand_refuses_bad_seat_counts_and_dealers(n: int, dealer: int) -> None:
    with pytest.raises(InvalidInput):
        new_hand(HandConfig(n_seats=n), CANONICAL_DECK, dealer)


def test_move_json_errors_are_templates_too() -> None:
    with pytest.raises(InvalidInput) as err:
        move_from_dict({"type": "discard", "seat": 0})
    assert err.value.template == "Field '%(field)s' is required."
    assert err.value.message == "Field 'card' is required."


# --- field paths ------------------------------------------------------------


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
