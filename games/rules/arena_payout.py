"""An arena's prizes: the pool paid by a schedule of percentages by rank, exactly.
A pure function, no Django.

Each rank's exact share is pool × its percentage ÷ 100 (a fraction). Players tied on the
standings (same score, same wins) share the ranks they occupy: the exact shares of those ranks
added up and split evenly. Fewer players than ranks in the schedule: the ranks filled take the
whole pool in the schedule's proportions. Whole Quan by the largest remainder: each player gets
the floor of its exact share, and the Quan left over (fewer than the players) go one each to
the largest fractional parts, ties to the better rank. So the prizes sum to the pool exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction


def payout_check(schedule: Sequence[int]) -> None:
    """A schedule: 1 to 100 ranks of whole percentages, each 1–100, not rising, summing to 100."""
    if not schedule or len(schedule) > 100:
        raise ValueError("a schedule pays 1 to 100 ranks")
    if any(isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= 100 for p in schedule):
        raise ValueError("each rank's share is a whole percentage from 1 to 100")
    if any(b > a for a, b in zip(schedule, schedule[1:], strict=False)):
        raise ValueError("a lower rank never gets more than a better one")
    if sum(schedule) != 100:
        raise ValueError(f"the shares sum to {sum(schedule)}, not 100")


def arena_payout(pool: int, schedule: Sequence[int], groups: Sequence[int]) -> list[int]:
    """The prize of each player, in standings order. ``groups``: the sizes of the tied groups
    in standings order (``[1, 2, 1]``: one first, two tied second, one fourth)."""
    players = sum(groups)
    if players == 0 or pool == 0:
        return [0] * players
    shares = [Fraction(p) for p in schedule[:players]]
    total = sum(shares)
    exact: list[Fraction] = []
    rank = 0
    for size in groups:
        group = sum(shares[rank : rank + size], Fraction(0)) * pool / total / size
        exact.extend([group] * size)
        rank += size
    prizes = [int(e) for e in exact]  # floor: every share is ≥ 0
    left = pool - sum(prizes)
    by_remainder = sorted(range(players), key=lambda i: (-(exact[i] - prizes[i]), i))
    for i in by_remainder[:left]:
        prizes[i] += 1
    return prizes
