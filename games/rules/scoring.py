"""Points of a win: base (điểm and dịch) plus gà, per RULES.md §7.

The calculator scores any cước map — a true cước or a declaration — under a ruleset. It does
not detect cước; a cước the ruleset turns off simply scores nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from games.rules.errors import InvalidField, gettext_noop
from games.rules.ruleset import (
    CUOC_MAX_COUNT,
    CUOC_SLUGS,
    GA_PATTERNS,
    NAMED_HANDS,
    Ruleset,
)

__all__ = [
    "Score",
    "base_points",
    "ga_patterns",
    "normalize_cuoc",
    "score",
]


@dataclass(frozen=True, slots=True)
class Score:
    """The points of a win: ``base`` from điểm/dịch, ``ga`` = gà points, ``total`` their sum."""

    base: int
    ga: int
    total: int

    def to_dict(self) -> dict[str, int]:
        """The JSON form ``{"base", "ga", "total"}``."""
        return {"base": self.base, "ga": self.ga, "total": self.total}


def normalize_cuoc(cuoc: Mapping[str, int]) -> dict[str, int]:
    """Validate a slug → count map and return it in declaration order without zero counts.

    Raises :class:`~games.rules.errors.InvalidField` (code ``invalid_cuoc``, field
    ``cuoc.<slug>``) for an unknown slug, a count that is not a
    non-negative integer, or a count above what one win can hold (``CUOC_MAX_COUNT``).
    """
    if not isinstance(cuoc, Mapping):
        raise InvalidField("cuoc", "invalid_cuoc", gettext_noop("must be an object {slug: count}"))
    for slug, count in cuoc.items():
        at = f"cuoc.{slug}"
        if slug not in CUOC_MAX_COUNT:
            raise InvalidField(at, "invalid_cuoc", gettext_noop("unknown cước slug"))
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidField(
                at, "invalid_cuoc", gettext_noop("count must be a non-negative integer")
            )
        if count > CUOC_MAX_COUNT[slug]:
            raise InvalidField(
                at,
                "invalid_cuoc",
                gettext_noop("count must be at most %(most)s"),
                most=CUOC_MAX_COUNT[slug],
            )
    return {slug: cuoc[slug] for slug in CUOC_SLUGS if cuoc.get(slug, 0) > 0}


def _playable(ruleset: Ruleset, cuoc: Mapping[str, int]) -> dict[str, int]:
    """The normalized cước map without the cước the ruleset turns off."""
    return {slug: n for slug, n in normalize_cuoc(cuoc).items() if ruleset.cuoc[slug].enabled}


def _base(ruleset: Ruleset, played: Mapping[str, int]) -> int:
    """Base points of an already normalized and filtered cước map."""
    if not played:
        return 0
    values = ruleset.cuoc
    if ruleset.thap_thanh_formula == "sum_points" and "thap_thanh" in played:
        return sum(values[slug].diem * n for slug, n in played.items())
    # The largest điểm counts once at điểm; among equal điểm the one with the smaller dịch is
    # the largest, so the others add their (larger) dịch. Only xuong: its điểm, 2.
    largest = max(played, key=lambda slug: (values[slug].diem, -values[slug].dich))
    dich_of_all = sum(values[slug].dich * n for slug, n in played.items())
    return values[largest].diem - values[largest].dich + dich_of_all


def base_points(ruleset: Ruleset, cuoc: Mapping[str, int]) -> int:
    """Base points (điểm of the largest cước + dịch of the others, or the sum_points formula)."""
    return _base(ruleset, _playable(ruleset, cuoc))


def _ga_patterns(ruleset: Ruleset, played: Mapping[str, int]) -> dict[str, int]:
    """Gà per pattern of an already normalized and filtered cước map (zeros left out)."""
    if not ruleset.ga_enabled:
        return {}

    def has(slug: str) -> bool:
        return played.get(slug, 0) > 0

    bach_thu_win = has("bach_thu") or has("bach_thu_chi")
    occurrences = {
        # "chì bạch thủ chi" earns the chì-bạch-thủ gà and the bạch-thủ-chi gà (seed 001).
        "chi_bach_thu": int(has("chi") and bach_thu_win),
        "bach_thu_chi": int(has("bach_thu_chi")),
        # "ù bòn bạch thủ" or "ù bòn bạch thủ chi" (seed 001).
        "u_bon_bach_thu": int(has("u_bon") and bach_thu_win),
        "thap_thanh": int(has("thap_thanh")),
        "kinh_tu_chi": int(has("kinh_tu_chi")),
        "bach_dinh": int(
            has("bach_dinh") and (has("tom") or not ruleset.ga_bach_dinh_requires_tom)
        ),
        "tam_do": int(has("tam_do") and (has("leo") or not ruleset.ga_tam_do_requires_leo)),
        "named_hands": sum(1 for slug in NAMED_HANDS if has(slug)),
    }
    gained = {pattern: ruleset.ga[pattern] * occurrences[pattern] for pattern in GA_PATTERNS}
    return {pattern: count for pattern, count in gained.items() if count}


def ga_patterns(ruleset: Ruleset, cuoc: Mapping[str, int]) -> dict[str, int]:
    """The gà a cước map earns, per pattern (empty when the table does not play gà)."""
    return _ga_patterns(ruleset, _playable(ruleset, cuoc))


def score(ruleset: Ruleset, cuoc: Mapping[str, int]) -> Score:
    """Score a cước map (true or declared) under ``ruleset``: base + ``ga_points`` × gà."""
    played = _playable(ruleset, cuoc)
    base = _base(ruleset, played)
    ga = ruleset.ga_points * sum(_ga_patterns(ruleset, played).values())
    return Score(base=base, ga=ga, total=base + ga)
