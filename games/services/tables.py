"""Writes on tables and seats: create, join, leave, ready — and the deal of a new hand."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from chan_api.problems import ApiProblem, bad_request, conflict, not_found
from games.models import MAX_SEATS, Hand, HandEvent, Seat, Table
from games.rules import first_dealer, new_hand, parse_deck, shuffle
from games.rules.cards import CODES
from games.rules.errors import InvalidInput
from games.selectors import (
    hand_config,
    hand_deadline,
    hand_state,
    rule_error_vi,
    ruleset_from_spec,
    state_pickle,
    table_ready_deadline,
)
from games.services.hands import hand_clock_on_commit, hand_lock, hand_publish_on_commit


def _fixed_deck(
    deck: Any, dealer: int | None, max_seats: int
) -> tuple[list[str] | None, int | None]:
    if deck is None and dealer is None:
        return None, None
    if not settings.CHAN_ALLOW_FIXED_DECK:
        raise bad_request(
            "fixed_deck_not_allowed",
            "Fixed decks are for tests and development only; this server refuses them.",
            "Bộ bài cố định chỉ dành cho kiểm thử; máy chủ này không cho phép.",
        )
    if deck is None:
        raise bad_request(
            "invalid",
            "A fixed dealer needs a fixed deck.",
            "Nhà cái cố định cần bộ bài cố định.",
            errors={"deck": ["required with dealer"]},
        )
    try:
        kinds = parse_deck(deck)
    except InvalidInput as exc:
        raise bad_request(
            exc.code, exc.message, rule_error_vi(exc), errors={"deck": [exc.message]}
        ) from exc
    if dealer is not None and not 0 <= dealer < max_seats:
        raise bad_request(
            "invalid",
            f"The dealer must be a seat from 0 to {max_seats - 1}.",
            f"Nhà cái phải là ghế từ 0 đến {max_seats - 1}.",
            errors={"dealer": [f"must be a seat from 0 to {max_seats - 1}"]},
        )
    return [CODES[k] for k in kinds], dealer


def _seat_taken() -> ApiProblem:
    return conflict("seat_taken", "That seat is taken.", "Ghế đó đã có người ngồi.")


def _check_seat_number(table: Table, seat: int) -> None:
    if not 0 <= seat < table.max_seats:
        raise bad_request(
            "invalid_seat",
            f"Seats at this table are numbered 0 to {table.max_seats - 1}.",
            f"Ghế ở bàn này đánh số từ 0 đến {table.max_seats - 1}.",
            errors={"seat": [f"must be from 0 to {table.max_seats - 1}"]},
        )


@transaction.atomic
def table_create(
    *,
    owner: Any,
    name: str,
    stake: int,
    room: str = "main",
    max_seats: int = MAX_SEATS,
    mode: str = "basic",
    ruleset: Mapping[str, Any] | None = None,
    timeouts: Mapping[str, int] | None = None,
    seat: int | None = None,
    deck: Any = None,
    dealer: int | None = None,
) -> Table:
    """Open a table; the owner sits at ``seat`` (0 unless it asks for another)."""
    spec = ruleset_from_spec(ruleset).spec()
    fixed_deck, fixed_dealer = _fixed_deck(deck, dealer, max_seats)
    timeouts = timeouts or {}
    table = Table(
        name=name,
        room=room,
        stake=stake,
        max_seats=max_seats,
        mode=mode,
        ruleset=spec,
        owner=owner,
        fixed_deck=fixed_deck,
        fixed_dealer=fixed_dealer,
    )
    for key in ("turn", "tra_cua", "declare", "ready"):
        if key in timeouts:
            setattr(table, f"{key}_timeout", timeouts[key])
    table.save()
    seat_number = 0 if seat is None else seat
    _check_seat_number(table, seat_number)
    Seat.objects.create(table=table, player=owner, number=seat_number)
    return table


def _lock_table(table_id: int) -> Table:
    table = Table.objects.select_for_update().filter(pk=table_id).first()
    if table is None:
        raise not_found("No such table.", "Không có bàn này.")
    return table


@transaction.atomic
def seat_join(
    *,
    table_id: int,
    user: Any,
    seat: int | None = None,
    auto_u: bool | None = None,
    auto_chiu: bool | None = None,
) -> Seat:
    """Sit down at a table: at ``seat``, or the lowest free seat. Locks the table row."""
    table = _lock_table(table_id)
    if table.status == Table.Status.CLOSED:
        raise conflict("table_closed", "This table is closed.", "Bàn này đã đóng.")
    seats = list(table.seats.all())
    if any(s.player_id == user.pk for s in seats):
        raise conflict("already_seated", "You already sit at this table.", "Bạn đã ngồi ở bàn này.")
    taken = {s.number for s in seats}
    if seat is None:
        free = [n for n in range(table.max_seats) if n not in taken]
        if not free:
            raise conflict("table_full", "This table is full.", "Bàn này đã đủ người.")
        seat = free[0]
    else:
        _check_seat_number(table, seat)
        if seat in taken:
            raise _seat_taken()
    prefs = {k: v for k, v in (("auto_u", auto_u), ("auto_chiu", auto_chiu)) if v is not None}
    try:
        with transaction.atomic():
            return Seat.objects.create(table=table, player=user, number=seat, **prefs)
    except IntegrityError as exc:  # a concurrent join took it first
        raise _seat_taken() from exc


def _seat_of(table: Table, user: Any) -> Seat:
    seat = Seat.objects.select_for_update().filter(table=table, player=user).first()
    if seat is None:
        raise conflict("not_seated", "You do not sit at this table.", "Bạn không ngồi ở bàn này.")
    return seat


@transaction.atomic
def seat_leave(*, table_id: int, user: Any) -> Table:
    """Stand up. Between hands the seat is freed, which may complete the ready seats and deal
    (the last player leaving closes the table). Mid-hand it is marked ``leaving``: the server
    plays it after the auto-play delay to the end of the hand, then frees it. Locks the playing
    hand's row, then the table's (the order of the move paths)."""
    playing = (
        Hand.objects.filter(table_id=table_id, status=Hand.Status.PLAYING)
        .values_list("pk", flat=True)
        .first()
    )
    hand = hand_lock(playing) if playing is not None else None
    table = _lock_table(table_id)
    seat = _seat_of(table, user)
    if (
        hand is not None
        and hand.status == Hand.Status.PLAYING
        and hand.seat_of(user.pk) is not None
    ):
        seat.leaving = True
        seat.ready = False
        seat.ready_at = None
        seat.save(update_fields=["leaving", "ready", "ready_at", "updated_at"])
        _hurry_the_clock(hand, user)
    else:
        seat.delete()
        if not Seat.objects.filter(table=table).exists():
            # The last player stood up: the table closes (no longer listed; nobody can join).
            table.status = Table.Status.CLOSED
            table.save(update_fields=["status", "updated_at"])
        else:
            _deal_if_ready(table)
    return table


def _hurry_the_clock(hand: Hand, user: Any) -> None:
    """Mark the player ``"left"`` in the hand's seats: from now on its turns have the auto-play
    delay, and if it leaves on its own turn the current deadline comes down to it. The caller
    holds the hand row lock."""
    state = hand_state(hand)
    hand.seats = [{**e, "left": True} if e["user"] == user.pk else e for e in hand.seats]
    fields = ["seats", "updated_at"]
    due = hand_deadline(hand, hand.table, state, actor_leaving=True)
    on_turn = hand.seats[state.turn]["user"] == user.pk
    if on_turn and due is not None and (hand.deadline_at is None or due < hand.deadline_at):
        hand.deadline_at = due
        fields.append("deadline_at")
    hand.save(update_fields=fields)
    if "deadline_at" in fields:
        hand_clock_on_commit(hand)


@transaction.atomic
def seat_ready(
    *,
    table_id: int,
    user: Any,
    ready: bool = True,
    auto_u: bool | None = None,
    auto_chiu: bool | None = None,
) -> Hand | None:
    """Say ready (or not) for the next hand; deal it when :func:`_seats_to_deal` says so and
    return it. Locks the table row."""
    table = _lock_table(table_id)
    seat = _seat_of(table, user)
    if seat.leaving:
        raise conflict("seat_leaving", "You are leaving this table.", "Bạn đang rời bàn này.")
    if table.status == Table.Status.CLOSED:
        raise conflict("table_closed", "This table is closed.", "Bàn này đã đóng.")
    if table.status == Table.Status.PLAYING:
        raise conflict(
            "hand_in_progress",
            "A hand is being played; say ready after it ends.",
            "Ván đang chơi; hãy sẵn sàng sau khi ván kết thúc.",
        )
    if ready != seat.ready:
        seat.ready_at = timezone.now() if ready else None
    seat.ready = ready
    if auto_u is not None:
        seat.auto_u = auto_u
    if auto_chiu is not None:
        seat.auto_chiu = auto_chiu
    seat.save(update_fields=["ready", "ready_at", "auto_u", "auto_chiu", "updated_at"])
    return _deal_if_ready(table)


@transaction.atomic
def table_deal_if_due(*, table_id: int) -> Hand | None:
    """The ready clock: deal the next hand if its ready deadline has passed (the Celery task
    ``games.tasks.table_deal_due`` calls this; safe to run any number of times). Locks the table
    row."""
    table = Table.objects.select_for_update().filter(pk=table_id).first()
    if table is None:
        return None
    return _deal_if_ready(table)


def _deal_if_ready(table: Table) -> Hand | None:
    """The table's ready rule (RULES.md §12). Every seated player ready, two at least: deal.
    Otherwise, once the ready deadline has passed, unseat the players who are not ready and
    deal to the others if they are two or more; before it, wake the ready clock at it. The
    caller holds the table row lock."""
    if table.status != Table.Status.OPEN:
        return None
    seats = list(Seat.objects.filter(table=table).select_related("player").order_by("number"))
    deadline = table_ready_deadline(table, seats)
    if deadline is not None and timezone.now() >= deadline:
        Seat.objects.filter(table=table, ready=False).delete()
        seats = [s for s in seats if s.ready]
        deadline = None
    if deadline is not None:
        _wake_ready_clock(table.pk, deadline)
        return None
    if len(seats) >= 2 and all(s.ready for s in seats):
        return hand_start(table=table, seats=seats)
    return None


def _wake_ready_clock(table_id: int, at: datetime) -> None:
    from games.tasks import table_deal_due

    if not settings.CHAN_CLOCK:
        return

    def send() -> None:
        table_deal_due.apply_async((table_id,), eta=at)

    transaction.on_commit(send, robust=True)


def _next_seated(numbers: list[int], start: int, max_seats: int) -> int:
    """The first seated table seat number at or after ``start`` in play order."""
    for step in range(max_seats):
        n = (start + step) % max_seats
        if n in numbers:
            return n
    raise AssertionError("no seated player")


def _dealer_and_previous_winner(
    table: Table, numbers: list[int], users: list[int], seed: bytes
) -> tuple[int, int | None]:
    """(dealer table seat, previous winner's hand seat or None) for the next hand (RULES §3)."""
    last = Hand.objects.filter(table=table).order_by("-number").first()
    if last is None:
        if table.fixed_dealer is not None:
            return _next_seated(numbers, table.fixed_dealer, table.max_seats), None
        return numbers[first_dealer(seed, len(numbers))], None
    result = last.result or {}
    outcome = result.get("outcome") or {}
    winner_hand_seat = outcome.get("seat") if outcome.get("result") == "u" else None
    # Thông carries to the next hand as the settlement says (only after a paid win); without
    # a settlement, after any win.
    settlement = result.get("settlement")
    thong_seat = settlement.get("thong_next") if settlement else winner_hand_seat
    previous_winner = None
    if thong_seat is not None and last.seats[thong_seat]["user"] in users:
        previous_winner = users.index(last.seats[thong_seat]["user"])
    if winner_hand_seat is not None:
        winner = last.seats[winner_hand_seat]
        return _next_seated(numbers, winner["table_seat"], table.max_seats), previous_winner
    prev_dealer = last.seats[last.dealer]["table_seat"]
    return _next_seated(numbers, prev_dealer + 1, table.max_seats), previous_winner


def hand_start(*, table: Table, seats: list[Seat]) -> Hand:
    """Deal a hand to ``seats`` (seated and ready, in seat-number order). The caller holds the
    table row lock. The seed is secret; its SHA-256 is public from now on (RULES.md §13)."""
    seed = secrets.token_bytes(32)
    numbers = [s.number for s in seats]
    users = [s.player_id for s in seats]
    dealer_number, previous_winner = _dealer_and_previous_winner(table, numbers, users, seed)
    last_number = (
        Hand.objects.filter(table=table)
        .order_by("-number")
        .values_list("number", flat=True)
        .first()
    )
    now = timezone.now()
    hand = Hand(
        table=table,
        number=(last_number or 0) + 1,
        n_seats=len(seats),
        dealer=numbers.index(dealer_number),
        seats=[
            {"user": s.player_id, "username": s.player.username, "table_seat": s.number}
            for s in seats
        ],
        mode=table.mode,
        ruleset=table.ruleset,
        prefs=[[s.auto_u, s.auto_chiu] for s in seats],
        previous_winner=previous_winner,
        deck=table.fixed_deck,
        seed=seed.hex(),
        seed_hash=hashlib.sha256(seed).hexdigest(),
        last_event_at=now,
    )
    deck = parse_deck(table.fixed_deck) if table.fixed_deck is not None else shuffle(seed)
    state = new_hand(hand_config(hand), deck, hand.dealer)
    hand.state_blob = state_pickle(state)
    hand.state_seq = 0
    hand.deadline_at = hand_deadline(hand, table, state)
    hand.save()
    HandEvent.objects.create(
        hand=hand,
        seq=0,
        type="deal",
        actor_seat=None,
        system=True,
        payload={},
        effects=list(state.events),
    )
    table.status = Table.Status.PLAYING
    table.save(update_fields=["status", "updated_at"])
    hand_publish_on_commit(hand, state)
    hand_clock_on_commit(hand)
    return hand
