"""Faults (RULES.md §9) in both modes, the examples of seed 000 §IV and seed 004 "Lưu ý", and
random self-play invariants in advanced mode."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest

from games.rules import engine
from games.rules.analysis import analysis_for
from games.rules.cards import CC, CODES, EMPTY, KIND_OF, N_KINDS, Counts, counts_of, rank
from games.rules.deck import CANONICAL_DECK, shuffle
from games.rules.errors import FaultRefused, IllegalMove
from games.rules.faults import (
    FAULTS,
    MESSAGES,
    discard_faults,
    faults_of,
    hidden_penalty,
    message,
    winner_faults,
)
from games.rules.moves import Chiu, Discard, Draw, Eat, Move, Pass, TraCua, U
from games.rules.ruleset import build_ruleset
from games.rules.shape import best_chan, is_bach_thu, waiting_set, wins_with
from games.rules.state import (
    SRC_DISCARD,
    SRC_RETURNED,
    SRC_STOCK,
    Declined,
    Exposed,
    Fault,
    HandConfig,
    HandState,
    MatGroup,
    MissedWin,
    Mode,
    Phase,
    SeatState,
)

BASIC, ADVANCED = Mode.BASIC, Mode.ADVANCED
BOTH = pytest.mark.parametrize("mode", [BASIC, ADVANCED], ids=["basic", "advanced"])


# --- builders ---------------------------------------------------------------------------------


def K(code: str) -> int:
    return KIND_OF[code]


def H(codes: str) -> Counts:
    """A hand from space-separated kind codes."""
    return counts_of(K(c) for c in codes.split())


def chan(code: str, door: int = 1) -> MatGroup:
    return MatGroup("chan", (K(code), K(code)), K(code), SRC_DISCARD, door)


def ca(taken: str, with_: str, door: int = 1) -> MatGroup:
    return MatGroup("ca", (K(taken), K(with_)), K(taken), SRC_DISCARD, door)


def declined(code: str, same: int = 1, other: int = 0) -> Declined:
    return Declined(K(code), same, other)


# 19-sets (no mat): 5 chắn + 4 cạ + a lone 9V (bạch thủ on 9V); 5 chắn + 3 cạ + ba đầu 9;
# 6 chắn + 3 cạ + a lone CC (chờ chi rộng: can never win); 5 chắn + 4 cạ + CC (bạch thủ chi).
BACH_THU_9V = "2V 2V 3V 3V 4V 4V 5V 5V 6V 6V 2N 2S 3N 3S 4N 4S 5N 5S 9V"
BA_DAU_9 = "2V 2V 3V 3V 4V 4V 5V 5V 6V 6V 2N 2S 3N 3S 4N 4S 9V 9N 9S"
CHO_CHI_RONG = "2V 2V 3V 3V 4V 4V 5V 5V 6V 6V 7V 7V 2N 2S 3N 3S 4N 4S CC"
BACH_THU_CHI = "2V 2V 3V 3V 4V 4V 5V 5V 6V 6V 2N 2S 3N 3S 4N 4S 5N 5S CC"


def position(
    mode: Mode,
    hand: str,
    *,
    phase: Phase = Phase.OFFER,
    card: str | None = None,
    source: str | None = None,
    mat: tuple[MatGroup, ...] = (),
    declined: tuple[Declined, ...] = (),
    discarded: tuple[str, ...] = (),
    missed_win: bool = False,
    n: int = 2,
    seat: int = 0,
    stock: tuple[str, ...] | None = None,
    others: dict[int, str] | None = None,
) -> HandState:
    """A hand where ``seat`` is to move in ``phase`` with the given hand and history.

    ``card`` is the card on offer: in OFFER on top of the cửa trên, in AFTER_DRAW the seat's own
    draw. Other seats hold nothing (so nobody claims) unless ``others`` gives them hands.
    """
    base = engine.new_hand(HandConfig(n_seats=n, mode=mode), CANONICAL_DECK, 0)
    seats = [SeatState(hand=EMPTY, dealt=EMPTY) for _ in range(n)]
    for s, codes in (others or {}).items():
        seats[s] = SeatState(hand=H(codes), dealt=H(codes))
    seats[seat] = SeatState(
        hand=H(hand),
        dealt=H(hand),
        mat=mat,
        declined=declined,
        discarded=tuple(K(c) for c in discarded),
        missed_wins=(MissedWin(K("9V"), 1),) if missed_win else (),
    )
    doors: list[tuple[int, ...]] = [() for _ in range(n)]
    exposed = None
    if card is not None:
        if source is None:
            source = SRC_STOCK if phase is Phase.AFTER_DRAW else SRC_DISCARD
        door = seat if phase is Phase.AFTER_DRAW else (seat - 1) % n
        by = door if source != SRC_RETURNED else (seat + 1) % n
        doors[door] = (K(card),)
        exposed = Exposed(K(card), door, source, by)
    return replace(
        base,
        seats=tuple(seats),
        doors=tuple(doors),
        phase=phase,
        turn=seat,
        exposed=exposed,
        stock=base.stock if stock is None else tuple(K(c) for c in stock),
        stock_drawn=5,
        n_moves=20,
        events=(),
    )


def slugs(state: HandState, move: Move) -> list[str]:
    return [f.slug for f in faults_of(state, move)]


def recorded(state: HandState, seat: int = 0) -> list[str]:
    return [f.slug for f in state.seats[seat].faults]


def offer(state: HandState, seat: int, card: int, phase: Phase = Phase.OFFER) -> HandState:
    """``state`` with ``card`` put on offer to ``seat`` (cửa trên in OFFER, own draw after)."""
    n = state.n_seats
    door = seat if phase is Phase.AFTER_DRAW else (seat - 1) % n
    doors = list(state.doors)
    doors[door] = doors[door] + (card,)
    source = SRC_STOCK if phase is Phase.AFTER_DRAW else SRC_DISCARD
    return replace(
        state,
        phase=phase,
        turn=seat,
        exposed=Exposed(card, door, source, door),
        doors=tuple(doors),
        pending_u=None,
    )


def assert_sits_still(state: HandState, seat: int) -> None:
    """A báo seat: only draw/pass/discard are legal, eating and chíu are refused; its ``u`` is
    listed (advanced mode accepts every ``u``) and is an ù báo."""
    st = state.seats[seat]
    assert st.bao
    if state.turn == seat and not state.ended:
        legal = engine.legal_moves(state, seat)
        assert all(isinstance(m, Draw | Pass | Discard | U) for m in legal)
    k = next(k for k in range(N_KINDS) if st.hand[k])
    for phase, only in ((Phase.OFFER, Draw(seat)), (Phase.AFTER_DRAW, Pass(seat))):
        s = offer(state, seat, k, phase)
        assert engine.legal_moves(s, seat) == [U(seat), only]
        for move in (Eat(seat, k, k), Chiu(seat, k)):
            with pytest.raises(IllegalMove) as err:
                engine.apply(s, move)
            assert err.value.code == "bao"


# --- the fault table: one position per slug ---------------------------------------------------


@dataclass(frozen=True)
class Case:
    slug: str
    build: Callable[[Mode], HandState]
    move: Move


CASES = [
    # A. hidden faults, judged at settlement
    Case(
        "treo_tranh",
        lambda m: position(m, "9V 9N 2V 3N 4S", card="9V"),
        Eat(0, K("9V"), K("9N")),
    ),
    Case(
        "an_thuong_khi_chiu",
        lambda m: position(m, "9V 9V 9V 2N 3S", card="9V"),
        Eat(0, K("9V"), K("9V")),
    ),
    Case(
        "an_chon_ca",
        lambda m: position(m, "9V 9N 2V 3N 4S", card="9S"),
        Eat(0, K("9S"), K("9V")),
    ),
    Case(
        "co_chan_cau_ca",
        lambda m: position(m, "9V 9V 2V 3N 4S", card="9N"),
        Eat(0, K("9N"), K("9V")),
    ),
    Case(
        "an_ca_chuyen_cho",
        lambda m: position(m, BACH_THU_9V, card="9N"),
        Eat(0, K("9N"), K("9V")),
    ),
    Case(
        "cho_chi_rong",
        lambda m: position(m, CHO_CHI_RONG + " 9S", phase=Phase.DISCARD),
        Discard(0, K("9S")),
    ),
    # B. cards declined
    Case(
        "bo_chan_an_chan",
        lambda m: position(m, "9V 2V 3N 4S", card="9V", declined=(declined("9V", 1, 0),)),
        Eat(0, K("9V"), K("9V")),
    ),
    Case(
        "bo_chan_an_ca",
        lambda m: position(m, "9V 2V 3N 4S", card="9N", declined=(declined("9V", 1, 0),)),
        Eat(0, K("9N"), K("9V")),
    ),
    Case(
        "bo_ca_an_ca",
        lambda m: position(m, "9N 2V 3N 4S", card="9S", declined=(declined("9V", 0, 1),)),
        Eat(0, K("9S"), K("9N")),
    ),
    Case(
        "bo_roi_danh",
        lambda m: position(
            m, "9V 2V 3N 4S 5S", phase=Phase.DISCARD, declined=(declined("9V", 1, 0),)
        ),
        Discard(0, K("9V")),
    ),
    # C. cards discarded
    Case(
        "danh_ca_an_ca",
        lambda m: position(m, "2N 5V 6N 7S", card="2V", discarded=("9V", "9N")),
        Eat(0, K("2V"), K("2N")),
    ),
    Case(
        "xe_ca_an_ca",
        lambda m: position(m, "9N 2V 3N 4S", card="9S", discarded=("9V",)),
        Eat(0, K("9S"), K("9N")),
    ),
    Case(
        "danh_roi_an",
        lambda m: position(m, "9V 2V 3N 4S", card="9V", discarded=("9V",)),
        Eat(0, K("9V"), K("9V")),
    ),
    Case(
        "danh_doi_chan",
        lambda m: position(m, "9V 2V 3N 4S 5S", phase=Phase.DISCARD, discarded=("9V",)),
        Discard(0, K("9V")),
    ),
    # D. cards eaten
    Case(
        "an_roi_danh",
        lambda m: position(m, "9V 2V 3N 4S 5S", phase=Phase.DISCARD, mat=(chan("9V"),)),
        Discard(0, K("9V")),
    ),
    Case(
        "an_ca_an_chan_cung_hang",
        lambda m: position(m, "9N 9N 2V 3N 4S", card="9N", mat=(ca("9V", "9S"),)),
        Eat(0, K("9N"), K("9N")),
    ),
    Case(
        "an_ca_danh_ca",
        lambda m: position(
            m, "9N 2V 4S 5S 6N", phase=Phase.DISCARD, mat=(ca("3V", "3N"),), discarded=("9V",)
        ),
        Discard(0, K("9N")),
    ),
    Case(
        "an_ca_danh_cung_hang",
        lambda m: position(m, "9S 9S 2V 3N 4S", phase=Phase.DISCARD, mat=(ca("9N", "9V"),)),
        Discard(0, K("9S")),
    ),
]
CASE_IDS = [c.slug for c in CASES]

SECTION_9_SLUGS = {
    "treo_tranh",
    "an_thuong_khi_chiu",
    "bo_u",
    "an_chon_ca",
    "co_chan_cau_ca",
    "an_ca_chuyen_cho",
    "cho_chi_rong",
    "bo_chan_an_chan",
    "bo_chan_an_ca",
    "bo_ca_an_ca",
    "bo_roi_danh",
    "danh_ca_an_ca",
    "xe_ca_an_ca",
    "danh_roi_an",
    "danh_doi_chan",
    "an_roi_danh",
    "an_ca_an_chan_cung_hang",
    "an_ca_danh_ca",
    "an_ca_danh_cung_hang",
    "u_lao",
    "xuong_sai",
}


def test_every_section_9_slug_has_a_spec_and_a_message_template() -> None:
    assert set(FAULTS) == SECTION_9_SLUGS
    assert set(MESSAGES) == SECTION_9_SLUGS
    for slug in SECTION_9_SLUGS:
        assert message(slug) != slug


def test_fault_categories_follow_the_table() -> None:
    hidden_no_pay = {"treo_tranh", "an_thuong_khi_chiu", "bo_u"}
    hidden_den_lang = {"an_chon_ca", "co_chan_cau_ca", "an_ca_chuyen_cho", "cho_chi_rong"}
    for slug, spec in FAULTS.items():
        if slug in hidden_no_pay:
            assert (spec.visible, spec.category) == (False, "no_pay")
        elif slug in hidden_den_lang:
            assert (spec.visible, spec.category) == (False, "den_lang")
        elif slug == "u_lao":
            assert (spec.visible, spec.category) == (True, "u_lao")
        elif slug == "xuong_sai":
            assert not spec.visible
        else:
            assert (spec.visible, spec.category) == (True, "visible")


def test_every_move_fault_has_a_case() -> None:
    assert {c.slug for c in CASES} | {"bo_u", "u_lao", "xuong_sai"} == SECTION_9_SLUGS


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_fault_is_the_only_one_of_its_position(case: Case) -> None:
    assert slugs(case.build(ADVANCED), case.move) == [case.slug]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_basic_mode_refuses_the_fault(case: Case) -> None:
    state = case.build(BASIC)
    assert case.move not in engine.legal_moves(state, 0)
    with pytest.raises(FaultRefused) as err:
        engine.apply(state, case.move)
    assert err.value.code == case.slug
    assert err.value.message == err.value.template == message(case.slug)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_advanced_mode_records_the_fault(case: Case) -> None:
    state = case.build(ADVANCED)
    assert case.move in engine.legal_moves(state, 0)
    after = engine.apply(state, case.move)
    seat = after.seats[0]
    assert recorded(after) == [case.slug]
    assert seat.faults[0].move_index == state.n_moves
    visible = FAULTS[case.slug].visible
    assert seat.faults[0].visible is visible
    assert seat.bao is visible
    if visible:
        assert {"type": "fault", "seat": 0, "fault": case.slug, "bao": True} in after.events
        assert {"type": "bao", "seat": 0} in after.events  # the seat goes báo (ngồi im)
        assert_sits_still(after, 0)
    else:  # recorded as a hidden effect (effects_for shows it to the seat only until the end)
        faults = [e for e in after.events if e.get("type") == "fault"]
        assert faults == [{"type": "fault", "seat": 0, "fault": case.slug, "hidden": True}]
        assert not any(e.get("type") == "bao" for e in after.events)


def test_clean_moves_have_no_faults() -> None:
    s = position(BASIC, "9V 9N 2V 3N 4S", card="9V")
    assert slugs(s, Eat(0, K("9V"), K("9V"))) == []
    assert slugs(s, Draw(0)) == []
    s = position(BASIC, "9V 2V 3N 4S 5S", phase=Phase.DISCARD)
    assert all(not slugs(s, Discard(0, k)) for k in range(N_KINDS) if s.seats[0].hand[k])


def test_faults_of_leaves_illegal_moves_to_the_engine() -> None:
    # Card not in hand, not on offer, not a pair: no fault, the engine gives the real reason.
    s = position(BASIC, "9V 2V 3N 4S", card="9V", discarded=("9V",))
    assert slugs(s, Eat(0, K("9V"), K("9N"))) == []
    assert slugs(s, Eat(0, K("2V"), K("2V"))) == []
    assert slugs(s, Eat(0, K("9V"), K("2V"))) == []
    with pytest.raises(IllegalMove) as err:
        engine.apply(s, Eat(0, K("9V"), K("9N")))
    assert err.value.code == "card_not_in_hand"


# --- bỏ ù ---------------------------------------------------------------------------------------


def test_bo_u_basic_mode_never_faults_the_later_win() -> None:
    s = position(BASIC, BACH_THU_9V, phase=Phase.AFTER_DRAW, card="9V", missed_win=True)
    assert U(0) in engine.legal_moves(s, 0)
    after = engine.apply(s, U(0))
    assert after.phase is Phase.DECLARE and after.win is not None and after.win.seat == 0
    assert recorded(after) == []


def test_bo_u_advanced_mode_is_recorded_hidden_on_the_win() -> None:
    s = position(ADVANCED, BACH_THU_9V, phase=Phase.AFTER_DRAW, card="9V", missed_win=True)
    after = engine.apply(s, U(0))
    assert after.win is not None and after.win.seat == 0
    assert recorded(after) == ["bo_u"]
    assert not after.seats[0].bao
    assert hidden_penalty(winner_faults(after)) == "no_pay"


def test_bo_u_on_a_chiu_that_wins() -> None:
    # 3 × 9V + 4 chắn + 4 cạ: chíu 9V makes 6 chắn + 4 cạ.
    hand = "9V 9V 9V 2V 2V 3V 3V 4V 4V 5V 5V 2N 2S 3N 3S 4N 4S 5N 5S"
    for mode, expected in ((BASIC, []), (ADVANCED, ["bo_u"])):
        s = position(mode, hand, card="9V", missed_win=True)
        assert wins_with(s.seats[0].hand, 0, K("9V"))
        after = engine.apply(s, Chiu(0, K("9V")))
        assert after.win is not None and after.win.by_chiu
        assert recorded(after) == expected


def test_bo_u_real_sequence_pass_on_a_win_then_win_later() -> None:
    # Given a seat that draws its winning card and passes (engine marks missed_win) …
    s = position(ADVANCED, BACH_THU_9V, phase=Phase.AFTER_DRAW, card="9V")
    s = engine.apply(s, Pass(0))
    assert s.seats[0].missed_win and recorded(s) == []
    # … when it later wins on its own draw, bỏ ù is recorded.
    later = offer(s, 0, K("9V"), Phase.AFTER_DRAW)
    after = engine.apply(later, U(0))
    assert recorded(after) == ["bo_u"]


def with_ruleset(state: HandState, **overrides: object) -> HandState:
    ruleset = build_ruleset({"preset": "chan_van_van", "overrides": overrides})
    return replace(state, config=replace(state.config, ruleset=ruleset))


@pytest.mark.parametrize(
    ("hand", "four_eleven", "missed"),
    [
        (BA_DAU_9, True, False),  # chì only: 3 points < 4, declined freely (§10.6)
        (BACH_THU_9V, True, True),  # chì + bạch thủ: 15 points, a real bỏ ù
        (BA_DAU_9, False, True),  # without 4-11 every declined win is a bỏ ù
    ],
)
def test_four_eleven_a_win_below_four_may_be_declined_without_bo_u(
    hand: str, four_eleven: bool, missed: bool
) -> None:
    # Given a seat that draws a card it could win on, in or out of 4-11 mode,
    s = with_ruleset(
        position(ADVANCED, hand, phase=Phase.AFTER_DRAW, card="9V"), four_eleven=four_eleven
    )
    # when it passes, a missed win is marked only if the win was worth taking,
    s = engine.apply(s, Pass(0))
    assert s.seats[0].missed_win is missed
    # and its later win carries bỏ ù only then.
    after = engine.apply(offer(s, 0, K("9V"), Phase.AFTER_DRAW), U(0))
    assert after.win is not None
    assert recorded(after) == (["bo_u"] if missed else [])


@pytest.mark.parametrize(("hand", "missed"), [(BA_DAU_9, False), (BACH_THU_9V, True)])
def test_four_eleven_a_stock_card_passed_down_may_be_declined_if_worth_below_four(
    hand: str, missed: bool
) -> None:
    # Given seat 1 (auto ù off) could win on the stock card its cửa trên draws and passes down,
    s = position(ADVANCED, "2V 3N 4S", card="2N", stock=("9V", "2S", "3S"), others={1: hand})
    s = with_ruleset(s, four_eleven=True)
    s = replace(s, seats=(s.seats[0], replace(s.seats[1], auto_u=False)))
    s = engine.apply(engine.apply(s, Draw(0)), Pass(0))
    assert (s.phase, s.turn) == (Phase.OFFER, 1)
    # when seat 1 draws instead of winning, it missed a win only if that win was worth 4 or more.
    s = engine.apply(s, Draw(1))
    assert s.seats[1].missed_win is missed


def test_bo_u_for_a_win_out_of_turn_comes_from_winner_faults() -> None:
    # Seat 1 missed a win earlier; seat 0 draws seat 1's winning card and seat 1 wins at once.
    s = position(ADVANCED, "2V 3N 4S", card="2N", stock=("9V", "2S", "3S"), others={1: BACH_THU_9V})
    s = replace(s, seats=(s.seats[0], replace(s.seats[1], missed_wins=(MissedWin(K("9V"), 1),))))
    after = engine.apply(s, Draw(0))
    assert after.win is not None and after.win.seat == 1
    assert recorded(after, 1) == []  # no move of seat 1 was checked
    assert [f.slug for f in winner_faults(after)] == ["bo_u"]
    assert hidden_penalty(winner_faults(after)) == "no_pay"


def test_chiu_u_on_own_draw_is_not_a_bo_u() -> None:
    # The engine marks missed_win during a winning chíu on its own draw; that is no bỏ ù.
    hand = "9V 9V 9V 2V 2V 3V 3V 4V 4V 5V 5V 2N 2S 3N 3S 4N 4S 5N 5S"
    s = position(ADVANCED, hand, phase=Phase.AFTER_DRAW, card="9V")
    after = engine.apply(s, Chiu(0, K("9V")))
    assert after.win is not None and after.win.seat == 0
    assert recorded(after) == [] and winner_faults(after) == ()


def test_hidden_penalty_den_lang_wins_over_no_pay() -> None:
    s = position(ADVANCED, BACH_THU_9V, card="9N")
    after = engine.apply(s, Eat(0, K("9N"), K("9V")))
    found = after.seats[0].faults
    assert [f.slug for f in found] == ["an_ca_chuyen_cho"]
    assert hidden_penalty(found) == "den_lang"
    assert hidden_penalty(found + (Fault("treo_tranh", False, 1),)) == "den_lang"
    assert hidden_penalty((Fault("treo_tranh", False, 1),)) == "no_pay"
    assert hidden_penalty((Fault("danh_doi_chan", True, 1),)) is None
    assert hidden_penalty(()) is None


# --- ù láo (checked by the engine itself) -------------------------------------------------------


def test_u_lao_basic_mode_refuses_a_false_u_after_a_draw_with_the_fault_slug() -> None:
    # Given a seat whose own draw (9N) does not complete its hand …
    s = position(BASIC, BACH_THU_9V, phase=Phase.AFTER_DRAW, card="9N")
    assert U(0) not in engine.legal_moves(s, 0)
    # … when it claims ù, basic mode refuses the fault by its slug, as every other fault (§9) …
    with pytest.raises(FaultRefused) as err:
        engine.apply(s, U(0))
    assert err.value.code == "u_lao"
    assert err.value.template == message("u_lao")
    # … and the hand goes on: the seat is not báo and may still pass.
    assert not s.seats[0].bao and s.phase is Phase.AFTER_DRAW
    assert engine.apply(s, Pass(0)).phase is Phase.OFFER


def test_u_lao_basic_mode_refuses_a_false_thien_u_by_the_dealer_with_the_fault_slug() -> None:
    # The dealer at its start holds 20 cards that do not win: ù is ù láo, refused in basic mode.
    s = position(BASIC, BACH_THU_9V + " 7N", phase=Phase.DEALER_START)
    assert U(0) not in engine.legal_moves(s, 0)
    with pytest.raises(FaultRefused) as err:
        engine.apply(s, U(0))
    assert err.value.code == "u_lao"
    after = engine.apply(s, Discard(0, K("7N")))  # the hand goes on with a discard
    assert after.phase is Phase.OFFER and after.seats[0].faults == ()


def test_u_lao_advanced_mode_false_thien_u_ends_the_hand() -> None:
    s = position(ADVANCED, BACH_THU_9V + " 7N", phase=Phase.DEALER_START)
    assert U(0) in engine.legal_moves(s, 0)
    after = engine.apply(s, U(0))
    assert after.ended and after.outcome.to_dict() == {"result": "u_lao", "seat": 0}
    assert recorded(after) == ["u_lao"] and after.seats[0].bao


def test_u_lao_advanced_mode_ends_the_hand_with_a_visible_fault() -> None:
    s = position(ADVANCED, BACH_THU_9V, phase=Phase.AFTER_DRAW, card="9N")
    assert U(0) in engine.legal_moves(s, 0)
    after = engine.apply(s, U(0))
    assert after.ended and after.outcome.to_dict() == {"result": "u_lao", "seat": 0}
    assert recorded(after) == ["u_lao"] and after.seats[0].bao
    assert FAULTS["u_lao"].visible


# --- decisions ----------------------------------------------------------------------------------


def test_treo_tranh_names_the_eat_over_other_ca_faults() -> None:
    # Holding 9V and a chắn 9N, eating 9V with a 9N is treo tranh (not also có chắn cấu cạ).
    s = position(ADVANCED, "9V 9N 9N 2V 3N", card="9V")
    assert slugs(s, Eat(0, K("9V"), K("9N"))) == ["treo_tranh"]


def test_an_thuong_khi_chiu_only_when_chiu_was_possible() -> None:
    # Three 9V and nothing else: a chíu would leave no card to discard, so eating is no fault.
    s = position(ADVANCED, "9V 9V 9V", card="9V")
    assert Chiu(0, K("9V")) not in engine.legal_moves(s, 0)
    assert slugs(s, Eat(0, K("9V"), K("9V"))) == []
    # Eating as a cạ while holding three is both faults.
    s = position(ADVANCED, "9V 9V 9V 9N 2S", card="9V")
    assert slugs(s, Eat(0, K("9V"), K("9N"))) == ["treo_tranh", "an_thuong_khi_chiu"]


def test_chiu_is_never_a_fault() -> None:
    s = position(ADVANCED, "9V 9V 9V 2N 3S", card="9V", mat=(ca("9N", "9S"),))
    assert slugs(s, Chiu(0, K("9V"))) == []


def test_draw_and_pass_commit_no_fault() -> None:
    s = position(ADVANCED, "9V 9V 9V 2N 3S", card="9V", declined=(declined("9V", 2, 0),))
    assert slugs(s, Draw(0)) == []
    s = position(ADVANCED, BACH_THU_9V, phase=Phase.AFTER_DRAW, card="9V")
    assert slugs(s, Pass(0)) == []


def test_tra_cua_is_a_discard() -> None:
    s = position(ADVANCED, "9V 2V 3N 4S 5S", phase=Phase.TRA_CUA, discarded=("9V",))
    s = replace(s, tra_cua_door=1, resume=Phase.OFFER, resume_turn=1)
    assert slugs(s, TraCua(0, K("9V"))) == ["danh_doi_chan"]
    after = engine.apply(s, TraCua(0, K("9V")))
    assert after.seats[0].bao and after.seats[0].discarded == (K("9V"), K("9V"))


def test_tra_cua_counts_for_later_faults() -> None:
    # Returning 2V is a discard of rank 2: a cạ in rank 2 is then xé cạ ăn cạ.
    s = position(BASIC, "9V 2V 2S 3N 4S", phase=Phase.TRA_CUA)
    s = replace(s, tra_cua_door=1, resume=Phase.OFFER, resume_turn=1)
    after = engine.apply(s, TraCua(0, K("2V")))
    assert after.seats[0].discarded == (K("2V"),)
    later = offer(after, 0, K("2N"))
    assert slugs(later, Eat(0, K("2N"), K("2S"))) == ["xe_ca_an_ca"]


def test_bao_seat_commits_no_further_faults() -> None:
    s = position(ADVANCED, "9V 2V 3N 4S 5S", phase=Phase.DISCARD, discarded=("9V",))
    s = replace(s, seats=(replace(s.seats[0], bao=True), s.seats[1]))
    assert slugs(s, Discard(0, K("9V"))) == []


def test_forced_discard_is_accepted_in_basic_mode_only() -> None:
    # Every card left was declined: basic mode lets it discard any; advanced mode records it.
    hist = (declined("9V", 1, 0), declined("2V", 1, 0))
    s = position(BASIC, "9V 2V", phase=Phase.DISCARD, declined=hist)
    assert engine.legal_moves(s, 0) == [Discard(0, K("2V")), Discard(0, K("9V"))]
    after = engine.apply(s, Discard(0, K("9V")))
    assert recorded(after) == []
    s = position(ADVANCED, "9V 2V", phase=Phase.DISCARD, declined=hist)
    assert recorded(engine.apply(s, Discard(0, K("9V")))) == ["bo_roi_danh"]


def test_a_faulty_discard_with_a_clean_alternative_is_still_refused() -> None:
    s = position(BASIC, "9V 2V", phase=Phase.DISCARD, declined=(declined("9V", 1, 0),))
    assert engine.legal_moves(s, 0) == [Discard(0, K("2V"))]


# --- seed 000 §IV, each example ----------------------------------------------------------------


def test_000_iv_1_an_treo_tranh() -> None:
    # Trên tay có cửu vạn, cửu văn, ăn cửu vạn nhưng lại hạ cửu văn: must lay the chắn cửu vạn.
    s = position(BASIC, "9V 9N 2S 3N 4S", card="9V")
    assert slugs(s, Eat(0, K("9V"), K("9N"))) == ["treo_tranh"]
    assert Eat(0, K("9V"), K("9V")) in engine.legal_moves(s, 0)


def test_000_iv_2_chiu_duoc_nhung_an_thuong() -> None:
    # Có 3 quân cửu vạn, bốc được cửu vạn: must chíu, not lay one cửu vạn to eat.
    s = position(BASIC, "9V 9V 9V 2N 3S", phase=Phase.AFTER_DRAW, card="9V", source=SRC_STOCK)
    assert slugs(s, Eat(0, K("9V"), K("9V"))) == ["an_thuong_khi_chiu"]
    assert Chiu(0, K("9V")) in engine.legal_moves(s, 0)
    assert Eat(0, K("9V"), K("9V")) not in engine.legal_moves(s, 0)


def test_000_iv_3_an_chon_ca() -> None:
    # Có cạ [cửu vạn, cửu văn], lấy cửu vạn ăn cửu sách.
    s = position(BASIC, "9V 9N 2S 3N 4S", card="9S")
    assert slugs(s, Eat(0, K("9S"), K("9V"))) == ["an_chon_ca"]


@pytest.mark.parametrize("nine_van", ["9N 9N", "9N 9N 9N 9N"])
def test_000_iv_3_one_van_with_a_chan_of_van_is_no_ca(nine_van: str) -> None:
    # 1 cửu vạn and 2 or 4 cửu văn: the cửu văn are a chắn, the cửu vạn may eat cửu sách.
    s = position(BASIC, f"9V {nine_van} 2S 3N", card="9S")
    assert slugs(s, Eat(0, K("9S"), K("9V"))) == []


def test_000_iv_4_an_ca_chuyen_cho() -> None:
    # ≥ 5 chắn, only què cửu vạn, no ba đầu; lấy cửu vạn ăn cửu văn to move the wait.
    s = position(BASIC, BACH_THU_9V, card="9N")
    assert waiting_set(s.seats[0].hand, 0) == [K("9V")]
    assert slugs(s, Eat(0, K("9N"), K("9V"))) == ["an_ca_chuyen_cho"]


def test_000_iv_4_ba_dau_wait_eating_a_ca_is_treo_tranh() -> None:
    # Chờ ba đầu cửu, lấy cửu vạn ăn cửu văn: treo tranh (the seed's own classification).
    s = position(ADVANCED, BA_DAU_9, card="9N")
    assert slugs(s, Eat(0, K("9N"), K("9V"))) == ["treo_tranh"]


def test_000_iv_4_ba_dau_wait_eating_the_stock_card_is_bo_u() -> None:
    # … and if the cửu văn came from the stock, the seat passed over a win: bỏ ù when it wins.
    s = position(ADVANCED, BA_DAU_9, phase=Phase.AFTER_DRAW, card="9N", source=SRC_STOCK)
    after = engine.apply(s, Eat(0, K("9N"), K("9V")))
    assert after.seats[0].missed_win
    assert recorded(after) == ["treo_tranh"]


def test_000_iv_5_co_chan_cau_ca() -> None:
    # Có chắn cửu vạn, không có cửu văn, lấy cửu vạn ăn cửu văn.
    s = position(BASIC, "9V 9V 2S 3N 4S", card="9N")
    assert slugs(s, Eat(0, K("9N"), K("9V"))) == ["co_chan_cau_ca"]


def test_000_iv_6_cho_chi_rong() -> None:
    # ≥ 6 chắn and a lone Chi Chi: discard the Chi Chi when you can.
    s = position(BASIC, CHO_CHI_RONG + " 9S", phase=Phase.DISCARD)
    assert slugs(s, Discard(0, K("9S"))) == ["cho_chi_rong"]
    assert slugs(s, Discard(0, CC)) == []
    assert waiting_set(H(CHO_CHI_RONG), 0) == []  # it could never win


def test_000_iv_6_cho_chi_rong_only_if_the_chi_chi_could_be_discarded() -> None:
    # The Chi Chi was declined earlier: discarding it would be a fault, so keeping it is not.
    s = position(
        ADVANCED, CHO_CHI_RONG + " 9S", phase=Phase.DISCARD, declined=(declined("CC", 1, 0),)
    )
    assert slugs(s, Discard(0, K("9S"))) == []


def test_000_iv_6_bach_thu_chi_wait_is_clean() -> None:
    # 5 chắn + 4 cạ + lone Chi Chi waits bạch thủ chi: no fault to keep it.
    s = position(BASIC, BACH_THU_CHI + " 9S", phase=Phase.DISCARD)
    assert slugs(s, Discard(0, K("9S"))) == []
    assert waiting_set(H(BACH_THU_CHI), 0) == [CC]


def test_000_iv_6_breaking_a_chan_chi_into_cho_chi_rong() -> None:
    # 20 cards all paired, chắn Chi Chi among them: discarding one Chi Chi leaves chờ chi rộng.
    s = position(BASIC, CHO_CHI_RONG + " CC", phase=Phase.DISCARD)
    assert slugs(s, Discard(0, CC)) == ["cho_chi_rong"]
    assert slugs(s, Discard(0, K("2V"))) == []


def _declined_9v(hand: str) -> HandState:
    """The seat declines cửu vạn at its cửa trên (a real draw), with ``hand``."""
    s = position(BASIC, hand, card="9V", stock=("2N", "2S", "3S"))
    s = engine.apply(s, Draw(0))
    return s


def test_000_iv_7_bo_chan_an_chan() -> None:
    s = _declined_9v("9V 9N 3N 4S 5S")
    assert s.seats[0].declined == (Declined(K("9V"), 1, 1),)
    s = offer(s, 0, K("9V"))
    assert slugs(s, Eat(0, K("9V"), K("9V"))) == ["bo_chan_an_chan"]


def test_000_iv_8_bo_chan_an_ca() -> None:
    s = offer(_declined_9v("9V 3N 4S 5S"), 0, K("9N"))
    assert slugs(s, Eat(0, K("9N"), K("9V"))) == ["bo_chan_an_ca"]


def test_000_iv_9_bo_ca_an_ca() -> None:
    # Declined cửu vạn while holding cửu văn (it could have eaten it as a cạ) …
    s = offer(_declined_9v("9N 3N 4S 5S"), 0, K("9S"))
    assert slugs(s, Eat(0, K("9S"), K("9N"))) == ["bo_ca_an_ca"]
    # … with cửu vạn still in hand the cửu văn is also part of a cạ there (ăn chọn cạ).
    s = offer(_declined_9v("9V 9N 3N 4S 5S"), 0, K("9S"))
    assert slugs(s, Eat(0, K("9S"), K("9N"))) == ["an_chon_ca", "bo_ca_an_ca"]


def test_000_iv_10_bo_chan_danh_chan() -> None:
    s = _declined_9v("9V 9N 3N 4S 5S")
    s = replace(s, phase=Phase.DISCARD, turn=0, exposed=None)
    assert slugs(s, Discard(0, K("9V"))) == ["bo_roi_danh"]


def test_000_iv_bo_ca_an_chan_is_allowed() -> None:
    # Được lấy cửu văn/sách để ăn chắn: declining cửu vạn does not forbid a chắn cửu văn.
    s = offer(_declined_9v("9V 9N 9N 3N 4S"), 0, K("9N"))
    assert slugs(s, Eat(0, K("9N"), K("9N"))) == []


def test_000_iv_11_danh_ca_an_ca() -> None:
    # Đã đánh cạ [cửu vạn, cửu văn], sau lại ăn cạ [tam văn, tam sách].
    s = position(BASIC, "3S 2V 4N 5S", card="3N", discarded=("9V", "9N"))
    assert slugs(s, Eat(0, K("3N"), K("3S"))) == ["danh_ca_an_ca"]
    s = position(BASIC, "3N 3S", card="3N", discarded=("9V", "9N"))
    assert slugs(s, Eat(0, K("3N"), K("3N"))) == []  # a chắn is still allowed


def test_000_iv_12_xe_ca_an_ca() -> None:
    # Có cạ [cửu văn + cửu vạn], đánh cửu vạn, sau lại lấy cửu văn để ăn cửu sách.
    s = position(BASIC, "9V 9N 2S 3N 4S 5V", phase=Phase.DISCARD)
    s = engine.apply(s, Discard(0, K("9V")))
    s = offer(s, 0, K("9S"))
    assert slugs(s, Eat(0, K("9S"), K("9N"))) == ["xe_ca_an_ca"]


def test_000_iv_13_danh_roi_an() -> None:
    s = position(BASIC, "9V 9V 2S 3N 4S 5V", phase=Phase.DISCARD)
    s = engine.apply(s, Discard(0, K("9V")))
    s = offer(s, 0, K("9V"))
    assert slugs(s, Eat(0, K("9V"), K("9V"))) == ["danh_roi_an"]


def test_000_iv_14_danh_doi_chan() -> None:
    # Đánh cửu vạn, sau lại đánh tiếp một quân cửu vạn nữa.
    s = position(BASIC, "9V 9V 2S 3N 4S 5V", phase=Phase.DISCARD)
    s = engine.apply(s, Discard(0, K("9V")))
    s = replace(s, phase=Phase.DISCARD, turn=0, exposed=None)
    assert slugs(s, Discard(0, K("9V"))) == ["danh_doi_chan"]


def test_000_iv_15_an_roi_danh() -> None:
    s = position(BASIC, "9V 9V 2S 3N 4S", card="9V")
    s = engine.apply(s, Eat(0, K("9V"), K("9V")))
    assert slugs(s, Discard(0, K("9V"))) == ["an_roi_danh"]


def test_000_iv_16_an_ca_an_chan_cung_hang() -> None:
    # Chắn cửu văn, lẻ cửu sách; lấy cửu sách ăn cửu vạn; sau lại tách cửu văn ăn cửu văn khác.
    s = position(BASIC, "9N 9N 9S 2S 3N 4S", card="9V")
    s = engine.apply(s, Eat(0, K("9V"), K("9S")))
    s = engine.apply(s, Discard(0, K("2S")))
    s = offer(s, 0, K("9N"))
    assert slugs(s, Eat(0, K("9N"), K("9N"))) == ["an_ca_an_chan_cung_hang"]


def test_000_iv_17_danh_ca_khi_da_an_ca() -> None:
    # The title: after eating a cạ, discarding the second card of a cạ.
    s = position(BASIC, "3N 3S 2V 5S 6N", phase=Phase.DISCARD, mat=(ca("9V", "9S"),))
    s = engine.apply(s, Discard(0, K("3N")))
    s = replace(s, phase=Phase.DISCARD, turn=0, exposed=None)
    assert slugs(s, Discard(0, K("3S"))) == ["an_ca_danh_ca"]


def test_000_iv_17_example_danh_tam_van_tam_sach_roi_an_ca() -> None:
    # The seed's example: đã đánh tam văn, tam sách, sau đó lấy cửu vạn ăn cửu sách.
    s = position(BASIC, "9V 2V 5S 6N", card="9S", discarded=("3N", "3S"))
    assert slugs(s, Eat(0, K("9S"), K("9V"))) == ["danh_ca_an_ca"]


def test_000_iv_18_an_ca_danh_con_cung_hang() -> None:
    # Chắn cửu sách, lẻ cửu vạn; lấy cửu vạn ăn cửu văn; sau lại đánh cửu sách.
    s = position(BASIC, "9S 9S 9V 2V 3N 4S", card="9N")
    s = engine.apply(s, Eat(0, K("9N"), K("9V")))
    assert slugs(s, Discard(0, K("9S"))) == ["an_ca_danh_cung_hang"]
    assert slugs(s, Discard(0, K("2V"))) == []


# --- seed 004 "Lưu ý" --------------------------------------------------------------------------


def test_004_luu_y_1_cho_chi_chi_bach_thu() -> None:
    # Waiting on Chi Chi is only bạch thủ; 6 chắn waiting on Chi Chi never wins …
    assert wins_with(H(BACH_THU_CHI), 0, CC)
    assert not wins_with(H(CHO_CHI_RONG), 0, CC)
    # … and eating Chi Chi with it to wait on another card is đền làng (cho_chi_rong).
    s = position(BASIC, CHO_CHI_RONG, card="CC")
    assert slugs(s, Eat(0, CC, CC)) == ["cho_chi_rong"]
    assert Eat(0, CC, CC) not in engine.legal_moves(s, 0)


def test_004_luu_y_1_dealt_cho_chi_may_eat_another_card_and_discard_chi_chi() -> None:
    hand = CHO_CHI_RONG.replace("7V 7V", "7V 9S")  # 5 chắn + 3 cạ + 7V, 9S, CC: eat 9S, drop CC
    s = position(BASIC, hand, card="9S")
    assert slugs(s, Eat(0, K("9S"), K("9S"))) == []
    s = engine.apply(s, Eat(0, K("9S"), K("9S")))
    assert slugs(s, Discard(0, CC)) == []


def test_004_luu_y_2_ba_dau_win_is_not_bach_thu() -> None:
    hand = H(BA_DAU_9)
    assert waiting_set(hand, 0) == [K("9V"), K("9N"), K("9S")]
    assert not is_bach_thu(hand, 0, K("9V"))


def test_004_luu_y_3_khong_an_ca_doi_cho() -> None:
    # Chờ bạch thủ tam sách, có cạ nhị vạn nhị văn; nọc lật tam vạn: không được ăn thành cạ.
    hand = "4V 4V 5V 5V 6V 6V 7V 7V 8V 8V 2V 2N 4N 4S 5N 5S 6N 6S 3S"
    s = position(BASIC, hand, phase=Phase.AFTER_DRAW, card="3V", source=SRC_STOCK)
    assert waiting_set(s.seats[0].hand, 0) == [K("3S")]
    assert slugs(s, Eat(0, K("3V"), K("3S"))) == ["an_ca_chuyen_cho"]
    assert engine.legal_moves(s, 0) == [Pass(0)]


def test_004_luu_y_4_bo_o_cua_tren_khong_an_o_cua_chi() -> None:
    # Declined cửu vạn at the cửa trên, then draws cửu vạn (nhái): may not eat it as chắn …
    s = position(BASIC, "9V 3N 4S 5S", card="9V", stock=("9V", "2S", "3S"))
    s = engine.apply(s, Draw(0))
    assert s.phase is Phase.AFTER_DRAW and s.exposed is not None and s.exposed.card == K("9V")
    assert slugs(s, Eat(0, K("9V"), K("9V"))) == ["bo_chan_an_chan"]
    # … nor as a cạ.
    s = position(BASIC, "9N 3N 4S 5S", card="9V", stock=("9V", "2S", "3S"))
    s = engine.apply(s, Draw(0))
    assert slugs(s, Eat(0, K("9V"), K("9N"))) == ["bo_ca_an_ca"]
    assert engine.legal_moves(s, 0) == [Pass(0)]


def test_004_luu_y_5_returned_card_may_be_eaten_not_won() -> None:
    # A card returned (trả cửa) into the cửa trên: eat yes, ù no (except chíu ù).
    s = position(BASIC, BACH_THU_9V, card="9V", source=SRC_RETURNED, n=3)
    moves = engine.legal_moves(s, 0)
    assert Eat(0, K("9V"), K("9V")) in moves and U(0) not in moves
    with pytest.raises(FaultRefused) as err:  # a false ù (§9): refused by the fault's slug
        engine.apply(s, U(0))
    assert err.value.code == "u_lao"
    hand = "9V 9V 9V 2V 2V 3V 3V 4V 4V 5V 5V 2N 2S 3N 3S 4N 4S 5N 5S"
    s = position(BASIC, hand, card="9V", source=SRC_RETURNED, n=3)
    after = engine.apply(s, Chiu(0, K("9V")))
    assert after.win is not None and after.win.by_chiu


def _own_discard_chiud() -> HandState:
    """Seat 0 discards 9V; seat 2 (not next) chíus it and returns 5S into seat 0's door."""
    s = position(BASIC, "9V 5S 2V 3N 4S", phase=Phase.DISCARD, n=3, others={2: "9V 9V 9V 5S 6N"})
    s = engine.apply(s, Discard(0, K("9V")))
    assert s.phase is Phase.TRA_CUA and s.turn == 2
    s = engine.apply(s, TraCua(2, K("5S")))
    return s


