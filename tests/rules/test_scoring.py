"""Points of a win (RULES.md §7): base from điểm/dịch, gà, and the worked examples."""

from __future__ import annotations

from typing import Any

import pytest

from games.rules.ruleset import CUOC_SLUGS, NAMED_HANDS, PRESETS, build_ruleset
from games.rules.scoring import Score, base_points, ga_patterns, normalize_cuoc, score

CHAN_VAN_VAN = PRESETS["chan_van_van"]
VINAGAMES = PRESETS["vinagames"]
THAPTHANH = PRESETS["thapthanh"]
NO_GA = build_ruleset({"overrides": {"ga_enabled": False}})


# --- the worked examples of RULES.md §7 (seeds 000, 001, 004) --------------------------------


def test_example_chiu_u_bach_thu_two_tom_leo_scores_9() -> None:
    # Lèo 5 is the largest; chíu ù 1 + bạch thủ 1 + 2 × tôm 1; no gà pattern.
    result = score(CHAN_VAN_VAN, {"chiu_u": 1, "bach_thu": 1, "tom": 2, "leo": 1})
    assert result == Score(base=9, ga=0, total=9)


def test_example_chi_bach_thu_chi_tam_do_two_leo_with_one_ga_chi_bach_thu_scores_31() -> None:
    # Tám đỏ 8 + chì 1 + bạch thủ chi 3 + 2 × lèo 2 = 16; gà: chì bạch thủ 1 + bạch thủ chi 1
    # + tám đỏ 1 = 3 → 15.
    ruleset = build_ruleset({"overrides": {"ga": {"chi_bach_thu": 1}}})
    result = score(ruleset, {"chi": 1, "bach_thu_chi": 1, "tam_do": 1, "leo": 2})
    assert result == Score(base=16, ga=15, total=31)


def test_example_chi_bach_thu_chi_tam_do_two_leo_with_default_two_ga_scores_36() -> None:
    cuoc = {"chi": 1, "bach_thu_chi": 1, "tam_do": 1, "leo": 2}
    assert ga_patterns(CHAN_VAN_VAN, cuoc) == {"chi_bach_thu": 2, "bach_thu_chi": 1, "tam_do": 1}
    assert score(CHAN_VAN_VAN, cuoc) == Score(base=16, ga=20, total=36)


def test_example_thap_thanh_thong_chi_max_plus_dich_scores_14_plus_ga() -> None:
    result = score(CHAN_VAN_VAN, {"thap_thanh": 1, "thong": 1, "chi": 1})
    assert result.base == 12 + 1 + 1 == 14
    assert result.ga == 5  # thập thành 1 gà
    assert result.total == 19


def test_example_thap_thanh_thong_chi_sum_points_scores_18_plus_ga() -> None:
    cuoc = {"thap_thanh": 1, "thong": 1, "chi": 1}
    assert score(VINAGAMES, cuoc) == Score(base=12 + 3 + 3, ga=5, total=23)
    custom = build_ruleset({"overrides": {"thap_thanh_formula": "sum_points"}})
    assert score(custom, cuoc).base == 18


def test_example_chi_tam_do_leo_tom_co_chiu_scores_13_base() -> None:
    cuoc = {"chi": 1, "tam_do": 1, "leo": 1, "tom": 1, "chiu": 1}
    # Tám đỏ 8 + chì 1 + lèo 2 + tôm 1 + chíu 1 (seed 004 example; same numbers in chan_van_van).
    assert base_points(CHAN_VAN_VAN, cuoc) == 13
    assert base_points(THAPTHANH, cuoc) == 13
    assert score(CHAN_VAN_VAN, cuoc) == Score(base=13, ga=5, total=18)


# --- base points -----------------------------------------------------------------------------


def test_xuong_alone_scores_its_diem_2() -> None:
    for ruleset in PRESETS.values():
        assert score(ruleset, {"xuong": 1}) == Score(base=2, ga=0, total=2)


def test_single_cuoc_scores_its_diem() -> None:
    assert score(NO_GA, {"bach_dinh": 1}).base == 7
    assert score(NO_GA, {"leo": 1}).base == 5


def test_largest_diem_counts_once_then_dich_for_every_other_occurrence() -> None:
    # Two tôm and nothing larger: one tôm at điểm 4, the second at dịch 1.
    assert base_points(CHAN_VAN_VAN, {"tom": 2}) == 4 + 1
    assert base_points(CHAN_VAN_VAN, {"tom": 3, "chi": 1}) == 4 + 1 + 1 + 1
    # Two lèo beside a tôm: lèo 5 + lèo 2 + tôm 1.
    assert base_points(CHAN_VAN_VAN, {"tom": 1, "leo": 2}) == 5 + 2 + 1


