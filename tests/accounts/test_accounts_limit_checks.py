"""manage.py limits_check (accounts/limit_checks.py): quiet when every limit is what its
history makes it; exit 1 and a list when a row or a change was written behind the guards."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection

from accounts.limit_checks import LIMIT_CHECKS
from accounts.limits import limits_set
from tests.db_owner import as_owner
from tests.ledger_run import limits_check_run as check

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="damage needs raw PostgreSQL"),
]

T0 = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)


def behind_the_guards(sql: str, params: list) -> None:
    """Raw SQL with the limits' triggers off, as a superuser could (rolled back with the test)."""
    tables = ("accounts_playerlimit", "accounts_playerlimitchange")
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE needs no pending checks
    for table in tables:
        as_owner(f"ALTER TABLE {table} DISABLE TRIGGER USER")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
    for table in tables:
        as_owner(f"ALTER TABLE {table} ENABLE TRIGGER USER")


@pytest.fixture
def limited(make_user):
    user, _ = make_user()
    limits_set(user=user, changes={"loss_limit_day": 100, "max_stake": 50}, now=T0)
    limits_set(user=user, changes={"max_stake": 500}, now=T0 + dt.timedelta(hours=1))
    return user


def test_limits_that_follow_their_history_pass(limited) -> None:
    assert check() == (0, f"limits ok ({len(LIMIT_CHECKS)} checks)\n")


def test_a_limit_removed_behind_its_history_is_reported(limited) -> None:
    behind_the_guards(
        "UPDATE accounts_playerlimit SET value = NULL WHERE user_id = %s AND kind = %s",
        [limited.pk, "loss_limit_day"],
    )
    code, out = check()
    assert code == 1
    assert (
        f"limit_follows_history: user {limited.pk} loss_limit_day: the row says None, "
        "its history 100" in out
    )


def test_a_forged_change_loosening_at_once_is_reported(limited) -> None:
    behind_the_guards(
        "INSERT INTO accounts_playerlimitchange"
        " (user_id, kind, old_value, new_value, effective_at, created_at)"
        " VALUES (%s, 'loss_limit_day', 7, NULL, %s, %s)",
        [limited.pk, T0 + dt.timedelta(hours=2), T0 + dt.timedelta(hours=2)],
    )
    code, out = check()
    assert code == 1
    assert "limit_history_chain" in out and "starts from 7, the value in force was 100" in out
    assert "limit_loosened_early" in out
    assert "limit_follows_history" in out  # the row still says 100
