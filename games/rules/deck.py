"""The 100-card deck, the auditable shuffle of a secret seed, and dealing (RULES.md §3, §13).

Shuffle algorithm (re-implementable in any language):

1. Start from the canonical order: kinds ``2V 2N 2S 3V … 9S CC`` (kind index 0..24, see
   ``cards.py``), each repeated 4 times: ``[2V,2V,2V,2V,2N,…,CC,CC,CC,CC]``.
2. A byte stream: ``SHA-256(seed ‖ counter)`` for counter = 0, 1, 2 … as 8-byte big-endian,
   concatenated. Read it 4 bytes at a time as big-endian unsigned 32-bit integers ``u``.
3. Fisher–Yates from the end: for ``i`` = 99 down to 1, draw ``u`` until
   ``u < 2**32 - (2**32 % (i + 1))`` (rejection removes modulo bias), set ``j = u % (i + 1)``
   and swap positions ``i`` and ``j``.
4. The first dealer is ``int.from_bytes(SHA-256(b"dealer" ‖ seed)[:4], "big") % n_seats``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

from games.rules.cards import COPIES, N_KINDS, counts_of, parse_kinds
from games.rules.errors import InvalidInput, gettext_noop

DECK_SIZE = 100
HAND_SIZE = 19
CANONICAL_DECK: tuple[int, ...] = tuple(k for k in range(N_KINDS) for _ in range(COPIES))


def _u32_stream(seed: bytes) -> Iterator[int]:
    counter = 0
    while True:
        block = hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
        for i in range(0, 32, 4):
            yield int.from_bytes(block[i : i + 4], "big")
        counter += 1


def shuffle(seed: bytes) -> list[int]:
    """The deck order for ``seed`` (see the module docstring for the exact algorithm)."""
    deck = list(CANONICAL_DECK)
    stream = _u32_stream(seed)
    for i in range(DECK_SIZE - 1, 0, -1):
        bound = i + 1
        limit = 2**32 - (2**32 % bound)
        u = next(stream)
        while u >= limit:
            u = next(stream)
        j = u % bound
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def first_dealer(seed: bytes, n_seats: int) -> int:
    return int.from_bytes(hashlib.sha256(b"dealer" + seed).digest()[:4], "big") % n_seats


def check_deck(deck: Sequence[int]) -> None:
    """Refuse anything but a permutation of the 100 cards, given as kinds (ints 0..24)."""
    if isinstance(deck, str | bytes) or not isinstance(deck, Sequence):
        raise InvalidInput("invalid_deck", gettext_noop("A deck is a list of 100 card kinds."))
    if len(deck) != DECK_SIZE:
        raise InvalidInput(
            "invalid_deck", gettext_noop("A deck has 100 cards, not %(count)s."), count=len(deck)
        )
    if not all(type(k) is int and 0 <= k < N_KINDS for k in deck):
        raise InvalidInput(
            "invalid_deck", gettext_noop("A deck is a list of card kinds (0 to 24), not codes.")
        )
    counts = counts_of(deck)
    if any(counts[k] != COPIES for k in range(N_KINDS)):
        raise InvalidInput(
            "invalid_deck", gettext_noop("A deck has exactly four cards of every kind.")
        )


def parse_deck(codes: object) -> list[int]:
    deck = parse_kinds(codes)
    check_deck(deck)
    return deck


def deal(deck: Sequence[int], n_seats: int, dealer: int) -> tuple[list[list[int]], list[int]]:
    """Hands per seat and the stock: seat ``dealer + i`` gets ``deck[19i:19i+19]``; the dealer
    also gets ``deck[19n]`` (the cái card); the rest is the stock, drawn from the front."""
    check_deck(deck)
    hands: list[list[int]] = [[] for _ in range(n_seats)]
    for i in range(n_seats):
        seat = (dealer + i) % n_seats
        hands[seat] = list(deck[HAND_SIZE * i : HAND_SIZE * (i + 1)])
    hands[dealer].append(deck[HAND_SIZE * n_seats])
    return hands, list(deck[HAND_SIZE * n_seats + 1 :])
