"""The clock's arithmetic and wake-ups (RULES.md §12): when a seat's decision is due, what the
clock is late for, and waking the Celery tasks at those times (when a table's ready wait ends is
read by ``games.selectors.tables.table_ready_deadline``).

Services and tasks both use this module; it names the tasks instead of importing them
(``send_task``), so ``games.tasks → services → clock`` has no cycle back.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from accounts.models import User
from games.models import Hand, Table, TournamentTable
from games.rules import HandState
from games.rules.state import Phase
from games.selectors.tables import (
    players_last_request,
    ready_lapses,
    ready_quiet_players,
    table_ready_deadline,
)

logger = logging.getLogger(__name__)

HAND_TURN_TASK = "games.tasks.hand_turn_due"
TABLE_DEAL_TASK = "games.tasks.table_deal_due"
HAND_SETTLE_TASK = "games.tasks.hand_settle_due"
ARENA_CLOCK_TASK = "games.tasks.tournament_clock_due"
# The queue of the sweep and of what it re-arms (settings.CELERY_TASK_QUEUES), apart from the
# wake-ups of play, so that no backlog of those delays the clock's recovery.
CLOCK_QUEUE = "clock"


def hand_deadline(
    hand: Hand,
    table: Table,
    state: HandState,
    *,
    actor_left: bool = False,
    actor_bot: bool = False,
) -> datetime | None:
    """When the server acts for the seat to move: the phase's timeout after the last turn
    event, or ``CHAN_AUTO_PLAY_DELAY`` for a báo seat or one that left the table, or the
    table's ``bot_delay`` for a server bot (practice tables)."""
    if state.phase is Phase.ENDED:
        return None
    seconds = {
        Phase.TRA_CUA: table.tra_cua_timeout,
        Phase.DECLARE: table.declare_timeout,
    }.get(state.phase, table.turn_timeout)
    if actor_left or state.seats[state.turn].bao:
        seconds = min(seconds, settings.CHAN_AUTO_PLAY_DELAY)
    if actor_bot:
        seconds = min(seconds, table.bot_delay)
    return hand.last_event_at + timedelta(seconds=seconds)


def hand_deadline_for(hand: Hand, state: HandState) -> datetime | None:
    """The deadline of the seat to act in ``state``, shorter if that player left the table or
    is a bot."""
    if state.phase is Phase.ENDED:
        return None
    left = hand.seat_list()[state.turn].left
    bot = hand_seat_is_bot(hand, state.turn)
    return hand_deadline(hand, hand.table, state, actor_left=left, actor_bot=bot)


def hand_seat_is_bot(hand: Hand, position: int) -> bool:
    """Whether a server bot plays this seat of the hand (one query, at practice tables only)."""
    if not hand.table.practice:
        return False
    user_id = hand.seat_list()[position].user_id
    return User.objects.filter(pk=user_id, is_bot=True).exists()


SWEEP_GRACE = timedelta(seconds=2)  # a wake-up that is merely due is not re-armed


def clock_overdue(*, now: datetime, limit: int = 1000) -> tuple[list[int], list[int]]:
    """Work the clock is late for (its wake-up was lost: broker outage, worker killed): playing
    hands whose deadline passed over ``SWEEP_GRACE`` ago, and open tables whose ready deadline
    has, or where a player's ready has lapsed (``ready_lapses``). The hands are read among the
    playing ones (``games_hand_one_playing_per_table``, one a table), their deadline filtered:
    no index keys it (games 0035: a move's update of its hand would not stay on its page)."""
    late = now - SWEEP_GRACE
    hands = list(
        Hand.objects.filter(status=Hand.Status.PLAYING, deadline_at__lte=late)
        .order_by("deadline_at")
        .values_list("pk", flat=True)[:limit]
    )
    tables = []
    candidates = list(
        Table.objects.filter(status=Table.Status.OPEN)
        .annotate(n_ready=Count("seats", filter=Q(seats__ready=True)))
        .filter(n_ready__gte=1)
        .prefetch_related("seats__player")[:limit]
    )
    # The requests of the players whose ready may have lapsed, in one read for every table.
    quiet = ready_quiet_players((s for t in candidates for s in t.seats.all()), now=late)
    last_request = players_last_request(quiet) if quiet else {}
    for table in candidates:
        seats = list(table.seats.all())
        deadline = table_ready_deadline(table, seats)
        lapsed = ready_lapses(seats, now=late, last_request=last_request).lapsed
        if (deadline is not None and deadline <= late) or lapsed:
            tables.append(table.pk)
    return hands, tables


