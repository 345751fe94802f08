"""Seats from before holds (accounts 0014): ledger_check names a seat that sits without its
hold, and ``manage.py seat_holds_backfill`` places it, or unseats the player who cannot cover
it before its next deal; running it again changes nothing."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import transaction

from accounts.hold_selectors import hold_amount, wallet_funds
from accounts.holds import hold_set, wallets_lock
from accounts.ledger import balance_adjust, wallet_for
from accounts.models import LedgerHold
from games.models import FeedEntry, Seat, Table
from games.services.seat_hold_repair import (
    AT_NEXT_DEAL,
    PLACED,
    PLACED_SHORT,
    UNSEATED,
    seat_holds_backfill,
)
from tests.games.conftest import start_table
from tests.ledger_run import ledger_check_run as ledger_check

pytestmark = pytest.mark.django_db

STAKE = 10
NEEDED = 15 * STAKE


def create(player: Any, **extra: Any) -> int:
    body = {"name": "t", "stake": STAKE, **extra}
    r = player.client.post("/api/v1/tables", body, format="json")
    assert r.status_code == 201, r.content
    return r.json()["id"]


def join(player: Any, table_id: int) -> None:
    r = player.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
    assert r.status_code == 200, r.content


def as_before_holds(player: Any, table_id: int) -> None:
    """The seat as one taken before accounts 0014: seated, nothing held there."""
    with transaction.atomic():
        account = wallets_lock([player.user])[player.user.pk]
        hold_set(account=account, table=Table.objects.get(pk=table_id), amount=0, reason="test")
    assert Seat.objects.filter(table_id=table_id, player=player.user).exists()


def leave_only(player: Any, free: int) -> None:
    """An admin debit leaving the player ``free`` Quan beyond what it holds."""
    funds = wallet_funds(player.user)
    balance_adjust(
        user=player.user,
        amount=free - funds.available,
        reason="test",
        key=f"test:free:{player.user.pk}:{free}",
    )


def held_here(player: Any, table_id: int) -> int:
    return hold_amount(account_id=wallet_for(player.user).pk, table_id=table_id)


def test_ledger_check_names_a_seat_without_its_hold_and_the_backfill_places_it(
    make_player,
) -> None:
    owner, guest = make_player(), make_player()
    table_id = create(owner)
    join(guest, table_id)
    as_before_holds(guest, table_id)
    # ledger_check: the seat sits without its hold
    code, out = ledger_check()
    assert code == 1
    seat = Seat.objects.get(table_id=table_id, player=guest.user).number
    assert f"seat_hold: table {table_id}: seat {seat} (user {guest.user.pk})" in out
    # the backfill places 15 × stake, as a seat taken today holds
    out = StringIO()
    call_command("seat_holds_backfill", stdout=out)
    assert f"table {table_id} user {guest.user.pk}: held {NEEDED}" in out.getvalue()
    assert held_here(guest, table_id) == NEEDED
    assert wallet_funds(guest.user).held == NEEDED
    assert LedgerHold.objects.filter(table_id=table_id, account__user=guest.user).last().reason == (
        "backfill"
    )
    assert ledger_check()[0] == 0
    # run again: nothing to do, nothing written
    events = LedgerHold.objects.count()
    assert seat_holds_backfill() == []
    assert LedgerHold.objects.count() == events


def test_a_player_who_cannot_cover_its_seat_between_hands_is_unseated(make_player) -> None:
    owner, guest = make_player(), make_player()
    table_id = create(owner)
    join(guest, table_id)
    as_before_holds(guest, table_id)
    leave_only(guest, NEEDED - 1)
    [repair] = seat_holds_backfill()
    assert (repair.action, repair.amount, repair.needed, repair.available) == (
        UNSEATED,
        0,
        NEEDED,
        NEEDED - 1,
    )
    assert not Seat.objects.filter(table_id=table_id, player=guest.user).exists()
    assert Seat.objects.filter(table_id=table_id, player=owner.user).exists()
    # the table is told why: it cannot cover 15 × stake (the deal's own unseating says the same)
    [told] = FeedEntry.objects.filter(
        user=owner.user, kind="seats_changed", data__change="left", data__user_id=guest.user.pk
    )
    assert (told.data["reason"], told.data["limit"]) == ("stake", None)
    assert ledger_check()[0] == 0
    assert seat_holds_backfill() == []


def test_in_a_hand_what_is_free_is_held_and_the_next_deal_decides(make_player) -> None:
    players = [make_player() for _ in range(4)]
    ids = start_table(players)
    table_id = ids["table"]
    short, broke = players[2], players[3]
    for player in (short, broke):
        as_before_holds(player, table_id)
    leave_only(short, 40)
    leave_only(broke, 0)
    repairs = {r.user_id: r for r in seat_holds_backfill()}
    # mid-hand nobody is stood up: the short one holds what it has, the broke one nothing yet
    assert (repairs[short.user.pk].action, repairs[short.user.pk].amount) == (PLACED_SHORT, 40)
    assert (repairs[broke.user.pk].action, repairs[broke.user.pk].amount) == (AT_NEXT_DEAL, 0)
    assert held_here(short, table_id) == 40
    assert Seat.objects.filter(table_id=table_id).count() == 4
    code, out = ledger_check()
    assert code == 1 and f"(user {broke.user.pk}) sits without its hold" in out
    assert f"(user {short.user.pk})" not in out
    # run again mid-hand: the broke seat is still pending, nothing else moves
    assert [(r.user_id, r.action) for r in seat_holds_backfill()] == [(broke.user.pk, AT_NEXT_DEAL)]


def test_a_practice_seat_needs_no_hold(make_player) -> None:
    owner = make_player()
    r = owner.client.post(
        "/api/v1/tables", {"name": "p", "practice": True, "bots": 1}, format="json"
    )
    assert r.status_code == 201, r.content
    assert ledger_check()[0] == 0
    assert seat_holds_backfill() == []


def test_placed_is_what_a_covered_seat_gets(make_player) -> None:
    owner = make_player()
    table_id = create(owner)
    as_before_holds(owner, table_id)
    assert [(r.action, r.amount) for r in seat_holds_backfill()] == [(PLACED, NEEDED)]
