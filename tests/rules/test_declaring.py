"""Xướng (RULES.md §8): judging a declaration, and declaring through the engine to the end of a
hand."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from rules_builders import (
    NAMED_TIE_HANDS,
    NAMED_TIE_MOVES,
    NAMED_TIE_STOCK,
    bach_thu_seat,
    make_deck,
    play,
)

from games.rules.cards import KIND_OF, N_KINDS
from games.rules.cuoc import NAMED_HAND_RULES, WinFacts, detect_cuoc, tied_readings
from games.rules.deck import CANONICAL_DECK
from games.rules.declaring import auto_declaration, judge
from games.rules.engine import apply, legal_moves, new_hand
from games.rules.errors import IllegalMove, InvalidInput
from games.rules.moves import Declare, Discard, Draw, U
from games.rules.results import Declaration
from games.rules.ruleset import NAMED_HANDS, PRESETS, Ruleset, build_ruleset
from games.rules.scoring import score
from games.rules.state import HandConfig, HandState, Phase

CVV = PRESETS["chan_van_van"]
MUST_DECLARE_BACH_THU = build_ruleset({"overrides": {"bach_thu_must_be_declared": True}})


# --- judge -----------------------------------------------------------------------------------------


def test_judge_dung_when_the_declaration_equals_the_true_cuoc() -> None:
    true = {"chi": 1, "tam_do": 1, "tom": 1, "leo": 1, "chiu": 1}
    assert judge(true, dict(true), CVV) == "dung"


def test_judge_dung_ignores_zero_counts() -> None:
    assert judge({"chi": 1}, {"chi": 1, "tom": 0}, CVV) == "dung"


def test_judge_thieu_when_a_cuoc_is_left_out() -> None:
    assert judge({"chi": 1, "tam_do": 1, "leo": 1}, {"tam_do": 1, "leo": 1}, CVV) == "thieu"


def test_judge_thieu_when_a_multiple_cuoc_is_declared_fewer_times() -> None:
    assert judge({"chiu_u": 1, "bach_thu": 1, "tom": 2}, {"chiu_u": 1, "tom": 1}, CVV) == "thieu"


def test_judge_sai_when_a_cuoc_is_not_there() -> None:
    assert judge({"chi": 1}, {"chi": 1, "tom": 1}, CVV) == "sai"


def test_judge_sai_when_declared_more_times_than_it_is_there() -> None:
    assert judge({"tom": 1, "leo": 1}, {"tom": 2, "leo": 1}, CVV) == "sai"


def test_judge_sai_for_an_unknown_slug() -> None:
    assert judge({"chi": 1}, {"chi": 1, "dong_tu_hai_hoa": 1}, CVV) == "sai"


def test_judge_xuong_is_right_only_for_a_plain_win() -> None:
    assert judge({"xuong": 1}, {"xuong": 1}, CVV) == "dung"
    assert judge({"thong": 1}, {"xuong": 1}, CVV) == "sai"
    assert judge({"chi": 1, "tom": 1}, {"xuong": 1, "chi": 1}, CVV) == "sai"


def test_judge_bach_thu_on_a_bach_thu_chi_win_is_sai_seed_000() -> None:
    true = {"chi": 1, "bach_thu_chi": 1}
    assert judge(true, {"chi": 1, "bach_thu": 1}, CVV) == "sai"
    assert judge(true, {"chi": 1, "bach_thu_chi": 1}, CVV) == "dung"


def test_judge_chi_or_bach_thu_beside_a_named_hand_is_sai_seed_000() -> None:
    true = {"hoa_roi_cua_phat": 1}
    assert judge(true, {"hoa_roi_cua_phat": 1, "chi": 1}, CVV) == "sai"
    assert judge(true, {"hoa_roi_cua_phat": 1, "bach_thu": 1}, CVV) == "sai"
    assert judge(true, {"chi": 1, "bach_thu": 1}, CVV) == "sai"
    assert judge(true, {"hoa_roi_cua_phat": 1}, CVV) == "dung"


def test_judge_bach_thu_must_be_declared_seed_003() -> None:
    true = {"chi": 1, "bach_thu": 1, "tom": 1}
    assert judge(true, {"chi": 1, "tom": 1}, CVV) == "thieu"
    assert judge(true, {"chi": 1, "tom": 1}, MUST_DECLARE_BACH_THU) == "sai"
    assert judge(true, {"bach_thu": 1}, MUST_DECLARE_BACH_THU) == "thieu"
    assert judge({"bach_thu_chi": 1, "leo": 1}, {"leo": 1}, MUST_DECLARE_BACH_THU) == "sai"
    assert judge({"hoa_roi_cua_phat": 1, "thong": 1}, {"thong": 1}, MUST_DECLARE_BACH_THU) == "sai"
    assert judge({"chi": 1, "tom": 1}, {"tom": 1}, MUST_DECLARE_BACH_THU) == "thieu"


# --- tied named hands (RULES.md §6: declaring either one is đúng) ------------------------------

THAPTHANH = PRESETS["thapthanh"]
CA_LOI = {"ca_loi_san_dinh": 1, "tam_do": 1}
CA_NHAY = {"ca_nhay_dau_thuyen": 1, "tam_do": 1}


def test_judge_tied_named_hands_either_reading_is_dung() -> None:
    assert judge(CA_LOI, CA_NHAY, THAPTHANH, [CA_NHAY]) == "dung"
    assert judge(CA_LOI, CA_LOI, THAPTHANH, [CA_NHAY]) == "dung"
    # without the tie the other named hand is a cước the hand does not have
    assert judge(CA_LOI, CA_NHAY, THAPTHANH) == "sai"


def test_judge_tied_named_hands_part_of_either_reading_is_thieu() -> None:
    assert judge(CA_LOI, {"ca_nhay_dau_thuyen": 1}, THAPTHANH, [CA_NHAY]) == "thieu"
    assert judge(CA_LOI, {"tam_do": 1}, THAPTHANH, [CA_NHAY]) == "thieu"


def test_judge_tied_named_hands_both_at_once_is_sai() -> None:
    # A win keeps one named hand: naming both claims a cước that no reading has.
    both = {"ca_loi_san_dinh": 1, "ca_nhay_dau_thuyen": 1, "tam_do": 1}
    assert judge(CA_LOI, both, THAPTHANH, [CA_NHAY]) == "sai"
    # and chì or bạch thủ beside either is sai as beside any named hand
    assert judge(CA_LOI, {**CA_NHAY, "chi": 1}, THAPTHANH, [CA_NHAY]) == "sai"


def test_judge_tied_named_hands_bach_thu_must_be_declared_accepts_either() -> None:
    must = build_ruleset({"preset": "thapthanh", "overrides": {"bach_thu_must_be_declared": True}})
    assert judge(CA_LOI, {"ca_nhay_dau_thuyen": 1}, must, [CA_NHAY]) == "thieu"
    assert judge(CA_LOI, {"tam_do": 1}, must, [CA_NHAY]) == "sai"


def _all_named_hands_on(preset: str) -> Ruleset:
    on = {slug: "on" for slug in NAMED_HANDS}
    return build_ruleset({"preset": preset, "overrides": {"cuoc": on}})


# Every preset as shipped, and with every named hand it leaves off turned back on ("on" keeps
# the preset's own điểm/dịch for it).
RULESETS: dict[str, Ruleset] = {
    **PRESETS,
    **{f"{name}+named_on": _all_named_hands_on(name) for name in PRESETS},
}


def tied_named_hand_pairs(ruleset: Ruleset) -> set[tuple[str, str]]:
    """The pairs of named hands the ruleset plays that one win can hold together (the same
    winning card, at most the 5 chắn of a bạch thủ on the mat between them) and that tie in
    (điểm, dịch), with no higher named hand holding on the same mat."""
    pairs = set()
    for a, b in combinations(NAMED_HANDS, 2):
        (mat_a, card), (mat_b, card_b) = NAMED_HAND_RULES[a], NAMED_HAND_RULES[b]
        mat = set(mat_a) | set(mat_b)
        values = (ruleset.cuoc[a], ruleset.cuoc[b])
        if card != card_b or len(mat) > 5 or not all(v.enabled for v in values):
            continue
        if (values[0].diem, values[0].dich) != (values[1].diem, values[1].dich):
            continue
        higher = [
            c
            for c, (needs, on) in NAMED_HAND_RULES.items()
            if on == card
            and set(needs) <= mat
            and ruleset.cuoc[c].enabled
            and (ruleset.cuoc[c].diem, ruleset.cuoc[c].dich) > (values[0].diem, values[0].dich)
        ]
        if not higher:
            pairs.add((a, b))
    return pairs


CA_PAIR = ("ca_loi_san_dinh", "ca_nhay_dau_thuyen")


def test_tied_named_hand_pairs_of_every_preset() -> None:
    # As shipped only thapthanh plays two named hands tied in (điểm, dịch) that can hold
    # together: cá lội sân đình and cá nhảy đầu thuyền (24/21, both on a chì bạch thủ 8V).
    found = {name: tied_named_hand_pairs(rs) for name, rs in RULESETS.items()}
    assert found == {
        "chan_van_van": set(),
        "vinagames": set(),
        "thapthanh": {CA_PAIR},
        # turned on, the two keep the preset's 20/17 and tie there too
        "chan_van_van+named_on": {CA_PAIR},
        "vinagames+named_on": {CA_PAIR},
        "thapthanh+named_on": {CA_PAIR},
    }


@pytest.mark.parametrize(
    ("name", "pair"),
    [(name, pair) for name, rs in RULESETS.items() for pair in sorted(tied_named_hand_pairs(rs))],
)
def test_tied_named_hands_declaring_either_is_dung_and_pays_the_same(
    name: str, pair: tuple[str, str]
) -> None:
    # Given a chì bạch thủ win holding both named hands of a tied pair
    rs = RULESETS[name]
    mat_kinds = tuple(sorted({k for slug in pair for k in NAMED_HAND_RULES[slug][0]}))
    card = NAMED_HAND_RULES[pair[0]][1]
    hand, mat = bach_thu_seat(mat_kinds, card)
    facts = WinFacts(hand=hand, mat=mat, card=card, source="own_draw")
    true, tied = detect_cuoc(rs, facts), tied_readings(rs, facts)
    # the true cước names one of them and the other reading names the other
    readings = [true, *tied]
    assert sorted(slug for r in readings for slug in r if slug in NAMED_HANDS) == sorted(pair)
    # Then declaring either reading is đúng and scores the same, gà included
    for reading in readings:
        assert judge(true, reading, rs, tied) == "dung"
        assert score(rs, reading) == score(rs, true)
    # and naming both at once is sai
    assert judge(true, {**true, **{slug: 1 for slug in pair}}, rs, tied) == "sai"


def ca_loi_or_ca_nhay_hand() -> HandState:
    """Seat 1 in the declare phase of the issue's hand (``NAMED_TIE_MOVES``)."""
    deck = make_deck(NAMED_TIE_HANDS, stock=NAMED_TIE_STOCK)
    st = play(new_hand(HandConfig(n_seats=4, ruleset=THAPTHANH), deck, 0), *NAMED_TIE_MOVES)
    assert st.phase is Phase.DECLARE
    return st


