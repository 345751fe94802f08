"""The calculator (RULES.md §5–7) end to end: the worked examples of §7 from real hands, the
reasons a candidate card does not win, and input validation."""

from __future__ import annotations

from typing import Any

import pytest

from games.rules.calculator import InvalidField, evaluate, score_dict
from games.rules.errors import InvalidInput
from games.rules.ruleset import PRESETS

CVV = PRESETS["chan_van_van"]


def ev(hand: str, card: str | None, source: str = "other_draw", mat: str = "", **kw: Any) -> Any:
    """``evaluate`` with hands written as space-separated codes and mat groups split by '|'."""
    groups = [g.split() for g in mat.split("|") if g.strip()]
    ruleset = kw.pop("ruleset", None)
    return evaluate(ruleset, mat=groups, hand=hand.split(), card=card, source=source, **kw)


PLAIN = "2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 6V 6V 9S 9S 7V 7S 5V 5S 3N"
BACH_THU = "2V 2V 2N 2N 4V 4V 4S 4S 9S 9S 7V 7S 5V 5S 6N 6S 3N 3S 8N"


# --- the worked examples of RULES.md §7 ---------------------------------------------------------


def test_example_chiu_u_bach_thu_two_tom_leo_scores_9() -> None:
    # 4N 4N 4N in hand, chíu ù on a discarded 4N: 6 chắn (4N ×2, CC, 3V, 3S, 7N) + 4 cạ.
    result = ev(
        "4N 4N 4N CC CC 3S 3S 7N 7N 8S 8N 2V 2N 5V 5S",
        "4N",
        "chiu",
        mat="3V 3V | 9V 9N",
    )
    assert result == {
        "win": True,
        "waiting": ["4N"],
        "bach_thu": True,
        "cuoc": {"chiu_u": 1, "bach_thu": 1, "tom": 2, "leo": 1},
        "base": 9,
        "ga": 0,
        "total": 9,
    }


CHI_BACH_THU_CHI = "CC 9V 9V 8S 8S 8V 8N 9S 9N 2V 2V 4N 4N 6S 6S 5V 5N 7V 7S"


def test_example_chi_bach_thu_chi_tam_do_two_leo_with_one_ga_scores_31() -> None:
    spec = {"overrides": {"ga": {"chi_bach_thu": 1}}}
    result = ev(CHI_BACH_THU_CHI, "CC", "own_draw", ruleset=spec)
    assert result["cuoc"] == {"chi": 1, "bach_thu_chi": 1, "tam_do": 1, "leo": 2}
    assert (result["base"], result["ga"], result["total"]) == (16, 15, 31)
    assert result["bach_thu"] is True


def test_example_chi_bach_thu_chi_tam_do_two_leo_with_default_two_ga_scores_36() -> None:
    result = ev(CHI_BACH_THU_CHI, "CC", "own_draw")
    assert (result["base"], result["ga"], result["total"]) == (16, 20, 36)


THAP_THANH = "2V 2V 2N 2N 3V 3V 4S 4S 5N 5N 6V 6V 6S 6S 7V 7V 9S 9S 4V"


def test_example_thap_thanh_thong_chi_scores_14_plus_ga() -> None:
    result = ev(THAP_THANH, "4V", "own_draw", context={"previous_winner": True})
    assert result["cuoc"] == {"thong": 1, "chi": 1, "thap_thanh": 1}
    assert (result["base"], result["ga"], result["total"]) == (14, 5, 19)


def test_example_thap_thanh_thong_chi_sum_points_scores_18_plus_ga() -> None:
    result = ev(
        THAP_THANH,
        "4V",
        "own_draw",
        context={"previous_winner": True},
        ruleset={"preset": "vinagames"},
    )
    assert result["cuoc"] == {"thong": 1, "chi": 1, "thap_thanh": 1}
    assert (result["base"], result["ga"], result["total"]) == (18, 5, 23)


def test_example_chi_tam_do_leo_tom_co_chiu_scores_13_base() -> None:
    # A chíu 6V on the mat; 8 red (CC CC 9V 8S 9S 9S 8V 8V), one Tôm, one Lèo; 7 chắn.
    result = ev(
        "CC CC 9V 9N 8S 8N 9S 9S 8V 8V 7N 7N 3V 3S 2V",
        "2V",
        "own_draw",
        mat="6V 6V 6V 6V",
    )
    assert result["cuoc"] == {"chi": 1, "tam_do": 1, "tom": 1, "leo": 1, "chiu": 1}
    assert result["base"] == 13
    assert result["bach_thu"] is False


