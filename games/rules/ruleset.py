"""Rulesets as data: the cước table, gà table and table options of RULES.md §6–§7, §10.

A table's ruleset is a preset (``chan_van_van``, ``vinagames``, ``thapthanh``) plus validated
overrides. Nothing here branches on the preset name: presets are rows of data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from games.rules.errors import InvalidField, shown

__all__ = [
    "BAO_PAYERS",
    "CUOC_MAX_COUNT",
    "CUOC_SLUGS",
    "DEFAULT_PRESET",
    "DEN_LANG_DECLARED",
    "GA_PATTERNS",
    "MULTIPLE_CUOC",
    "NAMED_HANDS",
    "OVERRIDE_KEYS",
    "PRESETS",
    "THAP_THANH_FORMULAS",
    "CuocValue",
    "Ruleset",
    "RulesetError",
    "build_ruleset",
    "list_presets",
    "ruleset_from_stored",
]

# Cước slugs in declaration order (RULES.md §6).
# 4-11 mode (RULES.md §10.6): a win whose true score is below 4 costs the winner 11 points to
# every other seat, and such a win may be declined without a bỏ ù.
FOUR_ELEVEN_MIN: Final = 4
FOUR_ELEVEN_POINTS: Final = 11

CUOC_SLUGS: Final[tuple[str, ...]] = (
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

# The named hands (chì bạch thủ on a given card with given eaten chắn); they replace chi/bach_thu.
NAMED_HANDS: Final[tuple[str, ...]] = (
    "hoa_roi_cua_phat",
    "ca_loi_san_dinh",
    "ca_nhay_dau_thuyen",
    "chua_do_nat_hoa",
    "nha_lau_xe_hoi",
    "ngu_ong_bat_ca",
)

# Cước that can be counted several times in one win (marked ×n in RULES.md §6).
MULTIPLE_CUOC: Final[tuple[str, ...]] = ("tom", "leo", "thien_khai", "chiu", "an_bon")

# The most times a cước can occur in one win of 20 cards: Tôm and Lèo sets use 4 copies of each
# of their kinds (≤ 4); Thiên khai, Có chíu and Có ăn bòn each use four cards of a kind (≤ 5).
CUOC_MAX_COUNT: Final[Mapping[str, int]] = MappingProxyType(
    {
        slug: (4 if slug in ("tom", "leo") else 5 if slug in MULTIPLE_CUOC else 1)
        for slug in CUOC_SLUGS
    }
)

# Gà patterns (RULES.md §7 "Ruleset keys").
GA_PATTERNS: Final[tuple[str, ...]] = (
    "chi_bach_thu",
    "bach_thu_chi",
    "u_bon_bach_thu",
    "thap_thanh",
    "kinh_tu_chi",
    "bach_dinh",
    "tam_do",
    "named_hands",
)

THAP_THANH_FORMULAS: Final[tuple[str, ...]] = ("max_plus_dich", "sum_points")
BAO_PAYERS: Final[tuple[str, ...]] = ("each", "last")
DEN_LANG_DECLARED: Final = "declared"
DEFAULT_PRESET: Final = "chan_van_van"

# Override keys accepted in a ruleset spec (RULES.md §7 "Ruleset keys").
OVERRIDE_KEYS: Final[tuple[str, ...]] = (
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
)

_SPEC_KEYS: Final = frozenset({"preset", "overrides"})
# The keys of a frozen ruleset (``Ruleset.to_dict()``): the spec's two, the preset's version and
# every value of the table.
_OPTION_KEYS: Final = (
    "ga_enabled",
    "ga_points",
    "ga_tam_do_requires_leo",
    "ga_bach_dinh_requires_tom",
    "thap_thanh_formula",
    "bao_payer",
    "den_lang",
    "four_eleven",
    "thong_after_treo_tranh",
    "bach_thu_must_be_declared",
    "ga_gop",
)
_FROZEN_KEYS: Final = frozenset(
    {"preset", "preset_version", "cuoc", "ga", "overrides", *_OPTION_KEYS}
)
_CUOC_FIELDS: Final = frozenset({"diem", "dich", "enabled"})
_POINTS_RANGE: Final = (0, 100)
_GA_COUNT_RANGE: Final = (0, 10)
_GA_POINTS_RANGE: Final = (0, 100)
_DEN_LANG_RANGE: Final = (1, 100)
_VERSION_RANGE: Final = (1, 1_000_000)
_BOOL_OPTIONS: Final = (
    "ga_enabled",
    "ga_tam_do_requires_leo",
    "ga_bach_dinh_requires_tom",
    "four_eleven",
    "thong_after_treo_tranh",
    "bach_thu_must_be_declared",
    "ga_gop",
)

DenLang = Literal["declared"] | int


class RulesetError(InvalidField):
    """A ruleset spec was refused (code ``invalid_ruleset``); ``key`` (its ``field``) is the
    dotted path of the offending entry, ``message`` what is wrong with it."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(key, "invalid_ruleset", message)
        self.key = key


