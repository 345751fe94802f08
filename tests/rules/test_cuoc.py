"""Cước detection (RULES.md §6): one positive and one near miss per slug, every subsumption, and
the cước each preset turns off. Hands are written as kind codes; every hand here is checked to be
a real win before its cước are detected."""

from __future__ import annotations

from typing import Any

import pytest

from games.rules.cards import KIND_OF, Counts, can_pair, counts_of
from games.rules.cuoc import WinFacts, detect_cuoc, facts_from_state, tied_readings
from games.rules.ruleset import PRESETS, build_ruleset
from games.rules.shape import wins_with
from games.rules.state import HandConfig, HandState, MatGroup, Phase, SeatState, WinInfo

CVV = PRESETS["chan_van_van"]
VINAGAMES = PRESETS["vinagames"]
THAPTHANH = PRESETS["thapthanh"]


def counts(codes: str) -> Counts:
    return counts_of(KIND_OF[c] for c in codes.split())


def group(codes: str, source: str = "discard") -> MatGroup:
    cards = tuple(KIND_OF[c] for c in codes.split())
    kind = "chiu" if len(cards) == 4 else can_pair(*cards)
    assert kind is not None, codes
    return MatGroup(kind, cards, cards[0], source, 0)


def facts(
    hand: str,
    card: str | None,
    source: str = "other_draw",
    mat: tuple[str, ...] = (),
    dealt: str | None = None,
    **kw: Any,
) -> WinFacts:
    """WinFacts of a real win: ``hand`` (19-set minus the mat, or the dealt 20), ``card``."""
    h = counts(hand)
    groups = tuple(group(g) for g in mat)
    k = None if card is None else KIND_OF[card]
    kw.setdefault("by_chiu", k is not None and h[k] == 3)
    f = WinFacts(
        hand=h,
        mat=groups,
        card=k,
        source=source,
        dealt=None if dealt is None else counts(dealt),
        **kw,
    )
    assert sum(h) + sum(len(g.cards) for g in groups) == (20 if k is None else 19)
    assert wins_with(h, f.mat_chan, k), "not a winning hand"
    return f


# A plain ù rộng: 7 chắn + 2 cạ + a lone 3N, two red cards, no Tôm or Lèo.
PLAIN = "2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 6V 6V 9S 9S 7V 7S 5V 5S 3N"
# Bạch thủ: 5 chắn + 4 cạ + a lone 8N (rank 8 otherwise empty), waiting on 8N only.
BACH_THU = "2V 2V 2N 2N 4V 4V 4S 4S 9S 9S 7V 7S 5V 5S 6N 6S 3N 3S 8N"
# Three 3N in hand: a chíu ù on 3N (8 chắn, so not bạch thủ).
CHIU = "3N 3N 3N 2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 9S 9S 7V 7S 5V 5S"
# An eaten chắn 3N on the mat and the third 3N in hand: ù bòn on the fourth.
U_BON_MAT = ("3N 3N",)
U_BON = "2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 9S 9S 7V 7S 5V 5S 3N"
# Chì bạch thủ on 2V with eaten chắn 5V: hoa rơi cửa phật.
HOA_ROI = "4V 4V 4S 4S 9S 9S 6N 6N 7V 7S 3N 3S 8N 8S 6V 6S 2V"


# --- xuong, thong, chi ---------------------------------------------------------------------


def test_xuong_is_a_win_with_no_other_cuoc() -> None:
    assert detect_cuoc(CVV, facts(PLAIN, "3V")) == {"xuong": 1}


def test_xuong_is_not_counted_beside_another_cuoc() -> None:
    assert detect_cuoc(CVV, facts(PLAIN, "3V", previous_winner=True)) == {"thong": 1}


def test_thong_when_the_same_player_won_the_previous_hand() -> None:
    assert detect_cuoc(CVV, facts(PLAIN, "3V", previous_winner=True))["thong"] == 1


def test_thong_not_without_the_previous_win() -> None:
    assert "thong" not in detect_cuoc(CVV, facts(PLAIN, "3V", previous_winner=False))


def test_chi_on_the_winners_own_stock_draw() -> None:
    assert detect_cuoc(CVV, facts(PLAIN, "3V", "own_draw")) == {"chi": 1}