def test_equal_diem_picks_the_reading_that_adds_the_larger_dich() -> None:
    ruleset = build_ruleset({"overrides": {"cuoc": {"chi": {"diem": 5, "dich": 1}}}})
    # chi 5/1 and leo 5/2 tie on điểm: chi is the largest, lèo adds its dịch 2.
    assert base_points(ruleset, {"chi": 1, "leo": 1}) == 5 + 2


def test_named_hand_is_the_largest_cuoc() -> None:
    cuoc = {"hoa_roi_cua_phat": 1, "tom": 1, "leo": 1}
    assert base_points(CHAN_VAN_VAN, cuoc) == 20 + 1 + 2
    assert base_points(THAPTHANH, cuoc) == 24 + 1 + 2


def test_sum_points_needs_thap_thanh() -> None:
    assert base_points(VINAGAMES, {"thong": 1, "chi": 1}) == 3 + 1


def test_sum_points_counts_multiplicity() -> None:
    assert base_points(VINAGAMES, {"thap_thanh": 1, "tom": 2}) == 12 + 4 + 4


def test_disabled_cuoc_scores_nothing() -> None:
    # vinagames turns off địa ù, chíu ù, ù bòn and the named hands.
    assert score(VINAGAMES, {"dia_u": 1, "chiu_u": 1, "u_bon": 1}) == Score(0, 0, 0)
    assert base_points(VINAGAMES, {"dia_u": 1, "tom": 1}) == 4
    assert score(VINAGAMES, {"hoa_roi_cua_phat": 1}) == Score(0, 0, 0)
    off = build_ruleset({"overrides": {"cuoc": {"leo": "off"}}})
    assert base_points(off, {"leo": 2, "tom": 1}) == 4


def test_disabled_thap_thanh_does_not_trigger_sum_points() -> None:
    ruleset = build_ruleset({"preset": "vinagames", "overrides": {"cuoc": {"thap_thanh": "off"}}})
    assert score(ruleset, {"thap_thanh": 1, "thong": 1, "chi": 1}) == Score(4, 0, 4)


def test_overridden_values_are_scored() -> None:
    ruleset = build_ruleset(
        {"overrides": {"ga_enabled": False, "cuoc": {"pha_thien": {"diem": 3, "dich": 1}}}}
    )
    assert base_points(ruleset, {"pha_thien": 1, "chi": 1}) == 3 + 1


def test_empty_cuoc_scores_zero() -> None:
    assert score(CHAN_VAN_VAN, {}) == Score(0, 0, 0)
    assert score(CHAN_VAN_VAN, {"tom": 0}) == Score(0, 0, 0)


# --- gà ----------------------------------------------------------------------------------------


def test_ga_disabled_gives_no_ga() -> None:
    cuoc = {"chi": 1, "bach_thu_chi": 1, "tam_do": 1, "leo": 2}
    assert score(NO_GA, cuoc) == Score(base=16, ga=0, total=16)
    assert ga_patterns(NO_GA, cuoc) == {}


def test_ga_points_multiply_the_number_of_ga() -> None:
    ruleset = build_ruleset({"overrides": {"ga_points": 7}})
    assert score(ruleset, {"tam_do": 1}) == Score(base=8, ga=7, total=15)


def test_chi_bach_thu_is_a_ga_only_with_both() -> None:
    assert ga_patterns(CHAN_VAN_VAN, {"chi": 1, "bach_thu": 1}) == {"chi_bach_thu": 2}
    assert ga_patterns(CHAN_VAN_VAN, {"bach_thu": 1}) == {}
    assert ga_patterns(CHAN_VAN_VAN, {"chi": 1}) == {}
    assert score(CHAN_VAN_VAN, {"chi": 1, "bach_thu": 1}) == Score(4 + 1, 10, 15)


def test_chi_bach_thu_chi_is_the_chi_bach_thu_ga_plus_the_bach_thu_chi_ga() -> None:
    assert ga_patterns(CHAN_VAN_VAN, {"chi": 1, "bach_thu_chi": 1}) == {
        "chi_bach_thu": 2,
        "bach_thu_chi": 1,
    }
    assert ga_patterns(CHAN_VAN_VAN, {"bach_thu_chi": 1}) == {"bach_thu_chi": 1}
    # thapthanh: bạch thủ chi earns no gà; chì bạch thủ chi earns the chì bạch thủ gà.
    assert ga_patterns(THAPTHANH, {"chi": 1, "bach_thu_chi": 1}) == {"chi_bach_thu": 1}