@dataclass(frozen=True, slots=True)
class CuocValue:
    """The điểm and dịch of one cước at a table, and whether the table plays it at all."""

    diem: int
    dich: int
    enabled: bool

    def to_dict(self) -> dict[str, Any]:
        """The JSON form ``{"diem", "dich", "enabled"}``."""
        return {"diem": self.diem, "dich": self.dich, "enabled": self.enabled}


def _freeze(value: Any) -> Any:
    """Deep-copy JSON-like data into read-only mappings and tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    """Turn frozen data back into plain dicts and lists for JSON."""
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Ruleset:
    """The full, immutable rule table a hand is played and scored under.

    ``preset_version`` is the version of the preset's table it was built from (raised whenever a
    preset's values change); a hand stores the whole table by value (``to_dict()``), so a later
    change of a preset never reaches it."""

    preset: str
    cuoc: Mapping[str, CuocValue]
    ga: Mapping[str, int]
    preset_version: int = 1
    ga_enabled: bool = True
    ga_points: int = 5
    ga_tam_do_requires_leo: bool = False
    ga_bach_dinh_requires_tom: bool = False
    thap_thanh_formula: str = "max_plus_dich"
    bao_payer: str = "each"
    den_lang: DenLang = DEN_LANG_DECLARED
    four_eleven: bool = False
    thong_after_treo_tranh: bool = True
    bach_thu_must_be_declared: bool = False
    ga_gop: bool = False
    overrides: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if set(self.cuoc) != set(CUOC_SLUGS):
            raise ValueError("Ruleset.cuoc must hold exactly the slugs of CUOC_SLUGS")
        if set(self.ga) != set(GA_PATTERNS):
            raise ValueError("Ruleset.ga must hold exactly the patterns of GA_PATTERNS")
        cuoc = MappingProxyType({slug: self.cuoc[slug] for slug in CUOC_SLUGS})
        ga = MappingProxyType({pattern: self.ga[pattern] for pattern in GA_PATTERNS})
        object.__setattr__(self, "cuoc", cuoc)
        object.__setattr__(self, "ga", ga)
        object.__setattr__(self, "overrides", _freeze(self.overrides))

    def __hash__(self) -> int:
        return hash(
            (
                tuple(self.cuoc.items()),
                tuple(self.ga.items()),
                *(
                    getattr(self, f.name)
                    for f in dataclasses.fields(self)
                    if f.name not in ("cuoc", "ga", "overrides")
                ),
            )
        )

    def value(self, slug: str) -> CuocValue:
        """The điểm/dịch/enabled entry of ``slug``."""
        return self.cuoc[slug]

    def is_enabled(self, slug: str) -> bool:
        """Whether this table plays (detects and pays) the cước ``slug``."""
        return self.cuoc[slug].enabled

    def enabled_cuoc(self) -> tuple[str, ...]:
        """The slugs this table plays, in declaration order."""
        return tuple(slug for slug, value in self.cuoc.items() if value.enabled)

    def to_dict(self) -> dict[str, Any]:
        """The full effective table as JSON-able data, with the preset and version it was built
        from and the overrides given (``spec``); ``Ruleset.from_dict(r.to_dict()) == r``."""
        return {
            "preset": self.preset,
            "preset_version": self.preset_version,
            "cuoc": {slug: value.to_dict() for slug, value in self.cuoc.items()},
            "ga_enabled": self.ga_enabled,
            "ga_points": self.ga_points,
            "ga": dict(self.ga),
            "ga_tam_do_requires_leo": self.ga_tam_do_requires_leo,
            "ga_bach_dinh_requires_tom": self.ga_bach_dinh_requires_tom,
            "thap_thanh_formula": self.thap_thanh_formula,
            "bao_payer": self.bao_payer,
            "den_lang": self.den_lang,
            "four_eleven": self.four_eleven,
            "thong_after_treo_tranh": self.thong_after_treo_tranh,
            "bach_thu_must_be_declared": self.bach_thu_must_be_declared,
            "ga_gop": self.ga_gop,
            "overrides": _thaw(self.overrides),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Ruleset:
        """The ruleset a ``to_dict()`` stored, validated key by key (``RulesetError`` naming the
        bad key): every cước, every gà pattern and every option must be there, nothing else.
        The values are taken as they are, never from today's presets."""
        table = _check_mapping("ruleset", data)
        missing = sorted(_FROZEN_KEYS - set(table))
        if missing:
            raise RulesetError(missing[0], "missing")
        unknown = sorted(set(table) - _FROZEN_KEYS)
        if unknown:
            raise RulesetError(unknown[0], "unknown key")
        preset = table["preset"]
        if not isinstance(preset, str) or not preset:
            raise RulesetError("preset", "must be a preset's name")
        version = _check_int("preset_version", table["preset_version"], _VERSION_RANGE)
        cuoc_entries = _check_mapping("cuoc", table["cuoc"])
        if set(cuoc_entries) != set(CUOC_SLUGS):
            odd = sorted(set(cuoc_entries) ^ set(CUOC_SLUGS))[0]
            raise RulesetError(f"cuoc.{odd}", "the table must hold every cước slug, and only them")
        cuoc = {}
        for slug in CUOC_SLUGS:
            key = f"cuoc.{slug}"
            entry = _check_mapping(key, cuoc_entries[slug])
            if set(entry) != _CUOC_FIELDS:
                raise RulesetError(key, "must be an object {diem, dich, enabled}")
            diem = _check_int(f"{key}.diem", entry["diem"], _POINTS_RANGE)
            dich = _check_int(f"{key}.dich", entry["dich"], _POINTS_RANGE)
            enabled = _check_bool(f"{key}.enabled", entry["enabled"])
            if dich > diem:
                raise RulesetError(f"{key}.dich", f"must not exceed diem ({diem}), got {dich}")
            cuoc[slug] = CuocValue(diem=diem, dich=dich, enabled=enabled)
        if not cuoc["xuong"].enabled:
            raise RulesetError("cuoc.xuong.enabled", "xuong cannot be turned off")
        ga_entries = _check_mapping("ga", table["ga"])
        if set(ga_entries) != set(GA_PATTERNS):
            odd = sorted(set(ga_entries) ^ set(GA_PATTERNS))[0]
            raise RulesetError(f"ga.{odd}", "the table must hold every gà pattern, and only them")
        ga = {p: _check_int(f"ga.{p}", ga_entries[p], _GA_COUNT_RANGE) for p in GA_PATTERNS}
        options: dict[str, Any] = {name: _check_bool(name, table[name]) for name in _BOOL_OPTIONS}
        options["ga_points"] = _check_int("ga_points", table["ga_points"], _GA_POINTS_RANGE)
        options["thap_thanh_formula"] = _check_choice(
            "thap_thanh_formula", table["thap_thanh_formula"], THAP_THANH_FORMULAS
        )
        options["bao_payer"] = _check_choice("bao_payer", table["bao_payer"], BAO_PAYERS)
        options["den_lang"] = _check_den_lang("den_lang", table["den_lang"])
        overrides = _check_mapping("overrides", table["overrides"])
        return cls(
            preset=preset,
            preset_version=version,
            cuoc=cuoc,
            ga=ga,
            overrides=overrides,
            **options,
        )

    def spec(self) -> dict[str, Any]:
        """The spec this ruleset was built from; ``build_ruleset(r.spec()) == r``."""
        return {"preset": self.preset, "overrides": _thaw(self.overrides)}


