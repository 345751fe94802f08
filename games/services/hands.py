"""Writes on hands: applying a move (the only way a hand's log grows), the clock's moves, and
ending the hand. Lock order: the hand row, then its table row (as the table services lock a
playing hand before their table)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from django.db import DatabaseError, IntegrityError, connection, connections, router, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from core import metrics
from core.errors import (
    Conflict,
    DomainError,
    InvalidInput,
    NotFound,
    PermissionDenied,
    RateLimited,
)
from core.pipeline import commit_now, statements_pipelined
from core.rows import row_update
from games.clock import (
    hand_clock_on_commit,
    hand_clock_rearm,
    hand_deadline_for,
    hand_seat_is_bot,
    hand_settle_on_commit,
)
from games.hand_store import (
    hand_committed_last,
    hand_last_hash_keep,
    hand_move_record,
    hand_publish_on_commit,
    hand_seats_load,
    hand_state,
    hand_state_carry_send,
)
from games.live.announce import announcements_batched
from games.models import Hand, HandEvent, Seat, Table
from games.rule_errors import rule_error
from games.rules import HandState, apply, move_from_dict
from games.rules.autoplay import auto_move
from games.rules.errors import RuleError
from games.rules.moves import Move, SetPrefs
from games.rules.replay import CAUSE_TIMEOUT, move_effects, system_cause
from games.rules.state import Phase
from games.rules.views import result_of
from games.selectors.hands import hand_from_row, hand_row_sql, not_a_participant
from games.services.feed import feed_hand_changed
from games.services.hand_log import hand_event_append
from games.services.idempotency import (
    StoredResponse,
    idempotency_key_check,
    idempotency_key_taken,
    idempotency_key_valid,
    idempotency_lookup_send,
    idempotency_record,
)
from games.services.practice import bot_choose, bot_rng

logger = logging.getLogger(__name__)

PREFS_PER_MINUTE = 6

# What a move request answers, rendered by the API layer from the hand and its new state.
MoveRenderer = Callable[[Hand, HandState], dict[str, Any]]


# The hand row locked with its table, and the hash of its last event (read from its own
# partition), in one fixed statement: the ORM's compilation of the equivalent
# select_for_update/select_related/Subquery was most of the lock's cost (docs/decisions/
# fixed-statements.md).
_HAND_LOCK_SQL = hand_row_sql(
    more=(
        f"(SELECT e.hash FROM {HandEvent._meta.db_table} e WHERE e.hand_id = h.id"
        " AND e.hand_created_at = h.created_at AND e.seq = h.seq LIMIT 1)"
    ),
    tail="FOR NO KEY UPDATE OF h",
)


def hand_lock(hand_id: int, *, then: Callable[[], Any] | None = None) -> Hand | None:
    """The hand row, locked (``SELECT … FOR NO KEY UPDATE``), with its table and seats, or None; in
    the same statement the hash of its last event, which the next append chains to
    (``hand_log.hand_event_append``: no query of its own for it). ``then`` sends more
    statements after the lock's and before its row is read: in a pipeline (``core.pipeline``)
    they go in the lock's flight, and run once the lock is held. In a pipeline the flight
    also reads the events after the state this process keeps of the hand, and the state is
    carried on to the locked seq (``hand_store.hand_state_carry_send``): when another process
    made the last moves, no round trip of its own for them."""
    alias = router.db_for_write(Hand)
    with connections[alias].cursor() as cursor:
        cursor.execute(_HAND_LOCK_SQL, [hand_id])
        carry = hand_state_carry_send(hand_id)
        if then is not None:
            then()
        row = cursor.fetchone()
    if row is None:
        carry(None)
        return None
    hand, (last_hash,) = hand_from_row(alias, row)
    hand_last_hash_keep(hand, hand.seq, last_hash)
    hand_seats_load(hand)
    carry(hand)
    return hand


def _check_body_seat(move_json: Any, seat: int) -> None:
    if not isinstance(move_json, dict):
        return  # move_from_dict refuses it
    if move_json.get("system") not in (None, False):
        raise InvalidInput(
            _("Field 'system' is reserved for the server's own moves."),
            code="invalid_move",
            errors={"system": [_("reserved for the server")]},
        )
    if "seat" in move_json:
        claimed = move_json["seat"]
        if isinstance(claimed, bool) or not isinstance(claimed, int):
            raise InvalidInput(
                _("Field 'seat' must be a seat number."),
                code="invalid_move",
                errors={"seat": [_("must be an integer")]},
            )
        if claimed != seat:
            raise PermissionDenied(
                _("You play seat %(seat)s; you may not move for seat %(claimed)s."),
                code="not_your_seat",
                seat=seat,
                claimed=claimed,
            )


def _check_prefs(hand: Hand, state: HandState, new_state: HandState, seat: int) -> None:
    """A set_prefs must change the seat's preferences (one that changes nothing would still bump
    the seq, making the turn seat's ``expected_seq`` stale), and a seat may send at most
    ``PREFS_PER_MINUTE`` a minute (counted from the log, under the hand's lock). Checked here
    rather than in the rules core so that logs holding such events still replay."""
    before, after = state.seats[seat], new_state.seats[seat]
    if (before.auto_u, before.auto_chiu) == (after.auto_u, after.auto_chiu):
        raise Conflict(
            _("Your preferences already have these values."),
            code="prefs_unchanged",
            extra={"seq": hand.seq},
        )
    since = timezone.now() - timedelta(minutes=1)
    recent = (
        HandEvent.objects.of_hand(hand)
        .filter(type="set_prefs", actor_seat=seat, created_at__gte=since)
        .count()
    )
    if recent >= PREFS_PER_MINUTE:
        raise RateLimited(
            _("At most %(limit)s preference changes a minute in a hand."),
            extra={"seq": hand.seq},
            limit=PREFS_PER_MINUTE,
        )


def _hand_finish(hand: Hand, state: HandState) -> None:
    """The hand ended: record the result (the seed is revealed with it), free the seats of the
    players who left mid-hand, and open the table again (close it if nobody is left). The
    caller holds the hand row lock; this locks the table's row, then its seats'. Fixed
    statements whose answers nothing reads: in a move they go in its last flight
    (core.pipeline), with the event and the COMMIT."""
    hand.status = Hand.Status.ENDED
    hand.deadline_at = None
    hand.result = result_of(state)
    hand.ended_at = timezone.now()
    gone = [s.user_id for s in hand.seat_list() if s.left]
    with connections[router.db_for_write(Table)].cursor() as cursor:
        cursor.execute(_TABLE_LOCK_SQL, [hand.table_id])
        if gone:
            cursor.execute(_SEATS_GONE_SQL, [hand.table_id, gone])
        cursor.execute(_SEATS_UNREADY_SQL, [hand.ended_at, hand.table_id])
        # Everyone left mid-hand: the table closes rather than stay listed with no seats (a
        # practice table's bots stand up with the last player).
        cursor.execute(_BOTS_ALONE_STAND_SQL, [hand.table_id, hand.table_id])
        cursor.execute(_TABLE_REOPEN_SQL, [hand.ended_at, hand.table_id])
    hand_settle_on_commit(hand)
    outcome = hand.outcome_result().outcome
    metrics.hand_ended(outcome=outcome.result.value if outcome is not None else None)


_SEATS, _USERS, _TABLES = Seat._meta.db_table, User._meta.db_table, Table._meta.db_table


def _players_seated(table: str) -> str:
    """SQL: whether a player (no bot) sits at the table ``table`` names."""
    return (
        f"EXISTS (SELECT 1 FROM {_SEATS} s JOIN {_USERS} u ON u.id = s.player_id"
        f" WHERE s.table_id = {table} AND NOT u.is_bot)"
    )


_PLAYING, _OPEN, _CLOSED = (
    f"'{status.value}'" for status in (Table.Status.PLAYING, Table.Status.OPEN, Table.Status.CLOSED)
)
_TABLE_LOCK_SQL = f"SELECT 1 FROM {_TABLES} WHERE id = %s FOR NO KEY UPDATE"
_SEATS_GONE_SQL = f"DELETE FROM {_SEATS} WHERE table_id = %s AND player_id = ANY(%s)"
_SEATS_UNREADY_SQL = (
    f"UPDATE {_SEATS} SET ready = false, ready_at = NULL, updated_at = %s"
    f" WHERE table_id = %s AND NOT EXISTS"
    f" (SELECT 1 FROM {_USERS} u WHERE u.id = {_SEATS}.player_id AND u.is_bot)"
)
_BOTS_ALONE_STAND_SQL = (
    f"DELETE FROM {_SEATS} WHERE table_id = %s AND NOT {_players_seated('%s')}"
    f" AND EXISTS (SELECT 1 FROM {_TABLES} t WHERE t.id = {_SEATS}.table_id"
    f" AND t.status = {_PLAYING})"
)
_TABLE_REOPEN_SQL = (
    f"UPDATE {_TABLES} t SET status = CASE WHEN {_players_seated('t.id')} THEN {_OPEN}"
    f" ELSE {_CLOSED} END, updated_at = %s WHERE t.id = %s AND t.status = {_PLAYING}"
)
# What the end of a hand changes on its row (the move's columns, ``hand_event_append``'s seq).
FINISH_FIELDS = (
    "status",
    "result",
    "ended_at",
    "seq",
    "last_event_at",
    "deadline_at",
    "updated_at",
)


# The hand's columns a move that does not end the hand changes (``hand_event_append`` sets ``seq``).
MOVE_FIELDS = ("seq", "last_event_at", "deadline_at", "updated_at")


def _append(
    hand: Hand,
    move: Move,
    new_state: HandState,
    *,
    bot: bool = False,
    cause: str | None = None,
    lock: tuple[str, list[Any]] | None = None,
) -> None:
    """Append ``move`` (already applied: ``new_state``) to the locked hand's log — ``bot``: a
    server bot's move; ``cause``: why the server made a system move (its ``system`` effect) —
    end the hand if it ended, set the next deadline, and publish (a move that leaves the hand
    playing with its record: ``hand_store.hand_move_record``) and wake the clock after
    commit. The event's effects are the move and what the rules derived from it. ``lock``:
    the hand is not locked yet; the event's statement takes this lock before its row is made."""
    payload = move.to_dict()
    if move.system and cause is None:
        cause = CAUSE_TIMEOUT
    before = hand.updated_at
    event = hand_event_append(
        hand=hand,
        type=payload["type"],
        actor_seat=move.seat,
        system=move.system,
        bot=bot,
        payload=payload,
        effects=move_effects(new_state, cause),
        guard=lock,
    )
    metrics.move_appended(type=payload["type"], system=move.system)
    turn_move = not isinstance(move, SetPrefs)
    if turn_move:
        # The turn's deadline runs from here: a seat changing its preferences must not push
        # back (nor wake) the deadline of the seat whose turn it is.
        hand.last_event_at = timezone.now()
    if new_state.phase is Phase.ENDED:
        _hand_finish(hand, new_state)
        row_update(hand, FINISH_FIELDS)
    else:
        if turn_move:
            hand.deadline_at = hand_deadline_for(hand, new_state)
        # What a move changes on the row, and only that: the frozen terms (deck, ruleset, fees,
        # seeds …) are not sent back on every move (a smaller UPDATE, less WAL).
        row_update(hand, MOVE_FIELDS)  # hand.save(update_fields=…), by a fixed statement
    # (a move that ends the hand, or sets preferences, which also writes the seats, is not
    # recorded for the other processes: their next move of the hand reads the rows)
    ended = new_state.phase is Phase.ENDED
    record = hand_move_record(hand, event, before) if turn_move and not ended else None
    hand_publish_on_commit(hand, new_state, record)
    if turn_move:
        hand_clock_on_commit(hand)
    feed_hand_changed(hand=hand, state=new_state)


def hand_move_apply(
    *,
    hand: Hand,
    seat: int,
    move_json: Any,
    expected_seq: int | None = None,
    bot: bool = False,
) -> HandState:
    """Validate a seat's move through the rules core and append it to the hand's log; return
    the new state. ``bot``: a server bot plays the seat (its event is marked so). The caller
    holds the hand row lock (:func:`hand_lock`); every refusal is a domain error carrying the
    hand's seq."""
    _check_body_seat(move_json, seat)
    if expected_seq is not None and expected_seq != hand.seq:
        raise Conflict(
            _("The hand is at seq %(seq)s, not %(expected)s."),
            code="stale_seq",
            extra={"seq": hand.seq},
            seq=hand.seq,
            expected=expected_seq,
        )
    try:
        move = move_from_dict(move_json, seat=seat)
        state = hand_state(hand)
        new_state = apply(state, move)
    except RuleError as exc:
        raise rule_error(exc, extra={"seq": hand.seq}) from exc
    if isinstance(move, SetPrefs):
        _check_prefs(hand, state, new_state, seat)
    _append(hand, move, new_state, bot=bot)
    if isinstance(move, SetPrefs):
        changes = {
            k: v
            for k, v in (("auto_u", move.auto_u), ("auto_chiu", move.auto_chiu))
            if v is not None
        }
        user_id = hand.seat_list()[seat].user_id
        Seat.objects.filter(table_id=hand.table_id, player_id=user_id).update(**changes)
    return new_state


MAX_SEQ = 2**31 - 1  # the seq column's range


def _check_expected_seq(value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEQ:
        raise InvalidInput(
            _("expected_seq must be a non-negative integer."),
            errors={"expected_seq": [_("must be a non-negative integer")]},
        )


def move_submit(
    *,
    hand_id: int,
    user: Any,
    move_json: Any,
    request_hash: str,
    render: MoveRenderer,
    expected_seq: Any = None,
    idempotency_key: str | None = None,
    encode: Callable[[dict[str, Any]], bytes] | None = None,
) -> StoredResponse:
    """A player's move request: lock the hand, answer a repeated ``Idempotency-Key`` from its
    record, else apply the move and keep the response (``render``'s view) under the key. Every
    refusal after the participant check carries the hand's ``seq`` (a malformed key included).
    ``encode``: how the caller will encode the body (to JSON); given, the body is encoded once,
    here, and the response carries it (``StoredResponse.encoded``) as its key's record does.

    Of two concurrent moves exactly one is applied (the hand row lock); the other then sees the
    new seq (``stale_seq`` when it sent ``expected_seq``) or a rules refusal. Locks the hand
    row, then its table's (when the move ends the hand).

    One round trip when this process committed the hand's last move and the move can be made
    on the hand as kept (:func:`_one_flight_move`); else two, below."""
    made = _one_flight_move(
        hand_id=hand_id,
        user=user,
        move_json=move_json,
        request_hash=request_hash,
        render=render,
        expected_seq=expected_seq,
        idempotency_key=idempotency_key,
        encode=encode,
    )
    if made is not None:
        return made
    # The two-flight way (core.pipeline): BEGIN, the lock and the key's lookup in one flight;
    # the event, the hand's row, the feed's entries, the key's record and COMMIT in the next
    # (what the server refuses there, a key stored meanwhile by a request to another hand,
    # aborts the transaction before its COMMIT and is refused inside the try below: a refusal
    # carries the seq).
    key = idempotency_key if idempotency_key_valid(idempotency_key) else None
    lookup = idempotency_lookup_send(user=user, key=None)  # sent after the lock, below

    def lookup_send() -> None:  # after the lock's statement: sees a record committed meanwhile
        nonlocal lookup
        lookup = idempotency_lookup_send(user=user, key=key)

    seq: int | None = None  # what every refusal after the participant check carries
    # (the commit's announcements — the hand's and its players' feeds' — in one round trip)
    with announcements_batched(), transaction.atomic():
        try:
            with _key_taken_refused(), statements_pipelined(commit=True):
                hand = hand_lock(hand_id, then=lookup_send)
                if hand is None:
                    raise NotFound(_("No such hand."))
                seat = hand.seat_of(user.pk)
                if seat is None:
                    raise not_a_participant()
                seq = hand.seq  # (a refused move appends nothing)
                _check_expected_seq(expected_seq)
                idempotency_key_check(idempotency_key)
                replayed = lookup(request_hash)
                if replayed is not None:
                    return replayed
                new_state = hand_move_apply(
                    hand=hand, seat=seat, move_json=move_json, expected_seq=expected_seq
                )
                answer = _Outcome(
                    lambda: _answer_kept(
                        hand, new_state, user, idempotency_key, request_hash, render, encode
                    ),
                    after_commit=idempotency_key is None
                    and new_state.phase is not Phase.ENDED
                    and commit_now(),
                )
        except DomainError as exc:
            if seq is not None:
                exc.extra.setdefault("seq", seq)
            raise
    return answer.result()


def _answer_kept(
    hand: Hand,
    new_state: HandState,
    user: Any,
    key: str | None,
    request_hash: str,
    render: MoveRenderer,
    encode: Callable[[dict[str, Any]], bytes] | None,
) -> StoredResponse:
    """The answer to a move just applied (the mover's view at the new seq), kept under the
    request's ``Idempotency-Key`` in the move's transaction."""
    body = {"seq": hand.seq, "state": render(hand, new_state)}
    response = StoredResponse(201, body, encoded=encode(body) if encode else None)
    idempotency_record(user=user, key=key, hand=hand, request_hash=request_hash, response=response)
    return response


# The lock of a move made in one flight: the hand's row if it is still as this process kept it,
# else SQLSTATE NOT_AS_KEPT (games 0039); taken by the move's event's own INSERT, before its row
# is made (core.rows.rows_insert's guard: one statement less to send before the event's).
_LOCK_AS_KEPT_SQL = "SELECT 1 FROM games_hand_lock_as_kept(%s, %s, %s, %s, %s)"
NOT_AS_KEPT = "CH409"


def _one_flight_move(
    *,
    hand_id: int,
    user: Any,
    move_json: Any,
    request_hash: str,
    render: MoveRenderer,
    expected_seq: Any,
    idempotency_key: str | None,
    encode: Callable[[dict[str, Any]], bytes] | None,
) -> StoredResponse | None:
    """The move made in one round trip — the lock, the writes and the COMMIT in one flight —
    when this process committed the hand's last move (``hand_store.hand_committed_last``): it
    is checked and applied on the hand as kept, and the lock (games 0039) refuses the row if it
    is no longer so (another process moved, a seat changed, the hand or its table was
    written), which aborts the flight before its writes. Returns the response, or None when the
    move is to be made the two-flight way (:func:`move_submit`), which gives every refusal:
    nothing kept, a check or a rule that refuses (their errors come from the row as it is, not
    as kept), a move that ends the hand or sets preferences (their writes read more rows), the
    lock's refusal, or a key already stored (its unique index refuses the record: the two-flight
    way answers from it)."""
    kept = hand_committed_last(hand_id) if connection.vendor == "postgresql" else None
    seat = kept.seat_of(user.pk) if kept is not None else None
    if kept is None or seat is None:
        metrics.MOVE_FLIGHTS.labels(made="two").inc()
        return None
    try:
        _check_body_seat(move_json, seat)
        _check_expected_seq(expected_seq)
        idempotency_key_check(idempotency_key)
        move = move_from_dict(move_json, seat=seat)
        at_kept = expected_seq is None or expected_seq == kept.seq
        new_state = apply(hand_state(kept), move) if at_kept else None
    except (DomainError, RuleError):
        new_state = None
    if new_state is None or isinstance(move, SetPrefs) or new_state.phase is Phase.ENDED:
        metrics.MOVE_FLIGHTS.labels(made="two").inc()
        return None
    lock = [kept.pk, kept.seq, kept.seats_version, kept.updated_at, kept.table.updated_at]
    try:
        with announcements_batched(), transaction.atomic(), statements_pipelined(commit=True):
            _append(kept, move, new_state, lock=(_LOCK_AS_KEPT_SQL, lock))
            answer = _Outcome(
                lambda: _answer_kept(
                    kept, new_state, user, idempotency_key, request_hash, render, encode
                ),
                after_commit=idempotency_key is None and commit_now(),
            )
    except DatabaseError as exc:
        if not isinstance(exc, IntegrityError) and _sqlstate(exc) != NOT_AS_KEPT:
            raise
        metrics.MOVE_FLIGHTS.labels(made="refused").inc()
        return None
    metrics.MOVE_FLIGHTS.labels(made="one").inc()
    return answer.result()


class _Outcome:
    """What ``fn()`` returned, or the exception it raised, kept when ``after_commit`` (it ran
    after the transaction's COMMIT was queued, ``core.pipeline.commit_now``: the block must not
    raise, so the error is raised by :meth:`result` once the transaction has committed and its
    hooks have run); else ``fn()`` raises at once. A move without a key is answered this way:
    its view and JSON are made while the server commits it, where they were made before the
    COMMIT was sent and added 0.3-0.4 ms to the move's wait under bench/api_bench.py."""

    __slots__ = ("_error", "_value")

    def __init__(self, fn: Callable[[], StoredResponse], *, after_commit: bool) -> None:
        self._error: BaseException | None = None
        if not after_commit:
            self._value = fn()
            return
        try:
            self._value = fn()
        except Exception as exc:
            self._error = exc

    def result(self) -> StoredResponse:
        if self._error is not None:
            raise self._error
        return self._value


def _sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of the server's error behind a Django database error, if any."""
    return getattr(exc.__cause__, "sqlstate", None)


@contextmanager
def _key_taken_refused() -> Iterator[None]:
    """The unique key's refusal of an ``Idempotency-Key`` stored meanwhile (by the same
    player's request to another hand) raised as the key's refusal."""
    try:
        yield
    except IntegrityError as exc:
        refused = idempotency_key_taken(exc)
        if refused is None:
            raise
        raise refused from exc


def hand_clock_tick(*, hand_id: int, now: datetime | None = None) -> int | None:
    """If the hand's deadline has come, play the server's move for the seat to act
    (games.rules.autoplay) and return the new seq; else do nothing and return None. A server
    bot's seat (practice tables) gets the bot's own move instead, chosen from what that seat
    may know (``games.services.practice.bot_choose``) and applied as its move.

    Safe to run any number of times and at any moment: a player's move and the clock both lock
    the hand row, and a move sets the next deadline, so whichever comes second finds nothing
    due. A wake-up that comes early (a move since pushed the deadline back: a move queues no
    wake-up when one already comes before its deadline, ``games.clock.hand_clock_on_commit``)
    queues the next one at the deadline. Locks the hand row. Its writes and its commit go in
    one flight (``core.pipeline``), as a player's move's do."""
    with announcements_batched(), transaction.atomic(), statements_pipelined(commit=True):
        hand = hand_lock(hand_id)
        if hand is None or hand.status != Hand.Status.PLAYING or hand.deadline_at is None:
            return None
        now = now or timezone.now()
        if now < hand.deadline_at:
            hand_clock_rearm(hand, now)  # early: a move pushed the deadline back since
            return None
        state = hand_state(hand)
        bot = hand_seat_is_bot(hand, state.turn)
        if bot:
            move = bot_choose(state, state.turn, bot_rng(hand))
            try:
                hand_move_apply(hand=hand, seat=state.turn, move_json=move.to_dict(), bot=True)
                return hand.seq
            except DomainError:  # refused before any write: the server's own move instead
                logger.exception("hand %s: the bot's move %s was refused", hand.pk, move)
        move = auto_move(state)
        left = hand.seat_list()[state.turn].left
        cause = system_cause(state, state.turn, left=left, bot=bot)
        _append(hand, move, apply(state, move), cause=cause)
        metrics.clock_moved()
        return hand.seq
