"""Writes on challenges: a player challenges another (``POST /challenges``), who
accepts — a private table opens with both seated, through ``table_create`` and ``seat_join``
so that their holds, room requirements and own limits apply as at any seat — or declines.

A challenge expires ``CHALLENGE_TTL_SECONDS`` after it is sent: it reads expired from then on
(selectors), every write checks it, and a beat sweep (:func:`challenges_expire`) stores it so
with a ``challenge_expired`` feed entry to both players (once: the entry's key is the
challenge's). The challenger may withdraw a pending challenge (:func:`challenge_cancel`).
Lock order: the challenge row, then what ``table_create`` / ``seat_join`` lock (the table,
wallets, users), the feed last.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from core.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from games.models import CHALLENGE_TTL_SECONDS, DEFAULT_ROOM, MIN_SEATS, Challenge, Mode, Room
from games.selectors.blocks import blocked_pair_exists
from games.selectors.players import player_by_username
from games.services.feed import FeedNote, feed_append
from games.services.table_limits import table_limits_check
from games.services.tables import seat_join, table_create

CHALLENGE_SWEEP_MAX = 500


def _expire_due(now: Any, *, limit: int | None = None, **match: Any) -> int:
    """Store as expired the pending challenges (matching ``match``) whose deadline has passed
    (locked, skipping those another transaction holds), with their ``challenge_expired``
    feed entries. Returns how many."""
    due = (
        Challenge.objects.select_for_update(no_key=True, skip_locked=True)
        .select_related("challenger", "challenged")
        .filter(status=Challenge.Status.PENDING, expires_at__lte=now, **match)
        .order_by("pk")
    )
    rows = list(due[:limit] if limit else due)
    if not rows:
        return 0
    Challenge.objects.filter(pk__in=[c.pk for c in rows]).update(
        status=Challenge.Status.EXPIRED, updated_at=now
    )
    feed_append(notes=[n for c in rows for n in _expired_notes(c)])
    return len(rows)


def _expired_notes(challenge: Challenge) -> list[FeedNote]:
    return [
        FeedNote(
            user_id=me.pk,
            kind="challenge_expired",
            key=f"challenge:{challenge.pk}:expired",
            data=_feed_data(challenge, other, direction=direction),
        )
        for me, other, direction in (
            (challenge.challenger, challenge.challenged, "sent"),
            (challenge.challenged, challenge.challenger, "received"),
        )
    ]


@transaction.atomic
def challenges_expire(*, now: Any = None) -> int:
    """The beat's sweep: store the pending challenges past their deadline as expired, each
    with its feed entries (at most ``CHALLENGE_SWEEP_MAX`` a run). Safe to run twice or at
    once (rows locked, skipped when held; the entries keyed by the challenge)."""
    return _expire_due(now or timezone.now(), limit=CHALLENGE_SWEEP_MAX)


@transaction.atomic
def challenge_send(
    *,
    challenger: Any,
    username: str,
    stake: int,
    room: str = DEFAULT_ROOM,
    max_seats: int = MIN_SEATS,
    mode: str = Mode.BASIC,
) -> Challenge:
    """Challenge ``username`` to a table at ``stake`` in ``room``. Refused: 404 an unknown
    player; 400 ``cannot_challenge_self``, ``invalid_room``; 403 ``player_blocked`` when either
    blocks the other; 409 ``challenge_pending`` while one of mine to that player waits for an
    answer; and whatever would refuse the challenger a table at that stake (its own limits,
    the room's requirements — checked again when the table opens)."""
    challenged = player_by_username(username)
    if challenged.pk == challenger.pk:
        raise InvalidInput(_("You cannot challenge yourself."), code="cannot_challenge_self")
    if challenged.is_bot:
        raise InvalidInput(_("Server bots take no challenges."), code="cannot_challenge_bot")
    if blocked_pair_exists(user_id=challenger.pk, others=[challenged.pk]):
        raise PermissionDenied(_("You cannot challenge this player."), code="player_blocked")
    room_row = Room.objects.filter(slug=room).first()
    if room_row is None:
        raise InvalidInput(
            _("No such room: %(room)s."),
            code="invalid_room",
            errors={"room": [_("no such room")]},
            room=room,
        )
    table_limits_check(challenger, stake=stake, practice=False)
    now = timezone.now()
    _expire_due(now, challenger=challenger, challenged=challenged)
    try:
        with transaction.atomic():
            challenge = Challenge.objects.create(
                challenger=challenger,
                challenged=challenged,
                room=room_row,
                stake=stake,
                max_seats=max_seats,
                mode=mode,
                expires_at=now + timedelta(seconds=CHALLENGE_TTL_SECONDS),
            )
    except IntegrityError as exc:  # games_challenge_one_pending_per_pair
        raise Conflict(
            _("Your challenge to this player is still waiting for an answer."),
            code="challenge_pending",
        ) from exc
    feed_append(
        notes=[
            FeedNote(
                user_id=challenged.pk,
                kind="challenge_received",
                key=f"challenge:{challenge.pk}:received",
                data=_feed_data(challenge, challenger),
            )
        ]
    )
    return challenge


def _feed_data(challenge: Challenge, other: Any, **more: Any) -> dict[str, Any]:
    return {
        "challenge_id": challenge.pk,
        "user_id": other.pk,
        "username": other.username,
        "stake": challenge.stake,
        "room": challenge.room_id,
        "expires_at": challenge.expires_at.isoformat().replace("+00:00", "Z"),
        **more,
    }


def _locked(challenge_id: int, user: Any) -> Challenge:
    """The challenge row locked, for one of its two players; 404 to anyone else."""
    challenge = (
        Challenge.objects.select_for_update(no_key=True)
        .select_related("challenger", "challenged")
        .filter(pk=challenge_id)
        .first()
    )
    if challenge is None or user.pk not in (challenge.challenger_id, challenge.challenged_id):
        raise NotFound(_("No such challenge."))
    return challenge


def _lock_for_answer(challenge_id: int, user: Any) -> Challenge:
    """The challenge row locked, for its challenged player; 404 to anyone else; 409
    ``challenge_expired`` past its deadline, ``challenge_answered`` once answered."""
    challenge = _locked(challenge_id, user)
    if challenge.challenged_id != user.pk:
        raise PermissionDenied(
            _("Only the challenged player answers a challenge."), code="not_challenged"
        )
    _check_pending(challenge)
    return challenge


def _check_pending(challenge: Challenge) -> None:
    """409 unless the locked challenge is pending: ``challenge_expired`` past its deadline
    (the sweep stores it so, with its feed entries), ``challenge_answered`` once answered or
    cancelled."""
    expired = (
        challenge.status == Challenge.Status.PENDING and challenge.expires_at <= timezone.now()
    )
    if expired or challenge.status == Challenge.Status.EXPIRED:
        raise Conflict(_("This challenge has expired."), code="challenge_expired")
    if challenge.status != Challenge.Status.PENDING:
        raise Conflict(
            _("This challenge was already answered (%(status)s)."),
            code="challenge_answered",
            status=challenge.status,
        )


def _answered(challenge: Challenge, answer: str) -> None:
    feed_append(
        notes=[
            FeedNote(
                user_id=challenge.challenger_id,
                kind="challenge_answered",
                key=f"challenge:{challenge.pk}:answered",
                table_id=challenge.table_id,
                data=_feed_data(
                    challenge, challenge.challenged, answer=answer, table_id=challenge.table_id
                ),
            )
        ]
    )


@transaction.atomic
def challenge_accept(*, challenge_id: int, user: Any) -> Challenge:
    """Accept: a private table opens (the challenger its owner at seat 0, the challenged at
    seat 1), both holds placed as at any seat. Locks the challenge row first: of two accepts at
    once, one opens the table and the other gets 409 ``challenge_answered``. A block made since
    the challenge refuses it (403 ``player_blocked``); so does whatever refuses either seat."""
    challenge = _lock_for_answer(challenge_id, user)
    challenger = challenge.challenger
    if blocked_pair_exists(user_id=user.pk, others=[challenger.pk]):
        raise PermissionDenied(_("You cannot accept this challenge."), code="player_blocked")
    table = table_create(
        owner=challenger,
        name=f"{challenger.username} – {user.username}"[:64],
        stake=challenge.stake,
        room=challenge.room_id,
        max_seats=challenge.max_seats,
        mode=challenge.mode,
        private=True,
    )
    seat_join(table_id=table.pk, user=user, code=table.private.invite_code)
    now = timezone.now()
    challenge.status = Challenge.Status.ACCEPTED
    challenge.table = table
    challenge.answered_at = now
    challenge.save(update_fields=["status", "table", "answered_at", "updated_at"])
    _answered(challenge, "accepted")
    return challenge


@transaction.atomic
def challenge_decline(*, challenge_id: int, user: Any) -> Challenge:
    """Decline a pending challenge (409 once expired or answered)."""
    challenge = _lock_for_answer(challenge_id, user)
    challenge.status = Challenge.Status.DECLINED
    challenge.answered_at = timezone.now()
    challenge.save(update_fields=["status", "answered_at", "updated_at"])
    _answered(challenge, "declined")
    return challenge


@transaction.atomic
def challenge_cancel(*, challenge_id: int, user: Any) -> Challenge:
    """The challenger withdraws a pending challenge (a ``challenge_cancelled`` feed entry to
    the challenged). 404 to anyone but its two players, 403 ``not_challenger`` to the
    challenged, 409 once expired or answered."""
    challenge = _locked(challenge_id, user)
    if challenge.challenger_id != user.pk:
        raise PermissionDenied(_("Only the challenger cancels a challenge."), code="not_challenger")
    _check_pending(challenge)
    challenge.status = Challenge.Status.CANCELLED
    challenge.answered_at = timezone.now()
    challenge.save(update_fields=["status", "answered_at", "updated_at"])
    feed_append(
        notes=[
            FeedNote(
                user_id=challenge.challenged_id,
                kind="challenge_cancelled",
                key=f"challenge:{challenge.pk}:cancelled",
                data=_feed_data(challenge, challenge.challenger),
            )
        ]
    )
    return challenge
