"""The fair deal's key derivation (games.rules.fair_deal): documented bytes, every input
matters, and no single party chooses the deck."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from games.rules.deck import check_deck, shuffle
from games.rules.errors import InvalidInput
from games.rules.fair_deal import (
    CLIENT_SEED_MAX,
    check_client_seed,
    deal_key,
    deal_message,
    fair_deck,
    seed_commitment,
)

SERVER = bytes.fromhex("11" * 32)
SEEDS = ["alice-seed", "", "c" * 64, "d~!"]


def test_the_key_is_hmac_sha256_of_the_documented_length_prefixed_message() -> None:
    message = (
        b"chan-fair-deal-v1"
        + (42).to_bytes(8, "big")
        + bytes([4])
        + b"".join(len(s).to_bytes(4, "big") + s.encode() for s in SEEDS)
    )
    assert deal_message(hand_id=42, client_seeds=SEEDS) == message
    key = hmac.new(SERVER, message, hashlib.sha256).digest()
    assert deal_key(server_seed=SERVER, hand_id=42, client_seeds=SEEDS) == key
    deck = fair_deck(server_seed=SERVER, hand_id=42, client_seeds=SEEDS)
    assert deck == shuffle(key)
    check_deck(deck)
    assert seed_commitment(SERVER) == hashlib.sha256(SERVER).hexdigest()


@pytest.mark.parametrize("seat", range(4))
def test_for_a_committed_server_seed_any_one_seats_seed_changes_the_deck(seat: int) -> None:
    # The server's seed is fixed (committed) before the seats' are known: whatever it is,
    # each seat alone still moves the deck.
    before = fair_deck(server_seed=SERVER, hand_id=7, client_seeds=SEEDS)
    for other in ("x", "alice-seed2", "", "0" * CLIENT_SEED_MAX):
        seeds = list(SEEDS)
        if seeds[seat] == other:
            continue
        seeds[seat] = other
        assert fair_deck(server_seed=SERVER, hand_id=7, client_seeds=seeds) != before


def test_the_server_seed_and_the_hand_id_change_the_deck_too() -> None:
    deck = fair_deck(server_seed=SERVER, hand_id=7, client_seeds=SEEDS)
    other_server = bytes.fromhex("12" + "11" * 31)
    assert fair_deck(server_seed=other_server, hand_id=7, client_seeds=SEEDS) != deck
    assert fair_deck(server_seed=SERVER, hand_id=8, client_seeds=SEEDS) != deck
    # and it is not the server seed's own shuffle (the pre-fair-deal deck)
    assert deck != shuffle(SERVER)


def test_the_length_prefixes_keep_seat_boundaries_apart() -> None:
    a = deal_message(hand_id=1, client_seeds=["ab", ""])
    b = deal_message(hand_id=1, client_seeds=["a", "b"])
    c = deal_message(hand_id=1, client_seeds=["", "ab"])
    assert len({a, b, c}) == 3
    # seat order matters: swapping two seats' seeds is another deck
    assert fair_deck(server_seed=SERVER, hand_id=1, client_seeds=["x", "y"]) != fair_deck(
        server_seed=SERVER, hand_id=1, client_seeds=["y", "x"]
    )


@pytest.mark.parametrize(
    "bad", ["has space", "é", "a" * (CLIENT_SEED_MAX + 1), "tab\t", None, 12, b"bytes"]
)
def test_a_malformed_client_seed_is_refused(bad: object) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_client_seed(bad)
    assert caught.value.code == "invalid"


@pytest.mark.parametrize("good", ["", "a", "!~", "f" * CLIENT_SEED_MAX])
def test_a_client_seed_of_printable_ascii_up_to_the_bound_is_accepted(good: str) -> None:
    assert check_client_seed(good) == good
