"""The entries of a hand's log that are not moves: the booking of its settlement (``settled``)
and its void (``voided``). They come after the hand's end, change nothing in its state, and a
replay skips them; they are in the log so that the hand's seq (and ETag) moves when they land
and an auditor reads them with the moves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SETTLED = "settled"
VOIDED = "voided"
RECORD_TYPES = frozenset({SETTLED, VOIDED})


def is_record(event_type: str) -> bool:
    """Whether an event of this type is a record (skipped by a replay), not a move."""
    return event_type in RECORD_TYPES


# What a ``settled`` record repeats of the booked settlement (``Hand.quan``): each seat's Quan,
# the fees, the pot's flows, the capped seats — not the wallet balances it was computed from.
SETTLED_FIELDS = ("seats", "fees", "fee_percent", "pot", "capped", "dropped", "practice")


def settled_record(quan: Mapping[str, Any], transaction: int | None) -> dict[str, Any]:
    """The ``settled`` record's payload (but its type) for the booked settlement ``quan`` and
    its ledger transaction's id (None when nothing moved: a hòa with no pot, a practice hand)."""
    record = {key: quan[key] for key in SETTLED_FIELDS if key in quan}
    record.setdefault("practice", False)
    return {**record, "transaction": transaction}
