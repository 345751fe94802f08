"""Reads for the integrity signals: a window's hands as the signals' facts, the players'
sign-up and login address digests, and whether a player is frozen (``account_frozen``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Prefetch
from django.utils.translation import gettext_lazy as _

from core.errors import NotFound, PermissionDenied
from core.rows import rows_exist
from games.hand_store import hand_config, hand_deck
from games.integrity.facts import HandFacts, hand_facts
from games.models import Hand, HandEvent, HandSeat, IntegrityFlag

FACT_FIELDS = ("seq", "type", "system", "bot", "payload", "created_at")


def window_hands(*, start: dt.datetime, end: dt.datetime) -> Iterator[HandFacts]:
    """The facts of every ended, unvoided hand at a table with a stake (not practice) that
    ended in ``[start, end)``, read from its log (one query for seats, one per hand for its
    events, by ``iterator``)."""
    hands = (
        Hand.objects.filter(
            status=Hand.Status.ENDED,
            voided_at__isnull=True,
            ended_at__gte=start,
            ended_at__lt=end,
            table__practice=False,
        )
        .order_by("pk")
        .prefetch_related(Prefetch("hand_seats", queryset=HandSeat.objects.order_by("position")))
    )
    for hand in hands.iterator(chunk_size=200):
        events = list(HandEvent.objects.of_hand(hand).order_by("seq").values(*FACT_FIELDS))
        yield hand_facts(
            hand_id=hand.pk,
            players=[s.user_id for s in hand.seat_list()],
            config=hand_config(hand),
            deck=hand_deck(hand),
            dealer=hand.dealer,
            events=events,
            times={e["seq"]: e["created_at"] for e in events},
        )


def player_addresses(
    player_ids: set[int], *, since: dt.datetime
) -> tuple[dict[int, str], dict[int, set[str]]]:
    """Each player's sign-up address digest (``signup_address``, an HMAC; players without one
    left out), and the addresses of its logins since ``since`` (django-axes' access log keeps
    them as sent; the caller digests them the same way, so only digests are compared)."""
    from axes.models import AccessLog

    users = get_user_model().objects.filter(pk__in=player_ids)
    signups: dict[int, str] = {}
    by_name: dict[str, int] = {}
    for pk, username, signup in users.values_list("pk", "username", "signup_address"):
        by_name[username] = pk
        if signup:
            signups[pk] = signup
    logins: dict[int, set[str]] = {}
    rows = (
        AccessLog.objects.filter(username__in=list(by_name), attempt_time__gte=since)
        .exclude(ip_address__isnull=True)
        .values_list("username", "ip_address")
        .distinct()
    )
    for username, address in rows:
        logins.setdefault(by_name[username], set()).add(str(address))
    return signups, logins


# Asked by every join and ready: a fixed statement, not compiled per call.
_FROZEN_SQL = (
    f"SELECT 1 FROM {IntegrityFlag._meta.db_table} WHERE (player_id = %s OR partner_id = %s)"
    f" AND status = '{IntegrityFlag.Status.FROZEN.value}'"
)


def account_frozen(user_id: int) -> bool:
    """Whether staff froze the player through an integrity flag (as its player or partner)."""
    return rows_exist(IntegrityFlag, _FROZEN_SQL, [user_id, user_id])


def account_frozen_check(user: Any) -> None:
    """403 ``account_frozen``: a frozen player cannot sit (its holds are kept)."""
    if user is not None and getattr(user, "pk", None) is not None and account_frozen(user.pk):
        raise PermissionDenied(
            _("This account is frozen while staff review its play."), code="account_frozen"
        )


def open_flags() -> Any:
    """The review queue: open flags, oldest first."""
    return IntegrityFlag.objects.filter(status=IntegrityFlag.Status.OPEN).order_by("created_at")


INTEGRITY_PAGE_MAX = 100


def integrity_read_check(user: Any) -> None:
    """Integrity flags name players under suspicion: auditors only (``accounts.audit_hands``,
    and ``audit:read`` through a token)."""
    from accounts.selectors import user_is_auditor

    if not user_is_auditor(user):
        raise PermissionDenied(_("Only auditors may read integrity flags."), code="auditors_only")


def integrity_flag_page(
    *,
    user: Any,
    status: str | None = None,
    signal: str | None = None,
    cursor: int | None = None,
    limit: int = INTEGRITY_PAGE_MAX,
) -> dict[str, Any]:
    """Flags newest first (``status``/``signal`` filter them); ``next`` is the ``cursor`` of
    the next, older page (None on the last)."""
    integrity_read_check(user)
    rows = IntegrityFlag.objects.select_related("player", "partner", "reviewer").order_by("-id")
    if status:
        rows = rows.filter(status=status)
    if signal:
        rows = rows.filter(signal=signal)
    if cursor is not None:
        rows = rows.filter(id__lt=cursor)
    page = list(rows[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return {"results": page, "next": str(page[-1].pk) if more else None}


def integrity_flag_detail(*, user: Any, flag_id: int) -> IntegrityFlag:
    """One flag with its history (``actions``, oldest first)."""
    integrity_read_check(user)
    flag = (
        IntegrityFlag.objects.select_related("player", "partner", "reviewer")
        .prefetch_related("actions__staff")
        .filter(pk=flag_id)
        .first()
    )
    if flag is None:
        raise NotFound(_("No such integrity flag."))
    return flag
