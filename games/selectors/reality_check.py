"""The reality check: every ``reminder_minutes`` of play, how long the player has
played and what it won or lost. A session is the player's current run at the tables: it began
when it took the oldest of the seats it holds now, and ends when it holds none.

The table view shows it (``reality_check``); the feed can call :func:`reality_check_due`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone

from accounts.limit_selectors import limits_in_force, net_play_result
from accounts.models import LimitKind
from core.rows import values_read
from games.models import Seat


def session_started_at(user: Any) -> dt.datetime | None:
    """When the player's session began (the oldest seat it holds now), or None if it holds
    none."""
    return values_read(Seat, _SESSION_START_SQL, [user.pk])[0][0]


# Every seated player's table read asks it: a fixed statement, not compiled per call.
_SESSION_START_SQL = f"SELECT min(created_at) FROM {Seat._meta.db_table} WHERE player_id = %s"


def reality_check_for(*, user: Any, now: dt.datetime | None = None) -> dict[str, Any] | None:
    """The player's reality check at ``now``: ``reminder_minutes`` (null: none set),
    ``session_started_at``, ``minutes_played``, ``net`` (Quan won, negative: lost, in settled
    hands of the session), ``reminders`` (how many reminders the session has reached), ``due``
    (at least one) and ``next_at``; None outside a session."""
    now = now or timezone.now()
    start = session_started_at(user)
    if start is None:
        return None
    every = limits_in_force(user, now)[LimitKind.REMINDER_MINUTES].value
    minutes = max(0, int((now - start).total_seconds() // 60))
    reminders = minutes // every if every else 0
    return {
        "reminder_minutes": every,
        "session_started_at": start,
        "minutes_played": minutes,
        "net": net_play_result(user, start),
        "reminders": reminders,
        "due": reminders > 0,
        "next_at": start + dt.timedelta(minutes=every * (reminders + 1)) if every else None,
    }


def reality_check_due(user: Any, now: dt.datetime | None = None) -> bool:
    """Whether the player, in a session, has played at least ``reminder_minutes`` (the feed
    compares ``reality_check_for(...)["reminders"]`` with the last one it delivered)."""
    check = reality_check_for(user=user, now=now)
    return bool(check and check["due"])