def _send_on_commit(task: str, object_id: int, at: datetime | None) -> None:
    """Queue ``task(object_id)`` to run at ``at`` once the transaction commits. Best effort: a
    lost wake-up (broker down) is logged and caught later by the periodic ``clock_sweep``."""
    if not settings.CHAN_CLOCK:
        return

    def send() -> None:
        current_app.send_task(task, args=(object_id,), eta=at)

    transaction.on_commit(send, robust=True)


# The wake-ups this process has queued and that have not come yet: a hand's id, or ("table",
# its id) for a table's ready clock -> when. A move (or a ready) whose deadline is not earlier
# than one of them sends nothing: that wake-up comes first, finds nothing due, and queues the
# next (``hand_clock_rearm``, ``table_clock_on_commit(force=True)``). So a hand costs about one
# message per deadline that passes rather than one per move, and a table's readies one per
# ready deadline rather than one per ready. Best effort like the messages: if the remembered
# one is lost the sweep catches it. Bounded; an entry forgotten costs one message more.
_ARMED_KEPT = 4096
_armed: OrderedDict[int | tuple[str, int], datetime] = OrderedDict()
_armed_lock = threading.Lock()


def _wake_needed(key: int | tuple[str, int], at: datetime, *, force: bool = False) -> bool:
    """Whether a wake-up at ``at`` is news to this process (and, if so, remember it as armed)."""
    now = timezone.now()
    with _armed_lock:
        armed = _armed.get(key)
        if not force and armed is not None and now < armed <= at:
            return False
        _armed[key] = at
        _armed.move_to_end(key)
        while len(_armed) > _ARMED_KEPT:
            _armed.popitem(last=False)
    return True


def _wake_failed(key: int | tuple[str, int], at: datetime) -> None:
    with _armed_lock:
        if _armed.get(key) == at:
            del _armed[key]


def _wake_on_commit(
    task: str, object_id: int, key: int | tuple[str, int], at: datetime, *, force: bool
) -> None:
    """Queue ``task(object_id)`` at ``at`` after commit unless a wake-up this process queued
    under ``key`` comes at or before it (``force``: whatever this process queued)."""

    def send() -> None:
        if not _wake_needed(key, at, force=force):
            return
        try:
            current_app.send_task(task, args=(object_id,), eta=at)
        except Exception:
            _wake_failed(key, at)
            raise

    transaction.on_commit(send, robust=True)


def hand_clock_on_commit(hand: Hand, *, force: bool = False) -> None:
    """Wake ``games.tasks.hand_turn_due`` at the hand's ``deadline_at`` after commit, unless a
    wake-up this process queued comes at or before it (it re-arms: ``hand_clock_rearm``);
    ``force``: whatever this process queued."""
    if hand.deadline_at is None or not settings.CHAN_CLOCK:
        return
    _wake_on_commit(HAND_TURN_TASK, hand.pk, hand.pk, hand.deadline_at, force=force)


def hand_clock_rearm(hand: Hand, now: datetime) -> None:
    """A wake-up came before the hand's deadline (a move since pushed it back): queue the next
    one, at the deadline, after commit (even if this process remembers one queued for then: this
    may be that one, come a hair early). The caller holds the hand row lock."""
    playing = hand.status == Hand.Status.PLAYING
    if playing and hand.deadline_at is not None and hand.deadline_at > now:
        hand_clock_on_commit(hand, force=True)


def table_clock_on_commit(table: Table, at: datetime, *, force: bool = False) -> None:
    """Wake ``games.tasks.table_deal_due`` at the table's ready deadline after commit, unless a
    wake-up this process queued comes at or before it (a ready after the first: the deadline
    runs from the first); ``force``: whatever this process queued (the wake-up itself, come a
    hair early, re-arming at the deadline)."""
    if not settings.CHAN_CLOCK:
        return
    _wake_on_commit(TABLE_DEAL_TASK, table.pk, ("table", table.pk), at, force=force)


def hand_settle_on_commit(hand: Hand) -> None:
    """Book the ended hand's settlement (``games.tasks.hand_settle_due``) once the end commits;
    the sweep books it if this message is lost, and the next deal at the table before dealing."""
    _send_on_commit(HAND_SETTLE_TASK, hand.pk, None)


def arena_clock_on_commit(*, table_id: int) -> None:
    """A hand was settled at ``table_id``: if the table is an arena's, run that arena's clock
    (``games.tasks.tournament_clock_due``) once the settlement commits, so that its players
    are free and seated again at once (beat runs it anyway)."""
    tournament_id = (
        TournamentTable.objects.filter(table_id=table_id)
        .values_list("tournament_id", flat=True)
        .first()
    )
    if tournament_id is not None:
        _send_on_commit(ARENA_CLOCK_TASK, tournament_id, None)
