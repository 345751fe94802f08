"""The Quan settlement's arithmetic lives in the rules core (``games.rules.quan``), so the
offline verifier (``python -m games.rules.verify``) recomputes a hand's Quan without Django.
This module keeps the old import path for the Django layer."""

from games.rules.quan import (
    HOUSE,
    POT,
    XUONG_SAI_REASONS,
    QuanSettlement,
    SeatQuan,
    fee_percent,
    result_quan,
    settle_quan,
)

__all__ = [
    "HOUSE",
    "POT",
    "XUONG_SAI_REASONS",
    "QuanSettlement",
    "SeatQuan",
    "fee_percent",
    "result_quan",
    "settle_quan",
]
