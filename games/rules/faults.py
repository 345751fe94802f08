"""Faults (lỗi, RULES.md §9): which faults a move would commit, and their messages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from games.rules.state import Fault

if TYPE_CHECKING:
    from games.rules.moves import Move
    from games.rules.state import HandState

MESSAGES: dict[str, tuple[str, str]] = {}


def faults_of(state: HandState, move: Move) -> list[Fault]:
    """The faults ``move`` would commit in ``state`` (empty when the move is clean)."""
    return []


def message(slug: str, lang: str = "en") -> str:
    en, vi = MESSAGES.get(slug, (slug, slug))
    return vi if lang == "vi" else en