# --- Thiên ù -----------------------------------------------------------------------------------


def test_thien_u_with_exactly_6_chan_4_ca_is_bach_thu_seed_003() -> None:
    dealt = "2V 2V 2N 2N 4V 4V 4S 4S 9S 9S 8N 8N 7V 7S 5V 5S 6N 6S 3N 3S"
    result = ev(dealt, None, "dealt")
    assert result["win"] is True
    assert result["bach_thu"] is True
    assert result["waiting"] == []
    assert result["cuoc"] == {"thien_u": 1, "bach_thu": 1}
    assert result["base"] == 5


def test_thien_u_with_7_chan_is_not_bach_thu() -> None:
    result = ev(PLAIN + " 3V", None, "dealt")
    assert result["cuoc"] == {"thien_u": 1}
    assert result["bach_thu"] is False


def test_thien_u_counts_thien_khai_from_the_dealt_hand() -> None:
    dealt = "2V 2V 2V 2V 4S 4S 4S 4S 5N 5N 9S 9S 6N 6N 7V 7S 5V 5S 3N 3V"
    assert ev(dealt, None, "dealt")["cuoc"] == {"thien_u": 1, "thien_khai": 2}


# --- what the calculator answers for non-wins -----------------------------------------------------


def test_not_a_winning_shape() -> None:
    result = ev(PLAIN, "8N")
    assert result["win"] is False
    assert result["reason"]["code"] == "not_a_winning_shape"
    assert (result["cuoc"], result["base"], result["ga"], result["total"]) == ({}, 0, 0, 0)
    assert result["waiting"] == ["3V", "3N", "3S"]


def test_cannot_win_on_a_discard_without_chiu() -> None:
    result = ev(PLAIN, "3V", "discard")
    assert result["win"] is False
    assert result["reason"]["code"] == "cannot_win_on_discard"
    assert result["reason"]["message"] and result["reason"]["message_vi"]


def test_cannot_win_on_a_returned_card_without_chiu() -> None:
    assert ev(PLAIN, "3V", "returned")["reason"]["code"] == "cannot_win_on_returned_card"


def test_chiu_u_on_a_discard_and_on_a_returned_card() -> None:
    chiu = "3N 3N 3N 2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 9S 9S 7V 7S 5V 5S"
    assert ev(chiu, "3N", "discard")["cuoc"] == {"chiu_u": 1}
    assert ev(chiu, "3N", "returned")["cuoc"] == {"chiu_u": 1}
    assert ev(chiu, "3N", "chiu_own_door")["cuoc"] == {"chi": 1, "chiu_u": 1}


def test_chi_chi_must_be_bach_thu() -> None:
    # 6 chắn and a lone Chi chi (chờ chi rộng): never a win.
    result = ev(PLAIN.replace("3N", "CC"), "CC", "own_draw")
    assert result["win"] is False
    assert result["reason"]["code"] == "chi_chi_must_be_bach_thu"


def test_bach_thu_waiting_set_has_one_kind() -> None:
    result = ev(BACH_THU, "8N")
    assert result["waiting"] == ["8N"]
    assert result["bach_thu"] is True
    assert result["cuoc"] == {"bach_thu": 1}


def test_waiting_excludes_kinds_held_four_times() -> None:
    # 3V ×2 in hand and 3V ×2 on the mat: no 3V is left to win on.
    hand = "2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 3V 3V 9S 9S 7V 7S 3N"
    result = ev(hand, "3N", mat="3V 3V")
    assert "3V" not in result["waiting"]
    assert result["waiting"] == ["3N", "3S"]


def test_context_first_draw_gives_dia_u() -> None:
    assert ev(PLAIN, "3V", context={"first_draw": True})["cuoc"] == {"dia_u": 1}


def test_context_dealt_hand_gives_thien_khai() -> None:
    hand = "2V 2V 2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 9S 9S 7V 7S 5V 5S 3N"
    result = ev(hand, "3V", context={"dealt_hand": hand.split()})
    assert result["cuoc"] == {"thien_khai": 1}


