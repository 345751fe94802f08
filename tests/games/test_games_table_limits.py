"""The limits players set for themselves at the tables (games/services/table_limits.py): a
table above ``max_stake`` is ``409 limit_exceeded`` (create, sit, quick-join); a player at its
loss limit cannot sit and is unseated before the next deal; one cooling off or self-excluded
cannot sit, quick-join or open tables and its seats are freed after the hand in play; the
reality check in the table view."""

from __future__ import annotations

import datetime as dt
from typing import Any
from unittest import mock

import pytest
from django.utils import timezone

from accounts.limit_selectors import losses_in_period
from accounts.limits import limits_set, self_exclusion_start
from accounts.models import LossReservation
from games.models import Hand, Seat, Table
from games.selectors.reality_check import reality_check_due, reality_check_for
from games.services.quan_booking import hand_settle
from games.services.table_limits import seats_release_excluded
from tests.games.conftest import start_table
from tests.games.decks import WIN_DECK
from tests.games.test_games_hands_api import assert_problem, play_to_end
from tests.ledger_run import limits_check_run

pytestmark = pytest.mark.django_db


def _table(player: Any, stake: int = 10, **body: Any) -> int:
    r = player.client.post("/api/v1/tables", {"name": "t", "stake": stake, **body}, format="json")
    assert r.status_code == 201, r.content
    return r.json()["id"]


def _ready_all(players: list[Any], table_id: int) -> int | None:
    hand_id = None
    for p in players:
        r = p.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
        if r.status_code == 200:
            hand_id = r.json().get("hand_id") or hand_id
    return hand_id


# --------------------------------------------------------------------------- max_stake


def test_a_table_above_max_stake_is_limit_exceeded_to_create_and_to_sit(make_player) -> None:
    owner, careful = make_player(), make_player()
    limits_set(user=careful.user, changes={"max_stake": 50})
    r = careful.client.post("/api/v1/tables", {"name": "t", "stake": 51}, format="json")
    body = assert_problem(r, 409, "limit_exceeded")
    assert (body["max_stake"], body["stake"]) == (50, 51)
    assert _table(careful, stake=50)
    table_id = _table(owner, stake=100)
    r = careful.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
    assert_problem(r, 409, "limit_exceeded")
    assert not Seat.objects.filter(table_id=table_id, player=careful.user).exists()


def test_quick_join_skips_tables_above_max_stake(make_player) -> None:
    owner, careful = make_player(), make_player()
    high = _table(owner, stake=1000)
    limits_set(user=careful.user, changes={"max_stake": 100})
    r = careful.client.post("/api/v1/rooms/nen-dat/quick-join", {}, format="json")
    assert r.status_code in (200, 201), r.content
    table = r.json()
    assert table["id"] != high and table["stake"] <= 100
    # asking for a stake above the limit is refused
    r = careful.client.post("/api/v1/rooms/nen-dat/quick-join", {"stake": 1000}, format="json")
    assert_problem(r, 409, "limit_exceeded")


def test_a_raised_max_stake_waits_24_hours(make_player) -> None:
    owner, careful = make_player(), make_player()
    table_id = _table(owner, stake=100)
    limits_set(user=careful.user, changes={"max_stake": 50})
    limits_set(user=careful.user, changes={"max_stake": 500})
    r = careful.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
    assert_problem(r, 409, "limit_exceeded")
    later = timezone.now() + dt.timedelta(hours=24, seconds=1)
    with mock.patch("django.utils.timezone.now", return_value=later):
        r = careful.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
    assert r.status_code == 200, r.content


# --------------------------------------------------------------------------- loss limits


def _loser_of(hand_id: int, players: list[Any]) -> tuple[Any, int]:
    """A player who lost the hand and how much (its wallet's leg)."""
    hand = Hand.objects.get(pk=hand_id)
    order = [s.user_id for s in hand.seat_list()]
    for seat in hand.quan["seats"]:
        if seat["net"] < 0:
            user_id = order[seat["seat"]]
            return next(p for p in players if p.user.pk == user_id), -seat["net"]
    raise AssertionError("nobody lost")


