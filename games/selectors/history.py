"""Reading a player's hand history: its hands, newest first, each with the player's seat,
result and Quan change."""

from __future__ import annotations

from typing import Any, NamedTuple

from core.db_router import may_lag
from games.models import Hand, HandSeat
from games.rules.results import Result
from games.selectors.ratings import hand_rating_changes

HISTORY_PAGE_DEFAULT = 20
HISTORY_PAGE_MAX = 100


class HistoryPage(NamedTuple):
    hands: list[dict[str, Any]]
    next_cursor: str | None


def _seat_result(hand: Hand, position: int) -> str | None:
    """One seat's result in an ended hand: ``won``, ``lost``, ``hoa`` or ``u_lao`` (it claimed
    a false ù); None while the hand is played."""
    if hand.status != Hand.Status.ENDED:
        return None
    outcome = hand.outcome_result().outcome
    if outcome is None:
        return "lost"
    if outcome.result is Result.HOA:
        return "hoa"
    if outcome.seat == position:
        return "won" if outcome.result is Result.U else "u_lao"
    return "lost"


def _outcome_json(hand: Hand) -> dict[str, Any] | None:
    """The hand's outcome as the API shows it (``{"result", "seat"}``), None while played."""
    outcome = hand.outcome_result().outcome
    return outcome.to_dict() if outcome is not None else None


def _seat_quan(hand: Hand, position: int) -> int | None:
    """The seat's Quan change booked for the hand (net, after fees); None before it is booked."""
    if hand.quan is None:
        return None
    for seat in hand.quan.get("seats") or []:
        if seat.get("seat") == position:
            return seat.get("net")
    return None


def _history_item(hs: HandSeat) -> dict[str, Any]:
    hand = hs.hand
    return {
        "id": hand.pk,
        "table_id": hand.table_id,
        "number": hand.number,
        "room": hand.room_id,
        "stake": hand.stake,
        "n_seats": hand.n_seats,
        "seat": hs.position,
        "table_seat": hs.table_seat,
        "status": hand.status,
        "outcome": _outcome_json(hand),
        "result": _seat_result(hand, hs.position),
        "quan": _seat_quan(hand, hs.position),
        "practice": hand.table.practice,
        "created_at": hand.created_at,
        "ended_at": hand.ended_at,
    }


@may_lag
def hand_history(
    *,
    user: Any,
    ended_only: bool = False,
    cursor: int | None = None,
    limit: int = HISTORY_PAGE_DEFAULT,
) -> HistoryPage:
    """The user's hands, newest first (by hand id, on the HandSeat (user, -hand) index), one page
    after ``cursor`` (a hand id): each with its table, room, stake, the user's seat, status,
    result, Quan change and rating change (null for an unrated hand). May lag (a fresh
    replica's)."""
    limit = max(1, min(limit, HISTORY_PAGE_MAX))
    qs = HandSeat.objects.filter(user=user).select_related("hand__table")
    if ended_only:
        qs = qs.filter(hand__status=Hand.Status.ENDED)
    if cursor is not None:
        qs = qs.filter(hand_id__lt=cursor)
    rows = list(qs.order_by("-hand_id")[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    items = [_history_item(hs) for hs in rows]
    changes = hand_rating_changes(user_id=user.pk, hand_ids=[hs.hand_id for hs in rows])
    for item in items:
        item["rating_change"] = changes.get(item["id"])
    return HistoryPage(items, str(rows[-1].hand_id) if more else None)
