"""Cards of the Tổ Tôm deck as kind codes (RULES.md §1) and kind-count vectors.

A kind is an ``int`` 0..24: ``(rank - 2) * 3 + suit`` for the 24 ranked kinds (suits V, N, S) and
24 for Chi chi. Hands are count vectors: tuples of 25 small ints, so copies are indistinguishable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from games.rules.errors import InvalidInput, gettext_noop, shown

SUITS = ("V", "N", "S")
SUIT_NAMES = {"V": "Vạn", "N": "Văn", "S": "Sách"}
RANK_NAMES = {2: "Nhị", 3: "Tam", 4: "Tứ", 5: "Ngũ", 6: "Lục", 7: "Thất", 8: "Bát", 9: "Cửu"}
RANKS = tuple(range(2, 10))
CC = 24
N_KINDS = 25
COPIES = 4

CODES: tuple[str, ...] = tuple(f"{r}{s}" for r in RANKS for s in SUITS) + ("CC",)
KIND_OF: dict[str, int] = {code: i for i, code in enumerate(CODES)}

RED_CODES = frozenset({"CC", "8V", "8S", "9V", "9S"})
RED = frozenset(KIND_OF[c] for c in RED_CODES)
TOM = (KIND_OF["3V"], KIND_OF["3S"], KIND_OF["7N"])
LEO = (CC, KIND_OF["9V"], KIND_OF["8S"])

Counts = tuple[int, ...]
EMPTY: Counts = (0,) * N_KINDS


def code(kind: int) -> str:
    return CODES[kind]


def rank(kind: int) -> int:
    """The rank 2..9 of a kind; 0 for Chi chi (it has no rank and forms no cạ)."""
    return 0 if kind == CC else kind // 3 + 2


def suit(kind: int) -> str:
    return "" if kind == CC else SUITS[kind % 3]


def is_red(kind: int) -> bool:
    return kind in RED


def display_name(kind: int) -> str:
    if kind == CC:
        return "Chi Chi"
    return f"{RANK_NAMES[rank(kind)]} {SUIT_NAMES[suit(kind)]}"


def parse_kind(value: object) -> int:
    """Parse one kind code such as ``"7N"`` or ``"CC"``; anything else is an InvalidInput."""
    if not isinstance(value, str) or value not in KIND_OF:
        raise InvalidInput(
            "unknown_card",
            gettext_noop("Unknown card code %(card)s: use 2V…9V, 2N…9N, 2S…9S or CC."),
            card=shown(value),
        )
    return KIND_OF[value]


def parse_kinds(values: object) -> list[int]:
    if not isinstance(values, list | tuple):
        raise InvalidInput("invalid_cards", gettext_noop("Expected a list of card codes."))
    return [parse_kind(v) for v in values]


def counts_of(kinds: Iterable[int]) -> Counts:
    c = [0] * N_KINDS
    for k in kinds:
        c[k] += 1
    return tuple(c)


def kinds_of(counts: Sequence[int]) -> list[int]:
    """The kinds of a count vector, sorted, with repetition."""
    return [k for k, n in enumerate(counts) if n for _ in range(n)]


def codes_of(counts: Sequence[int]) -> list[str]:
    return [CODES[k] for k in kinds_of(counts)]


def add(counts: Counts, kind: int, n: int = 1) -> Counts:
    c = list(counts)
    c[kind] += n
    if c[kind] < 0:
        raise ValueError(f"no {CODES[kind]} to remove")
    return tuple(c)


def rank_kinds(r: int) -> tuple[int, int, int]:
    """The three kinds (V, N, S) of rank ``r`` (2..9)."""
    base = (r - 2) * 3
    return base, base + 1, base + 2


def pair_partners(kind: int) -> tuple[int, ...]:
    """The kinds that pair with ``kind`` (itself for a chắn, its rank's other suits for a cạ):
    the three kinds of its rank, or only Chi chi for Chi chi."""
    if kind == CC:
        return (CC,)
    base = kind - kind % 3
    return base, base + 1, base + 2


def rank_count(hand: Sequence[int], kind: int) -> int:
    """Cards in ``hand`` of ``kind``'s rank in the other two suits (0 for Chi chi)."""
    if kind == CC:
        return 0
    return sum(hand[k] for k in pair_partners(kind)) - hand[kind]


def can_pair(a: int, b: int) -> str | None:
    """``"chan"`` if a and b form a chắn, ``"ca"`` if they form a cạ, else None."""
    if a == b:
        return "chan"
    if a != CC and b != CC and rank(a) == rank(b):
        return "ca"
    return None
