"""Integers written in ASCII digits, the only ones the API takes from a URL."""

from __future__ import annotations

import re

_ASCII_INT_RE = re.compile(r"[0-9]{1,18}")


def ascii_int(text: str) -> int | None:
    """A non-negative integer written in 1 to 18 ASCII digits, else None. ``int()`` alone takes
    any Unicode digit (``"١"`` is 1), signs, spaces and underscores: every integer the URL
    carries (query parameters, cursor parts) is read by this one function."""
    return int(text) if _ASCII_INT_RE.fullmatch(text) else None