# --- presets (RULES.md §7 table) ------------------------------------------------------------
# Each preset carries its version: raise it with any change of its values (a hand keeps the
# table it was dealt with, and records the version it came from).

_ON = True
_OFF = False


def _cuoc_table(rows: Mapping[str, tuple[int, int, bool]]) -> dict[str, CuocValue]:
    """Build a cước table from ``slug: (diem, dich, enabled)`` rows covering every slug."""
    missing = set(CUOC_SLUGS) - set(rows)
    if missing:  # pragma: no cover - guards the literal tables below
        raise AssertionError(f"preset table misses {sorted(missing)}")
    return {slug: CuocValue(*rows[slug]) for slug in CUOC_SLUGS}


# Values on rows marked _OFF are what a table gets when it turns the cước back on with "on".
# Decisions (not in the seeds): pha_thien is 3/1 in every preset (a dealt-hand cước like thiên ù);
# a named hand a preset leaves off keeps its preset's tier (chan_van_van: cá nhảy / chùa đổ at
# 20/17 like hoa rơi, nhà lầu / ngư ông at 30/27, i.e. +10 as in thapthanh's 24 → 34); vinagames
# borrows chan_van_van's values for everything it turns off; thapthanh's chíu ù / ù bòn use its
# own 4/1 tier.
_CHAN_VAN_VAN_CUOC = _cuoc_table(
    {
        "xuong": (2, 0, _ON),
        "thong": (3, 1, _ON),
        "chi": (3, 1, _ON),
        "thien_u": (3, 1, _ON),
        "dia_u": (3, 1, _ON),
        "chiu_u": (3, 1, _ON),
        "u_bon": (3, 1, _ON),
        "bach_thu": (4, 1, _ON),
        "bach_thu_chi": (6, 3, _ON),
        "thap_thanh": (12, 9, _ON),
        "bach_dinh": (7, 4, _ON),
        "tam_do": (8, 5, _ON),
        "kinh_tu_chi": (12, 9, _ON),
        "tom": (4, 1, _ON),
        "leo": (5, 2, _ON),
        "thien_khai": (3, 1, _ON),
        "chiu": (3, 1, _ON),
        "an_bon": (3, 1, _ON),
        "hoa_roi_cua_phat": (20, 17, _ON),
        "ca_loi_san_dinh": (20, 17, _ON),
        "ca_nhay_dau_thuyen": (20, 17, _OFF),
        "chua_do_nat_hoa": (20, 17, _OFF),
        "nha_lau_xe_hoi": (30, 27, _OFF),
        "ngu_ong_bat_ca": (30, 27, _OFF),
        "pha_thien": (3, 1, _OFF),
    }
)

