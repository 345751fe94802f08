"""The integrity job on the database (games.services.integrity, games.selectors.integrity,
games.tasks.integrity_scan_due), the review queue in the admin, and the frozen refusal."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.services import signup_address_digest
from core.errors import Conflict
from games.models import IntegrityAction, IntegrityFlag
from games.services.integrity import integrity_flag_review, integrity_scan
from games.tasks import integrity_scan_due
from tests.games.test_games_hands_api import PROBLEM, play_to_end

pytestmark = pytest.mark.django_db

# Every statistic crosses these: each player of one hand is flagged for its timing.
EVERYTHING = {"min_hands": 1, "timing_min_moves": 1, "timing_cv": 100.0}


def later() -> dt.datetime:
    return timezone.now() + dt.timedelta(minutes=1)


@pytest.fixture
def ended_hand(players, win_hand):
    play_to_end(players, win_hand)
    return win_hand


@pytest.fixture
def staff(make_user) -> tuple[object, Client]:
    user, _ = make_user(username="integrity-admin", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    return user, client


def a_flag(players) -> IntegrityFlag:
    now = timezone.now()
    flag = IntegrityFlag.objects.create(
        signal="soft_play",
        player=players[0].user,
        partner=players[1].user,
        statistic=0.9,
        threshold=0.5,
        window_start=now - dt.timedelta(days=7),
        window_end=now,
        hand_ids=[],
    )
    IntegrityAction.objects.create(flag=flag, action="opened", status=flag.status)
    return flag


# --------------------------------------------------------------------------- the job


def test_the_scan_reads_the_windows_hands_from_their_logs_and_opens_flags(
    players, ended_hand
) -> None:
    # given a played hand, and thresholds every statistic crosses
    # when the scan runs over a window holding the hand
    flags = integrity_scan(window_end=later(), thresholds=EVERYTHING)
    # then each player is flagged for its timing, with the hand as evidence and an "opened" row
    timing = [f for f in flags if f.signal == "timing"]
    assert {f.player_id for f in timing} == {p.user.pk for p in players}
    assert all(f.hand_ids == [ended_hand["hand"]] for f in timing)
    assert all(f.detail["moves"] >= 1 for f in timing)
    assert all(f.actions.get().action == "opened" for f in flags)


def test_the_scan_is_safe_to_run_twice_for_one_window(players, ended_hand) -> None:
    end = later()
    first = integrity_scan(window_end=end, thresholds=EVERYTHING)
    second = integrity_scan(window_end=end, thresholds=EVERYTHING)
    assert sorted(f.pk for f in first) == sorted(f.pk for f in second)
    assert IntegrityAction.objects.count() == len(first)


def test_a_hand_outside_the_window_is_not_read(players, ended_hand) -> None:
    flags = integrity_scan(window_end=timezone.now() - dt.timedelta(days=1), thresholds=EVERYTHING)
    assert flags == []


def test_default_thresholds_do_not_flag_one_ordinary_hand(players, ended_hand) -> None:
    assert integrity_scan(window_end=later()) == []


def test_players_who_signed_up_from_one_address_are_flagged(players, ended_hand) -> None:
    digest = signup_address_digest("203.0.113.7")
    for p in players[:2]:
        p.user.signup_address = digest
        p.user.save(update_fields=["signup_address"])
    flags = integrity_scan(window_end=later())
    assert [(f.signal, {f.player_id, f.partner_id}) for f in flags] == [
        ("shared_address", {players[0].user.pk, players[1].user.pk})
    ]
    assert flags[0].hand_ids == [ended_hand["hand"]]


def test_the_nightly_task_runs_the_scan(players, ended_hand, settings) -> None:
    settings.CHAN_INTEGRITY_THRESHOLDS = EVERYTHING
    ids = integrity_scan_due(window_end=later().isoformat())
    assert ids and set(ids) == set(IntegrityFlag.objects.values_list("pk", flat=True))
    assert "integrity-scan" in settings.CELERY_BEAT_SCHEDULE


# --------------------------------------------------------------------------- review, history


def test_freezing_refuses_a_seat_with_account_frozen_and_clearing_lifts_it(
    players, make_player, staff
) -> None:
    user, _ = staff
    flag = a_flag(players)
    host = make_player()
    r = host.client.post("/api/v1/tables", {"name": "t", "stake": 10}, format="json")
    table = r.json()["id"]

    seated = players[1].client.post(f"/api/v1/tables/{table}/join", {}, format="json")
    assert seated.status_code == 200

    integrity_flag_review(flag_id=flag.pk, action="freeze", staff=user, notes="looks soft")

    # seated before the freeze: it may not say ready for another hand
    r = players[1].client.post(f"/api/v1/tables/{table}/ready", {}, format="json")
    assert r.status_code == 403 and r.json()["code"] == "account_frozen"
    r = players[1].client.post(f"/api/v1/tables/{table}/leave", {}, format="json")
    assert r.status_code == 200, r.content

    for frozen in players[:2]:  # the player and its partner
        r = frozen.client.post(f"/api/v1/tables/{table}/join", {}, format="json")
        assert r.status_code == 403 and r["Content-Type"] == PROBLEM
        assert r.json()["code"] == "account_frozen"
        r = frozen.client.post("/api/v1/tables", {"name": "u", "stake": 10}, format="json")
        assert r.status_code == 403 and r.json()["code"] == "account_frozen"
    r = players[2].client.post(f"/api/v1/tables/{table}/join", {}, format="json")
    assert r.status_code == 200  # the others sit as before

    integrity_flag_review(flag_id=flag.pk, action="clear", staff=user, notes="a new player")
    r = players[0].client.post(f"/api/v1/tables/{table}/join", {}, format="json")
    assert r.status_code == 200, r.content
    assert list(flag.actions.values_list("action", "status", "staff_id")) == [
        ("opened", "open", None),
        ("freeze", "frozen", user.pk),
        ("clear", "cleared", user.pk),
    ]


def test_a_ban_bans_both_players(players, staff) -> None:
    user, _ = staff
    flag = a_flag(players)
    integrity_flag_review(flag_id=flag.pk, action="ban", staff=user, notes="chip dumping")
    for p in players[:2]:
        p.user.refresh_from_db()
        assert p.user.banned_at is not None and "chip dumping" in p.user.ban_reason
    flag.refresh_from_db()
    assert flag.status == "banned" and flag.reviewer_id == user.pk


def test_the_same_verdict_twice_is_a_conflict(players, staff) -> None:
    user, _ = staff
    flag = a_flag(players)
    integrity_flag_review(flag_id=flag.pk, action="clear", staff=user)
    with pytest.raises(Conflict) as info:
        integrity_flag_review(flag_id=flag.pk, action="clear", staff=user)
    assert info.value.code == "integrity_flag_unchanged"


def test_the_history_is_append_only(players) -> None:
    flag = a_flag(players)
    for statement in (
        "UPDATE games_integrityaction SET notes = 'x'",
        "DELETE FROM games_integrityaction",
    ):
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement)
    assert flag.actions.get().notes == ""


# --------------------------------------------------------------------------- the admin queue


def test_the_queue_lists_open_flags_with_links_to_the_replay_viewer(players, staff) -> None:
    _, client = staff
    flag = a_flag(players)
    flag.hand_ids = [41, 42]
    flag.save()
    closed = a_flag(players[2:])
    closed.status = "cleared"
    closed.save()

    url = reverse("admin:games_integrityflag_changelist")
    r = client.get(url)
    assert r.status_code == 302 and "status__exact=open" in r["Location"]
    page = client.get(r["Location"]).content.decode()
    assert f"/{flag.pk}/change/" in page and f"/{closed.pk}/change/" not in page
    assert reverse("admin:games_hand_replay", args=[41]) in page
    assert reverse("admin:games_hand_replay", args=[42]) in page


def test_an_admin_action_freezes_with_a_reason_and_records_it(players, staff) -> None:
    user, client = staff
    flag = a_flag(players)
    url = reverse("admin:games_integrityflag_changelist") + "?status__exact=open"
    data = {"action": "freeze", "_selected_action": [flag.pk]}
    asked = client.post(url, data)
    assert asked.status_code == 200 and b"reason" in asked.content.lower()
    client.post(url, {**data, "apply": "1", "reason": "feeds the partner"})
    flag.refresh_from_db()
    assert flag.status == "frozen" and flag.reviewer_id == user.pk
    assert flag.actions.last().notes == "feeds the partner"
    change = client.get(reverse("admin:games_integrityflag_change", args=[flag.pk]))
    assert b"feeds the partner" in change.content  # the history on the flag's page


def test_scan_now_queues_the_task(
    players, staff, ended_hand, settings, django_capture_on_commit_callbacks
) -> None:
    from chan_api.celery import app

    _, client = staff
    settings.CHAN_INTEGRITY_THRESHOLDS = EVERYTHING
    app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True) as queued:
            r = client.post(reverse("admin:games_integrityflag_scan"))
    finally:
        app.conf.task_always_eager = False
    assert r.status_code == 302 and len(queued) == 1
    assert IntegrityFlag.objects.filter(signal="timing").count() == 4
    assert client.get(reverse("admin:games_integrityflag_scan")).status_code == 403


def test_players_who_logged_in_from_one_address_are_flagged(players, ended_hand) -> None:
    from axes.models import AccessLog

    for p in players[1:3]:
        AccessLog.objects.create(
            username=p.user.username, ip_address="198.51.100.9", user_agent="test"
        )
    AccessLog.objects.create(
        username=players[3].user.username, ip_address="198.51.100.10", user_agent="test"
    )
    flags = integrity_scan(window_end=later())
    assert [(f.signal, {f.player_id, f.partner_id}) for f in flags] == [
        ("shared_address", {players[1].user.pk, players[2].user.pk})
    ]
    assert "198.51.100.9" not in str(flags[0].detail)  # digests only
