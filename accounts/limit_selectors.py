"""Reads of the limits players set for themselves: the limits in force at an instant,
the losses of the calendar periods they cover, and the refusals they make.

Periods are calendar periods in ``TIME_ZONE`` (Asia/Ho_Chi_Minh): the day from local midnight,
the week from Monday's, the month from the 1st's. A loss is the net Quan a player's wallet lost
in settled hands in the period: the sum of its legs of hand settlements and of their voids
(a void gives a settlement back); gà góp buy-ins and refunds are not play and do not count.
Every function takes ``now`` so tests (and the admin) read any instant.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import (
    LIMIT_KINDS,
    LedgerAccount,
    LedgerEntry,
    LedgerTransaction,
    LimitKind,
    LossReservation,
    PlayerExclusion,
    PlayerLimit,
    PlayerLimitChange,
)
from core.errors import Conflict
from core.rows import rows_read, values_read

LOSS_PERIODS = {
    LimitKind.LOSS_LIMIT_DAY: "day",
    LimitKind.LOSS_LIMIT_WEEK: "week",
    LimitKind.LOSS_LIMIT_MONTH: "month",
}
PLAY_KINDS = (LedgerTransaction.Kind.HAND_SETTLEMENT, LedgerTransaction.Kind.HAND_VOID)


# A table read asks for a seated player's reality check (the limits in force and the session's
# net) and a seat's join and ready check the limits: these reads are fixed statements, not
# compiled by the ORM on every call (docs/decisions/lean-move.md).
# The entry's own copy of its transaction's created_at is the partition key (accounts 0022), so
# only the period's months are read.
_NET_SQL = (
    f"SELECT sum(e.amount) FROM {LedgerEntry._meta.db_table} e"
    f" JOIN {LedgerAccount._meta.db_table} a ON a.id = e.account_id"
    f" JOIN {LedgerTransaction._meta.db_table} x ON x.id = e.transaction_id"
    f" WHERE a.user_id = %s AND x.kind IN ({', '.join(['%s'] * len(PLAY_KINDS))})"
    " AND e.transaction_created_at >= %s"
)
_NET_UNTIL = " AND e.transaction_created_at < %s"


@dataclass(frozen=True, slots=True)
class LimitState:
    """One limit at an instant: the value in force and, if a raise or a removal waits for its
    24 hours, the value it will be and when."""

    kind: str
    value: int | None
    pending: bool
    pending_value: int | None
    pending_at: dt.datetime | None


def limit_state(row: PlayerLimit | None, kind: str, now: dt.datetime) -> LimitState:
    """The limit ``row`` (or none) as it stands at ``now``: a pending change whose time has come
    is in force."""
    if row is None:
        return LimitState(kind, None, False, None, None)
    if row.pending_at is not None and row.pending_at <= now:
        return LimitState(kind, row.pending_value, False, None, None)
    if row.pending_at is not None:
        return LimitState(kind, row.value, True, row.pending_value, row.pending_at)
    return LimitState(kind, row.value, False, None, None)


def limits_in_force(user: Any, now: dt.datetime | None = None) -> dict[str, LimitState]:
    """Every limit of ``user`` at ``now``, by kind (all five kinds, none set → value None)."""
    now = now or timezone.now()
    rows = {row.kind: row for row in rows_read(PlayerLimit, "user_id = %s", [user.pk])}
    return _limits_from(rows, now)


def _limits_from(rows: dict[str, PlayerLimit], now: dt.datetime) -> dict[str, LimitState]:
    return {kind: limit_state(rows.get(kind), kind, now) for kind in LIMIT_KINDS}


def period_bounds(period: str, now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """The calendar ``period`` (``day``, ``week`` from Monday, ``month``) in ``TIME_ZONE`` that
    holds ``now``: its start and the next one's, in UTC."""
    zone = ZoneInfo(settings.TIME_ZONE)
    local = now.astimezone(zone).date()
    if period == "day":
        start, end = local, local + dt.timedelta(days=1)
    elif period == "week":
        start = local - dt.timedelta(days=local.weekday())
        end = start + dt.timedelta(days=7)
    elif period == "month":
        start = local.replace(day=1)
        end = (start + dt.timedelta(days=32)).replace(day=1)
    else:
        raise ValueError(period)
    return (
        dt.datetime.combine(start, dt.time(), tzinfo=zone).astimezone(dt.UTC),
        dt.datetime.combine(end, dt.time(), tzinfo=zone).astimezone(dt.UTC),
    )