_VINAGAMES_CUOC = _cuoc_table(
    {
        **{slug: (v.diem, v.dich, v.enabled) for slug, v in _CHAN_VAN_VAN_CUOC.items()},
        "dia_u": (3, 1, _OFF),
        "chiu_u": (3, 1, _OFF),
        "u_bon": (3, 1, _OFF),
        "thien_khai": (5, 2, _ON),
        "chiu": (5, 2, _ON),
        "an_bon": (5, 2, _ON),
        "hoa_roi_cua_phat": (20, 17, _OFF),
        "ca_loi_san_dinh": (20, 17, _OFF),
    }
)

_THAPTHANH_CUOC = _cuoc_table(
    {
        **{slug: (v.diem, v.dich, v.enabled) for slug, v in _CHAN_VAN_VAN_CUOC.items()},
        "thien_u": (4, 1, _ON),
        "dia_u": (4, 1, _ON),
        "chiu_u": (4, 1, _OFF),
        "u_bon": (4, 1, _OFF),
        "thien_khai": (4, 1, _ON),
        "chiu": (4, 1, _ON),
        "an_bon": (4, 1, _ON),
        "hoa_roi_cua_phat": (24, 21, _ON),
        "ca_loi_san_dinh": (24, 21, _ON),
        "ca_nhay_dau_thuyen": (24, 21, _ON),
        "chua_do_nat_hoa": (24, 21, _ON),
        "nha_lau_xe_hoi": (34, 31, _ON),
        "ngu_ong_bat_ca": (34, 31, _ON),
    }
)

