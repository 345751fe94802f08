"""Writes on hands: submitting a move (the only way a hand's log grows) and ending the hand."""

from __future__ import annotations

import logging
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from chan_api.problems import ApiProblem, bad_request, conflict, forbidden, not_found, unprocessable
from games.models import Hand, HandEvent, IdempotencyRecord, Seat, Table
from games.rules import HandState, apply, move_from_dict
from games.rules.autoplay import auto_move
from games.rules.errors import InvalidInput, RuleError
from games.rules.moves import Move, SetPrefs
from games.rules.state import Phase
from games.rules.views import result_of
from games.selectors import (
    HAND_VERSION_TTL_SECONDS,
    hand_deadline,
    hand_state,
    hand_version_key,
    hand_view_for_user,
    not_a_participant,
    rule_error_vi,
    state_lru,
    state_pickle,
)

# Rule refusals that mean "not now" rather than "never": the client's picture is stale.
PREFS_PER_MINUTE = 6
CONFLICT_CODES = frozenset({"not_your_turn", "wrong_phase", "hand_over"})
logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MoveResult:
    """What ``POST /hands/{id}/moves`` answers; ``replayed`` when served from an idempotency key."""

    status: int
    body: dict[str, Any]
    replayed: bool = False


def hand_publish_on_commit(hand: Hand, state: HandState) -> None:
    """Once the transaction commits: remember the state in the LRU and publish the new seq in
    the cache, where long polls watch it.

    Best effort: the move is committed whatever the cache does, so a failure here is logged and
    never reaches the client (``robust``). The seq only ever rises in the cache, so a late
    publish of an older move cannot hide a newer one from the long polls.
    """
    key, seq, hand_id = (hand.pk, hand.seq, hand.seed_hash), hand.seq, hand.pk

    def publish() -> None:
        state_lru.put(key, state)
        version_key = hand_version_key(hand_id)
        try:
            cached = cache.get(version_key)
            if not isinstance(cached, int) or cached < seq:
                cache.set(version_key, seq, timeout=HAND_VERSION_TTL_SECONDS)
        except Exception:
            logger.warning("hand %s: could not publish seq %s", hand_id, seq, exc_info=True)
            # Without the key the long polls read the row instead of an outdated seq.
            with suppress(Exception):
                cache.delete(version_key)

    transaction.on_commit(publish, robust=True)


def _key_reused() -> ApiProblem:
    return unprocessable(
        "idempotency_key_reused",
        "This Idempotency-Key was already used for a different request.",
        "Idempotency-Key này đã được dùng cho một yêu cầu khác.",
    )


def _check_body_seat(move_json: Any, seat: int) -> None:
    if not isinstance(move_json, dict):
        return  # move_from_dict refuses it with a 400
    if move_json.get("system") not in (None, False):
        raise bad_request(
            "invalid_move",
            "Field 'system' is reserved for the server's own moves.",
            "Trường 'system' chỉ dành cho nước đi của máy chủ.",
            errors={"system": ["reserved for the server"]},
        )
    if "seat" in move_json:
        claimed = move_json["seat"]
        if isinstance(claimed, bool) or not isinstance(claimed, int):
            raise bad_request(
                "invalid_move",
                "Field 'seat' must be a seat number.",
                "Trường 'seat' phải là số ghế.",
                errors={"seat": ["must be an integer"]},
            )
        if claimed != seat:
            raise forbidden(
                "not_your_seat",
                f"You play seat {seat}; you may not move for seat {claimed}.",
                f"Bạn ngồi ghế {seat}; không được đi thay ghế {claimed}.",
            )


def _rule_problem(exc: RuleError, seq: int) -> ApiProblem:
    """A refusal of the rules core as a problem carrying the hand's seq: bad input (an unknown
    cước, an impossible count) is a 400, "not now" a 409, any other refusal a 422."""
    if isinstance(exc, InvalidInput):
        status = 400
    elif exc.code in CONFLICT_CODES:
        status = 409
    else:
        status = 422
    return ApiProblem(status, exc.code, exc.message, rule_error_vi(exc), extra={"seq": seq})