def test_chi_not_on_a_card_another_seat_drew() -> None:
    assert detect_cuoc(CVV, facts(PLAIN, "3V", "other_draw")) == {"xuong": 1}


def test_chi_on_a_chiu_u_of_a_card_returned_into_the_winners_own_door() -> None:
    assert detect_cuoc(CVV, facts(CHIU, "3N", "chiu_own_door")) == {"chi": 1, "chiu_u": 1}


def test_chi_never_on_a_discard_even_by_chiu_u() -> None:
    assert detect_cuoc(CVV, facts(CHIU, "3N", "chiu")) == {"chiu_u": 1}
    assert detect_cuoc(CVV, facts(CHIU, "3N", "discard")) == {"chiu_u": 1}


# --- thien_u, dia_u ----------------------------------------------------------------------------

THIEN_U_20 = "2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 6V 6V 9S 9S 7V 7S 5V 5S 3N 3V"


def test_thien_u_the_dealer_wins_on_its_dealt_20() -> None:
    found = detect_cuoc(CVV, facts(THIEN_U_20, None, "dealt", dealt=THIEN_U_20))
    assert found == {"thien_u": 1}


def test_thien_u_not_for_the_same_cards_won_on_a_draw() -> None:
    assert "thien_u" not in detect_cuoc(CVV, facts(PLAIN, "3V", "other_draw"))


def test_dia_u_on_the_first_stock_card() -> None:
    assert detect_cuoc(CVV, facts(PLAIN, "3V", first_draw=True)) == {"dia_u": 1}


def test_dia_u_not_on_a_later_card() -> None:
    assert detect_cuoc(CVV, facts(PLAIN, "3V", first_draw=False)) == {"xuong": 1}


def test_dia_u_off_in_vinagames_is_not_detected() -> None:
    assert detect_cuoc(VINAGAMES, facts(PLAIN, "3V", first_draw=True)) == {"xuong": 1}


# --- chiu_u, u_bon ----------------------------------------------------------------------------


def test_chiu_u_is_a_win_by_chiu() -> None:
    assert detect_cuoc(CVV, facts(CHIU, "3N", "chiu")) == {"chiu_u": 1}


def test_chiu_u_not_when_only_two_copies_are_held() -> None:
    # PLAIN holds one 3N: the win on 3N makes a chắn, not a chíu.
    assert detect_cuoc(CVV, facts(PLAIN, "3N")) == {"xuong": 1}


def test_chiu_u_off_is_counted_as_a_chiu_vinagames() -> None:
    assert detect_cuoc(VINAGAMES, facts(CHIU, "3N", "chiu")) == {"chiu": 1}


def test_chiu_u_off_is_counted_as_a_chiu_thapthanh() -> None:
    assert detect_cuoc(THAPTHANH, facts(CHIU, "3N", "chiu")) == {"chiu": 1}


def test_u_bon_on_the_fourth_copy_of_an_eaten_chan() -> None:
    assert detect_cuoc(CVV, facts(U_BON, "3N", mat=U_BON_MAT)) == {"u_bon": 1}


def test_u_bon_not_on_another_card_of_the_rank() -> None:
    # Same mat chắn 3N and lone 3N, but the win is on 3V (a cạ): no ù bòn.
    assert detect_cuoc(CVV, facts(U_BON, "3V", mat=U_BON_MAT)) == {"xuong": 1}


def test_u_bon_not_when_the_chan_is_in_hand_that_is_a_chiu_u() -> None:
    found = detect_cuoc(CVV, facts(CHIU, "3N", "other_draw"))
    assert found == {"chiu_u": 1}


def test_u_bon_off_is_counted_as_an_an_bon() -> None:
    f = facts(U_BON, "3N", mat=U_BON_MAT)
    assert detect_cuoc(VINAGAMES, f) == {"an_bon": 1}
    assert detect_cuoc(THAPTHANH, f) == {"an_bon": 1}


# --- bach_thu, bach_thu_chi ----------------------------------------------------------------


def test_bach_thu_5_chan_4_ca_and_one_lone_card() -> None:
    assert detect_cuoc(CVV, facts(BACH_THU, "8N")) == {"bach_thu": 1}


