"""The checks ``manage.py limits_check`` runs on the limits players set for themselves: each
limit is what its history makes it (a row changed behind it, by whoever, shows), each change
starts from the value in force and a loosening waits its 24 hours, and no settled seat paid
more than its deal reserved of its player's loss limits (RULES.md §11). PostgreSQL refuses
all of these (migrations accounts 0024, 0025); the checks find what a superuser or a restored
backup could still have put there."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import connection

from accounts.ledger_selectors import LedgerProblem
from accounts.limits import LOOSEN_DELAY
from accounts.models import LIMIT_KINDS, LossReservation, PlayerLimit, PlayerLimitChange

State = tuple[int | None, int | None, dt.datetime | None]  # value, pending value, pending at
NONE: State = (None, None, None)


def _looser(new: int | None, old: int | None) -> bool:
    return old is not None and (new is None or new > old)


def _replay(
    key: tuple[int, str], changes: list[PlayerLimitChange], problems: list[LedgerProblem]
) -> State:
    """The limit its ``changes`` (in order) make, noting each change that does not follow."""
    value, pending, at = NONE
    for change in changes:
        if at is not None and at <= change.created_at:
            value, pending, at = pending, None, None
        if change.old_value != value:
            problems.append(
                LedgerProblem(
                    "limit_history_chain",
                    f"user {key[0]} {key[1]}: change {change.pk} starts from "
                    f"{change.old_value}, the value in force was {value}",
                )
            )
        if _looser(change.new_value, value) and (
            change.effective_at < change.created_at + LOOSEN_DELAY
        ):
            problems.append(
                LedgerProblem(
                    "limit_loosened_early",
                    f"user {key[0]} {key[1]}: change {change.pk} loosens it in less than 24 hours",
                )
            )
        if change.effective_at <= change.created_at:
            value, pending, at = change.new_value, None, None
        else:
            pending, at = change.new_value, change.effective_at
    return value, pending, at


def check_limits_follow_history() -> list[LedgerProblem]:
    """Every limit's row is what its history, replayed, makes it."""
    problems: list[LedgerProblem] = []
    history: dict[tuple[int, str], list[PlayerLimitChange]] = {}
    changes = PlayerLimitChange.objects.filter(kind__in=LIMIT_KINDS).order_by("id")
    for change in changes.iterator(chunk_size=2000):
        history.setdefault((change.user_id, change.kind), []).append(change)
    rows = {
        (row.user_id, row.kind): (row.value, row.pending_value, row.pending_at)
        for row in PlayerLimit.objects.order_by("id").iterator(chunk_size=2000)
    }
    for key in sorted(history.keys() | rows.keys()):
        want = _replay(key, history.get(key, []), problems)
        have = rows.get(key, NONE)
        if have != want:
            problems.append(
                LedgerProblem(
                    "limit_follows_history",
                    f"user {key[0]} {key[1]}: the row says {_shown(have)}, "
                    f"its history {_shown(want)}",
                )
            )
    return problems


def _shown(state: State) -> str:
    value, pending, at = state
    if at is None:
        return f"{value}"
    return f"{value} (then {pending} at {at.isoformat()})"


# Each reservation of a settled hand with what its seat paid (its position's ``paid``).
_PAID_SQL = f"""
    SELECT r.id, r.user_id, r.hand_id, r.amount, h.quan -> 'seats' -> s.position -> 'paid'
    FROM {LossReservation._meta.db_table} r
    JOIN games_hand h ON h.id = r.hand_id
    JOIN games_handseat s ON s.hand_id = r.hand_id AND s.user_id = r.user_id
    WHERE h.settled_at IS NOT NULL ORDER BY r.id
"""


def check_settlements_within_reservations() -> list[LedgerProblem]:
    """No settled seat paid more than its deal reserved of its player's loss limits."""
    with connection.cursor() as cursor:
        cursor.execute(_PAID_SQL)
        rows: list[Any] = cursor.fetchall()
    return [
        LedgerProblem(
            "loss_within_reservation",
            f"user {user_id} paid {paid} in hand {hand_id}, its seat reserved {amount}",
        )
        for _pk, user_id, hand_id, amount, paid in rows
        if paid is not None and int(paid) > amount
    ]


LIMIT_CHECKS = [check_limits_follow_history, check_settlements_within_reservations]
