"""Reading challenges: mine (sent and received), one of mine, and a challenge as the API shows
it — a pending challenge past its deadline reads as ``expired`` (docs/decisions/)."""

from __future__ import annotations

from typing import Any

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.errors import NotFound
from games.models import Challenge

CHALLENGE_LIST_MAX = 100


def _mine(user: Any) -> Any:
    return Challenge.objects.filter(Q(challenger=user) | Q(challenged=user)).select_related(
        "challenger", "challenged"
    )


def challenge_list(*, user: Any, box: str | None = None, status: str | None = None) -> list[Any]:
    """My challenges, newest first (at most 100): ``box`` ``sent`` or ``received`` (both
    without); ``status`` as it reads now (``pending`` leaves out those past their deadline)."""
    qs = _mine(user)
    if box == "sent":
        qs = qs.filter(challenger=user)
    elif box == "received":
        qs = qs.filter(challenged=user)
    now = timezone.now()
    if status == Challenge.Status.PENDING:
        qs = qs.filter(status=status, expires_at__gt=now)
    elif status == Challenge.Status.EXPIRED:
        qs = qs.filter(Q(status=status) | Q(status=Challenge.Status.PENDING, expires_at__lte=now))
    elif status is not None:
        qs = qs.filter(status=status)
    return list(qs.order_by("-created_at", "-id")[:CHALLENGE_LIST_MAX])


def challenge_get(*, challenge_id: int, user: Any) -> Challenge:
    """One of my challenges; 404 for anyone else's."""
    challenge = _mine(user).filter(pk=challenge_id).first()
    if challenge is None:
        raise NotFound(_("No such challenge."))
    return challenge


def challenge_status(challenge: Challenge, now: Any = None) -> str:
    """The status as it reads now: a pending challenge past its deadline is expired."""
    now = now or timezone.now()
    if challenge.status == Challenge.Status.PENDING and challenge.expires_at <= now:
        return Challenge.Status.EXPIRED
    return challenge.status


def challenge_summaries(challenges: list[Challenge], *, user: Any) -> list[dict[str, Any]]:
    now = timezone.now()
    return [
        {
            "id": c.pk,
            "challenger": {"id": c.challenger_id, "username": c.challenger.username},
            "challenged": {"id": c.challenged_id, "username": c.challenged.username},
            "direction": "sent" if c.challenger_id == user.pk else "received",
            "room": c.room_id,
            "stake": c.stake,
            "max_seats": c.max_seats,
            "mode": c.mode,
            "status": challenge_status(c, now),
            "expires_at": c.expires_at,
            "answered_at": c.answered_at,
            "table_id": c.table_id,
            "created_at": c.created_at,
        }
        for c in challenges
    ]
