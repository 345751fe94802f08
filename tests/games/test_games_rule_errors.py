"""A rules-core refusal reaches the API through one translation (games.rule_errors): the problem
documents stay what they were before that translation was shared (codes, messages, the fields
named in ``errors``, ``seq`` on a move refusal), in English and in Vietnamese."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from core.errors import Conflict, RuleRefused
from core.errors import InvalidInput as InvalidDomainInput
from games.rule_errors import rule_error
from games.rules.cards import CODES
from games.rules.errors import IllegalMove, InvalidField, InvalidInput
from tests.games.decks import WIN_DECK

# 5 chắn + 4 cạ + a lone 2V, with two chắn on the mat (as tests/games/test_games_evaluate_api.py).
MAT = [["4V", "4V"], ["5V", "5V"]]
HAND = ["CC", "CC", "6N", "6N", "9N", "9N", "3N", "3S", "7N", "7S", "8N", "8V", "6V", "6S", "2V"]

CASES: list[tuple[str, str, Any, str]] = [
    ("score_unknown_slug", "/api/v1/rules/score", {"cuoc": {"nope": 1}}, "en"),
    ("score_count_too_big", "/api/v1/rules/score", {"cuoc": {"tom": 9}}, "en"),
    ("score_count_negative_vi", "/api/v1/rules/score", {"cuoc": {"chi": -1}}, "vi"),
    ("score_not_an_object", "/api/v1/rules/score", {"cuoc": ["chi"]}, "en"),
    (
        "score_bad_preset",
        "/api/v1/rules/score",
        {"ruleset": {"preset": "nope"}, "cuoc": {}},
        "en",
    ),
    (
        "score_bad_override_vi",
        "/api/v1/rules/score",
        {"ruleset": {"preset": "thapthanh", "overrides": {"cuoc": {"zzz": "on"}}}, "cuoc": {}},
        "vi",
    ),
    (
        "evaluate_wrong_count",
        "/api/v1/rules/evaluate",
        {"mat": MAT, "hand": HAND[:-1], "card": "2V", "source": "own_draw"},
        "en",
    ),
    (
        "evaluate_unknown_card_vi",
        "/api/v1/rules/evaluate",
        {"mat": MAT, "hand": HAND, "card": "ZZ", "source": "own_draw"},
        "vi",
    ),
    ("table_unknown_card", "/api/v1/tables", {"stake": 10, "deck": ["XX"] + WIN_DECK[1:]}, "en"),
    ("table_bad_deck_vi", "/api/v1/tables", {"stake": 10, "deck": ["2V"] + WIN_DECK[1:]}, "vi"),
]

# Recorded from the code before the translation was shared (request ids left out).
EXPECTED: dict[str, Any] = {
    "score_unknown_slug": {
        "type": "https://chan.example/problems/invalid_cuoc",
        "title": "invalid cuoc",
        "status": 400,
        "code": "invalid_cuoc",
        "detail": "The cước are invalid: cuoc.nope: unknown cước slug.",
        "errors": {"cuoc.nope": ["unknown cước slug"]},
    },
    "score_count_too_big": {
        "type": "https://chan.example/problems/invalid_cuoc",
        "title": "invalid cuoc",
        "status": 400,
        "code": "invalid_cuoc",
        "detail": "The cước are invalid: cuoc.tom: count must be at most 4.",
        "errors": {"cuoc.tom": ["count must be at most 4"]},
    },
    "score_count_negative_vi": {
        "type": "https://chan.example/problems/invalid_cuoc",
        "title": "invalid cuoc",
        "status": 400,
        "code": "invalid_cuoc",
        "detail": "Cước không hợp lệ: cuoc.chi: count must be a non-negative integer.",
        "errors": {"cuoc.chi": ["count must be a non-negative integer"]},
    },
    "score_not_an_object": {
        "type": "https://chan.example/problems/invalid_cuoc",
        "title": "invalid cuoc",
        "status": 400,
        "code": "invalid_cuoc",
        "detail": "The cước are invalid: cuoc: must be an object {slug: count}.",
        "errors": {"cuoc": ["must be an object {slug: count}"]},
    },
    "score_bad_preset": {
        "type": "https://chan.example/problems/invalid_ruleset",
        "title": "invalid ruleset",
        "status": 400,
        "code": "invalid_ruleset",
        "detail": "The ruleset is invalid: preset: must be one of chan_van_van, "
        "vinagames, thapthanh.",
        "errors": {"ruleset.preset": ["must be one of chan_van_van, vinagames, thapthanh"]},
    },
    "score_bad_override_vi": {
        "type": "https://chan.example/problems/invalid_ruleset",
        "title": "invalid ruleset",
        "status": 400,
        "code": "invalid_ruleset",
        "detail": "Bộ luật không hợp lệ: overrides.cuoc.zzz: unknown cước slug.",
        "errors": {"ruleset.overrides.cuoc.zzz": ["unknown cước slug"]},
    },
    "evaluate_wrong_count": {
        "type": "https://chan.example/problems/wrong_card_count",
        "title": "wrong card count",
        "status": 400,
        "code": "wrong_card_count",
        "detail": "hand + mat must hold 19 cards (a chíu counts its four), not 18.",
        "errors": {
            "hand": ["hand + mat must hold 19 cards (a chíu counts its four), not 18."],
            "mat": ["hand + mat must hold 19 cards (a chíu counts its four), not 18."],
        },
    },
    "evaluate_unknown_card_vi": {
        "type": "https://chan.example/problems/unknown_card",
        "title": "unknown card",
        "status": 400,
        "code": "unknown_card",
        "detail": 'Mã quân bài không hợp lệ "ZZ": dùng 2V…9V, 2N…9N, 2S…9S hoặc CC.',
        # The field's message is in the request's language too (it once was in English).
        "errors": {"card": ['Mã quân bài không hợp lệ "ZZ": dùng 2V…9V, 2N…9N, 2S…9S hoặc CC.']},
    },
    "table_unknown_card": {
        "type": "https://chan.example/problems/unknown_card",
        "title": "unknown card",
        "status": 400,
        "code": "unknown_card",
        "detail": 'Unknown card code "XX": use 2V…9V, 2N…9N, 2S…9S or CC.',
        "errors": {"deck": ['Unknown card code "XX": use 2V…9V, 2N…9N, 2S…9S or CC.']},
    },
    "table_bad_deck_vi": {
        "type": "https://chan.example/problems/invalid_deck",
        "title": "invalid deck",
        "status": 400,
        "code": "invalid_deck",
        "detail": "Bộ bài có đúng bốn quân mỗi loại.",
        "errors": {"deck": ["Bộ bài có đúng bốn quân mỗi loại."]},
    },
    "move_en": {
        "not_your_turn": [
            409,
            {
                "type": "https://chan.example/problems/not_your_turn",
                "title": "not your turn",
                "status": 409,
                "code": "not_your_turn",
                "detail": "It is not your turn.",
                "seq": 0,
            },
        ],
        "wrong_phase": [
            409,
            {
                "type": "https://chan.example/problems/wrong_phase",
                "title": "wrong phase",
                "status": 409,
                "code": "wrong_phase",
                "detail": "A 'draw' move is not allowed in phase 'dealer_start'.",
                "seq": 0,
            },
        ],
        "not_held": [
            422,
            {
                "type": "https://chan.example/problems/card_not_in_hand",
                "title": "card not in hand",
                "status": 422,
                "code": "card_not_in_hand",
                "detail": "2V is not in your hand.",
                "seq": 0,
            },
        ],
        "unknown_card": [
            400,
            {
                "type": "https://chan.example/problems/unknown_card",
                "title": "unknown card",
                "status": 400,
                "code": "unknown_card",
                "detail": 'Unknown card code "ZZ": use 2V…9V, 2N…9N, 2S…9S or CC.',
                "errors": {"card": ['Unknown card code "ZZ": use 2V…9V, 2N…9N, 2S…9S or CC.']},
                "seq": 0,
            },
        ],
    },
    "move_vi": {
        "not_your_turn": [
            409,
            {
                "type": "https://chan.example/problems/not_your_turn",
                "title": "not your turn",
                "status": 409,
                "code": "not_your_turn",
                "detail": "Chưa đến lượt bạn.",
                "seq": 0,
            },
        ],
        "wrong_phase": [
            409,
            {
                "type": "https://chan.example/problems/wrong_phase",
                "title": "wrong phase",
                "status": 409,
                "code": "wrong_phase",
                "detail": "Không được 'draw' ở giai đoạn 'dealer_start'.",
                "seq": 0,
            },
        ],
        "not_held": [
            422,
            {
                "type": "https://chan.example/problems/card_not_in_hand",
                "title": "card not in hand",
                "status": 422,
                "code": "card_not_in_hand",
                "detail": "Bạn không có quân 2V trên tay.",
                "seq": 0,
            },
        ],
        "unknown_card": [
            400,
            {
                "type": "https://chan.example/problems/unknown_card",
                "title": "unknown card",
                "status": 400,
                "code": "unknown_card",
                "detail": 'Mã quân bài không hợp lệ "ZZ": dùng 2V…9V, 2N…9N, 2S…9S hoặc CC.',
                "errors": {
                    "card": ['Mã quân bài không hợp lệ "ZZ": dùng 2V…9V, 2N…9N, 2S…9S hoặc CC.']
                },
                "seq": 0,
            },
        ],
    },
}


def _problem(response: Any) -> dict[str, Any]:
    """The problem document without its request id (new on every request)."""
    body = response.json()
    body.pop("request_id")
    return body


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "url", "body", "language"), CASES, ids=[c[0] for c in CASES])
def test_rule_refusals_of_the_rules_endpoints_and_the_fixed_deck_are_unchanged(
    players, name, url, body, language
) -> None:
    r = players[0].client.post(url, body, format="json", HTTP_ACCEPT_LANGUAGE=language)
    assert r.status_code == 400
    assert _problem(r) == EXPECTED[name]


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "vi"])
def test_a_refused_move_is_unchanged(players, win_hand, language) -> None:
    url = f"/api/v1/hands/{win_hand['hand']}/moves"
    held = players[0].client.get(f"/api/v1/hands/{win_hand['hand']}").json()["hand"]
    not_held = next(code for code in CODES if code not in held)
    refusals = {
        "not_your_turn": (players[1], {"type": "draw"}),
        "wrong_phase": (players[0], {"type": "draw"}),
        "not_held": (players[0], {"type": "discard", "card": not_held}),
        "unknown_card": (players[0], {"type": "discard", "card": "ZZ"}),
    }
    got = {}
    for kind, (player, move) in refusals.items():
        r = player.client.post(url, move, format="json", HTTP_ACCEPT_LANGUAGE=language)
        got[kind] = [r.status_code, _problem(r)]
    assert got == EXPECTED[f"move_{language}"]


# --------------------------------------------------------------------------- the one translation


def test_a_rule_error_becomes_the_domain_error_of_its_family() -> None:
    conflict = rule_error(IllegalMove("not_your_turn", "It is not your turn."), extra={"seq": 3})
    assert isinstance(conflict, Conflict) and conflict.code == "not_your_turn"
    assert conflict.extra == {"seq": 3} and not conflict.errors
    refused = rule_error(
        IllegalMove("card_not_in_hand", "%(card)s is not in your hand.", card="2V")
    )
    assert isinstance(refused, RuleRefused) and refused.params == {"card": "2V"}
    bad = rule_error(InvalidInput("invalid_deck", "A deck is a list of 100 card kinds."))
    assert isinstance(bad, InvalidDomainInput) and not bad.errors


def test_the_fields_of_a_rule_error_are_named_in_errors_unless_the_caller_names_them() -> None:
    exc = InvalidField(("hand", "mat"), "wrong_card_count", "hand + mat must hold 19 cards.")
    assert rule_error(exc).errors == {
        "hand": ["hand + mat must hold 19 cards."],
        "mat": ["hand + mat must hold 19 cards."],
    }
    plain = InvalidInput("unknown_card", "Unknown card code %(card)s.", card="XX")
    assert rule_error(plain, fields=["deck"]).errors == {"deck": ["Unknown card code XX."]}


def test_only_games_rule_errors_translates_a_rule_error() -> None:
    """No other module outside the rules core reads a rule error's template or parameters (as
    games/services/hands.py, games/services/tables.py and games/selectors.py each did)."""
    root = Path(__file__).resolve().parents[2]
    readers = sorted(
        str(path.relative_to(root))
        for app in ("games", "accounts", "core")
        for path in (root / app).rglob("*.py")
        if "rules" not in path.relative_to(root).parts[:2]
        and any(
            isinstance(node, ast.Attribute) and node.attr in ("template", "params")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    )
    assert readers == ["core/errors.py", "games/rule_errors.py"]