def test_004_luu_y_5_own_discard_chiud_the_return_is_not_offered_to_you() -> None:
    s = _own_discard_chiud()
    assert s.turn == 1 and s.phase is Phase.OFFER
    assert s.exposed == Exposed(K("5S"), 0, SRC_RETURNED, 2, barred=0)
    assert s.seats[0].declined == ()


def test_004_luu_y_6_may_discard_the_kind_of_a_return_in_your_door() -> None:
    s = _own_discard_chiud()
    s = replace(s, phase=Phase.DISCARD, turn=0, exposed=None)
    assert slugs(s, Discard(0, K("5S"))) == []
    # Otherwise no kind of the cửa trên (declined), own door (discarded) or own mat.
    s = position(
        BASIC,
        "9V 2V 3N 4S 6S",
        phase=Phase.DISCARD,
        declined=(declined("2V"),),
        discarded=("3N",),
        mat=(chan("4S"),),
    )
    assert slugs(s, Discard(0, K("2V"))) == ["bo_roi_danh"]
    assert slugs(s, Discard(0, K("3N"))) == ["danh_doi_chan"]
    assert slugs(s, Discard(0, K("4S"))) == ["an_roi_danh"]
    assert slugs(s, Discard(0, K("9V"))) == []


def test_004_luu_y_7_an_ca_roi_danh_ca_and_danh_ca_roi_chi_an_chan() -> None:
    s = position(BASIC, "3N 2V 6N", phase=Phase.DISCARD, mat=(ca("9V", "9S"),), discarded=("3S",))
    assert slugs(s, Discard(0, K("3N"))) == ["an_ca_danh_ca"]
    s = position(BASIC, "2N 2S 5V 5V", card="5V", discarded=("3N", "3S"))
    assert slugs(s, Eat(0, K("5V"), K("5V"))) == []  # a chắn is still allowed
    s = position(BASIC, "2N 5V 5V", card="2V", discarded=("3N", "3S"))
    assert slugs(s, Eat(0, K("2V"), K("2N"))) == ["danh_ca_an_ca"]


