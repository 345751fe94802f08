"""Rulesets as data: the preset tables of RULES.md §7 and validation of overrides."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from games.rules.ruleset import (
    CUOC_SLUGS,
    GA_PATTERNS,
    NAMED_HANDS,
    PRESETS,
    CuocValue,
    Ruleset,
    RulesetError,
    build_ruleset,
    list_presets,
    ruleset_from_stored,
)

OFF = None

# RULES.md §7 "Ruleset presets", row by row: slug -> (chan_van_van, vinagames, thapthanh),
# each (điểm, dịch) or OFF.
PRESET_CUOC_TABLE: dict[str, tuple[tuple[int, int] | None, ...]] = {
    "xuong": ((2, 0), (2, 0), (2, 0)),
    "thong": ((3, 1), (3, 1), (3, 1)),
    "chi": ((3, 1), (3, 1), (3, 1)),
    "thien_u": ((3, 1), (3, 1), (4, 1)),
    "dia_u": ((3, 1), OFF, (4, 1)),
    "chiu_u": ((3, 1), OFF, OFF),
    "u_bon": ((3, 1), OFF, OFF),
    "thien_khai": ((3, 1), (5, 2), (4, 1)),
    "chiu": ((3, 1), (5, 2), (4, 1)),
    "an_bon": ((3, 1), (5, 2), (4, 1)),
    "tom": ((4, 1), (4, 1), (4, 1)),
    "bach_thu": ((4, 1), (4, 1), (4, 1)),
    "leo": ((5, 2), (5, 2), (5, 2)),
    "bach_thu_chi": ((6, 3), (6, 3), (6, 3)),
    "bach_dinh": ((7, 4), (7, 4), (7, 4)),
    "tam_do": ((8, 5), (8, 5), (8, 5)),
    "thap_thanh": ((12, 9), (12, 9), (12, 9)),
    "kinh_tu_chi": ((12, 9), (12, 9), (12, 9)),
    "hoa_roi_cua_phat": ((20, 17), OFF, (24, 21)),
    "ca_loi_san_dinh": ((20, 17), OFF, (24, 21)),
    "ca_nhay_dau_thuyen": (OFF, OFF, (24, 21)),
    "chua_do_nat_hoa": (OFF, OFF, (24, 21)),
    "nha_lau_xe_hoi": (OFF, OFF, (34, 31)),
    "ngu_ong_bat_ca": (OFF, OFF, (34, 31)),
    "pha_thien": (OFF, OFF, OFF),
}
PRESET_NAMES = ("chan_van_van", "vinagames", "thapthanh")

# RULES.md §7 gà rows: pattern -> (chan_van_van, vinagames, thapthanh).
PRESET_GA_TABLE: dict[str, tuple[int, int, int]] = {
    "u_bon_bach_thu": (1, 0, 1),
    "thap_thanh": (1, 1, 1),
    "kinh_tu_chi": (1, 1, 1),
    "bach_dinh": (1, 1, 1),
    "tam_do": (1, 1, 1),
    "bach_thu_chi": (1, 0, 0),
    "chi_bach_thu": (2, 1, 1),
    "named_hands": (2, 0, 1),
}

# Table options per preset (RULES.md §7, §10).
PRESET_OPTIONS: dict[str, dict[str, Any]] = {
    "chan_van_van": {
        "thap_thanh_formula": "max_plus_dich",
        "den_lang": "declared",
        "bao_payer": "each",
        "thong_after_treo_tranh": True,
    },
    "vinagames": {
        "thap_thanh_formula": "sum_points",
        "den_lang": "declared",
        "bao_payer": "each",
        "thong_after_treo_tranh": True,
    },
    "thapthanh": {
        "thap_thanh_formula": "max_plus_dich",
        "den_lang": 17,
        "bao_payer": "last",
        "thong_after_treo_tranh": False,
    },
}


def test_cuoc_slugs_are_in_declaration_order_of_rules_section_6() -> None:
    declaration_order = (
        "xuong",
        "thong",
        "chi",
        "thien_u",
        "dia_u",
        "chiu_u",
        "u_bon",
        "bach_thu",
        "bach_thu_chi",
        "thap_thanh",
        "bach_dinh",
        "tam_do",
        "kinh_tu_chi",
        "tom",
        "leo",
        "thien_khai",
        "chiu",
        "an_bon",
        "hoa_roi_cua_phat",
        "ca_loi_san_dinh",
        "ca_nhay_dau_thuyen",
        "chua_do_nat_hoa",
        "nha_lau_xe_hoi",
        "ngu_ong_bat_ca",
        "pha_thien",
    )
    named_hands = declaration_order[18:24]
    assert declaration_order == CUOC_SLUGS
    assert set(PRESET_CUOC_TABLE) == set(CUOC_SLUGS)
    assert named_hands == NAMED_HANDS


def test_presets_are_the_three_of_rules_section_7() -> None:
    assert tuple(PRESETS) == PRESET_NAMES
    assert [table["preset"] for table in list_presets()] == list(PRESET_NAMES)


@pytest.mark.parametrize("slug", CUOC_SLUGS)
@pytest.mark.parametrize("index, preset", list(enumerate(PRESET_NAMES)))
def test_preset_cuoc_row_matches_rules_table(index: int, preset: str, slug: str) -> None:
    expected = PRESET_CUOC_TABLE[slug][index]
    value = PRESETS[preset].cuoc[slug]
    if expected is OFF:
        assert value.enabled is False
    else:
        assert value == CuocValue(diem=expected[0], dich=expected[1], enabled=True)


@pytest.mark.parametrize("pattern", GA_PATTERNS)
@pytest.mark.parametrize("index, preset", list(enumerate(PRESET_NAMES)))
def test_preset_ga_row_matches_rules_table(index: int, preset: str, pattern: str) -> None:
    assert PRESETS[preset].ga[pattern] == PRESET_GA_TABLE[pattern][index]


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_preset_options_match_rules(preset: str) -> None:
    ruleset = PRESETS[preset]
    for name, expected in PRESET_OPTIONS[preset].items():
        assert getattr(ruleset, name) == expected, name
    # Tables play gà at 5 points unless turned off; the other options are off by default.
    assert ruleset.ga_enabled is True
    assert ruleset.ga_points == 5
    assert ruleset.four_eleven is False
    assert ruleset.bach_thu_must_be_declared is False
    assert ruleset.ga_gop is False
    assert ruleset.ga_tam_do_requires_leo is False
    assert ruleset.ga_bach_dinh_requires_tom is False


def test_pha_thien_is_off_by_default_and_can_be_turned_on() -> None:
    for preset in PRESET_NAMES:
        assert PRESETS[preset].cuoc["pha_thien"].enabled is False
    ruleset = build_ruleset({"overrides": {"cuoc": {"pha_thien": "on"}}})
    assert ruleset.cuoc["pha_thien"] == CuocValue(diem=3, dich=1, enabled=True)


def test_default_spec_is_chan_van_van() -> None:
    assert build_ruleset(None) == PRESETS["chan_van_van"]
    assert build_ruleset({}) == PRESETS["chan_van_van"]
    assert build_ruleset({"preset": "chan_van_van", "overrides": {}}) == PRESETS["chan_van_van"]


def test_to_dict_is_the_full_json_table() -> None:
    table = PRESETS["thapthanh"].to_dict()
    assert json.loads(json.dumps(table)) == table
    assert table["preset"] == "thapthanh"
    assert table["cuoc"]["tom"] == {"diem": 4, "dich": 1, "enabled": True}
    assert table["cuoc"]["u_bon"]["enabled"] is False
    assert list(table["cuoc"]) == list(CUOC_SLUGS)
    assert table["ga"] == {pattern: PRESET_GA_TABLE[pattern][2] for pattern in GA_PATTERNS}
    assert table["den_lang"] == 17
    assert table["preset_version"] == 1 and table["overrides"] == {}
    assert set(table) == {
        "preset",
        "preset_version",
        "overrides",
        "cuoc",
        "ga_enabled",
        "ga_points",
        "ga",
        "ga_tam_do_requires_leo",
        "ga_bach_dinh_requires_tom",
        "thap_thanh_formula",
        "bao_payer",
        "den_lang",
        "four_eleven",
        "thong_after_treo_tranh",
        "bach_thu_must_be_declared",
        "ga_gop",
    }


FULL_OVERRIDES: dict[str, Any] = {
    "cuoc": {
        "tom": {"diem": 5, "dich": 2},
        "dia_u": "off",
        "pha_thien": {"diem": 4, "dich": 1},
        "chiu_u": "on",
        "leo": {"dich": 3},
    },
    "ga_enabled": False,
    "ga_points": 10,
    "ga": {"chi_bach_thu": 1, "named_hands": 3},
    "ga_tam_do_requires_leo": True,
    "ga_bach_dinh_requires_tom": True,
    "thap_thanh_formula": "sum_points",
    "bao_payer": "last",
    "den_lang": 17,
    "four_eleven": True,
    "thong_after_treo_tranh": False,
    "bach_thu_must_be_declared": True,
    "ga_gop": True,
}


def test_overrides_change_the_preset_table() -> None:
    ruleset = build_ruleset({"preset": "vinagames", "overrides": FULL_OVERRIDES})
    assert ruleset.preset == "vinagames"
    assert ruleset.cuoc["tom"] == CuocValue(5, 2, True)
    assert ruleset.cuoc["dia_u"].enabled is False
    assert ruleset.cuoc["pha_thien"] == CuocValue(4, 1, True)
    assert ruleset.cuoc["chiu_u"].enabled is True
    assert ruleset.cuoc["leo"] == CuocValue(5, 3, True)
    assert ruleset.cuoc["chi"] == PRESETS["vinagames"].cuoc["chi"]
    assert ruleset.ga["chi_bach_thu"] == 1
    assert ruleset.ga["named_hands"] == 3
    assert ruleset.ga["tam_do"] == PRESETS["vinagames"].ga["tam_do"]
    for name, value in FULL_OVERRIDES.items():
        if name not in ("cuoc", "ga"):
            assert getattr(ruleset, name) == value, name


def test_overrides_do_not_change_the_presets() -> None:
    before = PRESETS["chan_van_van"].to_dict()
    build_ruleset({"overrides": FULL_OVERRIDES})
    assert PRESETS["chan_van_van"].to_dict() == before


def test_spec_round_trips_through_build_ruleset() -> None:
    spec = {"preset": "thapthanh", "overrides": FULL_OVERRIDES}
    ruleset = build_ruleset(spec)
    assert ruleset.spec() == spec
    assert json.loads(json.dumps(ruleset.spec())) == spec
    assert build_ruleset(ruleset.spec()) == ruleset
    assert hash(build_ruleset(ruleset.spec())) == hash(ruleset)


def test_ruleset_is_immutable() -> None:
    source = {"cuoc": {"tom": {"diem": 5, "dich": 2}}}
    ruleset = build_ruleset({"overrides": source})
    with pytest.raises(AttributeError):
        ruleset.ga_points = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        ruleset.cuoc["tom"] = CuocValue(1, 0, True)  # type: ignore[index]
    with pytest.raises(TypeError):
        ruleset.ga["tam_do"] = 3  # type: ignore[index]
    # The caller's dict is copied, not kept.
    source["cuoc"]["tom"]["diem"] = 9
    assert ruleset.overrides["cuoc"]["tom"]["diem"] == 5
    assert ruleset.cuoc["tom"].diem == 5
    assert isinstance(hash(ruleset), int)


def test_ruleset_requires_every_slug_and_pattern() -> None:
    base = PRESETS["chan_van_van"]
    with pytest.raises(ValueError):
        Ruleset(preset="x", cuoc={"xuong": CuocValue(2, 0, True)}, ga=base.ga)
    with pytest.raises(ValueError):
        Ruleset(preset="x", cuoc=base.cuoc, ga={"tam_do": 1})


@pytest.mark.parametrize(
    "spec, key",
    [
        ("chan_van_van", "spec"),
        ({"preset": "chan_van_van", "extra": 1}, "extra"),
        ({"preset": "tlmn"}, "preset"),
        ({"preset": 3}, "preset"),
        ({"overrides": []}, "overrides"),
        ({"overrides": {"colour": "red"}}, "overrides.colour"),
        ({"overrides": {"cuoc": []}}, "overrides.cuoc"),
        ({"overrides": {"cuoc": {"rong": "off"}}}, "overrides.cuoc.rong"),
        ({"overrides": {"cuoc": {"tom": "maybe"}}}, "overrides.cuoc.tom"),
        ({"overrides": {"cuoc": {"tom": 4}}}, "overrides.cuoc.tom"),
        ({"overrides": {"cuoc": {"tom": {}}}}, "overrides.cuoc.tom"),
        ({"overrides": {"cuoc": {"tom": {"diem": "4"}}}}, "overrides.cuoc.tom.diem"),
        ({"overrides": {"cuoc": {"tom": {"diem": True}}}}, "overrides.cuoc.tom.diem"),
        ({"overrides": {"cuoc": {"tom": {"diem": 4.0}}}}, "overrides.cuoc.tom.diem"),
        ({"overrides": {"cuoc": {"tom": {"diem": -1}}}}, "overrides.cuoc.tom.diem"),
        ({"overrides": {"cuoc": {"tom": {"diem": 101}}}}, "overrides.cuoc.tom.diem"),
        ({"overrides": {"cuoc": {"tom": {"diem": 4, "dich": -1}}}}, "overrides.cuoc.tom.dich"),
        ({"overrides": {"cuoc": {"tom": {"diem": 4, "dich": 5}}}}, "overrides.cuoc.tom.dich"),
        ({"overrides": {"cuoc": {"tom": {"diem": 4, "ga": 1}}}}, "overrides.cuoc.tom.ga"),
        ({"overrides": {"cuoc": {"tom": {"enabled": "yes"}}}}, "overrides.cuoc.tom.enabled"),
        ({"overrides": {"cuoc": {"xuong": "off"}}}, "overrides.cuoc.xuong"),
        ({"overrides": {"ga_enabled": 1}}, "overrides.ga_enabled"),
        ({"overrides": {"ga_enabled": "true"}}, "overrides.ga_enabled"),
        ({"overrides": {"ga_points": True}}, "overrides.ga_points"),
        ({"overrides": {"ga_points": 101}}, "overrides.ga_points"),
        ({"overrides": {"ga_points": -5}}, "overrides.ga_points"),
        ({"overrides": {"ga": {"tam_do": 11}}}, "overrides.ga.tam_do"),
        ({"overrides": {"ga": {"tam_do": -1}}}, "overrides.ga.tam_do"),
        ({"overrides": {"ga": {"tam_do": False}}}, "overrides.ga.tam_do"),
        ({"overrides": {"ga": {"leo": 1}}}, "overrides.ga.leo"),
        ({"overrides": {"ga": 2}}, "overrides.ga"),
        ({"overrides": {"ga_tam_do_requires_leo": None}}, "overrides.ga_tam_do_requires_leo"),
        ({"overrides": {"ga_bach_dinh_requires_tom": 0}}, "overrides.ga_bach_dinh_requires_tom"),
        ({"overrides": {"thap_thanh_formula": "sum"}}, "overrides.thap_thanh_formula"),
        ({"overrides": {"bao_payer": "first"}}, "overrides.bao_payer"),
        ({"overrides": {"den_lang": "always"}}, "overrides.den_lang"),
        ({"overrides": {"den_lang": 0}}, "overrides.den_lang"),
        ({"overrides": {"den_lang": 101}}, "overrides.den_lang"),
        ({"overrides": {"den_lang": True}}, "overrides.den_lang"),
        ({"overrides": {"den_lang": 17.0}}, "overrides.den_lang"),
        ({"overrides": {"four_eleven": "no"}}, "overrides.four_eleven"),
        ({"overrides": {"thong_after_treo_tranh": 1}}, "overrides.thong_after_treo_tranh"),
        ({"overrides": {"bach_thu_must_be_declared": 1}}, "overrides.bach_thu_must_be_declared"),
        ({"overrides": {"ga_gop": "on"}}, "overrides.ga_gop"),
    ],
)
def test_bad_spec_is_refused_naming_the_key(spec: Any, key: str) -> None:
    with pytest.raises(RulesetError) as caught:
        build_ruleset(spec)
    assert caught.value.key == key
    assert str(caught.value).startswith(f"{key}: ")
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("den_lang", ["declared", 1, 17, 100])
def test_den_lang_is_declared_or_fixed_points(den_lang: str | int) -> None:
    assert build_ruleset({"overrides": {"den_lang": den_lang}}).den_lang == den_lang


def test_cuoc_values_turn_an_off_cuoc_on_unless_told_otherwise() -> None:
    ruleset = build_ruleset(
        {
            "preset": "vinagames",
            "overrides": {
                "cuoc": {
                    "dia_u": {"diem": 3, "dich": 1},
                    "u_bon": {"diem": 4, "dich": 1, "enabled": False},
                }
            },
        }
    )
    assert ruleset.cuoc["dia_u"] == CuocValue(3, 1, True)
    assert ruleset.cuoc["u_bon"] == CuocValue(4, 1, False)


# --------------------------------------------------------------------------- frozen by value


FULL_SPECS = [{"preset": name, "overrides": {}} for name in PRESET_NAMES] + [
    {
        "preset": "vinagames",
        "overrides": {
            "cuoc": {"tom": {"diem": 9, "dich": 6}, "pha_thien": "on", "leo": "off"},
            "ga": {"tam_do": 3},
            "ga_points": 7,
            "den_lang": 20,
            "bao_payer": "last",
            "four_eleven": True,
            "ga_gop": True,
        },
    }
]


@pytest.mark.parametrize("spec", FULL_SPECS)
def test_a_full_ruleset_round_trips_to_dict_and_from_dict_exactly(spec: dict[str, Any]) -> None:
    ruleset = build_ruleset(spec)
    stored = json.loads(json.dumps(ruleset.to_dict()))  # as the database gives it back
    again = Ruleset.from_dict(stored)
    assert again == ruleset
    assert hash(again) == hash(ruleset)
    assert again.to_dict() == ruleset.to_dict() == stored
    assert again.spec() == ruleset.spec()
    assert ruleset_from_stored(stored) == ruleset


def test_every_preset_carries_its_version_into_what_a_hand_stores() -> None:
    for name, preset in PRESETS.items():
        assert preset.preset == name
        assert isinstance(preset.preset_version, int) and preset.preset_version >= 1
        built = build_ruleset({"preset": name, "overrides": {"ga_points": 9}})
        assert built.to_dict()["preset_version"] == preset.preset_version


def test_a_frozen_ruleset_keeps_its_values_when_the_preset_changes(monkeypatch) -> None:
    # Given a table stored under chan_van_van version 1,
    stored = json.loads(json.dumps(build_ruleset({"preset": "chan_van_van"}).to_dict()))
    # when the preset's tôm moves to 6/3 (version 2),
    base = PRESETS["chan_van_van"]
    cuoc = {**base.cuoc, "tom": CuocValue(diem=6, dich=3, enabled=True)}
    changed = dataclasses.replace(base, cuoc=cuoc, preset_version=2)
    monkeypatch.setitem(PRESETS, "chan_van_van", changed)
    # then the stored table still reads 4/1 at version 1, and a new one gets the new values.
    frozen = ruleset_from_stored(stored)
    assert frozen.cuoc["tom"] == CuocValue(diem=4, dich=1, enabled=True)
    assert frozen.preset_version == 1
    assert build_ruleset({"preset": "chan_van_van"}).cuoc["tom"].diem == 6
    assert build_ruleset({"preset": "chan_van_van"}).preset_version == 2
    # An old record (the spec only) is upcast with the presets as they stand.
    assert ruleset_from_stored({"preset": "chan_van_van", "overrides": {}}) == changed


def _stored(**changes: Any) -> dict[str, Any]:
    table = json.loads(json.dumps(PRESETS["chan_van_van"].to_dict()))
    for path, value in changes.items():
        *parents, last = path.split("__")
        node = table
        for name in parents:
            node = node[name]
        if value is _DROP:
            del node[last]
        else:
            node[last] = value
    return table


_DROP = object()


@pytest.mark.parametrize(
    ("changes", "key"),
    [
        ({"cuoc__tom__diem": "4"}, "cuoc.tom.diem"),
        ({"cuoc__tom__dich": 9}, "cuoc.tom.dich"),
        ({"cuoc__tom": _DROP}, "cuoc.tom"),
        ({"cuoc__tom__enabled": _DROP}, "cuoc.tom"),
        ({"cuoc__xuong__enabled": False}, "cuoc.xuong.enabled"),
        ({"ga__tam_do": 11}, "ga.tam_do"),
        ({"ga__bogus": 1}, "ga.bogus"),
        ({"den_lang": 0}, "den_lang"),
        ({"bao_payer": "all"}, "bao_payer"),
        ({"ga_gop": 1}, "ga_gop"),
        ({"preset_version": 0}, "preset_version"),
        ({"preset_version": _DROP}, "preset_version"),
        ({"four_eleven": _DROP}, "four_eleven"),
        ({"extra": True}, "extra"),
        ({"overrides": []}, "overrides"),
    ],
)
def test_a_stored_ruleset_is_validated_key_by_key(changes: dict[str, Any], key: str) -> None:
    with pytest.raises(RulesetError) as refused:
        Ruleset.from_dict(_stored(**changes))
    assert refused.value.key == key
