"""The idempotency keys of a hand's ledger transactions: its settlement and its void. One
place, read by the services that book them and by the selectors and audits that find them."""

from __future__ import annotations


def settlement_key(hand_id: int) -> str:
    return f"hand:{hand_id}:settlement"


def void_key(hand_id: int) -> str:
    return f"hand:{hand_id}:void"