@pytest.mark.parametrize("named", CA_PAIR)
def test_tied_named_hands_ca_loi_or_ca_nhay_either_is_dung_thapthanh(named: str) -> None:
    # Given the hand, when seat 1 declares either named hand
    ended = apply(ca_loi_or_ca_nhay_hand(), Declare(1, cuoc=((named, 1),)))
    # Then it is đúng, 24 + 1 gà = 29, paid by each other seat
    decl = ended.declaration
    assert decl is not None and decl.verdict == "dung"
    assert decl.declared_score.to_dict() == {"base": 24, "ga": 5, "total": 29}
    assert decl.true_score == decl.declared_score
    assert ended.settlement is not None
    assert [t.to_dict() for t in ended.settlement.transfers] == [
        {"from": seat, "to": 1, "points": 29, "reason": "win"} for seat in (0, 2, 3)
    ]
    # and the declaration records the true cước and the reading as right as it
    assert decl.to_dict()["true_cuoc"] == {"ca_loi_san_dinh": 1}
    assert decl.to_dict()["equally_right"] == [{"ca_nhay_dau_thuyen": 1}]
    assert Declaration.from_dict(decl.to_dict()) == decl


def test_tied_named_hands_auto_declare_names_the_first_and_records_the_other() -> None:
    ended = apply(ca_loi_or_ca_nhay_hand(), Declare(1, auto=True))
    assert ended.declaration is not None
    assert dict(ended.declaration.cuoc) == {"ca_loi_san_dinh": 1}
    assert ended.declaration.equally_right == ((("ca_nhay_dau_thuyen", 1),),)