def test_bach_thu_not_on_a_ba_dau_wait() -> None:
    # 5 chắn + 3 cạ + ba đầu 8V 8N 8S: the win on 8N has 6 chắn 4 cạ but waited on the rank.
    ba_dau = "2V 2V 2N 2N 4V 4V 4S 4S 9S 9S 7V 7S 5V 5S 6N 6S 8V 8N 8S"
    assert detect_cuoc(CVV, facts(ba_dau, "8N")) == {"xuong": 1}


def test_bach_thu_chi_is_a_bach_thu_win_on_chi_chi() -> None:
    hand = BACH_THU.replace("8N", "CC")
    assert detect_cuoc(CVV, facts(hand, "CC")) == {"bach_thu_chi": 1}


def test_bach_thu_chi_replaces_bach_thu() -> None:
    found = detect_cuoc(CVV, facts(BACH_THU.replace("8N", "CC"), "CC", "own_draw"))
    assert found == {"chi": 1, "bach_thu_chi": 1}


def test_bach_thu_counts_mat_chan() -> None:
    # Two of the five chắn eaten, one cạ on the mat: still bạch thủ.
    hand = "4V 4V 4S 4S 9S 9S 5V 5S 6N 6S 3N 3S 8N"
    assert detect_cuoc(CVV, facts(hand, "8N", mat=("2V 2V", "2N 2N", "7V 7S"))) == {"bach_thu": 1}


def test_bach_thu_on_a_chiu_u() -> None:
    # 5 chắn (one of them 4N 4N) + 4 cạ + the third 4N: the chíu on 4N makes 6 chắn.
    hand = "4N 4N 4N CC CC 3V 3V 3S 3S 7N 7N 9V 9N 8S 8N 2V 2N 5V 5S"
    assert detect_cuoc(CVV, facts(hand, "4N", "chiu")) == {
        "chiu_u": 1,
        "bach_thu": 1,
        "tom": 2,
        "leo": 1,
    }


# --- thap_thanh, colours ---------------------------------------------------------------------

THAP_THANH = "2V 2V 2N 2N 4V 4V 4S 4S 9S 9S 7V 7V 5V 5V 6N 6N 3N 3N 8N"


def test_thap_thanh_ten_chan() -> None:
    assert detect_cuoc(CVV, facts(THAP_THANH, "8N")) == {"thap_thanh": 1}


def test_thap_thanh_not_with_a_ca() -> None:
    assert detect_cuoc(CVV, facts(THAP_THANH, "8V")) == {"xuong": 1}


def test_thap_thanh_counts_a_chiu_as_two_chan() -> None:
    hand = "2V 2V 2N 2N 4V 4V 4S 4S 9S 9S 7V 7V 5V 5V 8N"
    found = detect_cuoc(CVV, facts(hand, "8N", mat=("6N 6N 6N 6N",)))
    assert found == {"thap_thanh": 1, "chiu": 1}


def test_bach_dinh_all_twenty_cards_black() -> None:
    hand = PLAIN.replace("9S 9S", "9N 9N")
    assert detect_cuoc(CVV, facts(hand, "3V")) == {"bach_dinh": 1}


def test_bach_dinh_not_with_one_red_pair() -> None:
    assert "bach_dinh" not in detect_cuoc(CVV, facts(PLAIN, "3V"))


def test_bach_dinh_counts_the_mat() -> None:
    hand = "2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 6V 6V 7V 7S 5V 5S 3N"
    assert detect_cuoc(CVV, facts(hand, "3V", mat=("9S 9S",))) == {"xuong": 1}
    assert detect_cuoc(CVV, facts(hand, "3V", mat=("9N 9N",))) == {"bach_dinh": 1}


TAM_DO = "8V 8V 8S 8S 9S 9S 9V 9V 2V 2V 2N 2N 4V 4V 7V 7S 5V 5S 3N"


def test_tam_do_exactly_eight_red() -> None:
    assert detect_cuoc(CVV, facts(TAM_DO, "3V")) == {"tam_do": 1}


def test_tam_do_not_with_seven_red() -> None:
    hand = "8V 8N 8S 8S 9S 9S 9V 9V 2V 2V 2N 2N 4V 4V 4S 4S 7V 7S 3N"
    assert detect_cuoc(CVV, facts(hand, "3V")) == {"xuong": 1}


