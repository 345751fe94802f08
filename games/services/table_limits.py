"""Where the limits players set for themselves meet the tables (the limits themselves
are accounts/limits.py and accounts/limit_selectors.py).

``tables.py`` calls these at one line each: before a table is opened or a seat taken
(:func:`table_limits_check`), when quick-join picks its candidates
(:func:`quick_join_within_limits`), and before each deal (:func:`seats_within_limits`, next to
the unseating of players who cannot cover the stake). A cool-off or self-exclusion frees the
player's seats once it commits (:func:`seats_release_excluded`), leaving the hand in play to be
played to its end.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from accounts.holds import wallets_lock
from accounts.limit_selectors import (
    LOSS_PERIODS,
    exclusion_active,
    limits_in_force,
    limits_in_force_of,
    loss_budget,
    loss_reservations_of,
    play_check,
    play_refusals,
    stake_check,
    stake_refusal,
)
from accounts.limits import loss_reservations_place
from accounts.models import LimitKind, User
from core.errors import Conflict
from games.models import Seat, Table
from games.services.feed import UNSEAT_LIMIT
from games.services.pot import pot_refund
from games.services.seat_holds import SIT_STAKES, seat_hold_release

log = logging.getLogger(__name__)


def table_limits_check(user: Any, *, stake: int, practice: bool) -> None:
    """Refuse a seat (or a new table) to a player cooling off or self-excluded (409
    ``cooling_off``, ``self_excluded``, also at practice tables), at a loss limit or with less
    left to lose under one than the seat's hold, 15 × stake (409 ``loss_limit_reached``), or
    above its highest stake (409 ``limit_exceeded``); practice tables put nothing at stake, so
    only the first two apply there."""
    now = timezone.now()
    play_check(user, now, stakes=not practice)
    if not practice:
        stake_check(user, stake=stake, now=now)
        budget = loss_budget(user, limits_in_force(user, now), now)
        if budget is not None and SIT_STAKES * stake > budget.left:
            raise budget.refusal(needed=SIT_STAKES * stake)


def quick_join_within_limits(candidates: QuerySet[Table], user: Any) -> QuerySet[Table]:
    """Quick-join: refuse a player who may not play at all, and keep the tables within its
    highest stake and whose seat's hold its loss limits still leave room for."""
    now = timezone.now()
    play_check(user, now)
    limits = limits_in_force(user, now)
    max_stake = limits[LimitKind.MAX_STAKE].value
    if max_stake is not None:
        candidates = candidates.filter(stake__lte=max_stake)
    budget = loss_budget(user, limits, now)
    if budget is not None:
        candidates = candidates.filter(stake__lte=budget.left // SIT_STAKES)
    return candidates


def refusal_limit(refusal: Conflict) -> str:
    """Which of the player's limits a refusal of :func:`play_refusal` (or of the deal's stake
    checks) is, as the limits endpoints name it: ``loss_limit_day|week|month``, ``max_stake``,
    ``cool_off``, ``self_exclusion``."""
    if refusal.code == "loss_limit_reached":
        return f"loss_limit_{refusal.extra['period']}"
    if refusal.code == "limit_exceeded":
        return str(refusal.extra["limit"])
    return {"cooling_off": "cool_off", "self_excluded": "self_exclusion"}[refusal.code]


def exclusion_limit(user: Any) -> str | None:
    """``cool_off`` or ``self_exclusion`` while one is in force for ``user``, else None."""
    exclusion = exclusion_active(user, timezone.now())
    return exclusion.kind if exclusion is not None else None


def seats_within_limits(
    *, table: Table, seats: list[Seat]
) -> tuple[list[Seat], list[tuple[Seat, str]]]:
    """Before a deal (the caller holds the table row lock): unseat the players whose own limits
    forbid the next hand — cooling off, self-excluded, at a loss limit, with a highest stake
    below the table's, or with less left to lose under a loss limit than the seat's hold
    (:func:`_seats_within_stakes`) — as the players who cannot cover the stake are, their gà
    góp share refunded. Returns the others, and the unseated with which limit
    (:func:`refusal_limit`) for the caller's ``seats_changed`` (``reason`` limit; told once the
    deal is done: the feed is written last). The reason is also logged and shown to the player
    in ``GET /me/limits`` (``play_blocked``) or in the 409 of its next attempt to sit there."""
    now = timezone.now()
    players = [seat.player for seat in seats if not seat.player.is_bot]
    refusals = play_refusals(players, now, stakes=not table.practice)
    kept, unseated = [], []
    for seat in seats:
        refusal = refusals.get(seat.player_id)
        if refusal is None:
            kept.append(seat)
        else:
            unseated.append(_seat_unseat(table, seat, refusal))
    if table.practice or not kept:
        return kept, unseated
    kept, over = _seats_within_stakes(table=table, seats=kept, now=now)
    return kept, unseated + over


def _seat_unseat(table: Table, seat: Seat, refusal: Conflict) -> tuple[Seat, str]:
    log.info(
        "unseated before the deal by its own limits",
        extra={"table_id": table.pk, "user_id": seat.player_id, "reason": refusal.code},
    )
    seat.delete()
    if not table.practice:
        pot_refund(table=table, user=seat.player)
        seat_hold_release(table=table, user=seat.player)
    return seat, refusal_limit(refusal)


def _seats_within_stakes(
    *, table: Table, seats: list[Seat], now: Any
) -> tuple[list[Seat], list[tuple[Seat, str]]]:
    """The stakes a player allows itself, at the deal (RULES.md §11, "limits at several
    tables"): a highest stake below the table's, or a loss limit whose budget — what the player
    may still lose in the period less what its seats at other tables reserved at their deals
    and have not settled yet — is smaller than this seat's hold (15 × stake), unseats it. The
    seats of the others with a loss limit reserve their hold from the budget once the hand is
    dealt (:func:`deal_limits_reserve`).

    Lock order: the table row (the caller's), then every seat's wallet in ascending id
    (``wallets_lock``, as ``seat_holds_for_deal`` takes them next), under which the budgets are
    read: a deal or a settlement of the same player at another table waits for them."""
    humans = [seat.player for seat in seats if not seat.player.is_bot]
    limits = limits_in_force_of(humans, now)
    limited = {
        user_id
        for user_id, own in limits.items()
        if any(own[kind].value is not None for kind in _STAKE_KINDS)
    }
    if not limited:
        return seats, []
    wallets_lock([seat.player for seat in seats])
    needed = SIT_STAKES * table.stake
    kept, unseated = [], []
    for seat in seats:
        own = limits[seat.player_id] if seat.player_id in limited else None
        refusal = None
        if own is not None:
            refusal = stake_refusal(own[LimitKind.MAX_STAKE].value, stake=table.stake)
        if own is not None and refusal is None:
            budget = loss_budget(seat.player, own, now)
            if budget is not None and needed > budget.left:
                refusal = budget.refusal(needed=needed)
        if refusal is None:
            kept.append(seat)
        else:
            unseated.append(_seat_unseat(table, seat, refusal))
    return kept, unseated


_STAKE_KINDS = (
    LimitKind.LOSS_LIMIT_DAY,
    LimitKind.LOSS_LIMIT_WEEK,
    LimitKind.LOSS_LIMIT_MONTH,
    LimitKind.MAX_STAKE,
)


def deal_limits_reserve(*, hand: Any) -> None:
    """Once a hand is dealt (the caller holds the table row and its players' wallet locks,
    :func:`_seats_within_stakes`): each seat of a player with a loss limit reserves its hold
    (15 × stake) of what the player may still lose; the settlement takes at most that from it
    (:func:`settlement_within_limits`)."""
    if hand.table.practice:
        return
    users = [seat.user for seat in hand.seat_list() if not seat.user.is_bot]
    limits = limits_in_force_of(users, timezone.now())
    amounts = {
        user_id: SIT_STAKES * hand.stake
        for user_id, own in limits.items()
        if any(own[kind].value is not None for kind in LOSS_PERIODS)
    }
    loss_reservations_place(hand=hand, amounts=amounts)


def settlement_within_limits(*, hand: Any, capacity: list[int]) -> list[int]:
    """What each seat of ``hand`` can pay (``capacity``, in play order: its hold and free Quan
    at the table) capped by its player's loss limits: at most what the deal reserved for the
    seat, and never more than the player may still lose in the period (its other seats'
    reservations kept), so that a limit is never overshot, however many tables settle at once.
    A player without a loss limit is unchanged. The §10.8 cap then shares the shortfall among
    the payees, as for a balance.

    Lock order: the table and hand rows, then the players' wallets in ascending id (the
    caller's, ``hand_settle``), under which the budgets and reservations are read."""
    seats = hand.seat_list()
    now = timezone.now()
    limits = limits_in_force_of([seat.user for seat in seats], now)
    if not any(
        limits[seat.user_id][kind].value is not None for seat in seats for kind in LOSS_PERIODS
    ):
        return list(capacity)
    reserved = loss_reservations_of(hand_id=hand.pk)
    caps = []
    for seat, funds in zip(seats, capacity, strict=True):
        budget = loss_budget(seat.user, limits[seat.user_id], now, except_hand_id=hand.pk)
        if budget is None:
            caps.append(funds)
            continue
        most = max(budget.left, 0)
        if seat.user_id in reserved:
            most = min(most, reserved[seat.user_id])
        caps.append(min(funds, most))
    return caps


def seats_release_excluded(*, user_id: int) -> list[int]:
    """After a cool-off or self-exclusion commits: stand the player up at every table where it
    is not in the hand being played (as :func:`games.services.tables.seat_leave` does); at the
    others it plays the hand to its end and is unseated before the next deal
    (:func:`seats_within_limits`). Safe to run twice. Returns the tables it stood up from."""
    from games.services.tables import seats_vacate

    user = User.objects.get(pk=user_id)
    return seats_vacate(
        user_id=user_id,
        between_hands_only=True,
        reason=UNSEAT_LIMIT,
        limit=exclusion_limit(user),
    )
