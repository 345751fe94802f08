"""Writes of the limits players set for themselves (docs/decisions/).

* A tighter limit (a lower number, or one where there was none) is in force at once; a looser
  one (a higher number, or none) waits ``LOOSEN_DELAY`` (24 hours) as ``pending``. Setting a limit
  back to its value in force drops the pending change.
* A cooling-off period (1 to 42 days) or a self-exclusion (183 days or more, ``None``:
  permanent) starts at once and cannot be shortened: its row is append-only in PostgreSQL.
* Every change appends a :class:`PlayerLimitChange` (who, when, old, new, effective at), then
  writes the limit's row as that change makes it: PostgreSQL refuses a row that differs from
  its latest change, a change that does not start from the value in force and a loosening
  effective in less than 24 hours (migration accounts 0025; ``manage.py limits_check``).

Lock: the player's row (``FOR NO KEY UPDATE``, as ``seat_join`` takes it for the ban), so a
change and a join of the same player run one after the other. Once a cool-off or self-exclusion
commits, ``accounts.signals.player_excluded`` lets the games free its seats (games/apps.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.limit_selectors import limit_state
from accounts.models import (
    LIMIT_KINDS,
    LossReservation,
    PlayerExclusion,
    PlayerLimit,
    PlayerLimitChange,
    User,
)
from accounts.signals import player_excluded
from core.errors import InvalidInput
from core.rows import rows_insert

LOOSEN_DELAY = dt.timedelta(hours=24)
COOL_OFF_DAYS = (1, 42)
SELF_EXCLUSION_MIN_DAYS = 183
SELF_EXCLUSION_MAX_DAYS = 100 * 366  # longer is what ``null`` (permanent) says
# Bounds of the values a player may set (the API's serializer says the same).
LIMIT_RANGES = {
    "loss_limit_day": (1, 10**12),
    "loss_limit_week": (1, 10**12),
    "loss_limit_month": (1, 10**12),
    "max_stake": (1, 10**12),
    "reminder_minutes": (5, 24 * 60),
}


def _lock_player(user: Any) -> User:
    return User.objects.select_for_update(no_key=True).get(pk=user.pk)


def _tighter(new: int | None, current: int | None) -> bool:
    """Whether ``new`` restricts more than ``current``: for every limit (losses, stake, minutes
    between reminders) a lower number is tighter, and none is the loosest."""
    return new is not None and (current is None or new < current)


def _check_values(changes: Mapping[str, int | None]) -> None:
    errors: dict[str, list[Any]] = {}
    for kind, value in changes.items():
        if kind not in LIMIT_KINDS:
            errors[kind] = [_("Unknown limit.")]
            continue
        low, high = LIMIT_RANGES[kind]
        if value is not None and (isinstance(value, bool) or not low <= value <= high):
            errors[kind] = [
                _("must be from %(low)s to %(high)s, or null") % {"low": low, "high": high}
            ]
    if errors:
        raise InvalidInput(errors=errors)


def _record(
    *,
    user: Any,
    kind: str,
    old: int | None,
    new: int | None,
    effective_at: dt.datetime,
    now: dt.datetime,
    changed_by: Any,
) -> PlayerLimitChange:
    return PlayerLimitChange.objects.create(
        user_id=user.pk,
        kind=kind,
        old_value=old,
        new_value=new,
        effective_at=effective_at,
        changed_by_id=getattr(changed_by, "pk", None) or user.pk,
        created_at=now,
    )


@transaction.atomic
def limits_set(
    *,
    user: Any,
    changes: Mapping[str, int | None],
    now: dt.datetime | None = None,
    changed_by: Any = None,
) -> list[PlayerLimitChange]:
    """Set some of ``user``'s limits (``changes``: kind → value, ``None`` to remove one): tighter
    at once, looser after 24 hours (pending). Returns the history rows it appended (none for a
    value already in force or already pending). ``changed_by``: the staff member, if not the
    player. 400 ``invalid`` for an unknown limit or a value out of range."""
    _check_values(changes)
    now = now or timezone.now()
    _lock_player(user)
    recorded = []
    for kind, new in changes.items():
        row, _created = PlayerLimit.objects.select_for_update(no_key=True).get_or_create(
            user_id=user.pk, kind=kind
        )
        state = limit_state(row, kind, now)
        # Fold a pending change whose time has come into the value in force.
        row.value, row.pending_value, row.pending_at = (
            state.value,
            state.pending_value,
            (state.pending_at),
        )
        if new == state.value:
            if not state.pending:
                continue
            # Back to the value in force: the pending change is dropped, at once.
            row.pending_value, row.pending_at = None, None
            effective_at = now
        elif _tighter(new, state.value):
            row.value, row.pending_value, row.pending_at = new, None, None
            effective_at = now
        else:
            if state.pending and state.pending_value == new:
                continue  # already waiting for its 24 hours: the clock is not restarted
            row.pending_value, row.pending_at = new, now + LOOSEN_DELAY
            effective_at = row.pending_at
        # The change first: the database refuses a limit that is not what its latest change
        # made it (accounts 0025).
        recorded.append(
            _record(
                user=user,
                kind=kind,
                old=state.value,
                new=new,
                effective_at=effective_at,
                now=now,
                changed_by=changed_by,
            )
        )
        row.save()
    return recorded


def _exclusion_start(
    *, user: Any, kind: str, days: int | None, now: dt.datetime | None
) -> PlayerExclusion:
    now = now or timezone.now()
    _lock_player(user)
    ends_at = None if days is None else now + dt.timedelta(days=days)
    exclusion = PlayerExclusion.objects.create(
        user_id=user.pk, kind=kind, days=days, starts_at=now, ends_at=ends_at
    )
    _record(
        user=user,
        kind=kind,
        old=None,
        new=days,
        effective_at=now,
        now=now,
        changed_by=None,
    )
    user_id = user.pk
    transaction.on_commit(lambda: player_excluded.send(sender=User, user_id=user_id), robust=True)
    return exclusion


@transaction.atomic
def cool_off_start(*, user: Any, days: Any, now: dt.datetime | None = None) -> PlayerExclusion:
    """Start a cooling-off period of ``days`` (1 to 42) at once: no sitting, quick-joining,
    opening tables or claiming bonuses until it ends; the player's seats are freed after the
    hand in play. A shorter cool-off during a longer one shortens nothing (both are kept and
    the one that ends last holds)."""
    low, high = COOL_OFF_DAYS
    if isinstance(days, bool) or not isinstance(days, int) or not low <= days <= high:
        raise InvalidInput(
            errors={"days": [_("must be from %(low)s to %(high)s") % {"low": low, "high": high}]}
        )
    return _exclusion_start(user=user, kind=PlayerExclusion.Kind.COOL_OFF, days=days, now=now)


@transaction.atomic
def self_exclusion_start(
    *, user: Any, days: Any, now: dt.datetime | None = None
) -> PlayerExclusion:
    """Exclude the player from play for ``days`` (183 or more) or, with ``None``, permanently,
    at once. Nobody can shorten it: not the player, not staff (the database refuses to change
    or delete the row)."""
    low, high = SELF_EXCLUSION_MIN_DAYS, SELF_EXCLUSION_MAX_DAYS
    if days is not None and (
        isinstance(days, bool) or not isinstance(days, int) or not low <= days <= high
    ):
        raise InvalidInput(
            errors={
                "days": [
                    _("must be from %(low)s to %(high)s, or null (permanent)")
                    % {"low": low, "high": high}
                ]
            }
        )
    return _exclusion_start(user=user, kind=PlayerExclusion.Kind.SELF_EXCLUSION, days=days, now=now)


def loss_reservations_place(*, hand: Any, amounts: Mapping[int, int]) -> None:
    """Reserve, for their seats in ``hand`` (just dealt), ``amounts`` (user id → Quan) of what
    the players may still lose under their loss limits, in one statement; the settlement takes
    at most that much from each (RULES.md §11, "limits at several tables"). The caller holds the
    players' wallet locks, under which it measured their budgets (the deal's)."""
    rows_insert(
        [
            LossReservation(user_id=user_id, table_id=hand.table_id, hand=hand, amount=amount)
            for user_id, amount in amounts.items()
            if amount > 0
        ]
    )
