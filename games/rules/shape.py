"""Winning shapes (RULES.md §5): pair decomposition, win checks, waiting sets, bạch thủ.

Ranks are independent: a hand splits into chắn and cạ rank by rank, and Chi chi only forms chắn.
``_RANK_BEST`` holds, for every (V, N, S) count triple of one rank, the most chắn any split into
pairs can have (−1 when the rank's cards cannot all be paired), so a win check is nine lookups.
"""

from __future__ import annotations

from collections.abc import Sequence

from games.rules.cards import CC, COPIES, N_KINDS, Counts, pair_partners

_MAX = COPIES + 1  # counts 0..4 per kind


def _rank_best(a: int, b: int, c: int) -> int:
    best = -1
    for x in range(min(a, b) + 1):  # cạ V+N
        for y in range(min(a - x, c) + 1):  # cạ V+S
            for z in range(min(b - x, c - y) + 1):  # cạ N+S
                ra, rb, rc = a - x - y, b - x - z, c - y - z
                if ra % 2 or rb % 2 or rc % 2:
                    continue
                best = max(best, (ra + rb + rc) // 2)
    return best


_RANK_BEST: tuple[int, ...] = tuple(
    _rank_best(a, b, c) for a in range(_MAX) for b in range(_MAX) for c in range(_MAX)
)


def best_chan(hand: Sequence[int]) -> int:
    """The most chắn a split of all of ``hand`` into chắn and cạ can have; −1 if none exists."""
    cc = hand[CC]
    if cc % 2:
        return -1
    total = cc // 2
    table = _RANK_BEST
    for i in range(0, 24, 3):
        a, b, c = hand[i], hand[i + 1], hand[i + 2]
        if a >= _MAX or b >= _MAX or c >= _MAX:
            return -1
        v = table[a * 25 + b * 5 + c]
        if v < 0:
            return -1
        total += v
    return total


def wins_with(hand: Counts, mat_chan: int, card: int | None) -> bool:
    """Whether the 19-set (``hand`` plus a mat holding ``mat_chan`` chắn) wins with ``card``.

    ``card`` None checks ``hand`` as it is (Thiên ù: the dealer's 20). A win is 10 pairs with at
    least 6 chắn; on Chi chi it must be exactly 6 chắn with the card pairing a lone Chi chi.
    """
    if card is None:
        b = best_chan(hand)
        return b >= 0 and b + mat_chan >= 6
    if hand[card] >= COPIES:
        return False
    h = list(hand)
    h[card] += 1
    b = best_chan(h)
    if b < 0:
        return False
    if card == CC:
        return hand[CC] % 2 == 1 and b + mat_chan == 6
    return b + mat_chan >= 6


def waiting_set(hand: Counts, mat_chan: int, held: Sequence[int] | None = None) -> list[int]:
    """W(S): the kinds that complete a win. ``held`` (hand + mat counts) excludes exhausted kinds.

    ``wins_with`` for each kind, with the hand's ranks looked up once: a card changes only its
    own rank's count triple (or the Chi chi count), so each kind is one lookup, not nine (the
    basic mode's analysis asks this of every discard of a 20-card hand at each view)."""
    held = held or hand
    if sum(hand) % 2 == 0:
        return []
    table = _RANK_BEST
    ranks = []
    for i in range(0, 24, 3):
        a, b, c = hand[i], hand[i + 1], hand[i + 2]
        ranks.append(table[a * 25 + b * 5 + c] if a < _MAX and b < _MAX and c < _MAX else -1)
    broken = sum(1 for v in ranks if v < 0)
    total = sum(v for v in ranks if v >= 0)
    cc = hand[CC]
    out = []
    for k in range(CC):
        if held[k] >= COPIES or hand[k] >= COPIES or cc % 2:
            continue
        r = k // 3
        before = ranks[r]
        if broken - (before < 0):
            continue
        base = r * 3
        t = [hand[base], hand[base + 1], hand[base + 2]]
        t[k - base] += 1
        if t[0] >= _MAX or t[1] >= _MAX or t[2] >= _MAX:
            continue
        after = table[t[0] * 25 + t[1] * 5 + t[2]]
        if after >= 0 and cc // 2 + total - max(before, 0) + after + mat_chan >= 6:
            out.append(k)
    chi_chi_wins = cc % 2 == 1 and not broken and (cc + 1) // 2 + total + mat_chan == 6
    if chi_chi_wins and held[CC] < COPIES and hand[CC] < COPIES:
        out.append(CC)
    return out


def is_bach_thu(hand: Counts, mat_chan: int, card: int | None) -> bool:
    """Bạch thủ: the win has exactly 6 chắn and only this very kind completes it (no ba đầu).

    For Thiên ù (``card`` None) it is a dealt 20 of exactly 6 chắn + 4 cạ (seed 003).
    """
    if card is None:
        return wins_with(hand, mat_chan, None) and best_chan(hand) + mat_chan == 6
    if not wins_with(hand, mat_chan, card):
        return False
    h = list(hand)
    h[card] += 1
    if best_chan(h) + mat_chan != 6:
        return False
    if card == CC:
        return True
    return not any(
        wins_with(hand, mat_chan, other) for other in pair_partners(card) if other != card
    )


def group_hand(hand: Counts) -> dict[str, list[list[int]]]:
    """Split a hand into chắn, cạ, ba đầu and què greedily (most chắn first) for display."""
    h = list(hand)
    chan: list[list[int]] = []
    ca: list[list[int]] = []
    ba_dau: list[list[int]] = []
    que: list[int] = []
    for k in range(N_KINDS):
        while h[k] >= 2:
            chan.append([k, k])
            h[k] -= 2
    for base in range(0, 24, 3):
        kinds = [base + i for i in range(3) if h[base + i]]
        if len(kinds) == 3:
            ba_dau.append(kinds)
        elif len(kinds) == 2:
            ca.append(kinds)
        elif kinds:
            que.append(kinds[0])
    if h[CC]:
        que.append(CC)
    return {"chan": chan, "ca": ca, "ba_dau": ba_dau, "que": [[k] for k in que]}
