"""Typed errors of the rules core, each with a stable machine code."""

from __future__ import annotations


class RuleError(ValueError):
    """A move or input the rules refuse. ``code`` is stable and used as the API error code."""

    def __init__(self, code: str, message: str, message_vi: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.message_vi = message_vi or message


class IllegalMove(RuleError):
    """The move is not allowed now (wrong phase, not your turn, card not in hand …)."""


class FaultRefused(IllegalMove):
    """Basic mode: the move would commit a fault (RULES.md §9); ``code`` is the fault's slug."""


class InvalidInput(RuleError):
    """Malformed input: unknown card codes, impossible hands, bad move JSON."""
