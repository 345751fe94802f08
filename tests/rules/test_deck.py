"""RULES.md §3 and §13: the deck, the auditable shuffle and the first dealer."""

from __future__ import annotations

import hashlib

import pytest

from games.rules.cards import CODES, COPIES, RED, counts_of, parse_kind
from games.rules.deck import CANONICAL_DECK, first_dealer, parse_deck, shuffle
from games.rules.errors import InvalidInput


def test_deck_has_one_hundred_cards_four_of_each_kind_and_twenty_red() -> None:
    assert len(CANONICAL_DECK) == 100
    assert set(counts_of(CANONICAL_DECK)) == {COPIES}
    assert sum(1 for k in CANONICAL_DECK if k in RED) == 20


def test_shuffle_is_a_deterministic_permutation() -> None:
    a = shuffle(b"seed-1")
    assert a == shuffle(b"seed-1")
    assert a != shuffle(b"seed-2")
    assert sorted(a) == sorted(CANONICAL_DECK)


def test_shuffle_follows_the_documented_algorithm() -> None:
    # An independent re-implementation of the algorithm in deck.py's docstring.
    seed = bytes(range(32))
    stream: list[int] = []
    counter = 0
    while len(stream) < 400:
        block = hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
        stream += [int.from_bytes(block[i : i + 4], "big") for i in range(0, 32, 4)]
        counter += 1
    deck = [k for k in range(25) for _ in range(4)]
    pos = 0
    for i in range(99, 0, -1):
        while stream[pos] >= 2**32 - (2**32 % (i + 1)):
            pos += 1
        j = stream[pos] % (i + 1)
        pos += 1
        deck[i], deck[j] = deck[j], deck[i]
    assert shuffle(seed) == deck


def test_first_dealer_comes_from_the_seed() -> None:
    dealers = {first_dealer(bytes([i]), 4) for i in range(50)}
    assert dealers == {0, 1, 2, 3}


def test_parse_deck_refuses_wrong_decks() -> None:
    codes = [CODES[k] for k in CANONICAL_DECK]
    assert parse_deck(codes) == list(CANONICAL_DECK)
    with pytest.raises(InvalidInput):
        parse_deck(codes[:-1])
    with pytest.raises(InvalidInput):
        parse_deck(codes[:-1] + ["2V"])
    with pytest.raises(InvalidInput) as e:
        parse_deck(codes[:-1] + ["XX"])
    assert e.value.code == "unknown_card"


@pytest.mark.parametrize("bad", ["1V", "2X", "cc", "", None, 7, "10V"])
def test_unknown_card_codes_are_refused_with_a_clear_error(bad: object) -> None:
    with pytest.raises(InvalidInput) as e:
        parse_kind(bad)
    assert e.value.code == "unknown_card"
    assert "Unknown card code" in e.value.message