def _check_prefs_change(state: HandState, new_state: HandState, seat: int, seq: int) -> None:
    """A set_prefs must change the seat's preferences: one that changes nothing would still
    append an event and bump the seq, making the turn seat's ``expected_seq`` stale. Checked
    here rather than in the rules core so that logs holding such events still replay."""
    before, after = state.seats[seat], new_state.seats[seat]
    if (before.auto_u, before.auto_chiu) == (after.auto_u, after.auto_chiu):
        raise conflict(
            "prefs_unchanged",
            "Your preferences already have these values.",
            "Tùy chọn của bạn đã có các giá trị này.",
            extra={"seq": seq},
        )


def _check_prefs_rate(hand: Hand, seat: int) -> None:
    """At most ``PREFS_PER_MINUTE`` set_prefs per seat and minute in a hand: each one bumps the
    seq (every other seat's ``expected_seq`` goes stale), so a seat must not spam them. Counted
    from the log, under the hand's lock."""
    since = timezone.now() - timedelta(minutes=1)
    recent = HandEvent.objects.filter(
        hand=hand, type="set_prefs", actor_seat=seat, created_at__gte=since
    ).count()
    if recent >= PREFS_PER_MINUTE:
        raise ApiProblem(
            429,
            "throttled",
            f"At most {PREFS_PER_MINUTE} preference changes a minute in a hand.",
            f"Tối đa {PREFS_PER_MINUTE} lần đổi tùy chọn mỗi phút trong một ván.",
            extra={"seq": hand.seq},
        )


def _result(state: HandState) -> dict[str, Any]:
    return result_of(state)


def _hand_finish(hand: Hand, state: HandState) -> None:
    """The hand ended: record the result (the seed is revealed with it), free the table, and
    free the seats of players who left mid-hand."""
    hand.status = Hand.Status.ENDED
    hand.deadline_at = None
    hand.result = _result(state)
    hand.ended_at = timezone.now()
    table = Table.objects.select_for_update().get(pk=hand.table_id)
    if table.status == Table.Status.PLAYING:
        table.status = Table.Status.OPEN
        table.save(update_fields=["status", "updated_at"])
    Seat.objects.filter(table=table, leaving=True).delete()
    Seat.objects.filter(table=table).update(ready=False, ready_at=None, updated_at=timezone.now())


def _append(hand: Hand, move: Move, new_state: HandState) -> None:
    """Append ``move`` (already applied: ``new_state``) to the locked hand's log, update the
    cached state, end the hand if it ended, and publish and wake the clock after commit."""
    seq = hand.seq + 1
    payload = move.to_dict()
    HandEvent.objects.create(
        hand=hand,
        seq=seq,
        type=payload["type"],
        actor_seat=move.seat,
        system=move.system,
        payload=payload,
        effects=list(new_state.events),
    )
    hand.seq = seq
    hand.state_blob = state_pickle(new_state)
    hand.state_seq = seq
    turn_move = not isinstance(move, SetPrefs)
    if turn_move:
        # The turn's deadline runs from here: a seat changing its preferences must not push
        # back (nor wake) the deadline of the seat whose turn it is.
        hand.last_event_at = timezone.now()
    if new_state.phase is Phase.ENDED:
        _hand_finish(hand, new_state)
    elif turn_move:
        hand.deadline_at = hand_deadline_for(hand, new_state)
    hand.save()
    hand_publish_on_commit(hand, new_state)
    if turn_move:
        hand_clock_on_commit(hand)


def hand_deadline_for(hand: Hand, state: HandState) -> datetime | None:
    """The deadline of the seat to act in ``state`` (RULES.md §12), shorter if it left the table
    (``seat_leave`` marks it ``"left"`` in ``hand.seats``)."""
    left = bool(hand.seats[state.turn].get("left"))
    return hand_deadline(hand, hand.table, state, actor_leaving=left)


def hand_lock(hand_id: int) -> Hand | None:
    """The hand row, locked (``SELECT … FOR UPDATE``) with its table, or None."""
    return (
        Hand.objects.select_for_update(of=("self",))
        .select_related("table")
        .filter(pk=hand_id)
        .first()
    )