def net_play_result(user: Any, start: dt.datetime, end: dt.datetime | None = None) -> int:
    """The net Quan the wallet of ``user`` won (positive) or lost (negative) in settled hands
    booked from ``start`` (to ``end``)."""
    params = [user.pk, *PLAY_KINDS, start]
    if end is None:
        rows = values_read(LedgerEntry, _NET_SQL, params)
    else:
        rows = values_read(LedgerEntry, _NET_SQL + _NET_UNTIL, [*params, end])
    return int(rows[0][0] or 0)


def losses_in_period(user: Any, period: str, now: dt.datetime | None = None) -> int:
    """The Quan ``user`` lost in settled hands in the calendar ``period`` holding ``now`` (0 when
    it won overall)."""
    start, end = period_bounds(period, now or timezone.now())
    return max(0, -net_play_result(user, start, end))


def exclusion_active(
    user: Any, now: dt.datetime | None = None, kind: str | None = None
) -> PlayerExclusion | None:
    """The cooling-off or self-exclusion of ``user`` in force at ``now`` that ends last (a
    self-exclusion before a cool-off, a permanent one first), or None."""
    now = now or timezone.now()
    rows = PlayerExclusion.objects.filter(user_id=user.pk, starts_at__lte=now).exclude(
        ends_at__lte=now
    )
    if kind is not None:
        rows = rows.filter(kind=kind)
    return _exclusion_in_force(list(rows))


def _exclusion_in_force(active: list[PlayerExclusion]) -> PlayerExclusion | None:
    if not active:
        return None
    forever = dt.datetime.max.replace(tzinfo=dt.UTC)
    return max(active, key=lambda e: (e.kind == "self_exclusion", e.ends_at or forever))


def _when(moment: dt.datetime | None) -> str:
    if moment is None:
        return str(_("permanently"))
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def exclusion_refusal(exclusion: PlayerExclusion) -> Conflict:
    """409 ``cooling_off`` or ``self_excluded`` with ``ends_at`` (null: permanent)."""
    extra = {"ends_at": _when(exclusion.ends_at) if exclusion.ends_at else None}
    if exclusion.kind == PlayerExclusion.Kind.COOL_OFF:
        return Conflict(
            _("You are cooling off until %(when)s: no play and no bonus until then."),
            code="cooling_off",
            extra=extra,
            when=_when(exclusion.ends_at),
        )
    if exclusion.ends_at is None:
        return Conflict(
            _("You excluded yourself permanently: no play and no bonus."),
            code="self_excluded",
            extra=extra,
        )
    return Conflict(
        _("You excluded yourself until %(when)s: no play and no bonus until then."),
        code="self_excluded",
        extra=extra,
        when=_when(exclusion.ends_at),
    )


def loss_limit_refusal(user: Any, now: dt.datetime | None = None) -> Conflict | None:
    """409 ``loss_limit_reached`` (with ``limit``, ``period``, ``lost``, ``resets_at``) when
    ``user`` lost at least one of its loss limits in force in that limit's period, else None."""
    now = now or timezone.now()
    return _loss_limit_refusal(user, limits_in_force(user, now), now)


def _loss_limit_refusal(
    user: Any, limits: dict[str, LimitState], now: dt.datetime
) -> Conflict | None:
    for kind, period in LOSS_PERIODS.items():
        limit = limits[kind].value
        if limit is None:
            continue
        lost = losses_in_period(user, period, now)
        if lost >= limit:
            resets_at = _when(period_bounds(period, now)[1])
            return Conflict(
                _(
                    "You reached your loss limit of %(limit)s Quan for this %(period)s "
                    "(%(lost)s lost); you can play again at %(when)s."
                ),
                code="loss_limit_reached",
                extra={"limit": limit, "period": period, "lost": lost, "resets_at": resets_at},
                limit=limit,
                period=_PERIOD_NAMES[period],
                lost=lost,
                when=resets_at,
            )
    return None


_PERIOD_NAMES = {"day": _("day"), "week": _("week"), "month": _("month")}


def play_refusal(
    user: Any, now: dt.datetime | None = None, *, stakes: bool = True
) -> Conflict | None:
    """Why ``user`` may not play at ``now`` (cooling off, self-excluded or, with ``stakes``, at a
    loss limit), or None."""
    now = now or timezone.now()
    exclusion = exclusion_active(user, now)
    if exclusion is not None:
        return exclusion_refusal(exclusion)
    return loss_limit_refusal(user, now) if stakes else None