def test_tied_named_hands_both_declared_is_sai_thapthanh() -> None:
    both = (("ca_loi_san_dinh", 1), ("ca_nhay_dau_thuyen", 1))
    ended = apply(ca_loi_or_ca_nhay_hand(), Declare(1, cuoc=both))
    assert ended.declaration is not None and ended.declaration.verdict == "sai"


def test_judge_refuses_an_empty_declaration() -> None:
    with pytest.raises(IllegalMove) as err:
        judge({"xuong": 1}, {}, CVV)
    assert err.value.code == "empty_declaration"


# --- through the engine -----------------------------------------------------------------------------


def kinds(codes: str) -> list[int]:
    return [KIND_OF[c] for c in codes.split()]


def build_deck(n: int, dealer: int, hands: dict[int, str], stock_front: str = "") -> list[int]:
    """A 100-card deck dealing ``hands`` (the dealer's 20, others' 19) and starting the stock with
    ``stock_front``; every other position gets the remaining cards in canonical order."""
    slots: list[int | None] = [None] * 100
    for seat, codes in hands.items():
        i = (seat - dealer) % n
        cards = kinds(codes)
        positions = list(range(19 * i, 19 * i + 19)) + ([19 * n] if seat == dealer else [])
        assert len(cards) == len(positions)
        for p, k in zip(positions, cards, strict=True):
            slots[p] = k
    for offset, k in enumerate(kinds(stock_front)):
        slots[19 * n + 1 + offset] = k
    left = Counter(CANONICAL_DECK) - Counter(k for k in slots if k is not None)
    rest = [k for k in range(N_KINDS) for _ in range(left[k])]
    deck = [k if k is not None else rest.pop(0) for k in slots]
    assert sorted(deck) == sorted(CANONICAL_DECK)
    return deck


