"""The Chắn rules core: pure Python, importing nothing from Django, DRF or Celery.

Public entry points: :func:`new_hand`, :func:`legal_moves`, :func:`apply`, :func:`view_for`,
:func:`full_view`, :func:`shuffle`, :func:`move_from_dict`; the typed results of an ended hand
(:class:`Outcome`, :class:`Declaration`, :class:`Settlement`).
"""

from games.rules.cards import CODES, parse_kind, parse_kinds
from games.rules.deck import first_dealer, parse_deck, shuffle
from games.rules.engine import apply, legal_moves, new_hand
from games.rules.errors import FaultRefused, IllegalMove, InvalidInput, RuleError
from games.rules.moves import Move, move_from_dict
from games.rules.results import Declaration, Outcome, Settlement
from games.rules.state import HandConfig, HandState, Mode, Phase

__all__ = [
    "CODES",
    "Declaration",
    "FaultRefused",
    "HandConfig",
    "HandState",
    "IllegalMove",
    "InvalidInput",
    "Mode",
    "Move",
    "Outcome",
    "Phase",
    "RuleError",
    "Settlement",
    "apply",
    "first_dealer",
    "legal_moves",
    "move_from_dict",
    "new_hand",
    "parse_deck",
    "parse_kind",
    "parse_kinds",
    "shuffle",
]