PRESETS: dict[str, Ruleset] = {
    "chan_van_van": Ruleset(
        preset="chan_van_van",
        preset_version=1,
        cuoc=_CHAN_VAN_VAN_CUOC,
        ga={
            "chi_bach_thu": 2,
            "bach_thu_chi": 1,
            "u_bon_bach_thu": 1,
            "thap_thanh": 1,
            "kinh_tu_chi": 1,
            "bach_dinh": 1,
            "tam_do": 1,
            "named_hands": 2,  # "as chì bạch thủ"
        },
        thap_thanh_formula="max_plus_dich",
        bao_payer="each",
        den_lang=DEN_LANG_DECLARED,
        thong_after_treo_tranh=True,
    ),
    "vinagames": Ruleset(
        preset="vinagames",
        preset_version=1,
        cuoc=_VINAGAMES_CUOC,
        ga={
            "chi_bach_thu": 1,
            "bach_thu_chi": 0,
            "u_bon_bach_thu": 0,
            "thap_thanh": 1,
            "kinh_tu_chi": 1,
            "bach_dinh": 1,
            "tam_do": 1,
            "named_hands": 0,
        },
        thap_thanh_formula="sum_points",
        bao_payer="each",
        den_lang=DEN_LANG_DECLARED,
        thong_after_treo_tranh=True,
    ),
    "thapthanh": Ruleset(
        preset="thapthanh",
        preset_version=1,
        cuoc=_THAPTHANH_CUOC,
        ga={
            "chi_bach_thu": 1,
            "bach_thu_chi": 0,
            "u_bon_bach_thu": 1,
            "thap_thanh": 1,
            "kinh_tu_chi": 1,
            "bach_dinh": 1,
            "tam_do": 1,
            "named_hands": 1,
        },
        thap_thanh_formula="max_plus_dich",
        bao_payer="last",
        den_lang=17,  # "tám đỏ đôi lèo", seed 004
        thong_after_treo_tranh=False,
    ),
}


def list_presets() -> list[dict[str, Any]]:
    """Every preset's full table, default first."""
    return [ruleset.to_dict() for ruleset in PRESETS.values()]


# --- building a ruleset from a spec ---------------------------------------------------------


def _check_int(key: str, value: Any, bounds: tuple[int, int]) -> int:
    """Return ``value`` if it is an int (not a bool) within ``bounds``, else refuse it."""
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesetError(key, f"must be an integer from {low} to {high}")
    if not low <= value <= high:
        raise RulesetError(key, f"must be an integer from {low} to {high}, got {value}")
    return value


def _check_bool(key: str, value: Any) -> bool:
    """Return ``value`` if it is a bool, else refuse it."""
    if not isinstance(value, bool):
        raise RulesetError(key, "must be true or false")
    return value


