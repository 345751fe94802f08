"""Reads on the holds of seats: the checks ``ledger_check`` runs that no hold is left
behind by a seat that no longer exists, and that no seat sits without its hold (one taken before
holds existed, accounts 0014: ``manage.py seat_holds_backfill`` places or settles them)."""

from __future__ import annotations

from django.db.models import OuterRef, Subquery
from django.db.models.functions import Coalesce

from accounts.hold_selectors import open_holds
from accounts.ledger_selectors import LedgerProblem
from accounts.models import LedgerAccount, LedgerHold
from games.models import HandSeat, Seat, Table
from games.selectors.tournaments import arena_hold_is_entry


def seats_without_holds() -> list[tuple[int, int, int]]:
    """Every seat at a table that is not a practice table whose player holds nothing there:
    ``(table id, seat number, user id)``, by table and seat (one indexed lookup of the latest
    hold event per seat)."""
    latest = (
        LedgerHold.objects.filter(
            account__kind=LedgerAccount.Kind.WALLET,
            account__user_id=OuterRef("player_id"),
            table_id=OuterRef("table_id"),
        )
        .order_by("-id")
        .values("amount")[:1]
    )
    return [
        tuple(row)
        for row in Seat.objects.filter(table__practice=False)
        .annotate(held_here=Coalesce(Subquery(latest), 0))
        .filter(held_here=0)
        .order_by("table_id", "number")
        .values_list("table_id", "number", "player_id")
    ]


def check_seats_have_holds() -> list[LedgerProblem]:
    """Every seat at a table that is not a practice table holds its player's Quan there (seed
    004: the money stands behind each seat)."""
    return [
        LedgerProblem(
            "seat_hold",
            f"table {table}: seat {number} (user {user}) sits without its hold"
            " (manage.py seat_holds_backfill)",
        )
        for table, number, user in seats_without_holds()
    ]


def check_holds_have_seats() -> list[LedgerProblem]:
    """Every open hold belongs to a seat: its player sits at the table, or still has a hand
    there waiting for its settlement (it left mid-hand; the settlement releases it), or it is
    a scheduled arena's entry fee held for an entrant. A practice table holds nothing."""
    holds = open_holds()
    if not holds:
        return []
    users = dict(
        LedgerAccount.objects.filter(pk__in={a for a, _, _ in holds}).values_list("pk", "user_id")
    )
    tables = {t for _, t, _ in holds}
    seated = set(Seat.objects.filter(table_id__in=tables).values_list("player_id", "table_id"))
    waiting = set(
        HandSeat.objects.filter(
            hand__table_id__in=tables, hand__settled_at__isnull=True
        ).values_list("user_id", "hand__table_id")
    )
    practice = set(Table.objects.filter(pk__in=tables, practice=True).values_list("pk", flat=True))
    problems = []
    for account, table, amount in holds:
        user = users.get(account)
        if table in practice:
            problems.append(
                LedgerProblem(
                    "hold_seat", f"account {account}: holds {amount} at practice table {table}"
                )
            )
        elif (
            (user, table) not in seated
            and (user, table) not in waiting
            and not arena_hold_is_entry(
                account_id=account, user_id=user, table_id=table, amount=amount
            )
        ):
            problems.append(
                LedgerProblem(
                    "hold_seat",
                    f"account {account}: holds {amount} at table {table} where it has no seat",
                )
            )
    return problems
