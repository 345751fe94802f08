"""The auditors' integrity API (GET /integrity/flags, /integrity/flags/{id}): auditors read the
flags and their history; anyone else is refused, and so is an auditor's token without
``audit:read``."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from accounts.services import token_create
from games.models import IntegrityAction, IntegrityFlag
from games.services.integrity import integrity_flag_review
from tests.games.conftest import client_with

pytestmark = pytest.mark.django_db


def flag(player, partner, *, signal: str = "soft_play", status: str = "open") -> IntegrityFlag:
    end = timezone.now()
    return IntegrityFlag.objects.create(
        signal=signal,
        player=player,
        partner=partner,
        statistic=0.8,
        threshold=0.5,
        detail={"let_go_partner": 5.0},
        window_start=end - dt.timedelta(days=7),
        window_end=end,
        hand_ids=[3, 5],
        status=status,
    )


@pytest.fixture
def auditor(make_player):
    player = make_player()
    player.user.user_permissions.add(Permission.objects.get(codename="audit_hands"))
    return player


def test_an_auditor_reads_the_flags_newest_first_and_pages_them(auditor, players) -> None:
    a, b = players[0].user, players[1].user
    first, second = flag(a, b), flag(a, b, signal="feeding")
    flag(b, None, signal="timing", status="cleared")
    r = auditor.client.get("/api/v1/integrity/flags", {"status": "open", "limit": 1})
    assert r.status_code == 200, r.content
    body = r.json()
    assert [f["id"] for f in body["results"]] == [second.pk]
    assert body["results"][0]["player"] == a.username and body["next"] == str(second.pk)
    older = auditor.client.get(
        "/api/v1/integrity/flags", {"status": "open", "cursor": body["next"]}
    ).json()
    assert [f["id"] for f in older["results"]] == [first.pk] and older["next"] is None
    timing = auditor.client.get("/api/v1/integrity/flags", {"signal": "timing"}).json()
    assert [(f["signal"], f["partner"]) for f in timing["results"]] == [("timing", None)]


def test_a_flag_shows_its_review_history(auditor, players, django_user_model) -> None:
    staff = django_user_model.objects.create_user(username="kiem_tra", password="x" * 12)
    f = flag(players[0].user, players[1].user)
    integrity_flag_review(flag_id=f.pk, action="freeze", staff=staff, notes="soft play")
    body = auditor.client.get(f"/api/v1/integrity/flags/{f.pk}").json()
    assert body["status"] == "frozen" and body["reviewer"] == "kiem_tra"
    assert [(a["action"], a["staff"]) for a in body["actions"]] == [("freeze", "kiem_tra")]
    assert IntegrityAction.objects.filter(flag=f).count() == 1
    assert auditor.client.get("/api/v1/integrity/flags/999999").status_code == 404


def test_players_are_refused_and_so_is_a_token_without_audit_read(auditor, players) -> None:
    f = flag(players[0].user, players[1].user)
    # the flagged player itself may not read what it is suspected of
    for url in ("/api/v1/integrity/flags", f"/api/v1/integrity/flags/{f.pk}"):
        refused = players[0].client.get(url)
        assert refused.status_code == 403 and refused.json()["code"] == "auditors_only"
    # an auditor's token that lacks the scope is refused before the view
    _token, secret = token_create(user=auditor.user, name="no audit", scopes=["read"])
    narrow = client_with(secret).get("/api/v1/integrity/flags")
    assert narrow.status_code == 403 and narrow.json()["code"] == "missing_scope"
    bad = auditor.client.get("/api/v1/integrity/flags", {"status": "nope"})
    assert bad.status_code == 400 and bad.json()["code"] == "invalid"