def _check_choice(key: str, value: Any, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``, else refuse it."""
    if not isinstance(value, str) or value not in choices:
        raise RulesetError(key, f"must be one of {', '.join(choices)}")
    return value


def _check_den_lang(key: str, value: Any) -> DenLang:
    """Return ``value`` if it is ``"declared"`` or a fixed number of points, else refuse it."""
    low, high = _DEN_LANG_RANGE
    message = f'must be "{DEN_LANG_DECLARED}" or an integer from {low} to {high}'
    if value == DEN_LANG_DECLARED and isinstance(value, str):
        return DEN_LANG_DECLARED
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RulesetError(key, message)
    return value


def _check_mapping(key: str, value: Any) -> Mapping[Any, Any]:
    """Return ``value`` if it is a mapping with string keys, else refuse it."""
    if not isinstance(value, Mapping):
        raise RulesetError(key, "must be an object")
    for name in value:
        if not isinstance(name, str):
            raise RulesetError(key, f"keys must be strings, got {shown(name)}")
    return value


def _apply_cuoc(base: Mapping[str, CuocValue], overrides: Any) -> dict[str, CuocValue]:
    """Apply ``overrides.cuoc`` to a preset's cước table."""
    entries = _check_mapping("overrides.cuoc", overrides)
    table = dict(base)
    for slug, entry in entries.items():
        key = f"overrides.cuoc.{slug}"
        if slug not in table:
            raise RulesetError(key, "unknown cước slug")
        current = table[slug]
        if entry == "off":
            if slug == "xuong":
                raise RulesetError(key, "xuong cannot be turned off: every win scores something")
            table[slug] = dataclasses.replace(current, enabled=False)
        elif entry == "on":
            table[slug] = dataclasses.replace(current, enabled=True)
        elif isinstance(entry, Mapping):
            _check_mapping(key, entry)
            unknown = sorted(set(entry) - _CUOC_FIELDS)
            if unknown:
                raise RulesetError(f"{key}.{unknown[0]}", "unknown field (use diem, dich, enabled)")
            if not entry:
                raise RulesetError(key, "give diem and/or dich")
            diem = _check_int(f"{key}.diem", entry.get("diem", current.diem), _POINTS_RANGE)
            dich = _check_int(f"{key}.dich", entry.get("dich", current.dich), _POINTS_RANGE)
            # Giving values turns the cước on unless the entry says otherwise.
            enabled = _check_bool(f"{key}.enabled", entry.get("enabled", True))
            if slug == "xuong" and not enabled:
                raise RulesetError(
                    f"{key}.enabled", "xuong cannot be turned off: every win scores something"
                )
            if dich > diem:
                raise RulesetError(f"{key}.dich", f"must not exceed diem ({diem}), got {dich}")
            table[slug] = CuocValue(diem=diem, dich=dich, enabled=enabled)
        else:
            raise RulesetError(key, 'must be "on", "off" or an object {"diem", "dich"}')
    return table


def _apply_ga(base: Mapping[str, int], overrides: Any) -> dict[str, int]:
    """Apply ``overrides.ga`` to a preset's gà table."""
    entries = _check_mapping("overrides.ga", overrides)
    table = dict(base)
    for pattern, count in entries.items():
        key = f"overrides.ga.{pattern}"
        if pattern not in table:
            raise RulesetError(key, f"unknown gà pattern (use {', '.join(GA_PATTERNS)})")
        table[pattern] = _check_int(key, count, _GA_COUNT_RANGE)
    return table


def build_ruleset(spec: Mapping[str, Any] | None = None) -> Ruleset:
    """Validate ``{"preset": NAME, "overrides": {...}}`` and build its ruleset.

    ``None`` or ``{}`` gives the default preset. Raises ``RulesetError`` naming the bad key.
    """
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise RulesetError("spec", 'must be an object {"preset", "overrides"}')
    for name in spec:
        if name not in _SPEC_KEYS:
            raise RulesetError(str(name), "unknown key (use preset, overrides)")
    preset_name = spec.get("preset", DEFAULT_PRESET)
    if not isinstance(preset_name, str) or preset_name not in PRESETS:
        raise RulesetError("preset", f"must be one of {', '.join(PRESETS)}")
    overrides = spec.get("overrides")
    if overrides is None:
        overrides = {}
    _check_mapping("overrides", overrides)
    base = PRESETS[preset_name]

    changes: dict[str, Any] = {}
    for name, value in overrides.items():
        key = f"overrides.{name}"
        if name == "cuoc":
            changes["cuoc"] = _apply_cuoc(base.cuoc, value)
        elif name == "ga":
            changes["ga"] = _apply_ga(base.ga, value)
        elif name in _BOOL_OPTIONS:
            changes[name] = _check_bool(key, value)
        elif name == "ga_points":
            changes[name] = _check_int(key, value, _GA_POINTS_RANGE)
        elif name == "thap_thanh_formula":
            changes[name] = _check_choice(key, value, THAP_THANH_FORMULAS)
        elif name == "bao_payer":
            changes[name] = _check_choice(key, value, BAO_PAYERS)
        elif name == "den_lang":
            changes[name] = _check_den_lang(key, value)
        else:
            raise RulesetError(key, f"unknown override (use {', '.join(OVERRIDE_KEYS)})")
    return dataclasses.replace(base, overrides=overrides, **changes)


def ruleset_from_stored(data: Any) -> Ruleset:
    """The ruleset a hand stored: its frozen table (``Ruleset.to_dict()``), or, for a record
    older than frozen tables (``{"preset", "overrides"}``: an old export, a hand dealt by an
    older process), that spec upcast with the presets as they stand."""
    if isinstance(data, Mapping) and "cuoc" not in data and set(data) <= _SPEC_KEYS:
        return build_ruleset(data)
    return Ruleset.from_dict(data)
