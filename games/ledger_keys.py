"""The idempotency keys of a hand's ledger transactions: its settlement and its void. One
place, read by the services that book them and by the selectors and audits that find them."""

from __future__ import annotations


def settlement_key(hand_id: int) -> str:
    return f"hand:{hand_id}:settlement"


def void_key(hand_id: int) -> str:
    return f"hand:{hand_id}:void"


def tournament_entries_key(tournament_id: int) -> str:
    """The arena's entry fees taken into its pool at the start."""
    return f"tournament:{tournament_id}:entries"


def tournament_prizes_key(tournament_id: int) -> str:
    """The arena's pool paid out by rank at the end."""
    return f"tournament:{tournament_id}:prizes"


def tournament_refund_key(tournament_id: int) -> str:
    """A cancelled arena's pool refunded to its entrants."""
    return f"tournament:{tournament_id}:refund"
