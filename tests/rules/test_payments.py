"""RULES.md §10: who pays whom, in points, for every way a hand can end."""

from __future__ import annotations

from dataclasses import replace

import pytest
from rules_builders import make_deck

from games.rules.engine import new_hand
from games.rules.payments import POT, settle
from games.rules.results import Declaration, Outcome, Result, Verdict
from games.rules.ruleset import build_ruleset
from games.rules.scoring import Score
from games.rules.state import Fault, HandConfig, MatGroup, Mode, Phase, WinInfo


def ended(
    n: int,
    *,
    preset: str = "chan_van_van",
    overrides=None,
    winner: int | None = 0,
    verdict: str = "dung",
    P: int = 9,
    T: int = 9,
    bao=(),
    faults=None,
    result="u",
):
    ruleset = build_ruleset({"preset": preset, "overrides": overrides or {}})
    cfg = HandConfig(n_seats=n, mode=Mode.ADVANCED, ruleset=ruleset)
    state = new_hand(cfg, make_deck({}, n=n), 0)
    seats = list(state.seats)
    for i, b in enumerate(bao):
        seats[b] = replace(seats[b], bao=True, faults=(Fault("danh_roi_an", True, 10 + i),))
    for seat, slugs in (faults or {}).items():
        seats[seat] = replace(
            seats[seat], faults=seats[seat].faults + tuple(Fault(s, False, 5) for s in slugs)
        )
    win = None
    decl = None
    outcome = Outcome(Result(result), winner if result in ("u", "u_lao") else None)
    if result == "u":
        win = WinInfo(winner, 3, "own_draw", False, False, False, winner)
        decl = Declaration(
            cuoc=(("xuong", 1),),
            auto=False,
            verdict=Verdict(verdict),
            true_cuoc=(("xuong", 1),),
            declared_score=Score(P, 0, P),
            true_score=Score(T, 0, T),
        )
    return replace(
        state, seats=tuple(seats), phase=Phase.ENDED, win=win, declaration=decl, outcome=outcome
    )


def net(state) -> dict:
    s = settle(state)
    totals = s.net(state.n_seats)
    assert sum(totals.values()) == 0
    return totals


@pytest.mark.parametrize("n", [2, 3, 4])
def test_clean_win_every_other_seat_pays_the_declared_score(n: int) -> None:
    totals = net(ended(n, P=9))
    assert totals[0] == 9 * (n - 1)
    assert all(totals[i] == -9 for i in range(1, n))


def test_thieu_is_paid_on_what_was_declared() -> None:
    totals = net(ended(4, verdict="thieu", P=5, T=9))
    assert totals[0] == 15


@pytest.mark.parametrize("n", [3, 4])
def test_bao_seat_pays_for_the_whole_village(n: int) -> None:
    totals = net(ended(n, P=9, bao=(1,)))
    assert totals[1] == -9 * (n - 1) and totals[0] == 9 * (n - 1)
    assert all(totals[i] == 0 for i in range(2, n))


def test_several_bao_seats_each_pay_as_if_alone() -> None:
    totals = net(ended(4, P=9, bao=(1, 2)))
    assert totals[1] == totals[2] == -27 and totals[0] == 54 and totals[3] == 0


def test_several_bao_seats_only_the_last_pays_with_bao_payer_last() -> None:
    totals = net(ended(4, preset="thapthanh", P=9, bao=(1, 2)))
    assert totals[2] == -27 and totals[1] == 0 and totals[0] == 27


@pytest.mark.parametrize("slug", ["treo_tranh", "an_thuong_khi_chiu", "bo_u"])
def test_winner_with_a_no_pay_fault_is_paid_nothing(slug: str) -> None:
    s = settle(ended(4, faults={0: [slug]}))
    assert s.transfers == ()


def test_thong_carries_after_treo_tranh_only_when_the_option_says_so() -> None:
    assert settle(ended(4, faults={0: ["treo_tranh"]})).thong_next == 0
    assert settle(ended(4, preset="thapthanh", faults={0: ["treo_tranh"]})).thong_next is None
    assert settle(ended(4)).thong_next == 0


@pytest.mark.parametrize(
    "slug", ["an_chon_ca", "co_chan_cau_ca", "an_ca_chuyen_cho", "cho_chi_rong"]
)
def test_winner_with_a_den_lang_fault_pays_every_seat_its_declared_score(slug: str) -> None:
    totals = net(ended(4, P=9, faults={0: [slug]}))
    assert totals[0] == -27 and totals[1] == totals[2] == totals[3] == 9


def test_den_lang_fixed_points_in_thapthanh() -> None:
    totals = net(ended(3, preset="thapthanh", P=9, faults={0: ["an_chon_ca"]}))
    assert totals[0] == -34 and totals[1] == 17


def test_xuong_sai_with_two_players_nobody_pays() -> None:
    assert settle(ended(2, verdict="sai")).transfers == ()


@pytest.mark.parametrize("n", [3, 4])
def test_xuong_sai_winner_pays_every_non_bao_seat_what_it_declared(n: int) -> None:
    totals = net(ended(n, verdict="sai", P=12, T=5))
    assert totals[0] == -12 * (n - 1)


def test_xuong_sai_bao_seats_pay_non_bao_seats_the_true_score() -> None:
    totals = net(ended(4, verdict="sai", P=12, T=5, bao=(1,)))
    # the winner pays seats 2 and 3 its declared 12; báo seat 1 pays seats 2 and 3 the true 5
    assert totals == {0: -24, 1: -10, 2: 17, 3: 17, POT: 0}


@pytest.mark.parametrize("n", [2, 3, 4])
def test_u_lao_claimer_pays_every_other_seat_17(n: int) -> None:
    totals = net(ended(n, result="u_lao", winner=1))
    assert totals[1] == -17 * (n - 1)


def test_four_eleven_low_win_costs_the_winner_11_each() -> None:
    totals = net(ended(4, overrides={"four_eleven": True}, P=3, T=3))
    assert totals[0] == -33
    assert net(ended(4, overrides={"four_eleven": True}, P=4, T=4))[0] == 12


def test_hoa_nobody_pays() -> None:
    assert settle(ended(4, result="hoa", winner=None)).transfers == ()


def test_ga_gop_stakes_and_chiu_flows_go_to_the_pot() -> None:
    state = ended(4, overrides={"ga_gop": True})
    seats = list(state.seats)
    seats[1] = replace(seats[1], mat=(MatGroup("chiu", (5,) * 4, 5, "stock", 1),))
    seats[2] = replace(seats[2], mat=(MatGroup("chiu", (24,) * 4, 24, "discard", 3),))
    totals = net(replace(state, seats=tuple(seats)))
    # stakes 4; seat 1's stock chíu: 3 others pay 1; seat 2's chíu of seat 3's CC: 3 pays 2
    assert totals[POT] == 4 + 3 + 2
    assert totals[3] < totals[2]