def unseated_why(reader: Any, user: Any, table_id: int) -> list[tuple[Any, Any]]:
    """The ``reason`` and ``limit`` of each ``seats_changed`` left of ``user`` at ``table_id``
    in ``reader``'s feed (what a client sees)."""
    r = reader.client.get("/api/v1/me/feed", {"limit": 100})
    assert r.status_code == 200, r.content
    return [
        (e["data"]["reason"], e["data"]["limit"])
        for e in r.json()["entries"]
        if e["kind"] == "seats_changed"
        and e["table_id"] == table_id
        and e["data"]["change"] == "left"
        and e["data"]["user_id"] == user.pk
    ]


def _one_hand_settled(players: list[Any]) -> dict[str, Any]:
    """A table of ``players`` at stake 10 whose first hand is played to its end and settled."""
    ids = start_table(players, WIN_DECK)
    play_to_end(players, ids)
    hand_settle(hand_id=ids["hand"])
    return ids


def test_a_player_at_its_loss_limit_is_unseated_before_the_next_deal(players) -> None:
    # Given a hand played to its end at stake 10 and settled,
    ids = _one_hand_settled(players)
    loser, lost = _loser_of(ids["hand"], players)
    # when the loser sets a day's loss limit it has already lost (a lowering: at once),
    limits_set(user=loser.user, changes={"loss_limit_day": lost})
    # it is unseated before the next deal, the others are dealt,
    hand_id = _ready_all(players, ids["table"])
    assert not Seat.objects.filter(table_id=ids["table"], player=loser.user).exists()
    assert hand_id is not None and Hand.objects.get(pk=hand_id).n_seats == 3
    assert loser.user.pk not in [s.user_id for s in Hand.objects.get(pk=hand_id).seat_list()]
    # it and the table are told why (its own day's loss limit), and it cannot sit again today.
    for reader in players:
        assert unseated_why(reader, loser.user, ids["table"]) == [("limit", "loss_limit_day")]
    blocked = loser.client.get("/api/v1/me/limits").json()["play_blocked"]
    assert blocked["code"] == "loss_limit_reached" and blocked["lost"] == lost
    r = loser.client.post(f"/api/v1/tables/{ids['table']}/join", {}, format="json")
    assert_problem(r, 409, "loss_limit_reached")
    r = loser.client.post("/api/v1/tables", {"name": "t", "stake": 10}, format="json")
    assert_problem(r, 409, "loss_limit_reached")


def test_a_loss_limit_with_room_for_the_seats_hold_lets_the_player_play_on(players) -> None:
    ids = _one_hand_settled(players)
    loser, lost = _loser_of(ids["hand"], players)
    # what is left of the day's limit covers the seat's hold: 15 × stake 10
    limits_set(user=loser.user, changes={"loss_limit_day": lost + 150})
    hand_id = _ready_all(players, ids["table"])
    assert Hand.objects.get(pk=hand_id).n_seats == 4


def test_a_loss_limit_without_room_for_the_seats_hold_stands_the_player_up(players) -> None:
    # Given a loser whose day's limit leaves less than its seat's hold (15 × stake 10)
    ids = _one_hand_settled(players)
    loser, lost = _loser_of(ids["hand"], players)
    limits_set(user=loser.user, changes={"loss_limit_day": lost + 149})
    # when the table deals again, it is stood up before the deal, with its limit named,
    hand_id = _ready_all(players, ids["table"])
    assert Hand.objects.get(pk=hand_id).n_seats == 3
    assert not Seat.objects.filter(table_id=ids["table"], player=loser.user).exists()
    for reader in players:
        assert unseated_why(reader, loser.user, ids["table"]) == [("limit", "loss_limit_day")]
    # and sitting there again is refused with what is left to lose.
    r = loser.client.post(f"/api/v1/tables/{ids['table']}/join", {}, format="json")
    body = assert_problem(r, 409, "loss_limit_reached")
    assert (body["needed"], body["limit"], body["lost"]) == (150, lost + 149, lost)


