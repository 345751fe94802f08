"""games.rules.arena_pairing: free players near in score sit together, no table of one, blocked
pairs never together; the player left out changes, so nobody waits two pairings in a row while
others play."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_the_player_who_waited_sits_first_whatever_its_score() -> None:
    # given three free players at 2-seat tables; the lowest score waited at the last pairing
    free = players(5, 4)
    free.append(FreePlayer(user_id=3, score=0, order=2, waited=1))
    # then it sits, with the best score; the next in line waits this time
    assert arena_pairing(free, size=2) == [(1, 3)]


def test_fewest_hands_played_sit_first() -> None:
    free = [
        FreePlayer(user_id=1, score=9, order=0, hands=4),
        FreePlayer(user_id=2, score=8, order=1, hands=3),
        FreePlayer(user_id=3, score=0, order=2, hands=1),
    ]
    assert arena_pairing(free, size=2) == [(2, 3)]  # the best score played most: it waits


def test_a_player_whose_turn_came_sits_with_one_held_back_when_blocked() -> None:
    # given the two whose turn it is blocked together, and a third held back
    free = [
        FreePlayer(user_id=1, score=9, order=0, waited=1),
        FreePlayer(user_id=2, score=8, order=1, waited=1),
        FreePlayer(user_id=3, score=7, order=2, hands=5),
    ]
    # then the best of them sits with the one held back rather than nobody sitting
    assert arena_pairing(free, size=2, blocked={frozenset((1, 2))}) == [(1, 3)]


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


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=11),
    size=st.integers(min_value=2, max_value=4),
    beats=st.lists(
        st.tuples(st.sets(st.integers(min_value=0, max_value=10)), st.randoms()),
        min_size=1,
        max_size=40,
    ),
)
def test_nobody_waits_two_pairings_in_a_row_while_others_play(
    n: int, size: int, beats: list[tuple[set[int], random.Random]]
) -> None:
    # given an arena of n entrants, its tables ending in any order, the pairing run at each
    # beat with the facts the arena keeps (points, hands played, pairings waited)
    score, hands, waited = [0] * n, [0] * n, [0] * n
    tables: list[tuple[int, ...]] = []
    for ending, rng in beats:
        # when some tables' hands end (points at random), their players are free again
        for index in sorted({i % len(tables) for i in ending} if tables else (), reverse=True):
            for user_id in tables.pop(index):
                hands[user_id] += 1
                score[user_id] += rng.randint(0, 5)
        busy = {u for t in tables for u in t}
        free = [
            FreePlayer(user_id=u, score=score[u], order=u, hands=hands[u], waited=waited[u])
            for u in range(n)
            if u not in busy
        ]
        opened = arena_pairing(free, size=size)
        seated = {u for t in opened for u in t}
        for player in free:
            if player.user_id in seated:
                waited[player.user_id] = 0
            elif opened:
                waited[player.user_id] += 1
        tables += opened
        # then a free player left out while others sat never was the one left out before
        assert max(waited) <= 1