@pytest.mark.parametrize("nhai", [0, 1, 3, 100, True, False])
def test_context_nhai_is_accepted_and_never_changes_the_answer(nhai: int | bool) -> None:
    # Nhái only matter for the gà góp pot, settled at the table, never for cước or points.
    for hand, card, context in [
        (PLAIN, "3V", {}),
        (BACH_THU, "8N", {"first_draw": True}),
        (PLAIN, "8N", {}),  # no win: the reason is unchanged too
    ]:
        assert ev(hand, card, context={**context, "nhai": nhai}) == ev(hand, card, context=context)


def test_ruleset_instance_or_spec() -> None:
    chiu = "3N 3N 3N 2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 9S 9S 7V 7S 5V 5S"
    assert ev(chiu, "3N", "chiu", ruleset=CVV)["cuoc"] == {"chiu_u": 1}
    assert ev(chiu, "3N", "chiu", ruleset={"preset": "vinagames"})["cuoc"] == {"chiu": 1}


# --- validation -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "code", "fields"),
    [
        ({"hand": PLAIN.replace("3N", "1V").split()}, "unknown_card", ["hand"]),
        ({"card": "10V"}, "unknown_card", ["card"]),
        ({"hand": "2V"}, "invalid_cards", ["hand"]),
        ({"mat": "2V 2V"}, "invalid_mat", ["mat"]),
        ({"mat": [["2V", "ZZ"]]}, "unknown_card", ["mat"]),
        ({"mat": [["2V", "3N"]]}, "invalid_mat_group", ["mat"]),
        ({"mat": [["2V", "2V", "2V"]]}, "invalid_mat_group", ["mat"]),
        ({"mat": [["CC", "9V"]]}, "invalid_mat_group", ["mat"]),
        ({"mat": [["2V", "2V", "2V", "2N"]]}, "invalid_mat_group", ["mat"]),
        ({"hand": PLAIN.split()[:-1]}, "wrong_card_count", ["hand"]),
        ({"mat": [["8N", "8N"]]}, "wrong_card_count", ["hand", "mat"]),
        (
            {"card": "2V", "mat": [["2V", "2V"]], "hand": PLAIN.split()[:17]},
            "too_many_copies",
            ["hand", "mat", "card"],
        ),
        ({"source": "stock"}, "unknown_source", ["source"]),
        ({"source": None}, "unknown_source", ["source"]),
        ({"context": {"first_draw": "yes"}}, "invalid_context", ["context.first_draw"]),
        ({"context": {"previous_winner": 1}}, "invalid_context", ["context.previous_winner"]),
        ({"context": {"dealt_hand": "2V"}}, "invalid_cards", ["context.dealt_hand"]),
        ({"context": {"dealt_hand": ["2V"] * 19}}, "too_many_copies", ["context.dealt_hand"]),
        ({"context": {"dealt_hand": ["2V"]}}, "invalid_context", ["context.dealt_hand"]),
        ({"context": {"seat": 1}}, "invalid_context", ["context.seat"]),
        (
            {"context": {"seat": 1, "nhai": 2, "ga": 0}},
            "invalid_context",
            ["context.ga", "context.seat"],
        ),
        ({"context": {"nhai": -1}}, "invalid_context", ["context.nhai"]),
        ({"context": {"nhai": 1.5}}, "invalid_context", ["context.nhai"]),
        ({"context": {"nhai": "2"}}, "invalid_context", ["context.nhai"]),
        ({"context": {"nhai": 101}}, "invalid_context", ["context.nhai"]),
        ({"context": ["first_draw"]}, "invalid_context", ["context"]),
        ({"card": None}, "missing_card", ["card"]),
        ({"source": "dealt"}, "unexpected_card", ["card"]),
        ({"source": "chiu"}, "chiu_needs_three", ["source"]),
        ({"source": "chiu_own_door"}, "chiu_needs_three", ["source"]),
        ({"ruleset": {"preset": "nope"}}, "invalid_ruleset", ["ruleset.preset"]),
    ],
)
def test_invalid_input_is_refused_with_a_code_naming_the_fields(
    kwargs: dict[str, Any], code: str, fields: list[str]
) -> None:
    args: dict[str, Any] = {
        "mat": [],
        "hand": PLAIN.split(),
        "card": "3V",
        "source": "other_draw",
        "context": None,
    }
    ruleset = kwargs.pop("ruleset", None)
    args.update(kwargs)
    with pytest.raises(InvalidField) as err:
        evaluate(ruleset, **args)
    assert err.value.code == code
    assert err.value.message
    assert list(err.value.fields) == fields