THIEN_U_BACH_THU = "2V 2V 2N 2N 4V 4V 4S 4S 9S 9S 8N 8N 7V 7S 5V 5S 6N 6S 3N 3S"


def thien_u_state(ruleset: Ruleset | None = None) -> HandState:
    deck = build_deck(4, 0, {0: THIEN_U_BACH_THU})
    config = HandConfig(n_seats=4) if ruleset is None else HandConfig(4, ruleset=ruleset)
    state = new_hand(config, deck, 0)
    assert U(0) in legal_moves(state, 0)
    return apply(state, U(0))


def test_thien_u_auto_declare_ends_the_hand_dung() -> None:
    # Given the dealer's 20 already win (6 chắn + 4 cạ)
    state = thien_u_state()
    assert state.phase is Phase.DECLARE
    assert auto_declaration(state) == {"thien_u": 1, "bach_thu": 1}
    # When it asks the server to declare
    ended = apply(state, Declare(0, auto=True))
    # Then the hand is over and the declaration is đúng
    assert ended.phase is Phase.ENDED
    assert ended.outcome.to_dict() == {"result": "u", "seat": 0}
    assert ended.declaration.to_dict() == {
        "cuoc": {"thien_u": 1, "bach_thu": 1},
        "auto": True,
        "verdict": "dung",
        "true_cuoc": {"thien_u": 1, "bach_thu": 1},
        "declared_score": {"base": 5, "ga": 0, "total": 5},
        "true_score": {"base": 5, "ga": 0, "total": 5},
    }


