"""The fair deal: the deck of a hand is the shuffle of a key derived from the server's seed,
every seat's own seed and the hand's id (RULES.md §13, docs/audit.md "Players' seeds").

Neither side chooses the deck. The server's seed is committed (its SHA-256 published on the
table) before any seat's seed is known, so the server cannot pick it after seeing the seats';
each seat's seed is secret until the end, so no seat can aim at a deck without knowing the
others' and the server's. A seat that gives no seed contributes the empty one.

Key derivation (re-implementable in any language), version ``hmac-sha256-seats-v1``::

    message = b"chan-fair-deal-v1"
              ‖ hand_id as 8 bytes big-endian
              ‖ n_seats as 1 byte
              ‖ for each seat in hand-seat order (0, 1, …):
                    len(seed_i) as 4 bytes big-endian ‖ seed_i   (its UTF-8 bytes)
    key     = HMAC-SHA256(key = the server seed's 32 bytes, msg = message)
    deck    = games.rules.deck.shuffle(key)

The length prefixes make the encoding injective: no two lists of seeds give the same message.
A seat's seed is 0 to 128 printable ASCII characters (``!`` to ``~``, no space).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence

from games.rules.deck import shuffle
from games.rules.errors import InvalidInput, gettext_noop

KEY_ALGORITHM = "hmac-sha256-seats-v1"
DOMAIN = b"chan-fair-deal-v1"
CLIENT_SEED_MAX = 128
_CLIENT_SEED = re.compile(r"[\x21-\x7e]*")


def check_client_seed(seed: object) -> str:
    """``seed`` if it is a valid seat seed (0–128 printable ASCII characters, no space), else
    ``InvalidInput`` ``invalid``."""
    if (
        not isinstance(seed, str)
        or len(seed) > CLIENT_SEED_MAX
        or _CLIENT_SEED.fullmatch(seed) is None
    ):
        raise InvalidInput(
            "invalid",
            gettext_noop(
                "A client seed is at most %(max)s printable ASCII characters, without spaces."
            ),
            max=CLIENT_SEED_MAX,
        )
    return seed


def deal_message(*, hand_id: int, client_seeds: Sequence[str]) -> bytes:
    """The length-prefixed message the key is taken over (see the module docstring)."""
    if not 0 <= hand_id < 2**64 or not 0 < len(client_seeds) < 256:
        raise ValueError("hand id or seat count out of range")
    parts = [DOMAIN, hand_id.to_bytes(8, "big"), len(client_seeds).to_bytes(1, "big")]
    for seed in client_seeds:
        raw = check_client_seed(seed).encode("ascii")
        parts += [len(raw).to_bytes(4, "big"), raw]
    return b"".join(parts)


def deal_key(*, server_seed: bytes, hand_id: int, client_seeds: Sequence[str]) -> bytes:
    """HMAC-SHA256 keyed by the server's seed over :func:`deal_message`."""
    message = deal_message(hand_id=hand_id, client_seeds=client_seeds)
    return hmac.new(server_seed, message, hashlib.sha256).digest()


def fair_deck(*, server_seed: bytes, hand_id: int, client_seeds: Sequence[str]) -> list[int]:
    """The hand's deck: the documented shuffle of :func:`deal_key`."""
    return shuffle(deal_key(server_seed=server_seed, hand_id=hand_id, client_seeds=client_seeds))


def seed_commitment(server_seed: bytes) -> str:
    """The published commitment to a server seed: its SHA-256, hex."""
    return hashlib.sha256(server_seed).hexdigest()


def deck_hash(deck: Sequence[int]) -> str:
    """SHA-256 (hex) of the deck as 100 bytes (each card's kind, 0..24, in deck order): what
    the deal event's payload records, so that the log itself commits to the deck."""
    return hashlib.sha256(bytes(deck)).hexdigest()


def new_server_seed() -> str:
    """A fresh server seed: 32 random bytes, hex."""
    return secrets.token_hex(32)
