"""Reads on the holds of seats (issue 21): the check ``ledger_check`` runs that no hold is left
behind by a seat that no longer exists."""

from __future__ import annotations

from accounts.hold_selectors import open_holds
from accounts.ledger_selectors import LedgerProblem
from accounts.models import LedgerAccount
from games.models import HandSeat, Seat, Table
from games.selectors.tournaments import arena_hold_is_entry


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
