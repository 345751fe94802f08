"""Reading players: one by username, and a player's public profile."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from accounts.models import User
from core.db_router import may_lag
from core.errors import NotFound
from games.models import Hand, HandSeat
from games.selectors.ratings import player_rating, player_ratings


def player_by_username(username: str) -> Any:
    """The active player with this username (case-insensitive); 404 otherwise."""
    user = User.objects.filter(username__iexact=username, is_active=True).first()
    if user is None:
        raise NotFound(_("No such player."))
    return user


@may_lag
def player_profile(*, user: Any) -> dict[str, Any]:
    """A player's public profile: level, hands played and won (ended hands; practice tables
    left out), win rate, the biggest win in points (what the others paid it in one hand), the
    cước it wins with most often (declared, ties by slug) and when it joined. Two queries; may
    lag (a fresh replica's)."""
    ended = HandSeat.objects.filter(
        user=user, hand__status=Hand.Status.ENDED, hand__table__practice=False
    )
    played = ended.count()
    wins = ended.filter(hand__result__outcome__result="u").values_list("position", "hand__result")
    n_wins = 0
    biggest = 0
    cuoc_counts: dict[str, int] = {}
    for position, stored in wins.iterator():
        result = Hand(result=stored).outcome_result()  # the one typed reading of a result
        if result.winner != position:
            continue
        n_wins += 1
        points = sum(t.points for t in result.transfers if t.payee == position)
        biggest = max(biggest, points)
        for slug, count in result.declaration.cuoc if result.declaration else ():
            cuoc_counts[slug] = cuoc_counts.get(slug, 0) + count
    favourite = min(cuoc_counts, key=lambda k: (-cuoc_counts[k], k)) if cuoc_counts else None
    return {
        "username": user.username,
        "display_name": user.display_name,
        "level": user.level,
        "xp": user.xp,
        "badge": user.badge,
        "hands_played": played,
        "wins": n_wins,
        "win_rate": round(n_wins / played, 4) if played else None,
        "biggest_win_points": biggest,
        "favourite_cuoc": favourite,
        "member_since": user.date_joined,
        "rating": player_rating(user_id=user.pk),
        "ratings": player_ratings(user_id=user.pk),
    }
