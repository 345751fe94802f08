"""Where the limits players set for themselves meet the tables (issue 21; the limits themselves
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

from accounts.limit_selectors import (
    exclusion_active,
    max_stake_in_force,
    play_check,
    play_refusals,
    stake_check,
)
from accounts.models import User
from core.errors import Conflict
from games.models import Seat, Table
from games.services.feed import UNSEAT_LIMIT
from games.services.pot import pot_refund
from games.services.seat_holds import seat_hold_release

log = logging.getLogger(__name__)


def table_limits_check(user: Any, *, stake: int, practice: bool) -> None:
    """Refuse a seat (or a new table) to a player cooling off or self-excluded (409
    ``cooling_off``, ``self_excluded``, also at practice tables), at a loss limit (409
    ``loss_limit_reached``) or above its highest stake (409 ``limit_exceeded``); practice tables
    put nothing at stake, so only the first two apply there."""
    now = timezone.now()
    play_check(user, now, stakes=not practice)
    if not practice:
        stake_check(user, stake=stake, now=now)


def quick_join_within_limits(candidates: QuerySet[Table], user: Any) -> QuerySet[Table]:
    """Quick-join: refuse a player who may not play at all, and keep the tables within its
    highest stake."""
    now = timezone.now()
    play_check(user, now)
    max_stake = max_stake_in_force(user, now)
    return candidates if max_stake is None else candidates.filter(stake__lte=max_stake)


def refusal_limit(refusal: Conflict) -> str:
    """Which of the player's limits a refusal of :func:`play_refusal` is, as the limits
    endpoints name it: ``loss_limit_day|week|month``, ``cool_off``, ``self_exclusion``."""
    if refusal.code == "loss_limit_reached":
        return f"loss_limit_{refusal.extra['period']}"
    return {"cooling_off": "cool_off", "self_excluded": "self_exclusion"}[refusal.code]


def exclusion_limit(user: Any) -> str | None:
    """``cool_off`` or ``self_exclusion`` while one is in force for ``user``, else None."""
    exclusion = exclusion_active(user, timezone.now())
    return exclusion.kind if exclusion is not None else None


def seats_within_limits(
    *, table: Table, seats: list[Seat]
) -> tuple[list[Seat], list[tuple[Seat, str]]]:
    """Before a deal (the caller holds the table row lock): unseat the players whose own limits
    forbid the next hand — cooling off, self-excluded or at a loss limit — as the players who
    cannot cover the stake are, their gà góp share refunded. Returns the others, and the
    unseated with which limit (:func:`refusal_limit`) for the caller's ``seats_changed``
    (``reason`` limit; told once the deal is done: the feed is written last). The reason is
    also logged and shown to the player in ``GET /me/limits`` (``play_blocked``) and in the 409
    of its next attempt to sit."""
    players = [seat.player for seat in seats if not seat.player.is_bot]
    refusals = play_refusals(players, timezone.now(), stakes=not table.practice)
    kept, unseated = [], []
    for seat in seats:
        refusal = refusals.get(seat.player_id)
        if refusal is None:
            kept.append(seat)
            continue
        log.info(
            "unseated before the deal by its own limits",
            extra={"table_id": table.pk, "user_id": seat.player_id, "reason": refusal.code},
        )
        seat.delete()
        if not table.practice:
            pot_refund(table=table, user=seat.player)
            seat_hold_release(table=table, user=seat.player)
        unseated.append((seat, refusal_limit(refusal)))
    return kept, unseated


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
