"""Moves round-trip the exact JSON the API speaks, and malformed moves are refused."""

from __future__ import annotations

import pytest

from games.rules.errors import InvalidInput
from games.rules.moves import Declare, Eat, move_from_dict

EXAMPLES = [
    {"type": "discard", "card": "9V"},
    {"type": "eat", "card": "9V", "with": "9N"},
    {"type": "draw"},
    {"type": "pass"},
    {"type": "chiu", "card": "9V"},
    {"type": "tra_cua", "card": "2S"},
    {"type": "u"},
    {"type": "declare", "cuoc": {"chi": 1, "tom": 2}},
    {"type": "declare", "auto": True},
    {"type": "set_prefs", "auto_u": True, "auto_chiu": False},
]


@pytest.mark.parametrize("body", EXAMPLES, ids=[e["type"] for e in EXAMPLES])
def test_move_json_round_trips(body: dict) -> None:
    move = move_from_dict(body, seat=2)
    assert move.to_dict() == {**body, "seat": 2}
    assert move_from_dict(move.to_dict()) == move


def test_eat_fields() -> None:
    move = move_from_dict({"type": "eat", "card": "9V", "with": "9N"}, seat=0)
    assert isinstance(move, Eat) and move.card != move.with_


def test_system_moves_are_marked() -> None:
    move = move_from_dict({"type": "draw", "system": True}, seat=1)
    assert move.system and move.to_dict() == {"type": "draw", "seat": 1, "system": True}


def test_declare_counts() -> None:
    move = move_from_dict({"type": "declare", "cuoc": {"tom": 2, "chi": 1}}, seat=0)
    assert isinstance(move, Declare) and move.cuoc == (("chi", 1), ("tom", 2))


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("draw", "invalid_move"),
        ({"type": "fly"}, "unknown_move_type"),
        ({}, "unknown_move_type"),
        ({"type": "discard"}, "invalid_move"),
        ({"type": "discard", "card": "ZZ"}, "unknown_card"),
        ({"type": "discard", "card": 5}, "unknown_card"),
        ({"type": "draw", "card": "9V"}, "invalid_move"),
        ({"type": "declare"}, "invalid_move"),
        ({"type": "declare", "cuoc": {"tom": "two"}}, "invalid_move"),
        ({"type": "declare", "cuoc": [1]}, "invalid_move"),
        ({"type": "declare", "auto": "yes"}, "invalid_move"),
        ({"type": "set_prefs"}, "invalid_move"),
        ({"type": "set_prefs", "auto_u": 1}, "invalid_move"),
        ({"type": "draw", "seat": 9}, "invalid_move"),
        ({"type": "draw", "seat": True}, "invalid_move"),
    ],
)
def test_malformed_moves_are_refused(body: object, code: str) -> None:
    seat = None if isinstance(body, dict) and "seat" in body else 0
    with pytest.raises(InvalidInput) as e:
        move_from_dict(body, seat=seat)
    assert e.value.code == code