def test_tam_do_counts_the_winning_card_and_the_mat() -> None:
    # Five red in hand, two on the mat, the eighth is the winning card.
    hand = "8V 8V 8S 8S 2V 2V 2N 2N 4V 4V 7V 7S 5V 5S 9V"
    assert detect_cuoc(CVV, facts(hand, "9V", mat=("9S 9S", "4S 4S"))) == {"tam_do": 1}
    assert detect_cuoc(CVV, facts(hand, "9V", mat=("9N 9N", "4S 4S"))) == {"xuong": 1}


KINH_TU_CHI = "CC CC CC CC 2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 7V 7S 5V 5S 3N"


def test_kinh_tu_chi_four_chi_chi_and_sixteen_black() -> None:
    assert detect_cuoc(CVV, facts(KINH_TU_CHI, "3V")) == {"kinh_tu_chi": 1}


def test_kinh_tu_chi_not_with_another_red_card() -> None:
    hand = KINH_TU_CHI.replace("5N 5N", "9S 9S")
    assert detect_cuoc(CVV, facts(hand, "3V")) == {"xuong": 1}


# --- tom, leo ------------------------------------------------------------------------------------


def test_tom_one_set_of_3v_3s_7n() -> None:
    hand = "2V 2V 2N 2N 4V 4V 4S 4S 9S 9S 6V 6V 3V 3V 3S 3N 7N 7S 5N"
    assert detect_cuoc(CVV, facts(hand, "5N")) == {"tom": 1}


def test_tom_two_sets() -> None:
    hand = "3V 3V 3S 3S 7N 7N 2V 2V 2N 2N 4V 4V 9S 9S 7V 7S 5V 5S 6N"
    assert detect_cuoc(CVV, facts(hand, "6N")) == {"tom": 2}


def test_tom_not_without_7n() -> None:
    hand = "2V 2V 2N 2N 4V 4V 4S 4S 9S 9S 6V 6V 3V 3V 3S 3N 7V 7S 5N"
    assert detect_cuoc(CVV, facts(hand, "5N")) == {"xuong": 1}


LEO = "CC CC 9V 9N 8S 8N 2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 6V 6V 3N"


def test_leo_one_set_of_cc_9v_8s() -> None:
    assert detect_cuoc(CVV, facts(LEO, "3V")) == {"leo": 1}


def test_leo_not_with_8v_instead_of_8s() -> None:
    hand = LEO.replace("8S", "8V")
    assert detect_cuoc(CVV, facts(hand, "3V")) == {"xuong": 1}


def test_leo_counts_mat_cards() -> None:
    hand = "CC CC 8S 8N 2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 6V 6V 3N"
    assert detect_cuoc(CVV, facts(hand, "3V", mat=("9V 9N",))) == {"leo": 1}


# --- thien_khai, chiu, an_bon, pha_thien ---------------------------------------------------------

FOUR_2V = "2V 2V 2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 9S 9S 7V 7S 5V 5S 3N"


def test_thien_khai_a_kind_dealt_four_fold_still_held() -> None:
    assert detect_cuoc(CVV, facts(FOUR_2V, "3V", dealt=FOUR_2V)) == {"thien_khai": 1}


def test_thien_khai_not_when_the_fourth_copy_came_later() -> None:
    dealt = FOUR_2V.replace("2V 2V 2V 2V", "2V 2V 2V 8N")
    assert detect_cuoc(CVV, facts(FOUR_2V, "3V", dealt=dealt)) == {"xuong": 1}


def test_thien_khai_needs_the_dealt_hand() -> None:
    assert detect_cuoc(CVV, facts(FOUR_2V, "3V")) == {"xuong": 1}


def test_thien_khai_on_a_thien_u_counts_every_four_fold_kind() -> None:
    dealt = "2V 2V 2V 2V 4S 4S 4S 4S 5N 5N 9S 9S 6N 6N 7V 7S 5V 5S 3N 3V"
    assert detect_cuoc(CVV, facts(dealt, None, "dealt", dealt=dealt)) == {
        "thien_u": 1,
        "thien_khai": 2,
    }


CHIU_MAT = "2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 9S 9S 7V 7S 3N"


