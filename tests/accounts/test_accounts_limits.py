"""The limits players set for themselves, at the service level (accounts/limits.py,
accounts/limit_selectors.py): the 24-hour delay on loosening, the calendar periods in
Asia/Ho_Chi_Minh, cool-off and self-exclusion, the append-only history."""

from __future__ import annotations

import datetime as dt
from unittest import mock
from zoneinfo import ZoneInfo

import pytest
from django.db import IntegrityError, connection, transaction

from accounts.ledger import bonus_claim, house_account, ledger_post, wallet_for
from accounts.limit_selectors import (
    exclusion_active,
    limits_in_force,
    limits_view,
    losses_in_period,
    period_bounds,
    play_refusal,
    play_refusals,
    stake_check,
)
from accounts.limits import cool_off_start, limits_set, self_exclusion_start
from accounts.models import (
    LedgerTransaction,
    LedgerWriteError,
    PlayerExclusion,
    PlayerLimitChange,
)
from core.errors import Conflict, InvalidInput

pytestmark = pytest.mark.django_db

VN = ZoneInfo("Asia/Ho_Chi_Minh")
T0 = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)  # a Tuesday, 17:00 in Hà Nội


def at(when: dt.datetime) -> mock._patch:
    return mock.patch("django.utils.timezone.now", return_value=when)


_keys = iter(range(1, 10**6))


def settle(user, amount: int, when: dt.datetime) -> None:
    """Book a hand settlement leg of ``amount`` (negative: lost) on the wallet at ``when``."""
    house = house_account()
    if amount > 0:  # the house pays a win in these tests (it has the fees of the losses)
        ledger_post(
            kind=LedgerTransaction.Kind.ADJUSTMENT,
            key=f"test:fund:{next(_keys)}",
            legs=[(wallet_for(user), -amount), (house, amount)],
        )
    with at(when):
        ledger_post(
            kind=LedgerTransaction.Kind.HAND_SETTLEMENT,
            key=f"test:hand:{next(_keys)}",
            legs=[(wallet_for(user), amount), (house, -amount)],
        )


def value(user, kind: str, now: dt.datetime) -> int | None:
    return limits_in_force(user, now)[kind].value


# --------------------------------------------------------------------------- the 24-hour delay


def test_lowering_a_limit_takes_effect_at_once(make_user) -> None:
    user, _ = make_user()
    limits_set(user=user, changes={"loss_limit_day": 1000}, now=T0)
    assert value(user, "loss_limit_day", T0) == 1000
    limits_set(user=user, changes={"loss_limit_day": 500}, now=T0 + dt.timedelta(minutes=1))
    assert value(user, "loss_limit_day", T0 + dt.timedelta(minutes=1)) == 500
    assert not limits_in_force(user, T0)["loss_limit_day"].pending


def test_raising_a_limit_takes_effect_24_hours_later(make_user) -> None:
    user, _ = make_user()
    limits_set(user=user, changes={"max_stake": 100}, now=T0)
    limits_set(user=user, changes={"max_stake": 1000}, now=T0)
    state = limits_in_force(user, T0 + dt.timedelta(hours=23, minutes=59))["max_stake"]
    assert (state.value, state.pending, state.pending_value) == (100, True, 1000)
    assert state.pending_at == T0 + dt.timedelta(hours=24)
    assert value(user, "max_stake", T0 + dt.timedelta(hours=24)) == 1000


def test_removing_a_limit_takes_effect_24_hours_later(make_user) -> None:
    user, _ = make_user()
    limits_set(user=user, changes={"loss_limit_week": 5000}, now=T0)
    limits_set(user=user, changes={"loss_limit_week": None}, now=T0 + dt.timedelta(hours=1))
    assert value(user, "loss_limit_week", T0 + dt.timedelta(hours=24, minutes=59)) == 5000
    assert value(user, "loss_limit_week", T0 + dt.timedelta(hours=25)) is None


def test_a_first_limit_is_tighter_than_none_and_at_once(make_user) -> None:
    user, _ = make_user()
    limits_set(user=user, changes={"reminder_minutes": 60}, now=T0)
    assert value(user, "reminder_minutes", T0) == 60
    # more minutes between reminders is looser: it waits
    limits_set(user=user, changes={"reminder_minutes": 120}, now=T0)
    assert value(user, "reminder_minutes", T0) == 60