def test_a_seat_pays_no_more_than_its_players_loss_limit_still_allows(make_player) -> None:
    # Given a player with a day's loss limit dealt in at seat 1 (it loses the scripted hand):
    # its seat reserved its hold, 15 × stake 10, of the limit,
    hero, *others = [make_player() for _ in range(4)]
    limits_set(user=hero.user, changes={"loss_limit_day": 1000})
    seated = [others[0], hero, *others[1:]]
    ids = start_table(seated, WIN_DECK)
    assert LossReservation.objects.get(user=hero.user).hand_id == ids["hand"]
    assert LossReservation.objects.get(user=hero.user).amount == 150
    assert not LossReservation.objects.filter(user__in=[p.user for p in others]).exists()
    # when it lowers the limit to 1 Quan during the hand (a tightening: at once),
    limits_set(user=hero.user, changes={"loss_limit_day": 1})
    play_to_end(seated, ids)
    hand_settle(hand_id=ids["hand"])
    # its seat pays 1 Quan, the cap the winner shares as a short balance's (§10.8),
    hand = Hand.objects.get(pk=ids["hand"])
    assert hand.quan["balances"][1] == 1 and 1 in hand.quan["capped"]
    assert hand.quan["seats"][1]["net"] == -1
    assert losses_in_period(hero.user, "day") == 1
    # and the others, without a limit, pay what they owe as before.
    assert all(hand.quan["balances"][i] > 150 for i in (0, 2, 3))
    # limits_check finds every seat within its reservation — and one that was not.
    assert limits_check_run() == (0, "limits ok (2 checks)\n")
    assert hand.quan["seats"][3]["paid"] > 1
    LossReservation.objects.create(user=others[2].user, table_id=ids["table"], hand=hand, amount=1)
    code, out = limits_check_run()
    assert code == 1 and f"loss_within_reservation: user {others[2].user.pk} paid" in out


def test_a_max_stake_lowered_below_the_tables_stands_the_player_up_at_the_next_deal(
    players,
) -> None:
    # Given a seated player who lowers its highest stake below the table's (10) after a hand,
    ids = _one_hand_settled(players)
    careful = players[1]
    limits_set(user=careful.user, changes={"max_stake": 5})
    # the next deal goes on without it, and it and the table are told why.
    hand_id = _ready_all(players, ids["table"])
    assert Hand.objects.get(pk=hand_id).n_seats == 3
    assert careful.user.pk not in [s.user_id for s in Hand.objects.get(pk=hand_id).seat_list()]
    for reader in players:
        assert unseated_why(reader, careful.user, ids["table"]) == [("limit", "max_stake")]


# --------------------------------------------------------------------------- cool-off, exclusion


@pytest.mark.parametrize("path,days", [("cool-off", 1), ("self-exclusion", None)])
def test_an_excluded_player_cannot_sit_quick_join_or_open_tables(make_player, path, days) -> None:
    owner, player = make_player(), make_player()
    table_id = _table(owner)
    r = player.client.post(f"/api/v1/me/{path}", {"days": days}, format="json")
    assert r.status_code == 201, r.content
    code = "cooling_off" if path == "cool-off" else "self_excluded"
    join = player.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
    assert_problem(join, 409, code)
    quick = player.client.post("/api/v1/rooms/nen-dat/quick-join", {}, format="json")
    assert_problem(quick, 409, code)
    create = player.client.post("/api/v1/tables", {"name": "t", "stake": 10}, format="json")
    assert_problem(create, 409, code)
    practice = player.client.post("/api/v1/tables", {"name": "p", "practice": True}, format="json")
    assert_problem(practice, 409, code)
    assert not Seat.objects.filter(player=player.user).exists()


def test_a_cool_off_frees_idle_seats_at_once_and_others_after_the_hand(
    players, make_player, django_capture_on_commit_callbacks
) -> None:
    # Given a player in a hand at one table and seated, between hands, at another,
    ids = start_table(players, WIN_DECK)
    hero = players[1]
    other = make_player()
    idle_table = _table(other)
    r = hero.client.post(f"/api/v1/tables/{idle_table}/join", {}, format="json")
    assert r.status_code == 200, r.content
    # when it starts a cool-off,
    with django_capture_on_commit_callbacks(execute=True):
        r = hero.client.post("/api/v1/me/cool-off", {"days": 2}, format="json")
    assert r.status_code == 201
    # the idle seat is freed at once (its table told why); the hand in play goes on with it,
    assert not Seat.objects.filter(table_id=idle_table, player=hero.user).exists()
    assert unseated_why(other, hero.user, idle_table) == [("limit", "cool_off")]
    assert Seat.objects.filter(table_id=ids["table"], player=hero.user).exists()
    hand = Hand.objects.get(pk=ids["hand"])
    assert hand.status == Hand.Status.PLAYING and hand.seat_of(hero.user.pk) is not None
    play_to_end(players, ids)
    # and before the next deal it is unseated; the three others are dealt.
    hand_id = _ready_all(players, ids["table"])
    assert not Seat.objects.filter(table_id=ids["table"], player=hero.user).exists()
    assert Hand.objects.get(pk=hand_id).n_seats == 3
    assert Table.objects.get(pk=ids["table"]).status == Table.Status.PLAYING
    assert unseated_why(players[0], hero.user, ids["table"]) == [("limit", "cool_off")]
    assert unseated_why(hero, hero.user, ids["table"]) == [("limit", "cool_off")]