def test_chiu_one_chiu_on_the_mat() -> None:
    assert detect_cuoc(CVV, facts(CHIU_MAT, "3V", mat=("6V 6V 6V 6V",))) == {"chiu": 1}


def test_chiu_two_chius() -> None:
    hand = "2N 2N 4S 4S 5N 5N 9S 9S 7V 7S 3N"
    found = detect_cuoc(CVV, facts(hand, "3V", mat=("6V 6V 6V 6V", "2V 2V 2V 2V")))
    assert found == {"chiu": 2}


def test_chiu_u_is_not_counted_in_chiu() -> None:
    hand = "3N 3N 3N 2V 2V 2N 2N 4V 4V 4S 4S 9S 9S 7V 7S"
    found = detect_cuoc(CVV, facts(hand, "3N", "chiu", mat=("6V 6V 6V 6V",)))
    assert found == {"chiu_u": 1, "chiu": 1}


def test_chiu_u_off_adds_to_the_chius_on_the_mat() -> None:
    hand = "3N 3N 3N 2V 2V 2N 2N 4V 4V 4S 4S 9S 9S 7V 7S"
    found = detect_cuoc(VINAGAMES, facts(hand, "3N", "chiu", mat=("6V 6V 6V 6V",)))
    assert found == {"chiu": 2}


def test_an_bon_two_eaten_chan_of_one_kind() -> None:
    assert detect_cuoc(CVV, facts(CHIU_MAT, "3V", mat=("6V 6V", "6V 6V"))) == {"an_bon": 1}


def test_an_bon_not_for_a_chiu() -> None:
    assert "an_bon" not in detect_cuoc(CVV, facts(CHIU_MAT, "3V", mat=("6V 6V 6V 6V",)))


def test_an_bon_not_for_one_eaten_chan_and_one_in_hand() -> None:
    hand = CHIU_MAT.replace("7V 7S", "6V 6V")
    assert detect_cuoc(CVV, facts(hand, "3V", mat=("6V 6V", "7V 7S"))) == {"xuong": 1}


def test_u_bon_is_not_counted_in_an_bon() -> None:
    hand = "2N 2N 4V 4V 4S 4S 5N 5N 9S 9S 7V 7S 5V 5S 3N"
    found = detect_cuoc(CVV, facts(hand, "3N", mat=("3N 3N", "2V 2V")))
    assert found == {"u_bon": 1}


def test_an_bon_beside_u_bon_of_another_kind() -> None:
    hand = "4V 4V 4S 4S 5N 5N 9S 9S 7V 7S 5V 5S 3N"
    found = detect_cuoc(CVV, facts(hand, "3N", mat=("3N 3N", "2V 2V", "2V 2V")))
    assert found == {"u_bon": 1, "an_bon": 1}


PHA_THIEN_ON = build_ruleset({"overrides": {"cuoc": {"pha_thien": "on"}}})
NO_CHAN_DEALT = "2V 2N 2S 3V 3N 4V 4N 4S 5V 5N 5S 6V 6N 7V 7S 8N 9S 9N 3S"


def test_pha_thien_dealt_hand_had_no_chan() -> None:
    assert detect_cuoc(PHA_THIEN_ON, facts(PLAIN, "3V", dealt=NO_CHAN_DEALT)) == {"pha_thien": 1}


def test_pha_thien_not_with_one_dealt_chan() -> None:
    dealt = NO_CHAN_DEALT.replace("3S", "9S")
    assert detect_cuoc(PHA_THIEN_ON, facts(PLAIN, "3V", dealt=dealt)) == {"xuong": 1}


def test_pha_thien_off_by_default() -> None:
    assert detect_cuoc(CVV, facts(PLAIN, "3V", dealt=NO_CHAN_DEALT)) == {"xuong": 1}


# --- named hands -----------------------------------------------------------------------------


def test_hoa_roi_cua_phat_eaten_5v_and_chi_bach_thu_on_2v() -> None:
    f = facts(HOA_ROI, "2V", "own_draw", mat=("5V 5V",))
    assert detect_cuoc(CVV, f) == {"hoa_roi_cua_phat": 1}


def test_hoa_roi_cua_phat_not_when_the_5v_chan_is_in_hand() -> None:
    hand = HOA_ROI.replace("4V 4V", "5V 5V")
    f = facts(hand, "2V", "own_draw", mat=("4V 4V",))
    assert detect_cuoc(CVV, f) == {"chi": 1, "bach_thu": 1}


