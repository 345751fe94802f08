"""The terms of the ratings and leaderboards (issue 25) that both their services and their
selectors read: the provisional threshold, the board keys and the season periods."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

PROVISIONAL_HANDS = 20
BOARD_TZ = ZoneInfo("Asia/Ho_Chi_Minh")
ALL = "all"  # the all-time period
RATING_PREFIX = "rating:"  # + the family: a rating board's key


def week_of(at: dt.datetime) -> str:
    """The ISO week ``2026-W49`` of ``at`` in Asia/Ho_Chi_Minh."""
    year, week, _ = at.astimezone(BOARD_TZ).isocalendar()
    return f"{year}-W{week:02d}"


def month_of(at: dt.datetime) -> str:
    """The month ``2026-12`` of ``at`` in Asia/Ho_Chi_Minh."""
    local = at.astimezone(BOARD_TZ)
    return f"{local.year}-{local.month:02d}"


def periods_of(at: dt.datetime) -> list[str]:
    """The periods a hand that ended at ``at`` counts in."""
    return [ALL, week_of(at), month_of(at)]
