"""games.rules.arena_payout: the pool paid by rank, exactly, ties sharing."""

from __future__ import annotations

import random

import pytest

from games.rules.arena_payout import arena_payout, payout_check


def test_the_schedule_pays_by_rank() -> None:
    assert arena_payout(1000, [50, 30, 20], [1, 1, 1, 1]) == [500, 300, 200, 0]


def test_the_largest_remainder_makes_the_sum_exact() -> None:
    # 101 × 50/30/20 = 50.5, 30.3, 20.2 → floors 50, 30, 20 and the 1 left to the largest .5
    assert arena_payout(101, [50, 30, 20], [1, 1, 1]) == [51, 30, 20]
    # 7 × 34/33/33 = 2.38, 2.31, 2.31 → 2, 2, 2 and 1 left to the first
    assert arena_payout(7, [34, 33, 33], [1, 1, 1]) == [3, 2, 2]


def test_remainder_ties_go_to_the_better_rank() -> None:
    assert arena_payout(10, [34, 33, 33], [1, 1, 1]) == [4, 3, 3]
    assert arena_payout(2, [34, 33, 33], [1, 1, 1]) == [1, 1, 0]


def test_tied_players_share_the_ranks_they_occupy() -> None:
    # two tied first share 50 + 30; the third takes the 20
    assert arena_payout(1000, [50, 30, 20], [2, 1]) == [400, 400, 200]
    # three tied for second share 30 + 20 + 0
    assert arena_payout(900, [50, 30, 20], [1, 3]) == [450, 150, 150, 150]


def test_fewer_players_than_ranks_take_the_whole_pool_in_proportion() -> None:
    assert arena_payout(800, [50, 30, 20], [1, 1]) == [500, 300]
    assert arena_payout(800, [50, 30, 20], [1]) == [800]


def test_an_empty_pool_or_nobody() -> None:
    assert arena_payout(0, [100], [1, 1]) == [0, 0]
    assert arena_payout(100, [100], []) == []


def test_random_payouts_sum_to_the_pool_and_follow_the_ranks() -> None:
    rng = random.Random(25)
    for _ in range(500):
        ranks = rng.randint(1, 6)
        cuts = sorted(rng.sample(range(1, 100), ranks - 1))
        schedule = sorted(
            (b - a for a, b in zip([0, *cuts], [*cuts, 100], strict=True)), reverse=True
        )
        groups = [rng.randint(1, 3) for _ in range(rng.randint(1, 6))]
        pool = rng.randint(0, 10**7)
        prizes = arena_payout(pool, schedule, groups)
        assert sum(prizes) == pool and min(prizes) >= 0
        assert all(a + 1 >= b for a, b in zip(prizes, prizes[1:], strict=False))


@pytest.mark.parametrize("schedule", [[], [60, 30], [30, 70], [50, 50, 0], [100.0], [True]])
def test_a_bad_schedule_is_refused(schedule: list) -> None:
    with pytest.raises(ValueError):
        payout_check(schedule)
