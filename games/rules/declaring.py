"""Xướng (RULES.md §8): the winner's declaration ends the hand."""

from __future__ import annotations

from typing import Any

from games.rules.state import Phase


def declare(w: Any, move: Any) -> None:
    """Record the declaration and end the hand. Scoring and settlement come from ``scoring``."""
    w.declaration = {"auto": True} if move.auto else {"cuoc": dict(move.cuoc)}
    w.phase = Phase.ENDED
    w.outcome = {"result": "u", "seat": w.win.seat}
