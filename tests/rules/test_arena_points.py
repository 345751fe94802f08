"""games.rules.arena_points: the table of docs/rules.md "Arena points"."""

from __future__ import annotations

import pytest

from games.rules.arena_points import arena_points, win_points
from games.rules.results import (
    HandResult,
    Outcome,
    Result,
    Settlement,
    SettlementFacts,
    Transfer,
    Verdict,
)


def won(
    seat: int,
    n: int,
    *,
    score: int = 2,
    verdict: Verdict = Verdict.DUNG,
    faults: tuple[str, ...] = (),
    penalty: str | None = None,
    bao: tuple[int, ...] = (),
    winner_pays: bool = False,
) -> HandResult:
    others = [s for s in range(n) if s != seat]
    if winner_pays:
        transfers = tuple(Transfer(seat, o, score, "den_lang") for o in others)
    elif verdict is Verdict.SAI and n == 2:
        transfers = ()
    else:
        payers = list(bao) or others
        transfers = tuple(Transfer(p, seat, score, "win") for p in payers)
    facts = SettlementFacts(
        winner=seat,
        verdict=verdict,
        declared_score=score,
        true_score=score,
        winner_faults=faults,
        penalty=penalty,
        bao=bao,
    )
    return HandResult(
        outcome=Outcome(Result.U, seat),
        settlement=Settlement(Result.U, transfers, facts),
    )


@pytest.mark.parametrize(
    ("score", "points"), [(2, 2), (3, 2), (4, 3), (7, 3), (8, 4), (11, 4), (12, 5), (34, 5)]
)
def test_a_paid_win_scores_two_and_a_point_per_cuoc_step(score: int, points: int) -> None:
    assert win_points(score) == points
    assert arena_points(won(1, 3, score=score), 3) == (0, points, 0)


def test_a_thieu_declaration_scores_on_what_was_declared() -> None:
    assert arena_points(won(0, 2, score=8, verdict=Verdict.THIEU), 2) == (4, 0)


def test_hoa_gives_every_seat_one() -> None:
    result = HandResult(outcome=Outcome(Result.HOA), settlement=Settlement(Result.HOA))
    assert arena_points(result, 4) == (1, 1, 1, 1)


def test_u_lao_gives_the_claimer_nothing_and_the_others_one() -> None:
    result = HandResult(outcome=Outcome(Result.U_LAO, 2), settlement=Settlement(Result.U_LAO))
    assert arena_points(result, 3) == (1, 1, 0)


def test_xuong_sai_or_a_winner_fault_scores_the_winner_nothing() -> None:
    assert arena_points(won(0, 3, verdict=Verdict.SAI, winner_pays=True), 3) == (0, 1, 1)
    assert arena_points(won(0, 2, verdict=Verdict.SAI), 2) == (0, 1)
    assert arena_points(won(1, 3, faults=("treo_tranh",)), 3) == (1, 0, 1)
    assert arena_points(won(1, 3, penalty="den_lang", winner_pays=True), 3) == (1, 0, 1)


def test_a_bao_seat_scores_nothing_when_the_winner_does_not_collect() -> None:
    result = won(0, 4, verdict=Verdict.SAI, winner_pays=True, bao=(2,))
    assert arena_points(result, 4) == (0, 1, 0, 1)


def test_a_bao_seat_paying_for_the_village_leaves_the_win_paid() -> None:
    assert arena_points(won(0, 3, score=4, bao=(1,)), 3) == (3, 0, 0)


def test_points_are_never_negative() -> None:
    for result in (won(0, 4, winner_pays=True), won(3, 4, score=40)):
        assert min(arena_points(result, 4)) >= 0