def test_lowering_during_a_pending_raise_drops_the_raise(make_user) -> None:
    user, _ = make_user()
    limits_set(user=user, changes={"loss_limit_day": 1000}, now=T0)
    limits_set(user=user, changes={"loss_limit_day": 5000}, now=T0)
    limits_set(user=user, changes={"loss_limit_day": 800}, now=T0 + dt.timedelta(hours=1))
    later = T0 + dt.timedelta(hours=30)
    assert value(user, "loss_limit_day", later) == 800
    assert not limits_in_force(user, later)["loss_limit_day"].pending


def test_asking_for_the_pending_value_again_does_not_restart_its_clock(make_user) -> None:
    user, _ = make_user()
    limits_set(user=user, changes={"max_stake": 100}, now=T0)
    limits_set(user=user, changes={"max_stake": 500}, now=T0)
    assert limits_set(user=user, changes={"max_stake": 500}, now=T0 + dt.timedelta(hours=20)) == []
    assert value(user, "max_stake", T0 + dt.timedelta(hours=24)) == 500


def test_a_matured_change_is_folded_in_before_the_next_one(make_user) -> None:
    user, _ = make_user()
    limits_set(user=user, changes={"max_stake": 100}, now=T0)
    limits_set(user=user, changes={"max_stake": 500}, now=T0)
    day_after = T0 + dt.timedelta(hours=25)
    # 500 is in force now: 300 is a lowering, at once
    limits_set(user=user, changes={"max_stake": 300}, now=day_after)
    assert value(user, "max_stake", day_after) == 300


def test_every_change_is_kept_with_who_when_old_new_and_effective_at(make_user) -> None:
    user, _ = make_user()
    staff, _ = make_user(is_staff=True)
    limits_set(user=user, changes={"loss_limit_month": 9000}, now=T0)
    limits_set(user=user, changes={"loss_limit_month": 20000}, now=T0, changed_by=staff)
    rows = list(PlayerLimitChange.objects.filter(user=user).order_by("id"))
    assert [(r.old_value, r.new_value) for r in rows] == [(None, 9000), (9000, 20000)]
    assert [r.effective_at for r in rows] == [T0, T0 + dt.timedelta(hours=24)]
    assert [r.changed_by_id for r in rows] == [user.pk, staff.pk]


@pytest.mark.parametrize(
    "changes",
    [{"loss_limit_day": 0}, {"max_stake": -5}, {"reminder_minutes": 2}, {"nonsense": 1}],
)
def test_bad_values_are_invalid(make_user, changes) -> None:
    user, _ = make_user()
    with pytest.raises(InvalidInput) as exc:
        limits_set(user=user, changes=changes, now=T0)
    assert exc.value.code == "invalid" and set(exc.value.errors) == set(changes)


# --------------------------------------------------------------------------- calendar periods


def test_periods_are_calendar_periods_in_ho_chi_minh() -> None:
    # 2026-11-30 17:30 UTC is Tuesday 2026-12-01 00:30 in Hà Nội (UTC+7)
    now = dt.datetime(2026, 11, 30, 17, 30, tzinfo=dt.UTC)
    day = period_bounds("day", now)
    assert day == (
        dt.datetime(2026, 11, 30, 17, 0, tzinfo=dt.UTC),
        dt.datetime(2026, 12, 1, 17, 0, tzinfo=dt.UTC),
    )
    week = period_bounds("week", now)  # from Monday 2026-11-30 00:00 local
    assert week[0] == dt.datetime(2026, 11, 30, 0, 0, tzinfo=VN)
    assert week[1] == dt.datetime(2026, 12, 7, 0, 0, tzinfo=VN)
    month = period_bounds("month", now)
    assert month == (
        dt.datetime(2026, 12, 1, 0, 0, tzinfo=VN),
        dt.datetime(2027, 1, 1, 0, 0, tzinfo=VN),
    )


def test_a_loss_before_local_midnight_is_yesterdays(make_user) -> None:
    user, _ = make_user()
    midnight = dt.datetime(2026, 12, 2, 0, 0, tzinfo=VN)  # 2026-12-01 17:00 UTC
    settle(user, -300, midnight - dt.timedelta(seconds=1))
    settle(user, -200, midnight)
    assert losses_in_period(user, "day", midnight - dt.timedelta(seconds=1)) == 300
    assert losses_in_period(user, "day", midnight) == 200
    assert losses_in_period(user, "week", midnight) == 500
    # a win in the period offsets a loss: the net is what counts
    settle(user, 150, midnight + dt.timedelta(hours=1))
    assert losses_in_period(user, "day", midnight + dt.timedelta(hours=1)) == 50