def test_u_bon_bach_thu_ga_with_bach_thu_or_bach_thu_chi() -> None:
    assert ga_patterns(CHAN_VAN_VAN, {"u_bon": 1, "bach_thu": 1}) == {"u_bon_bach_thu": 1}
    assert ga_patterns(CHAN_VAN_VAN, {"u_bon": 1, "bach_thu_chi": 1}) == {
        "u_bon_bach_thu": 1,
        "bach_thu_chi": 1,
    }
    assert ga_patterns(CHAN_VAN_VAN, {"u_bon": 1}) == {}


@pytest.mark.parametrize("slug", ["thap_thanh", "kinh_tu_chi", "bach_dinh", "tam_do"])
def test_hard_hands_are_one_ga_each(slug: str) -> None:
    for ruleset in PRESETS.values():
        assert ga_patterns(ruleset, {slug: 1}) == {slug: 1}


def test_named_hands_ga_once_per_named_hand() -> None:
    assert ga_patterns(CHAN_VAN_VAN, {"hoa_roi_cua_phat": 1}) == {"named_hands": 2}
    assert ga_patterns(THAPTHANH, {"ngu_ong_bat_ca": 1}) == {"named_hands": 1}
    both = {"nha_lau_xe_hoi": 1, "hoa_roi_cua_phat": 1}
    assert ga_patterns(THAPTHANH, both) == {"named_hands": 2}
    assert score(THAPTHANH, both) == Score(base=34 + 21, ga=10, total=65)


def test_ga_tam_do_requires_leo_option() -> None:
    ruleset = build_ruleset({"preset": "thapthanh", "overrides": {"ga_tam_do_requires_leo": True}})
    assert ga_patterns(ruleset, {"tam_do": 1}) == {}
    assert ga_patterns(ruleset, {"tam_do": 1, "leo": 1}) == {"tam_do": 1}
    assert score(ruleset, {"tam_do": 1}) == Score(8, 0, 8)


def test_ga_bach_dinh_requires_tom_option() -> None:
    ruleset = build_ruleset(
        {"preset": "thapthanh", "overrides": {"ga_bach_dinh_requires_tom": True}}
    )
    assert ga_patterns(ruleset, {"bach_dinh": 1}) == {}
    assert ga_patterns(ruleset, {"bach_dinh": 1, "tom": 2}) == {"bach_dinh": 1}
    assert score(ruleset, {"bach_dinh": 1, "tom": 2}) == Score(7 + 2, 5, 14)


def test_ga_pattern_set_to_zero_earns_nothing() -> None:
    ruleset = build_ruleset({"overrides": {"ga": {"tam_do": 0}}})
    assert ga_patterns(ruleset, {"tam_do": 1}) == {}


def test_disabled_cuoc_earns_no_ga() -> None:
    ruleset = build_ruleset({"overrides": {"cuoc": {"tam_do": "off"}}})
    assert score(ruleset, {"tam_do": 1}) == Score(0, 0, 0)
    # vinagames has no named hands: neither points nor gà.
    assert ga_patterns(VINAGAMES, {name: 1 for name in NAMED_HANDS}) == {}


# --- input -------------------------------------------------------------------------------------


def test_normalize_cuoc_orders_by_declaration_and_drops_zeros() -> None:
    assert normalize_cuoc({"leo": 2, "chi": 1, "tom": 0, "xuong": 0}) == {"chi": 1, "leo": 2}
    assert list(normalize_cuoc(dict.fromkeys(reversed(CUOC_SLUGS), 1))) == list(CUOC_SLUGS)


@pytest.mark.parametrize(
    "cuoc, slug",
    [
        ({"rong": 1}, "rong"),
        ({"tom": -1}, "tom"),
        ({"tom": True}, "tom"),
        ({"tom": "2"}, "tom"),
        ({"tom": 1.0}, "tom"),
        ({"tom": 5}, "tom"),
        ({"chi": 2}, "chi"),
        ({"chiu": 6}, "chiu"),
    ],
)
def test_normalize_cuoc_refuses_bad_entries_naming_the_slug(cuoc: Any, slug: str) -> None:
    with pytest.raises(ValueError, match=rf"\b{slug}\b"):
        normalize_cuoc(cuoc)
    with pytest.raises(ValueError, match=rf"\b{slug}\b"):
        score(CHAN_VAN_VAN, cuoc)


def test_score_to_dict() -> None:
    assert Score(base=16, ga=15, total=31).to_dict() == {"base": 16, "ga": 15, "total": 31}
