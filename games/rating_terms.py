"""The terms of the ratings and leaderboards that both their services and their
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


WEEK, MONTH = "week", "month"  # the season kinds


def season_kind(period: str) -> str | None:
    """``week`` for ``2026-W49``, ``month`` for ``2026-12``, None for ``all``."""
    if period == ALL:
        return None
    return WEEK if "-W" in period else MONTH


def season_bounds(period: str) -> tuple[dt.datetime, dt.datetime]:
    """When the season ``period`` starts and ends (local midnights in Asia/Ho_Chi_Minh, as
    aware datetimes): an ISO week from its Monday, a month from its first day."""
    if season_kind(period) == WEEK:
        year, week = period.split("-W")
        start = dt.date.fromisocalendar(int(year), int(week), 1)
        end = start + dt.timedelta(days=7)
    else:
        year, month = (int(x) for x in period.split("-"))
        start = dt.date(year, month, 1)
        end = dt.date(year + month // 12, month % 12 + 1, 1)
    return (
        dt.datetime.combine(start, dt.time(), tzinfo=BOARD_TZ),
        dt.datetime.combine(end, dt.time(), tzinfo=BOARD_TZ),
    )


def seasons_ended(now: dt.datetime, *, weeks: int, months: int) -> list[str]:
    """The last ``weeks`` weeks and ``months`` months that have ended by ``now``, oldest
    first within each kind (months first)."""
    out: list[str] = []
    local = now.astimezone(BOARD_TZ)
    year, month = local.year, local.month
    for _ in range(months):
        year, month = (year - 1, 12) if month == 1 else (year, month - 1)
        out.insert(0, f"{year}-{month:02d}")
    weekly: list[str] = []
    day = local.date()
    for _ in range(weeks):
        day -= dt.timedelta(days=7)
        y, w, _d = day.isocalendar()
        weekly.insert(0, f"{y}-W{w:02d}")
    return out + weekly


def season_lock_key(period: str) -> int:
    """The advisory lock (second key) of a season: writes to its boards take it shared, its
    close takes it exclusive, so no settlement writes a board the close has read."""
    if season_kind(period) == WEEK:
        year, week = period.split("-W")
        return int(year) * 100 + int(week)
    year, month = period.split("-")
    return -(int(year) * 100 + int(month))