def test_thien_u_validation() -> None:
    with pytest.raises(InvalidInput, match="20"):
        ev(PLAIN, None, "dealt")
    with pytest.raises(InvalidInput, match="mat"):
        evaluate(None, mat=[["3V", "3V"]], hand=PLAIN.split(), card=None, source="dealt")
    with pytest.raises(InvalidInput, match="dealt_hand"):
        ev(PLAIN + " 3V", None, "dealt", context={"dealt_hand": (PLAIN + " 8N").split()})


def test_error_message_names_the_problem() -> None:
    with pytest.raises(InvalidInput, match="2V\\+3N"):
        ev(PLAIN, "3V", mat="2V 3N")
    with pytest.raises(InvalidInput, match="more than four 2V"):
        ev(PLAIN.replace("3N", "2V").replace("5S", "2V"), "2V")
    with pytest.raises(InvalidInput, match="19 cards"):
        ev(PLAIN + " 8N", "3V")


# --- score_dict -------------------------------------------------------------------------------------


def test_score_dict_scores_a_cuoc_map_under_a_spec() -> None:
    assert score_dict(None, {"chiu_u": 1, "bach_thu": 1, "tom": 2, "leo": 1}) == {
        "base": 9,
        "ga": 0,
        "total": 9,
    }
    assert score_dict({"preset": "vinagames"}, {"thap_thanh": 1, "thong": 1, "chi": 1}) == {
        "base": 18,
        "ga": 5,
        "total": 23,
    }


@pytest.mark.parametrize(
    ("cuoc", "field"),
    [
        ({"nope": 1}, "cuoc.nope"),
        ({"tom": 5}, "cuoc.tom"),
        ({"chi": -1}, "cuoc.chi"),
        ({"chi": True}, "cuoc.chi"),
        (["chi"], "cuoc"),
        ({"chi": "1"}, "cuoc.chi"),
    ],
)
def test_score_dict_refuses_bad_cuoc(cuoc: Any, field: str) -> None:
    with pytest.raises(InvalidField) as err:
        score_dict(None, cuoc)
    assert err.value.code == "invalid_cuoc"
    assert err.value.fields == (field,)


def test_score_dict_of_no_cuoc_is_zero() -> None:
    # An empty cước map is an empty win: it scores nothing, and is not an error.
    assert score_dict(None, {}) == {"base": 0, "ga": 0, "total": 0}


def test_score_dict_refuses_a_bad_ruleset() -> None:
    with pytest.raises(InvalidInput) as err:
        score_dict({"overrides": {"ga_points": -1}}, {"xuong": 1})
    assert err.value.code == "invalid_ruleset"


# --- tied named hands (RULES.md §6) --------------------------------------------------------------

# Eaten chắn 5V and 5S, waiting bạch thủ on 8V.
TIED_MAT = "5V 5V | 5S 5S"
TIED_HAND = "4V 4V 4S 4S 9S 9S 7V 7S 3N 3S 2N 2S 6V 6S 8V"


def test_tied_named_hands_the_calculator_lists_the_equally_right_reading() -> None:
    result = ev(TIED_HAND, "8V", "own_draw", mat=TIED_MAT, ruleset={"preset": "thapthanh"})
    assert result["cuoc"] == {"ca_loi_san_dinh": 1}
    assert result["equally_right"] == [{"ca_nhay_dau_thuyen": 1}]
    assert (result["base"], result["ga"], result["total"]) == (24, 5, 29)


def test_tied_named_hands_none_listed_without_a_tie() -> None:
    result = ev(TIED_HAND, "8V", "own_draw", mat=TIED_MAT)  # chan_van_van: cá nhảy is off
    assert result["cuoc"] == {"ca_loi_san_dinh": 1}
    assert "equally_right" not in result