def hand_clock_on_commit(hand: Hand) -> None:
    """Once the transaction commits, wake the clock (``games.tasks.hand_turn_due``) at the
    hand's ``deadline_at``. Best effort like publishing: a lost wake-up is caught by the periodic
    ``clock_sweep``."""
    if hand.deadline_at is None or not settings.CHAN_CLOCK:
        return
    hand_id, due = hand.pk, hand.deadline_at

    def wake() -> None:
        from games.tasks import hand_turn_due

        hand_turn_due.apply_async((hand_id,), eta=due)

    transaction.on_commit(wake, robust=True)


def hand_clock_tick(*, hand_id: int, now: datetime | None = None) -> int | None:
    """If the hand's deadline has come, play the server's move for the seat to act
    (games.rules.autoplay) and return the new seq; else do nothing and return None.

    Safe to run any number of times and at any moment: a player's move and the clock both lock
    the hand row, and a move sets the next deadline, so whichever comes second finds nothing
    due. A wake-up that comes early (clocks of two machines) does nothing; the sweep catches it.
    Locks the hand row."""
    with transaction.atomic():
        hand = hand_lock(hand_id)
        if hand is None or hand.status != Hand.Status.PLAYING or hand.deadline_at is None:
            return None
        if (now or timezone.now()) < hand.deadline_at:
            return None
        state = hand_state(hand)
        move = auto_move(state)
        _append(hand, move, apply(state, move))
        return hand.seq


def move_submit(
    *,
    hand_id: int,
    user: Any,
    move_json: Any,
    request_hash: str,
    expected_seq: int | None = None,
    idempotency_key: str | None = None,
) -> MoveResult:
    """Validate a move through the rules core and append it to the hand's log.

    Locks the hand row (``SELECT … FOR UPDATE``): of two concurrent moves exactly one is
    applied; the other then sees the new seq (409 ``stale_seq`` when it sent ``expected_seq``)
    or a rules refusal. A repeated ``(user, idempotency_key)`` returns the stored response and
    appends nothing; the same key with another request is a 422.
    """
    with transaction.atomic():
        hand = hand_lock(hand_id)
        if hand is None:
            raise not_found("No such hand.", "Không có ván này.")
        seat = hand.seat_of(user.pk)
        if seat is None:
            raise not_a_participant()
        if idempotency_key is not None:
            record = IdempotencyRecord.objects.filter(user=user, key=idempotency_key).first()
            if record is not None:
                if record.request_hash != request_hash:
                    raise _key_reused()
                return MoveResult(record.response_status, record.response_body, replayed=True)
        _check_body_seat(move_json, seat)
        if expected_seq is not None and expected_seq != hand.seq:
            raise conflict(
                "stale_seq",
                f"The hand is at seq {hand.seq}, not {expected_seq}.",
                f"Ván đang ở seq {hand.seq}, không phải {expected_seq}.",
                extra={"seq": hand.seq},
            )
        try:
            move = move_from_dict(move_json, seat=seat)
        except InvalidInput as exc:
            raise _rule_problem(exc, hand.seq) from exc
        state = hand_state(hand)
        try:
            new_state = apply(state, move)
        except RuleError as exc:
            raise _rule_problem(exc, hand.seq) from exc
        if isinstance(move, SetPrefs):
            _check_prefs_change(state, new_state, move.seat, hand.seq)
            _check_prefs_rate(hand, move.seat)

        _append(hand, move, new_state)
        seq = hand.seq
        if isinstance(move, SetPrefs):
            changes = {
                k: v
                for k, v in (("auto_u", move.auto_u), ("auto_chiu", move.auto_chiu))
                if v is not None
            }
            Seat.objects.filter(table_id=hand.table_id, player=user).update(**changes)

        body = {"seq": seq, "state": hand_view_for_user(hand=hand, user=user, state=new_state)}
        if idempotency_key is not None:
            try:
                with transaction.atomic():  # a savepoint: the transaction stays usable
                    IdempotencyRecord.objects.create(
                        user=user,
                        key=idempotency_key,
                        hand=hand,
                        request_hash=request_hash,
                        response_status=201,
                        response_body=body,
                    )
            except IntegrityError as exc:
                # The same key, sent at the same time to another hand (whose lock we do not
                # hold), was stored first: refuse, and the move rolls back with the exception.
                # Any other integrity error is a bug and stays one.
                if not IdempotencyRecord.objects.filter(user=user, key=idempotency_key).exists():
                    raise
                raise _key_reused() from exc
        return MoveResult(201, body)