# Every deal asks them, for all its players: fixed statements (core.rows), not compiled per deal.
# ``PlayerExclusion.objects.filter(user_id__in=…, starts_at__lte=now).exclude(ends_at__lte=now)``
# and ``PlayerLimit.objects.filter(user_id__in=…)``, each in its model's ``Meta.ordering``.
_EXCLUSIONS_IN_FORCE = (
    "user_id = ANY(%s) AND starts_at <= %s AND (ends_at IS NULL OR ends_at > %s)"
    " ORDER BY starts_at DESC, id DESC"
)
_LIMITS_OF = "user_id = ANY(%s) ORDER BY user_id, kind"


def play_refusals(
    users: list[Any], now: dt.datetime | None = None, *, stakes: bool = True
) -> dict[int, Conflict | None]:
    """:func:`play_refusal` of several players by id, their exclusions and limits read once for
    all of them (before a deal); the losses only of those with a loss limit."""
    now = now or timezone.now()
    ids = [user.pk for user in users]
    exclusions: dict[int, list[PlayerExclusion]] = {}
    for row in rows_read(PlayerExclusion, _EXCLUSIONS_IN_FORCE, [ids, now, now]):
        exclusions.setdefault(row.user_id, []).append(row)
    limits: dict[int, dict[str, PlayerLimit]] = {}
    if stakes:
        for limit in rows_read(PlayerLimit, _LIMITS_OF, [ids]):
            limits.setdefault(limit.user_id, {})[limit.kind] = limit
    refusals: dict[int, Conflict | None] = {}
    for user in users:
        exclusion = _exclusion_in_force(exclusions.get(user.pk, []))
        if exclusion is not None:
            refusals[user.pk] = exclusion_refusal(exclusion)
        elif stakes:
            own = _limits_from(limits.get(user.pk, {}), now)
            refusals[user.pk] = _loss_limit_refusal(user, own, now)
        else:
            refusals[user.pk] = None
    return refusals


# What a player's seats have reserved of its loss limits and not yet settled (accounts 0024):
# ``LossReservation.objects.filter(user=…, hand__settled_at__isnull=True).exclude(hand=…)``.
_RESERVED_SQL = (
    f"SELECT coalesce(sum(r.amount), 0) FROM {LossReservation._meta.db_table} r"
    " JOIN games_hand h ON h.id = r.hand_id"
    " WHERE r.user_id = %s AND h.settled_at IS NULL AND r.hand_id <> %s"
)


@dataclass(frozen=True, slots=True)
class LossBudget:
    """What a player with a loss limit may still lose (RULES.md §11, "limits at several
    tables"): under ``kind``, the loss limit that leaves least, ``limit`` less what it ``lost``
    in that limit's period and what its seats ``reserved`` at deals not yet settled."""

    kind: str
    limit: int
    lost: int
    reserved: int

    @property
    def left(self) -> int:
        return self.limit - self.lost - self.reserved

    def refusal(self, *, needed: int) -> Conflict:
        """409 ``loss_limit_reached`` for a seat whose hold (``needed``) does not fit."""
        period = LOSS_PERIODS[LimitKind(self.kind)]
        return Conflict(
            _(
                "This table holds %(needed)s Quan a hand, more than your loss limit of "
                "%(limit)s Quan for this %(period)s lets you still risk (%(left)s)."
            ),
            code="loss_limit_reached",
            extra={
                "limit": self.limit,
                "period": period,
                "lost": self.lost,
                "reserved": self.reserved,
                "needed": needed,
            },
            needed=needed,
            limit=self.limit,
            period=_PERIOD_NAMES[period],
            left=max(self.left, 0),
        )


def loss_budget(
    user: Any,
    limits: dict[str, LimitState],
    now: dt.datetime,
    *,
    except_hand_id: int = 0,
) -> LossBudget | None:
    """What ``user`` may still lose under its loss ``limits`` in force at ``now`` (None without
    one), its reservations of every hand not yet settled counted, but ``except_hand_id``'s.
    Read it under the player's wallet lock: deals and settlements take it before they reserve
    or book, so the budget cannot change meanwhile."""
    budget = None
    reserved: int | None = None
    for kind, period in LOSS_PERIODS.items():
        limit = limits[kind].value
        if limit is None:
            continue
        if reserved is None:
            rows = values_read(LossReservation, _RESERVED_SQL, [user.pk, except_hand_id])
            reserved = int(rows[0][0])
        here = LossBudget(kind, limit, losses_in_period(user, period, now), reserved)
        if budget is None or here.left < budget.left:
            budget = here
    return budget


