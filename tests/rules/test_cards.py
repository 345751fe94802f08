"""RULES.md §1: kinds, colours, Tôm and Lèo sets, chắn and cạ."""

from __future__ import annotations

from games.rules.cards import CODES, KIND_OF, LEO, RED_CODES, TOM, can_pair, display_name, is_red


def test_twenty_five_kinds_in_rank_then_suit_order() -> None:
    assert CODES[:3] == ("2V", "2N", "2S") and CODES[-1] == "CC" and len(CODES) == 25


def test_red_kinds() -> None:
    assert {c for c in CODES if is_red(KIND_OF[c])} == set(RED_CODES)
    assert {"CC", "8V", "8S", "9V", "9S"} == RED_CODES


def test_tom_and_leo_sets() -> None:
    assert {CODES[k] for k in TOM} == {"3V", "3S", "7N"}
    assert {CODES[k] for k in LEO} == {"CC", "9V", "8S"}


def test_chan_and_ca() -> None:
    assert can_pair(KIND_OF["3V"], KIND_OF["3V"]) == "chan"
    assert can_pair(KIND_OF["7N"], KIND_OF["7S"]) == "ca"
    assert can_pair(KIND_OF["CC"], KIND_OF["CC"]) == "chan"
    assert can_pair(KIND_OF["7N"], KIND_OF["8N"]) is None


def test_chi_chi_never_forms_a_ca() -> None:
    assert all(can_pair(KIND_OF["CC"], k) is None for k in range(24))


def test_display_names() -> None:
    assert display_name(KIND_OF["3V"]) == "Tam Vạn"
    assert display_name(KIND_OF["7N"]) == "Thất Văn"
    assert display_name(KIND_OF["8S"]) == "Bát Sách"
    assert display_name(KIND_OF["CC"]) == "Chi Chi"
