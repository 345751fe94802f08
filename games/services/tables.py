"""Writes on tables and seats: create, join, leave, ready — and the deal of a new hand."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.hold_selectors import wallet_funds
from accounts.models import User
from accounts.services import user_ban_check
from core.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from core.pipeline import statements_pipelined
from core.rows import (
    row_update,
    rows_exist,
    rows_insert,
    rows_read,
    rows_read_related,
    values_read,
)
from games.clock import (
    hand_clock_on_commit,
    hand_deadline,
    table_clock_on_commit,
)
from games.hand_store import (
    hand_committed_forget,
    hand_deck,
    hand_publish_on_commit,
    hand_ruleset,
    hand_seats_load,
    hand_state,
)
from games.live.announce import announcements_batched
from games.models import (
    DEFAULT_ROOM,
    MAX_BOT_DELAY_SECONDS,
    MAX_BOTS,
    MAX_SEATS,
    Hand,
    HandSeat,
    Room,
    Seat,
    Table,
)
from games.rule_errors import rule_error
from games.rules import HandConfig, Mode, first_dealer, new_hand, parse_deck
from games.rules.cards import CODES
from games.rules.errors import InvalidInput as RulesInvalidInput
from games.rules.errors import RuleError
from games.rules.fair_deal import check_client_seed, deck_hash, new_server_seed
from games.rules.quan import FeeSchedule, FeesError
from games.rules.seating import BINDING_KEY, BoundSeat
from games.selectors.blocks import blocked_ids_with
from games.selectors.integrity import account_frozen_check
from games.selectors.rules import ruleset_from_spec
from games.selectors.tables import ready_lapses, table_ready_deadline
from games.services.feed import (
    UNSEAT_IDLE,
    UNSEAT_LIMIT,
    UNSEAT_STAKE,
    feed_hand_changed,
    feed_table_changed,
    table_changed_on_commit,
)
from games.services.hand_log import hand_event_append
from games.services.hands import hand_lock
from games.services.pot import pot_buy_in, pot_refund
from games.services.practice import practice_seat_bots
from games.services.private_tables import private_join_check, private_table_make
from games.services.quan_booking import hand_settle
from games.services.seat_holds import (
    CREATE_STAKES,
    SIT_STAKES,
    deal_seat_accounts,
    seat_hold_place,
    seat_hold_release,
    seat_holds_for_deal,
    seat_wallet_lock,
)
from games.services.table_limits import (
    deal_limits_reserve,
    quick_join_within_limits,
    seats_within_limits,
    table_limits_check,
)


def fixed_deck_check(*, deck_given: bool) -> None:
    """A fixed deck (or dealer) is refused with ``fixed_deck_not_allowed`` unless
    ``CHAN_ALLOW_FIXED_DECK``, whatever the deck: checked before the deck itself."""
    if deck_given and not settings.CHAN_ALLOW_FIXED_DECK:
        raise InvalidInput(
            _("Fixed decks are for tests and development only; this server refuses them."),
            code="fixed_deck_not_allowed",
        )


def _fixed_deck(
    deck: Any, dealer: int | None, max_seats: int
) -> tuple[list[str] | None, int | None]:
    if deck is None and dealer is None:
        return None, None
    fixed_deck_check(deck_given=True)
    if deck is None:
        raise InvalidInput(
            _("A fixed dealer needs a fixed deck."), errors={"deck": [_("required with dealer")]}
        )
    try:
        kinds = parse_deck(deck)
    except RulesInvalidInput as exc:
        raise rule_error(exc, fields=["deck"]) from exc
    if dealer is not None and not 0 <= dealer < max_seats:
        raise InvalidInput(
            _("The dealer must be a seat from 0 to %(last)s."),
            errors={"dealer": [_("must be a seat from 0 to %(last)s") % {"last": max_seats - 1}]},
            last=max_seats - 1,
        )
    return [CODES[k] for k in kinds], dealer


def room_missing_requirements(user: Any, *, room: Room, balance: int) -> list[dict[str, Any]]:
    """What ``user`` (holding ``balance`` Quan) lacks to play in ``room`` (RULES.md §11): one
    ``{"requirement", "needed", "have"}`` per unmet requirement — ``balance``, ``level``,
    ``vip_points``, ``badge`` — in that order; empty when it may play there."""
    checks = [
        ("balance", room.min_balance, balance),
        ("level", room.min_level, user.level),
        ("vip_points", room.min_vip_points, user.vip_points),
    ]
    missing: list[dict[str, Any]] = [
        {"requirement": name, "needed": needed, "have": have}
        for name, needed, have in checks
        if have < needed
    ]
    if room.needs_badge and not user.badge:
        missing.append({"requirement": "badge", "needed": True, "have": False})
    return missing


def _check_room_requirements(user: Any, *, room: Room, balance: int) -> None:
    """409 ``room_requirements_not_met`` with the ``missing`` list unless ``user`` may play in
    ``room``."""
    missing = room_missing_requirements(user, room=room, balance=balance)
    if missing:
        raise Conflict(
            _("You do not meet the requirements of the room %(room)s: %(missing)s."),
            code="room_requirements_not_met",
            extra={"room": room.slug, "missing": missing},
            room=room.name,
            missing=", ".join(m["requirement"] for m in missing),
        )


def room_play_check(user: Any, *, room: Room) -> None:
    """The player may play in ``room`` now: not banned (403 ``player_banned``), not frozen
    (403 ``account_frozen``), meets its requirements (409 ``room_requirements_not_met``)."""
    _check_balance(user, stake=0, stakes=0, room=room)


def _check_balance(user: Any, *, stake: int, stakes: int, room: Room) -> None:
    """The player meets the room's requirements (409 ``room_requirements_not_met``, its Quan
    counted as what is available: balance − held). Whether ``stakes`` × stake is available is
    checked again under the wallet's lock when the seat's hold is placed (seat_holds)."""
    user_ban_check(user)  # 403 player_banned: a banned player cannot sit
    account_frozen_check(user)  # 403 account_frozen: staff froze it
    _check_room_requirements(user, room=room, balance=wallet_funds(user).available)


def _seat_taken() -> Conflict:
    return Conflict(_("That seat is taken."), code="seat_taken")


def _check_seat_number(table: Table, seat: int) -> None:
    if not 0 <= seat < table.max_seats:
        last = table.max_seats - 1
        raise InvalidInput(
            _("Seats at this table are numbered 0 to %(last)s."),
            code="invalid_seat",
            errors={"seat": [_("must be from 0 to %(last)s") % {"last": last}]},
            last=last,
        )


def _practice_terms(
    *,
    practice: bool,
    bots: int | None,
    bot_delay: int | None,
    stake: int | None,
    max_seats: int | None,
) -> tuple[int, int, int, int]:
    """(bots, bot_delay, stake, max_seats) of a new table: a practice table seats ``bots``
    server bots (every other seat by default), its stake is 1 unless given (nothing is booked),
    and it has ``bots`` + 1 seats unless it asks for more; any other table has no bots."""
    if not practice:
        extra = {"bots": bots, "bot_delay": bot_delay}
        given = [key for key, value in extra.items() if value is not None]
        if given:
            raise InvalidInput(
                _("Bots play at practice tables only (send practice: true)."),
                code="practice_only",
                errors={key: [_("practice tables only")] for key in given},
            )
        if stake is None:
            raise InvalidInput(
                _("A table needs a stake."), errors={"stake": [_("This field is required.")]}
            )
        return 0, 1, stake, MAX_SEATS if max_seats is None else max_seats
    if bots is None:
        bots = MAX_BOTS if max_seats is None else max_seats - 1
    if max_seats is None:
        max_seats = bots + 1
    if not 1 <= bots <= min(MAX_BOTS, max_seats - 1):
        last = min(MAX_BOTS, max_seats - 1)
        raise InvalidInput(
            _("A practice table seats 1 to %(last)s bots."),
            code="invalid_bots",
            errors={"bots": [_("must be from 1 to %(last)s") % {"last": last}]},
            last=last,
        )
    delay = 1 if bot_delay is None else bot_delay
    if not 0 <= delay <= MAX_BOT_DELAY_SECONDS:
        raise InvalidInput(
            _("A bot's delay is 0 to %(last)s seconds."),
            errors={
                "bot_delay": [_("must be from 0 to %(last)s") % {"last": MAX_BOT_DELAY_SECONDS}]
            },
            last=MAX_BOT_DELAY_SECONDS,
        )
    return bots, delay, 1 if stake is None else stake, max_seats


@transaction.atomic
def table_create(
    *,
    owner: Any,
    name: str,
    stake: int | None = None,
    room: str = DEFAULT_ROOM,
    max_seats: int | None = None,
    mode: str = "basic",
    ruleset: Mapping[str, Any] | None = None,
    timeouts: Mapping[str, int] | None = None,
    seat: int | None = None,
    deck: Any = None,
    dealer: int | None = None,
    spectators: bool = True,
    practice: bool = False,
    bots: int | None = None,
    bot_delay: int | None = None,
    private: bool = False,
) -> Table:
    """Open a table; the owner sits at ``seat`` (0 unless it asks for another). ``spectators``:
    whether anyone signed in may watch its hands (their public view only).

    ``practice``: server bots take ``bots`` seats (``_practice_terms``) and move ``bot_delay``
    seconds after their turn comes; nothing is booked, so neither the owner's balance nor the
    room's requirements are checked (docs/decisions/practice-tables.md).

    ``private``: not in the lobby nor quick-join, no spectators; others join with its invite
    code (games.services.private_tables)."""
    n_bots, bot_delay, stake, max_seats = _practice_terms(
        practice=practice, bots=bots, bot_delay=bot_delay, stake=stake, max_seats=max_seats
    )
    spec = ruleset_from_spec(ruleset).spec()
    room_row = Room.objects.filter(slug=room).first()
    if room_row is None:
        raise InvalidInput(
            _("No such room: %(room)s."),
            code="invalid_room",
            errors={"room": [_("no such room")]},
            room=room,
        )
    if not practice:
        _check_balance(owner, stake=stake, stakes=CREATE_STAKES, room=room_row)
    table_limits_check(owner, stake=stake, practice=practice)  # the player's own limits
    fixed_deck, fixed_dealer = _fixed_deck(deck, dealer, max_seats)
    timeouts = timeouts or {}
    table = Table(
        name=name,
        room_id=room,
        stake=stake,
        max_seats=max_seats,
        mode=mode,
        ruleset=spec,
        owner=owner,
        fixed_deck=fixed_deck,
        fixed_dealer=fixed_dealer,
        spectators=spectators and not private,
        practice=practice,
        bot_delay=bot_delay,
    )
    for key in ("turn", "tra_cua", "declare", "ready"):
        if key in timeouts:
            setattr(table, f"{key}_timeout", timeouts[key])
    table.save()
    if private:
        private_table_make(table=table)  # its invite code
    seat_number = 0 if seat is None else seat
    _check_seat_number(table, seat_number)
    Seat.objects.create(table=table, player=owner, number=seat_number)
    seat_hold_place(table=table, user=owner, stakes=CREATE_STAKES)
    if practice:
        practice_seat_bots(table=table, count=n_bots)
    table_changed_on_commit(table.pk)
    return table


def _lock_table(table_id: int) -> Table:
    found = rows_read(Table, "id = %s", [table_id], for_update=True)  # a fixed statement
    if not found:
        raise NotFound(_("No such table."))
    return found[0]


@transaction.atomic
def seat_join(
    *,
    table_id: int,
    user: Any,
    seat: int | None = None,
    auto_u: bool | None = None,
    auto_chiu: bool | None = None,
    code: str | None = None,
    avoid_blocked: bool = False,
) -> Seat:
    """Sit down at a table: at ``seat``, or the lowest free seat; the seat holds 15 × stake of
    the player's wallet (seat_holds). A private table wants its invite ``code``; blocked pairs
    never sit together there, nor anywhere with ``avoid_blocked`` (quick-join). Locks the table row, then the player's wallet, then its
    user row (the settlement's order: wallets before users)."""
    table = _lock_table(table_id)
    if table.status == Table.Status.CLOSED:
        raise Conflict(_("This table is closed."), code="table_closed")
    seats = list(table.seats.all())
    if any(s.player_id == user.pk for s in seats):
        raise Conflict(_("You already sit at this table."), code="already_seated")
    private_join_check(
        table=table,
        user=user,
        code=code,
        seated_ids=[s.player_id for s in seats],
        avoid_blocked=avoid_blocked,
    )
    taken = {s.number for s in seats}
    if seat is None:
        free = [n for n in range(table.max_seats) if n not in taken]
        if not free:
            raise Conflict(_("This table is full."), code="table_full")
        seat = free[0]
    else:
        _check_seat_number(table, seat)
        if seat in taken:
            raise _seat_taken()
    seat_wallet_lock(table=table, user=user)  # the wallet before the player's row
    # The ban read under a lock on the player's row: a ban committing meanwhile either refuses
    # this join or waits for it, and then finds its seat to free (seats_vacate).
    user_ban_check(User.objects.select_for_update(no_key=True).get(pk=user.pk))
    account_frozen_check(user)  # 403 account_frozen (practice tables too)
    if not table.practice:
        _check_balance(user, stake=table.stake, stakes=SIT_STAKES, room=table.room)
    table_limits_check(user, stake=table.stake, practice=table.practice)  # its own limits
    prefs = {k: v for k, v in (("auto_u", auto_u), ("auto_chiu", auto_chiu)) if v is not None}
    try:
        with transaction.atomic():
            taken = Seat.objects.create(table=table, player=user, number=seat, **prefs)
    except IntegrityError as exc:  # a concurrent join took it first
        raise _seat_taken() from exc
    seat_hold_place(table=table, user=user)  # 409 insufficient_balance under the wallet lock
    if not table.practice:
        pot_buy_in(table=table, user=user)
    feed_table_changed(table_id=table.pk, change="joined", user=user, seat=seat)
    return taken


def _seat_of(table: Table, user: Any) -> Seat:
    found = rows_read(
        Seat, "table_id = %s AND player_id = %s", [table.pk, user.pk], for_update=True
    )
    if not found:
        raise Conflict(_("You do not sit at this table."), code="not_seated")
    return found[0]


class _DealtMeanwhile(Exception):
    """The table's playing hand changed between reading it and locking the table."""


def _playing_hand_id(table_id: int) -> int | None:
    return (
        Hand.objects.filter(table_id=table_id, status=Hand.Status.PLAYING)
        .values_list("pk", flat=True)
        .first()
    )


@transaction.atomic
def seat_leave(
    *, table_id: int, user: Any, reason: str | None = None, limit: str | None = None
) -> Table:
    """Stand up. Between hands the seat is freed, which may complete the ready seats and deal
    (the last player leaving closes the table). Mid-hand the player is marked as gone from the
    hand (``HandSeat.left_at``): the server plays it after the auto-play delay to the end of
    the hand, then frees the seat. ``reason``, ``limit``: why the server stands the player up,
    for the ``seats_changed`` entries (none when it leaves itself).

    Locks the playing hand's row, then the table's (the order of the move paths). A deal can
    slip in between reading which hand is playing and locking the table; under the table lock
    the playing hand is settled (deals need that lock), so it is read again, and on a change
    the attempt rolls back to its savepoint (releasing its locks) and starts over. The leave
    then lands either before the deal (seat freed, not dealt) or after it (gone from the new
    hand), never half of each."""
    for _attempt in range(5):
        try:
            with transaction.atomic():
                return _seat_leave_once(table_id, user, reason=reason, limit=limit)
        except _DealtMeanwhile:
            continue
    raise Conflict(_("The table is busy; try again."), code="table_busy")


def seats_vacate(
    *,
    user_id: int,
    between_hands_only: bool = False,
    reason: str | None = None,
    limit: str | None = None,
) -> list[int]:
    """Stand a banned player up at every table it sits at, as :func:`seat_leave` does (its gà
    góp share refunded; mid-hand it is marked as gone, played by the server to the end of the
    hand, then unseated). Sent ``accounts.signals.player_banned`` after the ban commits; safe
    to run twice. ``between_hands_only``: skip the tables where it is in the hand being played
    (it plays that hand to its end; the deal unseats it). ``reason``, ``limit``: why, for the
    ``seats_changed`` entries (its own limits, ``table_limits.seats_release_excluded``). Returns
    the ids of the tables it stood up from."""
    user = User.objects.get(pk=user_id)
    left = []
    for table_id in list(Seat.objects.filter(player=user).values_list("table_id", flat=True)):
        if (
            between_hands_only
            and HandSeat.objects.filter(
                hand__table_id=table_id, hand__status=Hand.Status.PLAYING, user=user
            ).exists()
        ):
            continue
        try:
            seat_leave(table_id=table_id, user=user, reason=reason, limit=limit)
        except Conflict as exc:  # it stood up meanwhile
            if exc.code != "not_seated":
                raise
            continue
        left.append(table_id)
    return left


def _seat_leave_once(
    table_id: int, user: Any, *, reason: str | None = None, limit: str | None = None
) -> Table:
    playing = _playing_hand_id(table_id)
    hand = hand_lock(playing) if playing is not None else None
    table = _lock_table(table_id)
    if _playing_hand_id(table_id) != playing:
        raise _DealtMeanwhile
    seat = _seat_of(table, user)
    if (
        hand is not None
        and hand.status == Hand.Status.PLAYING
        and hand.seat_of(user.pk) is not None
    ):
        seat.ready = False
        seat.ready_at = None
        seat.save(update_fields=["ready", "ready_at", "updated_at"])
        _hurry_the_clock(hand, user)
    else:
        seat.delete()
        pot_refund(table=table, user=user)
        seat_hold_release(table=table, user=user)
        if not _table_close_if_deserted(table):
            _deal_if_ready(table, _seats_read(table))
    feed_table_changed(
        table_id=table.pk,
        change="left",
        user=user,
        seat=seat.number,
        reason=reason,
        limit=limit,
    )
    return table


def _seats_free(table: Table, seats: list[Seat]) -> None:
    """Free ``seats`` between hands: each player's gà góp share refunded, its hold released."""
    for seat in seats:
        seat.delete()
        pot_refund(table=table, user=seat.player)
        seat_hold_release(table=table, user=seat.player)


def _table_close_if_deserted(table: Table) -> bool:
    """When no player is left seated, close the table (no longer listed; nobody can join) and
    stand a practice table's bots up with it. The caller holds the table row lock."""
    if Seat.objects.filter(table=table, player__is_bot=False).exists():
        return False
    Seat.objects.filter(table=table).delete()
    table.status = Table.Status.CLOSED
    table.save(update_fields=["status", "updated_at"])
    return True


def _hurry_the_clock(hand: Hand, user: Any) -> None:
    """Mark the player as gone from the hand (``HandSeat.left_at``): from now on its turns have
    the auto-play delay, and if it leaves on its own turn the current deadline comes down to
    it. The caller holds the hand row lock."""
    hand_seat = next(s for s in hand.seat_list() if s.user_id == user.pk)
    if hand_seat.left_at is not None:
        return
    hand_seat.left_at = timezone.now()
    hand_seat.save(update_fields=["left_at", "updated_at"])
    # A new seats version tells the processes that remember the hand's seats (games.hand_store)
    # to read them again.
    hand.seats_version += 1
    state = hand_state(hand)
    due = hand_deadline(hand, hand.table, state, actor_left=True)
    on_turn = state.turn == hand_seat.position
    hurry = on_turn and due is not None and (hand.deadline_at is None or due < hand.deadline_at)
    if hurry:
        hand.deadline_at = due
    hand.save(update_fields=["deadline_at", "seats_version", "updated_at"])
    # (the processes that committed its last move kept its row: games.hand_store)
    transaction.on_commit(lambda: hand_committed_forget(hand.pk))
    if hurry:
        hand_clock_on_commit(hand)


# The player left the table's playing hand mid-hand (HandSeat.left_at): a fixed statement.
_LEAVING_SQL = (
    f"SELECT 1 FROM {HandSeat._meta.db_table} hs JOIN {Hand._meta.db_table} h ON h.id = hs.hand_id"
    f" WHERE h.table_id = %s AND h.status = '{Hand.Status.PLAYING.value}' AND hs.user_id = %s"
    " AND hs.left_at IS NOT NULL"
)


# What saying ready (or not) changes on the seat's row.
_READY_FIELDS = ("ready", "ready_at", "auto_u", "auto_chiu", "client_seed", "updated_at")


@announcements_batched()  # the deal's announcements (hand, feeds, table, lobby) in one trip
@transaction.atomic
def seat_ready(
    *,
    table_id: int,
    user: Any,
    ready: bool = True,
    auto_u: bool | None = None,
    auto_chiu: bool | None = None,
    client_seed: str | None = None,
) -> Hand | None:
    """Say ready (or not) for the next hand; deal it when :func:`_seats_to_deal` says so and
    return it. Locks the table row. ``client_seed`` is the seat's own seed for that deal
    (games.rules.fair_deal; ``400 invalid`` when malformed); omitted, the seat keeps the one it
    gave before for this deal, or none (the empty seed). Saying not ready forgets it."""
    if client_seed is not None:
        try:
            check_client_seed(client_seed)
        except RuleError as exc:
            raise rule_error(exc, fields=["client_seed"]) from exc
    table = _lock_table(table_id)
    seat = _seat_of(table, user)
    if rows_exist(HandSeat, _LEAVING_SQL, [table.pk, user.pk]):
        raise Conflict(_("You are leaving this table."), code="seat_leaving")
    if table.status == Table.Status.CLOSED:
        raise Conflict(_("This table is closed."), code="table_closed")
    if table.status == Table.Status.PLAYING:
        raise Conflict(
            _("A hand is being played; say ready after it ends."), code="hand_in_progress"
        )
    if ready:
        account_frozen_check(user)  # 403 account_frozen: seated when frozen, dealt no more
    if ready != seat.ready:
        seat.ready_at = timezone.now() if ready else None
    seat.ready = ready
    if auto_u is not None:
        seat.auto_u = auto_u
    if auto_chiu is not None:
        seat.auto_chiu = auto_chiu
    if not ready:
        seat.client_seed = ""
    elif client_seed is not None:
        seat.client_seed = client_seed
    # The seat's UPDATE goes in the flight of the table's seats' read (core.pipeline).
    with statements_pipelined():
        row_update(seat, _READY_FIELDS)
        seats = _seats_read(table)
    hand = _deal_if_ready(table, seats)
    if hand is None:
        feed_table_changed(
            table_id=table.pk, change="ready", user=user, seat=seat.number, ready=seat.ready
        )
    else:
        # The ready that dealt is told by the deal's own entries (hand_dealt, your_turn). Its
        # seats_changed would have to come before them, so before the deal's wallet locks: a
        # feed lock before a wallet lock, the order seat_join reverses (a deadlock between a
        # ready here and that player joining another table). The table's waiters still wake.
        table_changed_on_commit(table.pk)
    return hand


@transaction.atomic
def table_deal_if_due(*, table_id: int) -> Hand | None:
    """The ready clock: deal the next hand if its ready deadline has passed (the Celery task
    ``games.tasks.table_deal_due`` calls this; safe to run any number of times). Locks the table
    row."""
    table = Table.objects.select_for_update(no_key=True).filter(pk=table_id).first()
    if table is None:
        return None
    return _deal_if_ready(table, _seats_read(table), woken=True)


# A seat the server stood up before a deal: why (feed.UNSEAT_*) and, for a limit, which.
Unseated = tuple[Seat, str, str | None]


def _seats_read(table: Table) -> list[Seat]:
    """The table's seats in number order, their players loaded."""
    return rows_read_related(Seat, "player", "m.table_id = %s ORDER BY m.number", [table.pk])


def _deal_if_ready(table: Table, seats: list[Seat], *, woken: bool = False) -> Hand | None:
    """The table's ready rule (RULES.md §12). First a ready player gone quiet is stood up: its
    ready lapsed (``CHAN_READY_EXPIRY_SECONDS`` without a sign of life, ``ready_lapses``), it is
    not dealt in. Then, every seated player ready, two at least: deal. Otherwise, once the
    ready deadline has passed, unseat the players who are not ready and deal to the others if
    they are two or more; before it, wake the ready clock at it, or at the next ready's lapse
    if that comes first (``woken``: by the clock's own wake-up, which re-arms whatever this
    process remembers). ``seats``: the table's (:func:`_seats_read`). The caller holds the
    table row lock."""
    if table.status != Table.Status.OPEN:
        return None
    if all(s.player.is_bot for s in seats):
        return None  # bots alone never play (a practice table's bots are always ready)
    now = timezone.now()
    lapses = ready_lapses(seats, now=now)
    gone: list[Unseated] = [(s, UNSEAT_IDLE, None) for s in lapses.lapsed]
    if lapses.lapsed:
        _seats_free(table, lapses.lapsed)
        seats = [s for s in seats if s not in lapses.lapsed]
        if _table_close_if_deserted(table):
            _unseated_tell(table, gone)
            return None
    deadline = table_ready_deadline(table, seats)
    if deadline is not None and now >= deadline:
        return _deal_at_the_deadline(table, seats, now, gone, lapses.next_at)
    if deadline is None and len(seats) >= 2 and all(s.ready for s in seats):
        return _deal_those_who_can_pay(table, seats, gone)
    wake = min((at for at in (deadline, lapses.next_at) if at is not None), default=None)
    if wake is not None:
        table_clock_on_commit(table, wake, force=woken)
    _unseated_tell(table, gone)
    return None


def _deal_at_the_deadline(
    table: Table,
    seats: list[Seat],
    now: datetime,
    gone: list[Unseated],
    lapse_at: datetime | None,
) -> Hand | None:
    """The ready deadline has passed: unseat the players who are not ready — except newcomers,
    who get ``ready_timeout`` from their own arrival (they sit this hand out) — and deal to the
    ready ones if they are two or more; else wait for the newcomers' grace to end, or the next
    ready's lapse (``lapse_at``). ``gone``: the players already stood up before this deal."""
    grace = timedelta(seconds=table.ready_timeout)
    idle = [s for s in seats if not s.ready and s.created_at + grace <= now]
    _seats_free(table, idle)
    gone = [*gone, *((s, UNSEAT_IDLE, None) for s in idle)]
    ready = [s for s in seats if s.ready]
    if len(ready) >= 2:
        return _deal_those_who_can_pay(table, ready, gone)
    wakes = [s.created_at + grace for s in seats if not s.ready and s not in idle]
    if lapse_at is not None:
        wakes.append(lapse_at)
    if wakes:
        table_clock_on_commit(table, min(wakes), force=True)
    _unseated_tell(table, gone)
    return None


def _deal_those_who_can_pay(
    table: Table, seats: list[Seat], gone: list[Unseated] | None = None
) -> Hand | None:
    gone = list(gone or [])
    seats = _seats_that_can_pay(table, seats, gone)
    hand = hand_start(table=table, seats=seats) if len(seats) >= 2 else None
    if hand is not None:
        deal_limits_reserve(hand=hand)  # the players' loss limits hold the seats' holds
    _unseated_tell(table, gone)  # last: no wallet is locked after the feed (games.services.feed)
    return hand


def _unseated_tell(table: Table, gone: list[Unseated]) -> None:
    """The ``seats_changed`` (left, with its ``reason``) of each player the server stood up
    before this deal."""
    for seat, reason, limit in gone:
        feed_table_changed(
            table_id=table.pk,
            change="left",
            user=seat.player,
            seat=seat.number,
            reason=reason,
            limit=limit,
        )


# What every deal reads of the table's hands, as fixed statements (core.rows) rather than
# compiled per deal: its ended hands not yet settled (``Hand.objects.filter(table=…,
# status=ENDED, settled_at__isnull=True)``, in ``Hand.Meta.ordering``), and its last hand.
_UNSETTLED_SQL = (
    f"SELECT id FROM {Hand._meta.db_table} WHERE table_id = %s AND status = 'ended'"
    " AND settled_at IS NULL ORDER BY created_at DESC, id DESC"
)
_LAST_HAND = "table_id = %s ORDER BY number DESC LIMIT 1"


def _seats_that_can_pay(table: Table, seats: list[Seat], gone: list[Unseated]) -> list[Seat]:
    """Before a deal: the previous hand's settlement is booked (here if its task has not run
    yet), then players who cannot hold 15 × stake at this table (their hold here plus their
    free Quan) are unseated, and the others' holds are made whole (RULES.md §11, seat_holds).
    The caller holds the table row lock (``hand_settle`` takes it again, then the hand's)."""
    for (hand_id,) in values_read(Hand, _UNSETTLED_SQL, [table.pk]):
        hand_settle(hand_id=hand_id)
    seats, limited = seats_within_limits(table=table, seats=seats)  # the players' own limits
    gone.extend((seat, UNSEAT_LIMIT, limit) for seat, limit in limited)
    if table.practice:
        return seats  # nothing is at stake at a practice table
    poor = seat_holds_for_deal(table=table, seats=seats)  # the others' holds made whole
    _seats_free(table, poor)
    gone.extend((seat, UNSEAT_STAKE, None) for seat in poor)
    return [s for s in seats if s not in poor]


def _next_seated(numbers: list[int], start: int, max_seats: int) -> int:
    """The first seated table seat number at or after ``start`` in play order."""
    for step in range(max_seats):
        n = (start + step) % max_seats
        if n in numbers:
            return n
    raise AssertionError("no seated player")


def _dealer_and_previous_winner(
    table: Table, last: Hand | None, numbers: list[int], users: list[int], seed: bytes
) -> tuple[int, int | None]:
    """(dealer table seat, previous winner's hand seat or None) for the next hand after
    ``last`` (the table's, its seats prefetched; None before the first) (RULES §3)."""
    if last is None:
        if table.fixed_dealer is not None:
            return _next_seated(numbers, table.fixed_dealer, table.max_seats), None
        return numbers[first_dealer(seed, len(numbers))], None
    last_seats = last.seat_list()
    result = last.outcome_result()
    winner_hand_seat = result.winner
    # Thông carries to the next hand as the settlement says (only after a paid win); without
    # a settlement, after any win.
    settlement = result.settlement
    thong_seat = settlement.thong_next if settlement is not None else winner_hand_seat
    previous_winner = None
    if thong_seat is not None and last_seats[thong_seat].user_id in users:
        previous_winner = users.index(last_seats[thong_seat].user_id)
    if winner_hand_seat is not None:
        winner = last_seats[winner_hand_seat]
        return _next_seated(numbers, winner.table_seat, table.max_seats), previous_winner
    prev_dealer = last_seats[last.dealer].table_seat
    return _next_seated(numbers, prev_dealer + 1, table.max_seats), previous_winner


def _room_fees(table: Table) -> dict[str, Any]:
    """The room's fee schedule as the hand freezes it, validated (a schedule the admin form
    would refuse, written to the database by other means, stops the deal rather than the
    settlement: ``invalid_fees`` naming the entry)."""
    try:
        return FeeSchedule.from_dict(table.room.fees).to_dict()
    except FeesError as exc:
        at = "room.fees" if exc.field == "fees" else f"room.fees.{exc.field}"
        raise rule_error(exc, fields=[at]) from exc


def _new_hand_row(table: Table, seats: list[Seat], seed: bytes) -> Hand:
    """The next hand of the table, not yet saved: its number, dealer and previous winner
    (RULES.md §3) and the terms frozen from the table and its room."""
    numbers = [s.number for s in seats]
    users = [s.player_id for s in seats]
    last = next(iter(rows_read(Hand, _LAST_HAND, [table.pk])), None)
    if last is not None:
        hand_seats_load(last)  # (its seats, as ``prefetch_related("hand_seats")`` keeps them)
    if not Table.room.is_cached(table):  # (its fees and terms, frozen below)
        Table.room.field.set_cached_value(table, rows_read(Room, "slug = %s", [table.room_id])[0])
    dealer_number, previous_winner = _dealer_and_previous_winner(table, last, numbers, users, seed)
    return Hand(
        table=table,
        number=(last.number if last is not None else 0) + 1,
        n_seats=len(seats),
        dealer=numbers.index(dealer_number),
        stake=table.stake,
        room_id=table.room_id,
        fees=_room_fees(table),
        xuong_sai_settled=table.room.xuong_sai_settled,
        mode=table.mode,
        # By value: the whole table of the moment, with its preset's version (never a
        # reference to a preset that may change later).
        ruleset=ruleset_from_spec(table.ruleset).to_dict(),
        previous_winner=previous_winner,
        deck=table.fixed_deck,
        seed=seed.hex(),
        seed_hash=hashlib.sha256(seed).hexdigest(),
        client_seeds=[s.client_seed for s in seats],
        last_event_at=timezone.now(),
    )


def hand_start(*, table: Table, seats: list[Seat]) -> Hand:
    """Deal a hand to ``seats`` (seated and ready, in seat-number order). The caller holds the
    table row lock. The server's seed is the one the table committed to before any seat said
    ready (``Table.next_seed``), secret until the end; the deck mixes in every seat's seed
    (games.rules.fair_deal); the next hand's seed is drawn and committed now (RULES.md §13)."""
    seed = bytes.fromhex(table.next_seed)
    hand = _new_hand_row(table, seats, seed)
    table.next_seed = new_server_seed()
    hand.next_seed_hash = table.next_seed_hash
    config = HandConfig(
        n_seats=len(seats),
        mode=Mode(table.mode),
        ruleset=hand_ruleset(hand),
        previous_winner=hand.previous_winner,
        prefs=tuple((s.auto_u, s.auto_chiu) for s in seats),
    )
    hand.deadline_at = timezone.now()  # a placeholder: the real one needs the state, which
    hand.save()  # needs the deck, which needs the hand's id
    deck = parse_deck(table.fixed_deck) if table.fixed_deck is not None else hand_deck(hand)
    state = new_hand(config, deck, hand.dealer)
    bot = table.practice and seats[state.turn].player.is_bot
    hand.deadline_at = hand_deadline(hand, table, state, actor_bot=bot)
    # Each with its player (read with the seats: ``_seats_read``), as ``hand_seats_load`` keeps
    # them: the hand this process keeps once the deal commits renders each seat's first view
    # of it, whose players' names are read from there (a query for each name otherwise).
    hand_seats = [
        HandSeat(
            hand=hand,
            position=position,
            user=s.player,
            table_seat=s.number,
            auto_u=s.auto_u,
            auto_chiu=s.auto_chiu,
        )
        for position, s in enumerate(seats)
    ]
    hand._prefetched_objects_cache = {"hand_seats": hand_seats}  # (the feed's notes read them)
    # Who sits where is part of the record (games.rules.seating): each seat's player and the
    # account its settlement moves, bound inside the log's hash chain.
    accounts = deal_seat_accounts(table=table, seats=seats)
    bound = [
        BoundSeat(position=position, player=s.player_id, account=account).to_dict()
        for position, (s, account) in enumerate(zip(seats, accounts, strict=True))
    ]
    table.status = Table.Status.PLAYING
    # The rest of the deal in one flight (core.pipeline): nothing below reads an answer.
    with statements_pipelined():
        row_update(hand, ("deadline_at",))
        rows_insert(hand_seats, returning_pk=True)
        # The deal commits to its deck in the log (games.rules.fair_deal.deck_hash): a
        # verifier told other seeds than the ones dealt from stops at seq 0.
        hand_event_append(
            hand=hand,
            type="deal",
            system=True,
            payload={"deck_hash": deck_hash(deck), BINDING_KEY: bound},
            effects=list(state.events),
        )
        row_update(table, ("status", "next_seed", "updated_at"))
        with connection.cursor() as cursor:  # (the ORM's UPDATE would wait for its row count)
            cursor.execute(_SEEDS_FORGET_SQL, [[s.pk for s in seats]])
        feed_hand_changed(hand=hand, state=state)
    hand_publish_on_commit(hand, state)
    hand_clock_on_commit(hand)
    return hand


# Each dealt seat's own seed is spent with the deal (RULES.md §13).
_SEEDS_FORGET_SQL = f"UPDATE {Seat._meta.db_table} SET client_seed = '' WHERE id = ANY(%s)"


QUICK_JOIN_TRIES = 5
QUICK_JOIN_MIN_STAKE = 100


def quick_join_stake(room: Room) -> int:
    """The stake of a table that quick-join opens when the player names none: a hundredth of
    the room's minimum balance, at least 100 Quan (Nền đất 100, Chiếu cói 1,500)."""
    return max(QUICK_JOIN_MIN_STAKE, room.min_balance // 100)


def room_quick_join(*, room: str, user: Any, stake: int | None = None) -> tuple[Table, bool]:
    """Seat ``user`` at an open table of ``room`` with a free seat whose stake it can afford
    (15 × stake; exactly ``stake`` when given), the fullest first, then the oldest; or, when
    there is none, open one (at ``stake`` or :func:`quick_join_stake`). Returns the table and
    whether it was created.

    Each attempt is its own :func:`seat_join` (locks that table row only, then releases it), so
    two quick-joins never hold two table locks at once: the loser of a race for the last seat
    finds the table full and moves on to the next candidate, or opens a table."""
    room_row = Room.objects.filter(slug=room).first()
    if room_row is None:
        raise NotFound(_("No such room: %(room)s."), code="not_found", room=room)
    balance = wallet_funds(user).available  # what its seats do not hold already
    _check_room_requirements(user, room=room_row, balance=balance)
    candidates = (
        Table.objects.filter(
            room=room_row,
            status__in=[Table.Status.OPEN, Table.Status.PLAYING],
            practice=False,
            private__isnull=True,  # private tables are joined by their code only
        )
        .exclude(seats__player=user)
        .exclude(seats__player__in=blocked_ids_with(user.pk))  # never with a blocked pair
        .annotate(_seated=Count("seats"))
        .filter(max_seats__gt=F("_seated"), stake__lte=balance // SIT_STAKES)
        .order_by("-_seated", "created_at", "id")
    )
    if stake is not None:
        candidates = candidates.filter(stake=stake)
    candidates = quick_join_within_limits(candidates, user)  # the player's own limits
    for table_id in list(candidates.values_list("pk", flat=True)[:QUICK_JOIN_TRIES]):
        try:
            seat_join(table_id=table_id, user=user, avoid_blocked=True)
        except (Conflict, NotFound, PermissionDenied) as exc:
            if exc.code in ("room_requirements_not_met", "insufficient_balance"):
                raise  # the player's own state, not the table's: no other table will differ
            continue  # taken, full or closed since the query: try the next one
        return Table.objects.get(pk=table_id), False
    table = table_create(
        owner=user,
        name=room_row.name,
        stake=stake if stake is not None else quick_join_stake(room_row),
        room=room_row.slug,
    )
    return table, True