def test_004_luu_y_8_trai_vi_cannot_happen() -> None:
    # The eaten card is recorded under the pair (taken, first): there is no order to get wrong.
    s = position(BASIC, "9N 2V 3N 4S", card="9V")
    s = engine.apply(s, Eat(0, K("9V"), K("9N")))
    group = s.seats[0].mat[-1]
    assert (group.kind, group.taken, group.cards) == ("ca", K("9V"), (K("9V"), K("9N")))


def test_004_luu_y_9_treo_tranh_nhi_van() -> None:
    # Trên bài có nhị văn và chắn nhị vạn; ăn nhị vạn thành cạ với nhị văn là treo tranh.
    s = position(BASIC, "2N 2V 2V 3N 4S", card="2V")
    assert slugs(s, Eat(0, K("2V"), K("2N"))) == ["treo_tranh"]
    assert slugs(s, Eat(0, K("2V"), K("2V"))) == []


# --- random self-play ----------------------------------------------------------------------------


def _cards_accounted(state: HandState) -> int:
    total = sum(sum(st.hand) + st.mat_cards for st in state.seats)
    total += sum(len(d) for d in state.doors) + len(state.stock)
    if state.win is not None and state.win.card is not None:
        total += 1
    return total


def _play(mode: Mode, hand_no: int, bot: Callable[[random.Random, list[Move]], Move]) -> HandState:
    rng = random.Random(hand_no)
    n = rng.choice((2, 3, 4))
    state = engine.new_hand(
        HandConfig(n_seats=n, mode=mode), shuffle(f"faults-{hand_no}".encode()), rng.randrange(n)
    )
    bao_mat: dict[int, int] = {}
    while not state.ended:
        assert _cards_accounted(state) == 100
        seat = state.turn
        moves = engine.legal_moves(state, seat)
        assert moves, f"seat {seat} is stuck in {state.phase}"
        move = bot(rng, moves)
        if state.seats[seat].bao:
            assert not isinstance(move, Eat | Chiu)  # a u is an ù báo (ù láo)
        state = engine.apply(state, move)
        for i, st in enumerate(state.seats):
            if st.bao:
                bao_mat.setdefault(i, len(st.mat))
                assert len(st.mat) == bao_mat[i], "a báo seat ate or chíu'd"
        if state.win is not None:
            assert not state.seats[state.win.seat].bao, "a báo seat won"
    assert _cards_accounted(state) == 100
    return state