def test_the_week_starts_on_monday_and_the_month_on_the_first_local(make_user) -> None:
    user, _ = make_user()
    sunday_night = dt.datetime(2026, 12, 6, 23, 59, tzinfo=VN)
    settle(user, -400, sunday_night)
    monday = dt.datetime(2026, 12, 7, 0, 0, tzinfo=VN)
    assert losses_in_period(user, "week", sunday_night) == 400
    assert losses_in_period(user, "week", monday) == 0
    assert losses_in_period(user, "month", monday) == 400
    assert losses_in_period(user, "month", dt.datetime(2027, 1, 1, 0, 0, tzinfo=VN)) == 0


def test_other_movements_are_not_losses(make_user) -> None:
    user, _ = make_user()
    with at(T0):
        ledger_post(
            kind=LedgerTransaction.Kind.ADJUSTMENT,
            key="test:adjust",
            legs=[(wallet_for(user), -1000), (house_account(), 1000)],
        )
    assert losses_in_period(user, "day", T0) == 0


def test_a_player_at_a_loss_limit_is_refused_play_until_the_period_ends(make_user) -> None:
    user, _ = make_user()
    limits_set(user=user, changes={"loss_limit_day": 500}, now=T0)
    settle(user, -499, T0)
    assert play_refusal(user, T0) is None
    settle(user, -1, T0)
    refusal = play_refusal(user, T0)
    assert refusal is not None and refusal.code == "loss_limit_reached"
    assert refusal.extra["period"] == "day" and refusal.extra["lost"] == 500
    assert refusal.extra["resets_at"] == "2026-12-01T17:00:00Z"  # local midnight
    assert play_refusal(user, dt.datetime(2026, 12, 1, 17, 0, tzinfo=dt.UTC)) is None


def test_a_stake_above_max_stake_is_limit_exceeded(make_user) -> None:
    user, _ = make_user()
    stake_check(user, stake=10_000, now=T0)  # no limit
    limits_set(user=user, changes={"max_stake": 100}, now=T0)
    stake_check(user, stake=100, now=T0)
    with pytest.raises(Conflict) as exc:
        stake_check(user, stake=101, now=T0)
    assert exc.value.code == "limit_exceeded" and exc.value.extra["max_stake"] == 100


# --------------------------------------------------------------------------- cool-off, exclusion


def test_a_cool_off_starts_at_once_and_ends_after_its_days(make_user) -> None:
    user, _ = make_user()
    cool_off_start(user=user, days=3, now=T0)
    assert play_refusal(user, T0).code == "cooling_off"
    assert play_refusal(user, T0 + dt.timedelta(days=3) - dt.timedelta(seconds=1)) is not None
    assert play_refusal(user, T0 + dt.timedelta(days=3)) is None


@pytest.mark.parametrize("days", [0, 43, None, "7", True])
def test_a_cool_off_is_1_to_42_days(make_user, days) -> None:
    user, _ = make_user()
    with pytest.raises(InvalidInput):
        cool_off_start(user=user, days=days, now=T0)


def test_a_shorter_cool_off_does_not_shorten_a_longer_one(make_user) -> None:
    user, _ = make_user()
    cool_off_start(user=user, days=10, now=T0)
    cool_off_start(user=user, days=1, now=T0)
    assert exclusion_active(user, T0 + dt.timedelta(days=5)) is not None


def test_a_self_exclusion_is_183_days_or_permanent(make_user) -> None:
    user, _ = make_user()
    for days in (182, 10**9, "200", True):
        with pytest.raises(InvalidInput):
            self_exclusion_start(user=user, days=days, now=T0)
    self_exclusion_start(user=user, days=183, now=T0)
    assert play_refusal(user, T0 + dt.timedelta(days=182)).code == "self_excluded"
    assert play_refusal(user, T0 + dt.timedelta(days=183)) is None
    self_exclusion_start(user=user, days=None, now=T0)
    assert play_refusal(user, T0 + dt.timedelta(days=10_000)).code == "self_excluded"
    view = limits_view(user=user, now=T0)
    assert view["self_exclusion"]["permanent"] is True
    assert view["play_blocked"]["code"] == "self_excluded"


def test_excluded_players_claim_no_bonus(make_user) -> None:
    user, _ = make_user()
    cool_off_start(user=user, days=1, now=T0)
    with pytest.raises(Conflict) as exc:
        bonus_claim(user=user, now=T0)
    assert exc.value.code == "cooling_off"
    assert bonus_claim(user=user, now=T0 + dt.timedelta(days=1)).pk


