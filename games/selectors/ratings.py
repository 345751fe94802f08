"""Reading ratings: a player's ratings per ruleset family, the one shown as its
``rating`` (the family it has played most, ties by name), and each hand's change."""

from __future__ import annotations

from typing import Any

from games.models import PlayerRating, RatingChange
from games.rating_terms import PROVISIONAL_HANDS


def rating_json(row: PlayerRating) -> dict[str, Any]:
    return {
        "family": row.family,
        "rating": row.rating,
        "hands": row.hands,
        "provisional": row.hands < PROVISIONAL_HANDS,
    }


def player_ratings(*, user_id: int) -> list[dict[str, Any]]:
    """The player's ratings, the most played family first (ties by family name). One query."""
    rows = PlayerRating.objects.filter(user_id=user_id).order_by("-hands", "family")
    return [rating_json(r) for r in rows]


def player_rating(*, user_id: int) -> dict[str, Any] | None:
    """The rating shown on profiles: the player's most played family's, None before any rated
    hand."""
    ratings = player_ratings(user_id=user_id)
    return ratings[0] if ratings else None


def hand_rating_changes(*, user_id: int, hand_ids: list[int]) -> dict[int, int]:
    """The player's net rating change per hand (0 once a void reversed it). One query."""
    out: dict[int, int] = {}
    rows = RatingChange.objects.filter(user_id=user_id, hand_id__in=hand_ids).values_list(
        "hand_id", "rating_before", "rating_after"
    )
    for hand_id, before, after in rows:
        out[hand_id] = out.get(hand_id, 0) + after - before
    return out


def rating_history(*, user_id: int, limit: int = 50) -> list[RatingChange]:
    """The player's rating changes, newest first."""
    return list(RatingChange.objects.filter(user_id=user_id).order_by("-id")[:limit])