def test_hoa_roi_cua_phat_not_without_chi() -> None:
    f = facts(HOA_ROI, "2V", "other_draw", mat=("5V 5V",))
    assert detect_cuoc(CVV, f) == {"bach_thu": 1}


def test_hoa_roi_cua_phat_accepts_a_chiu_of_5v_seed_003() -> None:
    hand = "4S 4S 9S 9S 6N 6N 7V 7S 3N 3S 8N 8S 6V 6S 2V"
    f = facts(hand, "2V", "own_draw", mat=("5V 5V 5V 5V",))
    assert detect_cuoc(CVV, f) == {"hoa_roi_cua_phat": 1, "chiu": 1}


def test_hoa_roi_cua_phat_off_in_vinagames_leaves_chi_and_bach_thu() -> None:
    f = facts(HOA_ROI, "2V", "own_draw", mat=("5V 5V",))
    assert detect_cuoc(VINAGAMES, f) == {"chi": 1, "bach_thu": 1}


CA_LOI = "4V 4V 4S 4S 9S 9S 6N 6N 7V 7S 3N 3S 2N 2S 6V 6S 8V"


def test_ca_loi_san_dinh_eaten_5v_and_chi_bach_thu_on_8v() -> None:
    f = facts(CA_LOI, "8V", "own_draw", mat=("5V 5V",))
    assert detect_cuoc(CVV, f) == {"ca_loi_san_dinh": 1}


def test_ca_loi_san_dinh_not_on_2v() -> None:
    # The same mat with a win on 2V is hoa rơi cửa phật, not cá lội sân đình.
    assert "ca_loi_san_dinh" not in detect_cuoc(
        CVV, facts(HOA_ROI, "2V", "own_draw", mat=("5V 5V",))
    )


def test_ca_nhay_dau_thuyen_eaten_5s_and_chi_bach_thu_on_8v_thapthanh() -> None:
    f = facts(CA_LOI, "8V", "own_draw", mat=("5S 5S",))
    assert detect_cuoc(THAPTHANH, f) == {"ca_nhay_dau_thuyen": 1}


def test_ca_nhay_dau_thuyen_off_in_chan_van_van() -> None:
    f = facts(CA_LOI, "8V", "own_draw", mat=("5S 5S",))
    assert detect_cuoc(CVV, f) == {"chi": 1, "bach_thu": 1}


def test_chua_do_nat_hoa_eaten_2v_and_chi_bach_thu_on_5v_thapthanh() -> None:
    hand = "4V 4V 4S 4S 9S 9S 6N 6N 7V 7S 3N 3S 8N 8S 6V 6S 5V"
    f = facts(hand, "5V", "own_draw", mat=("2V 2V",))
    assert detect_cuoc(THAPTHANH, f) == {"chua_do_nat_hoa": 1}
    assert detect_cuoc(CVV, f) == {"chi": 1, "bach_thu": 1}


def test_chua_do_nat_hoa_not_with_an_eaten_2n() -> None:
    hand = "4V 4V 4S 4S 9S 9S 6N 6N 7V 7S 3N 3S 8N 8S 6V 6S 5V"
    f = facts(hand, "5V", "own_draw", mat=("2N 2N",))
    assert detect_cuoc(THAPTHANH, f) == {"chi": 1, "bach_thu": 1}


NHA_LAU = "4S 4S 9S 9S 6N 6N 7V 7S 3N 3S 8N 8S 6V 6S 2V"


def test_nha_lau_xe_hoi_eaten_5v_and_4v_and_chi_bach_thu_on_2v() -> None:
    f = facts(NHA_LAU, "2V", "own_draw", mat=("5V 5V", "4V 4V"))
    assert detect_cuoc(THAPTHANH, f) == {"nha_lau_xe_hoi": 1}


def test_nha_lau_xe_hoi_off_falls_back_to_hoa_roi_cua_phat() -> None:
    f = facts(NHA_LAU, "2V", "own_draw", mat=("5V 5V", "4V 4V"))
    assert detect_cuoc(CVV, f) == {"hoa_roi_cua_phat": 1}