def test_the_database_refuses_to_shorten_or_delete_a_self_exclusion(make_user) -> None:
    user, _ = make_user()
    exclusion = self_exclusion_start(user=user, days=365, now=T0)
    for sql in (
        "UPDATE accounts_playerexclusion SET ends_at = starts_at + interval '1 day' WHERE id = %s",
        "DELETE FROM accounts_playerexclusion WHERE id = %s",
        "DELETE FROM accounts_playerlimitchange WHERE user_id = %s",
    ):
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            target = user.pk if "limitchange" in sql else exclusion.pk
            cursor.execute(sql, [target])
    assert PlayerExclusion.objects.get(pk=exclusion.pk).ends_at == exclusion.ends_at
    # and the code refuses before the database does: a queryset, a saved row, a delete
    with pytest.raises(LedgerWriteError, match="append-only"):
        PlayerExclusion.objects.filter(pk=exclusion.pk).update(ends_at=None)
    exclusion.ends_at = exclusion.starts_at + dt.timedelta(days=1)
    with pytest.raises(LedgerWriteError, match="append-only"):
        exclusion.save()
    with pytest.raises(LedgerWriteError, match="append-only"):
        exclusion.delete()
    change = PlayerLimitChange.objects.filter(user=user).first()
    with pytest.raises(LedgerWriteError, match="append-only"):
        change.delete()


def test_the_database_refuses_a_limit_raised_or_removed_behind_its_history(make_user) -> None:
    # Given a day's loss limit of 100, set through the service (its history has the change),
    user, _ = make_user()
    limits_set(user=user, changes={"loss_limit_day": 100}, now=T0)
    # the application's own role cannot remove it, raise it, drop it, or write a change that
    # loosens it at once or does not start from the value in force:
    for sql in (
        "UPDATE accounts_playerlimit SET value = NULL WHERE user_id = %s",
        "UPDATE accounts_playerlimit SET value = value + 1000 WHERE user_id = %s",
        "UPDATE accounts_playerlimit SET pending_value = NULL, pending_at = now()"
        " WHERE user_id = %s",
        "DELETE FROM accounts_playerlimit WHERE user_id = %s",
        "INSERT INTO accounts_playerlimitchange"
        " (user_id, kind, old_value, new_value, effective_at, created_at)"
        " VALUES (%s, 'loss_limit_day', 100, NULL, now(), now())",
        "INSERT INTO accounts_playerlimitchange"
        " (user_id, kind, old_value, new_value, effective_at, created_at)"
        " VALUES (%s, 'loss_limit_day', 5000, 10, now(), now())",
        "INSERT INTO accounts_playerlimit (user_id, kind, value, created_at, updated_at)"
        " VALUES (%s, 'max_stake', 10, now(), now())",
    ):
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, [user.pk])
    assert value(user, "loss_limit_day", T0) == 100
    assert PlayerLimitChange.objects.filter(user=user).count() == 1
    # while the service's own changes still pass: a removal pending for 24 hours, a lowering.
    limits_set(user=user, changes={"loss_limit_day": None}, now=T0)
    assert value(user, "loss_limit_day", T0 + dt.timedelta(hours=25)) is None
    limits_set(user=user, changes={"loss_limit_day": 50}, now=T0 + dt.timedelta(hours=1))
    assert value(user, "loss_limit_day", T0 + dt.timedelta(hours=25)) == 50


def test_a_deals_refusals_for_several_players_are_each_ones_own(make_user) -> None:
    # Given players with a cool-off, two cool-offs (one inside the other), a self-exclusion for
    # good, one for 183 days from later on, a stake limit, and none at all
    cooled, nested, banned, later, capped, free = (make_user()[0] for _ in range(6))
    cool_off_start(user=cooled, days=3, now=T0)
    cool_off_start(user=nested, days=10, now=T0)
    cool_off_start(user=nested, days=1, now=T0)
    self_exclusion_start(user=banned, days=None, now=T0)
    self_exclusion_start(user=later, days=183, now=T0 + dt.timedelta(days=4))
    limits_set(user=capped, changes={"max_stake": 5}, now=T0)
    users = [cooled, nested, banned, later, capped, free]
    for days in (-1, 0, 2, 3, 5, 11, 200):
        now = T0 + dt.timedelta(days=days)
        # when a deal reads them all at once (one statement each for exclusions and limits)
        together = play_refusals(users, now)
        # then each is what that player's own check says, at that moment
        for user in users:
            alone = play_refusal(user, now)
            found = together[user.pk]
            assert (found and (found.code, found.extra)) == (alone and (alone.code, alone.extra)), (
                days,
                user.username,
            )