def _uniform(rng: random.Random, moves: list[Move]) -> Move:
    return rng.choice(moves)


@pytest.mark.slow
def test_self_play_advanced_uniform_bot() -> None:
    seen: set[str] = set()
    for hand_no in range(300):
        end = _play(ADVANCED, hand_no, _uniform)
        seen.update(f.slug for st in end.seats for f in st.faults)
    assert "u_lao" in seen  # the bot claims ù at random


def _no_u_lao(rng: random.Random, moves: list[Move]) -> Move:
    """Uniform among the legal moves, but a claim of ù only rarely: longer hands, more faults."""
    pick = rng.choice(moves)
    if isinstance(pick, U) and len(moves) > 1 and rng.random() < 0.97:
        pick = rng.choice([m for m in moves if not isinstance(m, U)])
    return pick


@pytest.mark.slow
def test_self_play_advanced_long_hands_record_faults_and_bao_sits_still() -> None:
    seen: set[str] = set()
    for hand_no in range(300, 500):
        end = _play(ADVANCED, hand_no, _no_u_lao)
        for st in end.seats:
            seen.update(f.slug for f in st.faults)
            if any(f.visible for f in st.faults):
                assert st.bao
    assert len(seen) >= 8


@pytest.mark.slow
def test_self_play_basic_never_faults_and_never_sticks() -> None:
    for hand_no in range(150):
        end = _play(BASIC, hand_no, _uniform)
        assert all(not st.faults and not st.bao for st in end.seats)


