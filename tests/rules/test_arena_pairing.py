"""games.rules.arena_pairing: free players near in score sit together, no table of one, blocked
pairs never together."""

from __future__ import annotations

import itertools
import random

import pytest

from games.rules.arena_pairing import FreePlayer, arena_pairing, table_sizes


def players(*scores: int) -> list[FreePlayer]:
    return [FreePlayer(user_id=i + 1, score=s, order=i) for i, s in enumerate(scores)]


@pytest.mark.parametrize(
    ("count", "size", "sizes"),
    [
        (0, 4, []),
        (1, 4, []),
        (2, 4, [2]),
        (4, 4, [4]),
        (5, 4, [3, 2]),
        (6, 4, [3, 3]),
        (7, 4, [4, 3]),
        (9, 4, [3, 3, 3]),
        (5, 2, [2, 2, 1]),
        (7, 3, [3, 2, 2]),
    ],
)
def test_table_sizes_are_as_few_and_even_as_can_be(count: int, size: int, sizes: list[int]) -> None:
    assert table_sizes(count, size) == sizes


def test_a_table_size_outside_two_to_four_is_refused() -> None:
    with pytest.raises(ValueError):
        table_sizes(4, 5)


def test_players_near_in_score_sit_together() -> None:
    # given eight free players at 4-seat tables
    free = players(0, 30, 2, 28, 1, 31, 3, 29)
    # then the four best sit together and the four worst together
    tables = arena_pairing(free, size=4)
    assert [set(t) for t in tables] == [{6, 2, 8, 4}, {7, 3, 5, 1}]


def test_an_odd_player_out_waits_at_two_seat_tables() -> None:
    tables = arena_pairing(players(5, 4, 3), size=2)
    assert tables == [(1, 2)]  # the third waits for the next pairing


def test_blocked_pairs_are_never_seated_together() -> None:
    free = players(10, 9, 8, 7)
    tables = arena_pairing(free, size=2, blocked={frozenset((1, 2))})
    assert tables == [(1, 3), (2, 4)]


def test_a_player_blocked_with_everyone_waits_alone() -> None:
    free = players(10, 9, 8)
    blocked = {frozenset((1, 2)), frozenset((1, 3))}
    assert arena_pairing(free, size=4, blocked=blocked) == [(2, 3)]


def test_ties_go_to_the_earlier_entry() -> None:
    free = [FreePlayer(user_id=9, score=0, order=2), FreePlayer(user_id=4, score=0, order=1)]
    free += [FreePlayer(user_id=7, score=0, order=0)]
    assert arena_pairing(free, size=2) == [(7, 4)]


def test_random_pairings_seat_each_player_once_never_alone_never_blocked() -> None:
    rng = random.Random(25)
    for _ in range(300):
        n = rng.randint(0, 14)
        free = [FreePlayer(user_id=i, score=rng.randint(0, 20), order=i) for i in range(n)]
        pairs = list(itertools.combinations(range(n), 2))
        blocked = {frozenset(p) for p in rng.sample(pairs, k=min(len(pairs), rng.randint(0, 4)))}
        size = rng.randint(2, 4)
        tables = arena_pairing(free, size=size, blocked=blocked)
        seated = [u for t in tables for u in t]
        assert len(seated) == len(set(seated))
        assert all(2 <= len(t) <= size for t in tables)
        for t in tables:
            assert not any(frozenset(p) in blocked for p in itertools.combinations(t, 2))
        if not blocked:  # everyone seated, but the odd one out at 2-seat tables
            odd = n % 2 if size == 2 else 0
            assert len(seated) == (n - odd if n >= 2 else 0)
