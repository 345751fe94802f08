"""RULES.md §5: the winning shape, waiting sets, bạch thủ, ba đầu and the chi chi rule."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rules_builders import kinds

from games.rules.cards import CC, KIND_OF, counts_of
from games.rules.shape import best_chan, is_bach_thu, waiting_set, wins_with

# 5 chắn (CC 4V 5V 6N 9N) + 4 cạ (3N3S 7N7S 8N8V 6V6S) + a lone 2V.
BACH_THU_2V = "CC CC 4V 4V 5V 5V 6N 6N 9N 9N 3N 3S 7N 7S 8N 8V 6V 6S 2V"
# 5 chắn + 3 cạ + the ba đầu 2V 2N 2S.
BA_DAU_2 = "CC CC 4V 4V 5V 5V 6N 6N 9N 9N 3N 3S 7N 7S 6V 6S 2V 2N 2S"
# 5 chắn + 4 cạ + a lone Chi chi.
BACH_THU_CHI = "CC 2V 2V 4V 4V 5V 5V 6N 6N 9N 9N 3N 3S 7N 7S 8N 8V 6V 6S"
# 6 chắn + 3 cạ + a lone Chi chi: chờ chi rộng.
CHO_CHI_RONG = "CC 2V 2V 4V 4V 5V 5V 6N 6N 9N 9N 8S 8S 3N 3S 7N 7S 6V 6S"
# 6 chắn + 3 cạ + a lone 2N: ù rộng on any Nhị.
SIX_CHAN_LONE = "2V 2V 4V 4V 5V 5V 6N 6N 9N 9N 8S 8S 3N 3S 7N 7S 6V 6S 2N"


def hand(text: str) -> tuple[int, ...]:
    return counts_of(kinds(text))


def k(code: str) -> int:
    return KIND_OF[code]


def test_win_needs_ten_pairs_with_at_least_six_chan() -> None:
    assert wins_with(hand(BACH_THU_2V), 0, k("2V"))
    assert not wins_with(hand(BACH_THU_2V), 0, k("2N"))  # 5 chắn + 5 cạ is not a win
    assert not wins_with(hand(BACH_THU_2V), 0, k("4N"))  # cannot split into pairs


def test_mat_chan_count_towards_six() -> None:
    # the same bạch thủ with two chắn moved to the mat (4 fewer hand cards, 2 mat chắn)
    h = hand("CC CC 6N 6N 9N 9N 3N 3S 7N 7S 8N 8V 6V 6S 2V")
    assert wins_with(h, 2, k("2V"))
    assert not wins_with(h, 1, k("2V"))


def test_rank_split_prefers_most_chan() -> None:
    assert best_chan(hand("7V 7V 7N 7S")) == 1  # 7V7V + 7N7S, not 7V7N + 7V7S
    assert best_chan(hand("7V 7N 7S")) == -1  # a ba đầu cannot be paired
    assert best_chan(hand("CC")) == -1


def test_bach_thu_wait_is_one_kind() -> None:
    assert waiting_set(hand(BACH_THU_2V), 0) == [k("2V")]
    assert is_bach_thu(hand(BACH_THU_2V), 0, k("2V"))


def test_ba_dau_wait_is_broad_and_never_bach_thu() -> None:
    # seed 004 "Lưu ý" 2: ù ba đầu is not bạch thủ
    assert waiting_set(hand(BA_DAU_2), 0) == [k("2V"), k("2N"), k("2S")]
    for code in ("2V", "2N", "2S"):
        assert wins_with(hand(BA_DAU_2), 0, k(code))
        assert not is_bach_thu(hand(BA_DAU_2), 0, k(code))


def test_lone_card_with_six_chan_is_u_rong() -> None:
    assert waiting_set(hand(SIX_CHAN_LONE), 0) == [k("2V"), k("2N"), k("2S")]
    assert not is_bach_thu(hand(SIX_CHAN_LONE), 0, k("2N"))


def test_chi_chi_wins_only_bach_thu() -> None:
    assert waiting_set(hand(BACH_THU_CHI), 0) == [CC]
    assert is_bach_thu(hand(BACH_THU_CHI), 0, CC)


def test_cho_chi_rong_never_wins() -> None:
    assert not wins_with(hand(CHO_CHI_RONG), 0, CC)
    assert waiting_set(hand(CHO_CHI_RONG), 0) == []


def test_waiting_set_skips_exhausted_kinds() -> None:
    held = list(hand(BACH_THU_2V))
    held[k("2V")] = 4  # the other three 2V are on this seat's mat
    assert waiting_set(hand(BACH_THU_2V), 0, held) == []


def test_thien_u_checks_the_dealt_twenty() -> None:
    twenty = hand(BACH_THU_2V + " 2V")
    assert wins_with(twenty, 0, None)
    assert is_bach_thu(twenty, 0, None)  # exactly 6 chắn + 4 cạ (seed 003)
    assert not wins_with(hand(BACH_THU_2V + " 2N"), 0, None)


def test_five_copies_never_win() -> None:
    assert not wins_with(hand("2V 2V 2V 2V"), 0, k("2V"))


def _waiting_by_wins_with(hand: list[int], mat_chan: int, held: list[int]) -> list[int]:
    """W(S) by its definition: every kind not exhausted whose card makes ``wins_with`` true."""
    if sum(hand) % 2 == 0:
        return []
    return [c for c in range(len(hand)) if held[c] < 4 and wins_with(hand, mat_chan, c)]


@settings(max_examples=3000, deadline=None)
@given(
    counts=st.lists(st.integers(0, 4), min_size=25, max_size=25),
    mat=st.lists(st.integers(0, 4), min_size=25, max_size=25),
    mat_chan=st.integers(0, 7),
    start=st.sampled_from([None, BACH_THU_2V, BA_DAU_2, BACH_THU_CHI, CHO_CHI_RONG, SIX_CHAN_LONE]),
    swap=st.tuples(st.integers(0, 24), st.integers(0, 24)),
)
def test_the_waiting_set_is_every_kind_that_wins_with_the_hand(
    counts: list[int], mat: list[int], mat_chan: int, start: str | None, swap: tuple[int, int]
) -> None:
    # random counts, or (most random hands wait for nothing) a waiting hand of the examples
    # above with one card swapped for another
    if start is not None:
        counts = list(hand(start))
        out, into = swap
        if counts[out] and counts[into] < 4:
            counts[out] -= 1
            counts[into] += 1
    held = [min(4, c + m) for c, m in zip(counts, mat, strict=True)]
    assert waiting_set(counts, mat_chan, held) == _waiting_by_wins_with(counts, mat_chan, held)
    assert waiting_set(counts, mat_chan) == _waiting_by_wins_with(counts, mat_chan, counts)