def test_declaring_part_of_the_true_cuoc_is_thieu() -> None:
    ended = apply(thien_u_state(), Declare(0, cuoc=(("thien_u", 1),)))
    assert ended.declaration.verdict == "thieu"
    assert ended.declaration.declared_score.to_dict() == {"base": 3, "ga": 0, "total": 3}
    assert ended.declaration.true_score.total == 5


def test_declaring_a_cuoc_that_is_not_there_is_sai_and_scores_the_declaration() -> None:
    ended = apply(thien_u_state(), Declare(0, cuoc=(("thien_u", 1), ("tam_do", 1))))
    assert ended.declaration.verdict == "sai"
    assert ended.declaration.auto is False
    assert ended.declaration.declared_score.base == 8 + 1
    assert ended.phase is Phase.ENDED


def test_bach_thu_must_be_declared_through_the_engine() -> None:
    state = thien_u_state(MUST_DECLARE_BACH_THU)
    assert apply(state, Declare(0, cuoc=(("thien_u", 1),))).declaration.verdict == "sai"


def test_declaring_uses_the_hands_ruleset() -> None:
    thapthanh = PRESETS["thapthanh"]
    ended = apply(thien_u_state(thapthanh), Declare(0, auto=True))
    assert ended.declaration.true_score.base == 4 + 1  # Thiên ù 4 in thapthanh


def test_an_empty_declaration_is_refused() -> None:
    state = thien_u_state()
    with pytest.raises(IllegalMove) as err:
        apply(state, Declare(0, cuoc=()))
    assert err.value.code == "empty_declaration"
    assert state.phase is Phase.DECLARE


@pytest.mark.parametrize(
    ("cuoc", "code"),
    [((("dong_tu_hai_hoa", 1),), "unknown_cuoc"), ((("tom", 5),), "invalid_cuoc_count")],
)
def test_an_impossible_declaration_is_refused(cuoc: tuple[tuple[str, int], ...], code: str) -> None:
    with pytest.raises(InvalidInput) as err:
        apply(thien_u_state(), Declare(0, cuoc=cuoc))
    assert err.value.code == code


def test_own_draw_win_on_the_first_stock_card_is_chi_and_dia_u() -> None:
    # Given seat 1 waits ù rộng on 3V and the first stock card is 3V
    waiting = "2V 2V 2N 2N 4V 4V 4S 4S 5N 5N 6V 6V 9S 9S 7V 7S 5V 5S 3N"
    dealer = "2S 2S 3S 3S 4N 4N 5S 6N 6N 6S 7N 7N 8V 8N 8S 9V 9N CC CC 8V"
    deck = build_deck(4, 0, {0: dealer, 1: waiting}, stock_front="3V")
    prefs = ((False, False),) * 4
    state = new_hand(HandConfig(n_seats=4, prefs=prefs), deck, 0)
    # When the dealer discards, seat 1 draws the 3V and claims ù
    state = apply(state, Discard(0, KIND_OF["5S"]))
    state = apply(state, Draw(1))
    assert U(1) in legal_moves(state, 1)
    state = apply(state, U(1))
    assert state.win is not None and state.win.source == "own_draw" and state.win.first_draw
    # Then the true cước are Chì and Địa ù, and an auto declaration is đúng
    assert auto_declaration(state) == {"chi": 1, "dia_u": 1}
    ended = apply(state, Declare(1, auto=True))
    assert ended.declaration.verdict == "dung"
    assert ended.declaration.true_score.to_dict() == {"base": 4, "ga": 0, "total": 4}
    assert ended.outcome.to_dict() == {"result": "u", "seat": 1}


def test_thong_through_the_engine() -> None:
    deck = build_deck(4, 0, {0: THIEN_U_BACH_THU})
    state = apply(new_hand(HandConfig(n_seats=4, previous_winner=0), deck, 0), U(0))
    assert auto_declaration(state) == {"thong": 1, "thien_u": 1, "bach_thu": 1}
