"""No message the server speaks shows Python: not ``None``, ``True`` or ``False``, not a repr
(``'7X'``, ``!r``, ``%(x)r``). Walked three ways: the catalogue (every msgid and msgstr of
locale/vi), every error raised in the code (no ``repr()`` or ``!r`` in its arguments), and the
messages actually produced for bad input, in the rules core and through the API."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from games.rules.calculator import evaluate, parse_ruleset
from games.rules.cards import parse_kind
from games.rules.declaring import check_declaration
from games.rules.errors import RuleError
from games.rules.moves import move_from_dict
from tests.chan_api.test_translations import po_entries

ROOT = Path(__file__).resolve().parents[2]
PYTHON_WORDS = re.compile(r"\b(None|True|False)\b")
REPR_FORMAT = re.compile(r"%\(\w+\)r|!r\b")


def python_in(text: str) -> list[str]:
    return PYTHON_WORDS.findall(text) + REPR_FORMAT.findall(text)


def test_no_catalogue_message_spells_python() -> None:
    entries = po_entries()
    assert len(entries) > 100
    bad = {m: t for m, t in entries.items() if python_in(m) or python_in(t)}
    assert bad == {}


def _error_calls(tree: ast.AST) -> list[ast.Call]:
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            func = node.exc.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name != "AssertionError":  # a bug's own report, never shown to a client
                calls.append(node.exc)
    return calls


def test_no_error_is_built_with_a_repr() -> None:
    # Every error raised in the server's code (the rules core, the services, the API, the
    # verifier and the commands): no repr() nor !r in what builds its message.
    found = []
    modules = [
        p
        for top in ("games", "accounts", "chan_api")
        for p in (ROOT / top).rglob("*.py")
        if "migrations" not in p.parts
    ]
    assert len(modules) > 50
    for path in modules:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for call in _error_calls(tree):
            for node in ast.walk(call):
                is_repr = isinstance(node, ast.Call) and getattr(node.func, "id", "") == "repr"
                bang_r = isinstance(node, ast.FormattedValue) and node.conversion == ord("r")
                if is_repr or bang_r:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


ODD_VALUES: list[Any] = [None, True, False, 7, 1.5, [], {}, "zz'z", "x" * 50]


def _message_of(call: Any) -> RuleError:
    with pytest.raises(RuleError) as err:
        call()
    return err.value


def assert_no_python(text: str, sent: Any = None) -> None:
    assert python_in(text) == [], text
    if isinstance(sent, str):
        assert f"'{sent[:20]}" not in text, text  # quoted as JSON ("…"), not as a repr


@pytest.mark.parametrize("value", ODD_VALUES)
def test_rule_errors_show_sent_values_in_json_spelling(value: Any) -> None:
    calls = [
        lambda: move_from_dict({"type": value}, seat=0),
        lambda: move_from_dict({"type": "discard", "card": value}, seat=0),
        lambda: move_from_dict({"type": "set_prefs", "auto_u": value}, seat=0),
        lambda: move_from_dict({"type": "declare", "cuoc": value}, seat=0),
        lambda: move_from_dict({"type": "declare", "auto": value}, seat=0),
        lambda: parse_kind(value),
        lambda: check_declaration({"chi": value}),
        lambda: parse_ruleset({"preset": value}),
        lambda: parse_ruleset({"overrides": {"ga_points": value}}),
        lambda: evaluate(parse_ruleset(None), mat=[], hand=[], card="2V", source=value),
    ]
    for call in calls:
        try:
            call()
        except RuleError as exc:
            assert_no_python(exc.message, value)
        except ValueError as exc:  # the ruleset's own refusals
            assert_no_python(str(exc), value)


def test_a_missing_move_type_is_named_as_missing() -> None:
    error = _message_of(lambda: move_from_dict({}, seat=0))
    assert error.message == "Field 'type' is required." and error.fields == ("type",)


# ------------------------------------------------------------------------- through the API


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        {},
        {"type": None},
        {"type": True},
        {"type": "zzz"},
        {"type": "discard"},
        {"type": "discard", "card": None},
        {"type": "discard", "card": False},
        {"type": "declare", "cuoc": {"chi": True}},
        {"type": "set_prefs", "auto_u": None},
    ],
)
def test_move_refusals_through_the_api_never_show_python(players, win_hand, body) -> None:
    url = f"/api/v1/hands/{win_hand['hand']}/moves"
    for language in ("en", "vi"):
        response = players[0].client.post(url, body, format="json", HTTP_ACCEPT_LANGUAGE=language)
        assert 400 <= response.status_code < 500, response.content
        problem = response.json()
        assert_no_python(problem["detail"], body.get("type"))
        for messages in problem.get("errors", {}).values():
            for message in messages:
                assert_no_python(message)


@pytest.mark.django_db
def test_an_empty_move_is_a_400_naming_type(players, win_hand) -> None:
    response = players[0].client.post(f"/api/v1/hands/{win_hand['hand']}/moves", {}, format="json")
    assert response.status_code == 400
    problem = response.json()
    assert problem["code"] == "unknown_move_type"
    assert problem["detail"] == "Field 'type' is required."
    assert list(problem["errors"]) == ["type"] and problem["seq"] == 0