def test_nha_lau_xe_hoi_wins_a_tie_with_hoa_roi_cua_phat() -> None:
    even = build_ruleset(
        {
            "preset": "thapthanh",
            "overrides": {"cuoc": {"nha_lau_xe_hoi": {"diem": 24, "dich": 21}}},
        }
    )
    f = facts(NHA_LAU, "2V", "own_draw", mat=("5V 5V", "4V 4V"))
    assert detect_cuoc(even, f) == {"nha_lau_xe_hoi": 1}
    # ... and hoa rơi cửa phật, tied with it in (điểm, dịch), is as right (§6)
    assert tied_readings(even, f) == ({"hoa_roi_cua_phat": 1},)


NGU_ONG = "4S 4S 9S 9S 6N 6N 7V 7S 3N 3S 2N 2S 6V 6S 8V"


def test_ngu_ong_bat_ca_eaten_cc_and_5s_and_chi_bach_thu_on_8v() -> None:
    f = facts(NGU_ONG, "8V", "own_draw", mat=("CC CC", "5S 5S"))
    assert detect_cuoc(THAPTHANH, f) == {"ngu_ong_bat_ca": 1}


def test_ngu_ong_bat_ca_not_without_the_cc_chan_is_ca_nhay_dau_thuyen() -> None:
    hand = NGU_ONG.replace("4S 4S", "CC CC")
    f = facts(hand, "8V", "own_draw", mat=("4S 4S", "5S 5S"))
    assert detect_cuoc(THAPTHANH, f) == {"ca_nhay_dau_thuyen": 1}


def test_named_hands_keep_only_the_highest_scoring() -> None:
    # Eaten 5V, 5S and CC + chì bạch thủ on 8V: cá lội, cá nhảy and ngư ông all hold.
    hand = "9S 9S 6N 6N 7V 7S 3N 3S 2N 2S 6V 6S 8V"
    f = facts(hand, "8V", "own_draw", mat=("CC CC", "5S 5S", "5V 5V"))
    assert detect_cuoc(THAPTHANH, f) == {"ngu_ong_bat_ca": 1}
    assert detect_cuoc(CVV, f) == {"ca_loi_san_dinh": 1}
    overrides = {"ngu_ong_bat_ca": "off", "ca_nhay_dau_thuyen": {"diem": 25, "dich": 21}}
    higher = build_ruleset({"preset": "thapthanh", "overrides": {"cuoc": overrides}})
    assert detect_cuoc(higher, f) == {"ca_nhay_dau_thuyen": 1}


# Eaten chắn 5V and 5S + chì bạch thủ on 8V: cá lội sân đình and cá nhảy đầu thuyền both hold.
CA_LOI_CA_NHAY = "4V 4V 4S 4S 9S 9S 7V 7S 3N 3S 2N 2S 6V 6S 8V"


def test_tied_named_hands_the_other_is_an_equally_right_reading_thapthanh() -> None:
    f = facts(CA_LOI_CA_NHAY, "8V", "own_draw", mat=("5V 5V", "5S 5S"))
    # Both are 24/21 in thapthanh: the true cước keeps the first in the rules' order, and the
    # other is a reading as right as it, with every other cước of the win kept.
    assert detect_cuoc(THAPTHANH, f) == {"ca_loi_san_dinh": 1}
    assert tied_readings(THAPTHANH, f) == ({"ca_nhay_dau_thuyen": 1},)
    f = facts(CA_LOI_CA_NHAY, "8V", "own_draw", mat=("5V 5V", "5S 5S"), previous_winner=True)
    assert tied_readings(THAPTHANH, f) == ({"thong": 1, "ca_nhay_dau_thuyen": 1},)


def test_tied_named_hands_no_other_reading_when_only_one_is_played() -> None:
    # chan_van_van leaves cá nhảy đầu thuyền off: cá lội sân đình alone, nothing tied.
    f = facts(CA_LOI_CA_NHAY, "8V", "own_draw", mat=("5V 5V", "5S 5S"))
    assert detect_cuoc(CVV, f) == {"ca_loi_san_dinh": 1}
    assert tied_readings(CVV, f) == ()