def _discard_faults_by_scans(st: SeatState, kind: int) -> list[str]:
    """The discard faults as RULES.md §9 states them, each a scan of the seat's history: what
    ``discard_faults`` judges from the history gathered once (``discard_history``)."""
    out: list[str] = []
    if any(d.card == kind for d in st.declined):
        out.append("bo_roi_danh")
    if kind in st.discarded:
        out.append("danh_doi_chan")
    if any(kind in g.cards for g in st.mat):
        out.append("an_roi_danh")
    if kind != CC:
        r = rank(kind)
        ca_ranks = {rank(g.cards[0]) for g in st.mat if g.kind == "ca"}
        if ca_ranks and any(d != CC and d != kind and rank(d) == r for d in st.discarded):
            out.append("an_ca_danh_ca")
        if r in ca_ranks:
            out.append("an_ca_danh_cung_hang")
    hand = list(st.hand)
    hand[kind] -= 1
    cc_clean = not any(d.card == CC for d in st.declined) and CC not in st.discarded
    cc_clean = cc_clean and not any(CC in g.cards for g in st.mat)
    if hand[CC] % 2 == 1:
        rest = list(hand)
        rest[CC] -= 1
        best = best_chan(rest)
        if best >= 0 and best + st.mat_chan >= 6 and (kind == CC or cc_clean):
            out.append("cho_chi_rong")
    return sorted(set(out), key=list(FAULTS).index)


def test_discard_faults_from_the_history_gathered_once_are_the_scans_of_it() -> None:
    """Every kind in every seat's hand along self-played hands (uniform moves, advanced mode:
    the most declined, discarded and eaten cards): the same slugs, in the same order, as the
    scans of the seat's history; the basic mode's analysis blocks exactly those kinds."""
    judged = 0
    for hand_no in range(40):
        rng = random.Random(hand_no)
        for mode in (ADVANCED, BASIC):
            state = engine.new_hand(
                HandConfig(n_seats=4, mode=mode), shuffle(f"scans-{hand_no}".encode()), 0
            )
            while not state.ended:
                for seat, st in enumerate(state.seats):
                    wanted = {
                        k: _discard_faults_by_scans(st, k) for k in range(N_KINDS) if st.hand[k]
                    }
                    for k, slugs in wanted.items():
                        assert discard_faults(st, k) == slugs, (hand_no, seat, CODES[k])
                        judged += 1
                    if mode is BASIC:
                        blocked = analysis_for(state, seat)["blocked"]  # type: ignore[index]
                        assert blocked == {CODES[k]: s[0] for k, s in wanted.items() if s}
                state = engine.apply(state, rng.choice(engine.legal_moves(state, state.turn)))
    assert judged > 10_000