def loss_reservations_of(*, hand_id: int) -> dict[int, int]:
    """What each player's seat in the hand reserved of its loss limits at the deal, by user id
    (players without a loss limit then reserved nothing)."""
    return dict(values_read(LossReservation, _RESERVATIONS_OF_SQL, [hand_id]))


_RESERVATIONS_OF_SQL = (
    f"SELECT user_id, amount FROM {LossReservation._meta.db_table} WHERE hand_id = %s"
)


def limits_in_force_of(users: list[Any], now: dt.datetime) -> dict[int, dict[str, LimitState]]:
    """:func:`limits_in_force` of several players by id, read once for all of them."""
    rows: dict[int, dict[str, PlayerLimit]] = {}
    for row in rows_read(PlayerLimit, _LIMITS_OF, [[user.pk for user in users]]):
        rows.setdefault(row.user_id, {})[row.kind] = row
    return {user.pk: _limits_from(rows.get(user.pk, {}), now) for user in users}


def play_check(user: Any, now: dt.datetime | None = None, *, stakes: bool = True) -> None:
    """Raise :func:`play_refusal`'s error, if any."""
    refusal = play_refusal(user, now, stakes=stakes)
    if refusal is not None:
        raise refusal


def stake_check(user: Any, *, stake: int, now: dt.datetime | None = None) -> None:
    """409 ``limit_exceeded`` (with ``max_stake`` and ``stake``) for a table above the highest
    stake ``user`` allows itself."""
    refusal = stake_refusal(max_stake_in_force(user, now), stake=stake)
    if refusal is not None:
        raise refusal


def stake_refusal(max_stake: int | None, *, stake: int) -> Conflict | None:
    """:func:`stake_check`'s error for a player whose highest stake is ``max_stake``, or None."""
    if max_stake is None or stake <= max_stake:
        return None
    return Conflict(
        _("This table's stake (%(stake)s) is above your limit of %(max_stake)s."),
        code="limit_exceeded",
        extra={"limit": "max_stake", "max_stake": max_stake, "stake": stake},
        stake=stake,
        max_stake=max_stake,
    )


def max_stake_in_force(user: Any, now: dt.datetime | None = None) -> int | None:
    row = PlayerLimit.objects.filter(user_id=user.pk, kind=LimitKind.MAX_STAKE).first()
    return limit_state(row, LimitKind.MAX_STAKE, now or timezone.now()).value


def bonus_check(user: Any, now: dt.datetime | None = None) -> None:
    """A player cooling off or self-excluded claims no bonus (``cooling_off``,
    ``self_excluded``)."""
    exclusion = exclusion_active(user, now)
    if exclusion is not None:
        raise exclusion_refusal(exclusion)


def _exclusion_dict(exclusion: PlayerExclusion | None) -> dict[str, Any] | None:
    if exclusion is None:
        return None
    return {
        "kind": exclusion.kind,
        "days": exclusion.days,
        "starts_at": exclusion.starts_at,
        "ends_at": exclusion.ends_at,
        "permanent": exclusion.ends_at is None,
    }


def limits_view(*, user: Any, now: dt.datetime | None = None) -> dict[str, Any]:
    """What ``GET /me/limits`` shows: each limit in force and its pending change, the losses of
    the day, week and month, the cool-off and self-exclusion in force, and why play is refused
    (``play_blocked``: the error a seat would get, or null)."""
    now = now or timezone.now()
    body: dict[str, Any] = {}
    for kind, state in limits_in_force(user, now).items():
        pending = (
            {"value": state.pending_value, "effective_at": state.pending_at}
            if state.pending
            else None
        )
        body[kind] = {"value": state.value, "pending": pending}
    body["losses"] = {p: losses_in_period(user, p, now) for p in ("day", "week", "month")}
    body["cool_off"] = _exclusion_dict(exclusion_active(user, now, kind="cool_off"))
    body["self_exclusion"] = _exclusion_dict(exclusion_active(user, now, kind="self_exclusion"))
    refusal = play_refusal(user, now)
    body["play_blocked"] = (
        None
        if refusal is None
        else {"code": refusal.code, "detail": refusal.detail(), **refusal.extra}
    )
    body["now"] = now
    return body


def limit_history(*, user: Any, limit: int = 100) -> list[PlayerLimitChange]:
    """The latest changes of ``user``'s limits, newest first."""
    return list(PlayerLimitChange.objects.filter(user_id=user.pk)[:limit])
