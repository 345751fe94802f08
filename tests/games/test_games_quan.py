"""A hand's settlement in Quan (RULES.md §10.8–10.10, §11), with the numbers of the rule book."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.rules.quan import POT, FeeSchedule, FeesError, settle_quan
from games.services.rooms import DEFAULT_ROOMS

FEES = {room["slug"]: room["fees"] for room in DEFAULT_ROOMS}
RICH = [10**9] * 4


def win(winner: int, losers: list[int], points: int, reason: str = "win") -> list[dict]:
    return [{"from": s, "to": winner, "points": points, "reason": reason} for s in losers]


def fine(payer: int, others: list[int], points: int, reason: str) -> list[dict]:
    return [{"from": payer, "to": s, "points": points, "reason": reason} for s in others]


def test_a_clean_win_in_nen_dat_pays_5_percent_declared_by_hand_10_automatically() -> None:
    # Winner 0 declared 5 points, stake 100: each of three seats pays 500.
    for auto, pct, fee in ((False, 5, 75), (True, 10, 150)):
        rate = FeeSchedule.from_dict(FEES["nen-dat"]).percent(
            n_players=4, auto_declared=auto, xuong_sai=False
        )
        booked = settle_quan(
            transfers=win(0, [1, 2, 3], 5), n_seats=4, stake=100, balances=RICH, fee_pct=rate
        )
        assert rate == pct
        assert booked.legs() == {0: 1500 - fee, 1: -500, 2: -500, 3: -500, POT: 0, "house": fee}


def test_bao_pays_for_the_village_in_quan() -> None:
    # The báo seat 2 pays P × 3 losers alone (the points come from the rules core).
    transfers = [{"from": 2, "to": 0, "points": 5 * 3, "reason": "bao_den_lang"}]
    booked = settle_quan(transfers=transfers, n_seats=4, stake=10, balances=RICH, fee_pct=5)
    assert booked.legs() == {0: 150 - 7, 1: 0, 2: -150, 3: 0, POT: 0, "house": 7}


def test_den_lang_17_capped_by_the_winners_balance_is_shared_pro_rata_among_3_payees() -> None:
    # The winner owes 17 × 100 to each of three seats but holds 1,000 Quan.
    booked = settle_quan(
        transfers=fine(0, [1, 2, 3], 17, "den_lang"),
        n_seats=4,
        stake=100,
        balances=[1000, 10**6, 10**6, 10**6],
    )
    assert booked.capped == (0,)
    assert [s.received for s in booked.seats] == [0, 334, 333, 333]
    assert booked.legs()[0] == -1000 and sum(booked.legs().values()) == 0


def test_unequal_debts_share_a_short_balance_by_their_size() -> None:
    transfers = [
        {"from": 3, "to": 0, "points": 3, "reason": "win"},
        {"from": 3, "to": 1, "points": 1, "reason": "win"},
    ]
    booked = settle_quan(transfers=transfers, n_seats=4, stake=1, balances=[0, 0, 0, 2])
    assert [s.received for s in booked.seats] == [2, 0, 0, 0]  # 1.5 / 0.5: the larger rest wins


def test_xuong_sai_fees_by_players_outside_nen_dat() -> None:
    for n, pct in ((2, 30), (3, 10), (4, 5)):
        assert (
            FeeSchedule.from_dict(FEES["chieu-coi"]).percent(
                n_players=n, auto_declared=False, xuong_sai=True
            )
            == pct
        )
    # 3 players: the winner declared 6 points wrongly and pays each other seat 6 × 100.
    booked = settle_quan(
        transfers=fine(0, [1, 2], 6, "xuong_sai"), n_seats=3, stake=100, balances=RICH, fee_pct=10
    )
    assert booked.legs() == {0: -1200, 1: 540, 2: 540, POT: 0, "house": 120}


def test_in_nen_dat_xuong_sai_is_neither_paid_nor_penalised() -> None:
    booked = settle_quan(
        transfers=fine(0, [1, 2], 6, "xuong_sai"),
        n_seats=3,
        stake=100,
        balances=RICH,
        fee_pct=5,
        xuong_sai_settled=False,
    )
    assert set(booked.legs().values()) == {0} and booked.dropped == ("xuong_sai", "xuong_sai")


def test_sap_gu_vip_fees_fall_with_more_players() -> None:
    rates = [
        FeeSchedule.from_dict(FEES["sap-gu-vip"]).percent(
            n_players=n, auto_declared=True, xuong_sai=True
        )
        for n in (2, 3, 4)
    ]
    assert rates == [4, 3, 2]


def test_u_lao_and_four_eleven_cost_the_claimer_to_every_seat() -> None:
    for points, reason in ((17, "u_lao"), (11, "four_eleven")):
        booked = settle_quan(
            transfers=fine(1, [0, 2, 3], points, reason), n_seats=4, stake=10, balances=RICH
        )
        assert booked.legs()[1] == -3 * points * 10


def test_ga_gop_stakes_flow_into_the_pot_and_a_pot_hand_takes_it_all() -> None:
    stakes = [{"from": s, "to": POT, "points": 1, "reason": "ga_gop_stake"} for s in range(4)]
    kept = settle_quan(transfers=stakes, n_seats=4, stake=50, balances=RICH, pot_balance=200)
    assert kept.legs() == {0: -50, 1: -50, 2: -50, 3: -50, POT: 200, "house": 0}
    taken = settle_quan(
        transfers=stakes + win(2, [0, 1, 3], 4),
        n_seats=4,
        stake=50,
        balances=RICH,
        pot_balance=200,
        takes_pot=2,
        fee_pct=5,
    )
    gain = 3 * 200 + 200 + 200 - 50  # the payments, the pot before, this hand's stakes, its own
    assert taken.pot_out == 400 and taken.legs()[POT] == -200
    assert taken.seats[2].received - taken.seats[2].paid == gain
    assert taken.legs()["house"] == gain * 5 // 100


parties = st.one_of(st.integers(0, 3), st.just(POT))


@settings(max_examples=300, deadline=None)
@given(
    transfers=st.lists(
        st.fixed_dictionaries(
            {"from": st.integers(0, 3), "to": parties, "points": st.integers(1, 40)}
        ).map(lambda t: {**t, "reason": "win"}),
        max_size=12,
    ),
    balances=st.lists(st.integers(0, 5000), min_size=4, max_size=4),
    stake=st.integers(1, 500),
    pot=st.integers(0, 10_000),
    fee=st.sampled_from([0, 2, 5, 10, 30]),
    takes_pot=st.one_of(st.none(), st.integers(0, 3)),
)
def test_quan_is_conserved_and_no_wallet_goes_below_zero(
    transfers, balances, stake, pot, fee, takes_pot
) -> None:
    booked = settle_quan(
        transfers=[t for t in transfers if t["from"] != t["to"]],
        n_seats=4,
        stake=stake,
        balances=balances,
        pot_balance=pot,
        fee_pct=fee,
        takes_pot=takes_pot,
    )
    legs = booked.legs()
    assert sum(legs.values()) == 0
    assert all(balances[s] + legs[s] >= 0 for s in range(4))
    assert pot + legs[POT] >= 0 and legs["house"] >= 0


# --------------------------------------------------------------------------- the fee schedule


def test_every_default_rooms_fee_schedule_round_trips_exactly() -> None:
    for fees in FEES.values():
        schedule = FeeSchedule.from_dict(fees)
        assert schedule.to_dict() == fees
        assert FeeSchedule.from_dict(schedule.to_dict()) == schedule
    assert FeeSchedule.from_dict({}).percent(n_players=3, auto_declared=True, xuong_sai=True) == 0


@pytest.mark.parametrize(
    ("fees", "field"),
    [
        ({"declared": True}, "declared"),
        ({"auto": 100.0}, "auto"),
        ({"auto": -1}, "auto"),
        ({"by_players": {"2": 4, "3": 3, "4": 2, "5": 1}}, "by_players"),
        ({"by_players": [4, 3, 2]}, "by_players"),
        ({"xuong_sai": {"2": 30, "3": "10", "4": 5}}, "xuong_sai.3"),
        ({"vip": 2}, "vip"),
        ("5%", "fees"),
    ],
)
def test_a_bad_fee_schedule_is_refused_naming_its_entry(fees, field) -> None:
    with pytest.raises(FeesError) as refused:
        FeeSchedule.from_dict(fees)
    assert refused.value.code == "invalid_fees"
    assert refused.value.field == field