def test_a_self_exclusion_from_the_service_frees_seats_once_committed(
    make_player, django_capture_on_commit_callbacks
) -> None:
    owner, hero = make_player(), make_player()
    table_id = _table(owner)
    hero.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        self_exclusion_start(user=hero.user, days=None)
    # not before the commit (unseating locks tables, which a settlement locks first),
    assert Seat.objects.filter(table_id=table_id, player=hero.user).exists()
    for callback in callbacks:
        callback()
    # then at once, and safe to run twice
    assert not Seat.objects.filter(table_id=table_id, player=hero.user).exists()
    assert seats_release_excluded(user_id=hero.user.pk) == []
    assert Seat.objects.filter(table_id=table_id, player=owner.user).exists()
    assert unseated_why(owner, hero.user, table_id) == [("limit", "self_exclusion")]


def test_a_player_who_leaves_itself_is_told_as_no_reason(make_player) -> None:
    owner, guest = make_player(), make_player()
    table_id = _table(owner)
    guest.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
    r = guest.client.post(f"/api/v1/tables/{table_id}/leave", {}, format="json")
    assert r.status_code == 200, r.content
    assert unseated_why(owner, guest.user, table_id) == [(None, None)]


# --------------------------------------------------------------------------- reality check


def test_the_table_view_shows_the_reality_check_to_a_seated_player(make_player) -> None:
    owner, watcher = make_player(), make_player()
    limits_set(user=owner.user, changes={"reminder_minutes": 30})
    table_id = _table(owner)
    view = owner.client.get(f"/api/v1/tables/{table_id}").json()
    check = view["reality_check"]
    assert check["reminder_minutes"] == 30 and check["minutes_played"] == 0
    assert check["net"] == 0 and check["due"] is False and check["reminders"] == 0
    # someone not seated there gets none
    assert watcher.client.get(f"/api/v1/tables/{table_id}").json()["reality_check"] is None
    # 61 minutes later two reminders are due
    later = timezone.now() + dt.timedelta(minutes=61)
    assert reality_check_due(owner.user, later) is True
    check = reality_check_for(user=owner.user, now=later)
    assert check["reminders"] == 2 and check["minutes_played"] == 61
    assert reality_check_due(owner.user, timezone.now() + dt.timedelta(minutes=29)) is False


def test_the_reality_check_counts_the_sessions_net_result(players) -> None:
    ids = _one_hand_settled(players)
    loser, lost = _loser_of(ids["hand"], players)
    check = reality_check_for(user=loser.user)
    assert check["net"] == -lost and check["reminder_minutes"] is None and not check["due"]


# --------------------------------------------------------------------------- concurrency


@pytest.mark.django_db(transaction=True)
def test_a_join_racing_a_cool_off_waits_for_it_and_is_refused(make_player) -> None:
    # Given a cool-off being written (its transaction holds the player's row),
    import threading
    import time

    from django.db import connection, transaction

    from accounts.limits import cool_off_start
    from core.errors import Conflict
    from games.services.tables import seat_join

    owner, hero = make_player(), make_player()
    table_id = _table(owner)
    locked, outcome = threading.Event(), {}

    def cool_off() -> None:
        try:
            with transaction.atomic():
                cool_off_start(user=hero.user, days=1)
                locked.set()
                time.sleep(0.5)  # the join arrives meanwhile
        finally:
            connection.close()

    def join() -> None:
        locked.wait(5)
        try:
            seat_join(table_id=table_id, user=hero.user)
            outcome["joined"] = True
        except Conflict as exc:
            outcome["code"] = exc.code
        finally:
            connection.close()

    threads = [threading.Thread(target=cool_off), threading.Thread(target=join)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    # when a join of the same player comes in, it waits for the cool-off's commit and is refused.
    assert outcome == {"code": "cooling_off"}
    assert not Seat.objects.filter(table_id=table_id, player=hero.user).exists()