def test_tied_named_hands_no_other_reading_when_they_differ_in_dich() -> None:
    overrides = {"ca_nhay_dau_thuyen": {"diem": 24, "dich": 20}}
    uneven = build_ruleset({"preset": "thapthanh", "overrides": {"cuoc": overrides}})
    f = facts(CA_LOI_CA_NHAY, "8V", "own_draw", mat=("5V 5V", "5S 5S"))
    assert detect_cuoc(uneven, f) == {"ca_loi_san_dinh": 1}
    assert tied_readings(uneven, f) == ()


def test_tied_named_hands_beaten_by_a_higher_one_leave_no_other_reading() -> None:
    # Ngư ông bắt cá (34/31) holds too: cá lội and cá nhảy, tied below it, are not kept.
    hand = "9S 9S 6N 6N 7V 7S 3N 3S 2N 2S 6V 6S 8V"
    f = facts(hand, "8V", "own_draw", mat=("CC CC", "5S 5S", "5V 5V"))
    assert detect_cuoc(THAPTHANH, f) == {"ngu_ong_bat_ca": 1}
    assert tied_readings(THAPTHANH, f) == ()


def test_tied_named_hands_none_without_chi() -> None:
    f = facts(CA_LOI_CA_NHAY, "8V", "other_draw", mat=("5V 5V", "5S 5S"))
    assert detect_cuoc(THAPTHANH, f) == {"bach_thu": 1}
    assert tied_readings(THAPTHANH, f) == ()


def test_named_hand_keeps_other_cuoc() -> None:
    f = facts(HOA_ROI, "2V", "own_draw", mat=("5V 5V",), previous_winner=True, first_draw=True)
    assert detect_cuoc(CVV, f) == {"thong": 1, "dia_u": 1, "hoa_roi_cua_phat": 1}


# --- rulesets turning cước off ------------------------------------------------------------------


def test_a_cuoc_turned_off_is_not_detected() -> None:
    no_tom = build_ruleset({"overrides": {"cuoc": {"tom": "off"}}})
    hand = "3V 3V 3S 3S 7N 7N 2V 2V 2N 2N 4V 4V 9S 9S 7V 7S 5V 5S 6N"
    assert detect_cuoc(no_tom, facts(hand, "6N", "own_draw")) == {"chi": 1}
    assert detect_cuoc(no_tom, facts(hand, "6N")) == {"xuong": 1}


def test_bach_thu_chi_turned_off_does_not_become_bach_thu() -> None:
    off = build_ruleset({"overrides": {"cuoc": {"bach_thu_chi": "off"}}})
    assert detect_cuoc(off, facts(BACH_THU.replace("8N", "CC"), "CC")) == {"xuong": 1}


def test_default_ruleset_when_none() -> None:
    assert detect_cuoc(None, facts(CHIU, "3N", "chiu")) == {"chiu_u": 1}


# --- facts from a hand state ---------------------------------------------------------------------


def test_facts_from_state_reads_the_winner_and_thong() -> None:
    hand = counts(U_BON)
    mat = (group("3N 3N"),)
    seat = SeatState(hand=hand, dealt=counts(PLAIN), mat=mat)
    other = SeatState(hand=counts(PLAIN), dealt=counts(PLAIN))
    state = HandState(
        config=HandConfig(n_seats=2, previous_winner=1),
        dealer=0,
        seats=(other, seat),
        doors=((), ()),
        stock=(),
        phase=Phase.DECLARE,
        turn=1,
        win=WinInfo(1, KIND_OF["3N"], "own_draw", False, True, False),
    )
    f = facts_from_state(state)
    assert f == WinFacts(hand, mat, KIND_OF["3N"], "own_draw", False, True, True, counts(PLAIN))
    assert detect_cuoc(CVV, f) == {"thong": 1, "chi": 1, "dia_u": 1, "u_bon": 1}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_detected_cuoc_is_enabled_in_its_preset(preset: str) -> None:
    rs = PRESETS[preset]
    samples = [
        facts(CHIU, "3N", "chiu"),
        facts(U_BON, "3N", mat=U_BON_MAT),
        facts(HOA_ROI, "2V", "own_draw", mat=("5V 5V",)),
        facts(PLAIN, "3V", first_draw=True, previous_winner=True),
    ]
    for f in samples:
        assert all(rs.cuoc[slug].enabled for slug in detect_cuoc(rs, f))
