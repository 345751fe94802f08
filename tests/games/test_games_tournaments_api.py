"""Arenas over HTTP: ``/api/v1/tournaments`` — staff create, players join and leave
(their fee held and released), one arena, its standings with an ETag, a 304 and ``?wait=N``;
clear problem+json errors with codes, in Vietnamese when asked."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest
from django.utils import timezone

from accounts.hold_selectors import wallet_funds
from games.models import FeedEntry, Tournament
from games.tasks import tournament_clock_due

pytestmark = pytest.mark.django_db
PROBLEM = "application/problem+json"


def assert_problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == code
    return response.json()


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def terms(**over: Any) -> dict[str, Any]:
    now = timezone.now()
    return {
        "name": "Giải tối thứ Ba",
        "stake": 1,
        "entry_fee": 500,
        "table_size": 3,
        "starts_at": iso(now + dt.timedelta(minutes=10)),
        "ends_at": iso(now + dt.timedelta(hours=1)),
        "payout": [70, 30],
        **over,
    }


@pytest.fixture
def staff(make_player: Any) -> Any:
    return make_player(is_staff=True)


@pytest.fixture
def arena_id(staff: Any) -> int:
    r = staff.client.post("/api/v1/tournaments", terms(), format="json")
    assert r.status_code == 201, r.content
    return r.json()["id"]


def test_staff_create_an_arena_and_anyone_reads_it(staff: Any, players: list[Any]) -> None:
    r = staff.client.post("/api/v1/tournaments", terms(), format="json")
    assert r.status_code == 201, r.content
    body = r.json()
    assert r["Location"].endswith(f"/api/v1/tournaments/{body['id']}")
    assert body["status"] == "scheduled" and body["players"] == 0 and body["pool"] == 0
    assert body["payout"] == [70, 30] and body["me"] is None and body["room"] == "nen-dat"
    listed = players[0].client.get("/api/v1/tournaments?status=scheduled").json()
    assert [t["id"] for t in listed] == [body["id"]]
    assert players[0].client.get("/api/v1/tournaments?status=running").json() == []
    one = players[0].client.get(f"/api/v1/tournaments/{body['id']}").json()
    assert one["name"] == "Giải tối thứ Ba"


def test_a_player_cannot_create_an_arena(players: list[Any]) -> None:
    r = players[0].client.post("/api/v1/tournaments", terms(), format="json")
    assert_problem(r, 403, "staff_only")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"payout": [60, 30]}, "payout"),
        ({"payout": [30, 70]}, "payout"),
        ({"stake": 0}, "stake"),
        ({"table_size": 5}, "table_size"),
        ({"ends_at": "2020-01-01T00:00:00Z"}, "ends_at"),
        ({"starts_at": "2020-01-01T00:00:00Z", "ends_at": "2020-01-02T00:00:00Z"}, "starts_at"),
        ({"nickname": "x"}, "nickname"),
    ],
)
def test_bad_terms_are_a_400_naming_the_field(staff: Any, change: dict, field: str) -> None:
    r = staff.client.post("/api/v1/tournaments", terms(**change), format="json")
    body = assert_problem(r, 400, "invalid")
    assert field in body["errors"], body


def test_an_unknown_room_is_a_400(staff: Any) -> None:
    r = staff.client.post("/api/v1/tournaments", terms(room="khong-co"), format="json")
    assert_problem(r, 400, "invalid_room")


def test_join_holds_the_fee_and_leave_releases_it(arena_id: int, players: list[Any]) -> None:
    p = players[0]
    before = wallet_funds(p.user)
    r = p.client.post(f"/api/v1/tournaments/{arena_id}/join")
    assert r.status_code == 200, r.content
    assert r.json()["me"]["score"] == 0 and r.json()["players"] == 1 and r.json()["pool"] == 500
    assert wallet_funds(p.user).held == before.held + 500
    assert_problem(p.client.post(f"/api/v1/tournaments/{arena_id}/join"), 409, "already_entered")
    r = p.client.post(f"/api/v1/tournaments/{arena_id}/leave")
    assert r.status_code == 200 and r.json()["me"] is None
    assert wallet_funds(p.user) == before
    assert_problem(p.client.post(f"/api/v1/tournaments/{arena_id}/leave"), 409, "not_entered")


def test_an_unknown_arena_is_a_404(players: list[Any]) -> None:
    c = players[0].client
    for r in (
        c.get("/api/v1/tournaments/999999"),
        c.post("/api/v1/tournaments/999999/join"),
        c.post("/api/v1/tournaments/999999/leave"),
        c.get("/api/v1/tournaments/999999/standings"),
    ):
        assert_problem(r, 404, "tournament_not_found")


def test_errors_speak_vietnamese(arena_id: int, players: list[Any]) -> None:
    c = players[0].client
    r = c.post("/api/v1/tournaments/999999/join", HTTP_ACCEPT_LANGUAGE="vi")
    assert "giải" in assert_problem(r, 404, "tournament_not_found")["detail"].lower()
    c.post(f"/api/v1/tournaments/{arena_id}/join")
    r = c.post(f"/api/v1/tournaments/{arena_id}/join", HTTP_ACCEPT_LANGUAGE="vi")
    assert "giải" in assert_problem(r, 409, "already_entered")["detail"].lower()


def test_standings_have_an_etag_a_304_and_a_long_poll(arena_id: int, players: list[Any]) -> None:
    c = players[0].client
    url = f"/api/v1/tournaments/{arena_id}/standings"
    r = c.get(url)
    assert r.status_code == 200 and r.json()["results"] == [] and r.json()["status"] == "scheduled"
    etag = r["ETag"]
    assert c.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    started = time.monotonic()
    assert c.get(f"{url}?wait=1", HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert time.monotonic() - started >= 0.9
    for p in players[:3]:
        assert p.client.post(f"/api/v1/tournaments/{arena_id}/join").status_code == 200
    r = c.get(url, HTTP_IF_NONE_MATCH=etag)
    assert r.status_code == 200 and r["ETag"] != etag
    rows = r.json()["results"]
    assert [row["rank"] for row in rows] == [1, 1, 1] and r.json()["pool"] == 1500
    assert c.get(f"{url}?wait=99").status_code == 400


def test_the_start_writes_the_feed_and_seats_the_players(arena_id: int, players: list[Any]) -> None:
    for p in players[:3]:
        p.client.post(f"/api/v1/tournaments/{arena_id}/join")
    Tournament.objects.filter(pk=arena_id).update(starts_at=timezone.now() - dt.timedelta(hours=1))
    tournament_clock_due(arena_id)
    body = players[0].client.get(f"/api/v1/tournaments/{arena_id}").json()
    assert body["status"] == "running" and body["pool"] == 1500
    kinds = set(FeedEntry.objects.filter(user=players[0].user).values_list("kind", flat=True))
    assert {"tournament_started", "tournament_seated"} <= kinds
    feed = players[0].client.get("/api/v1/me/feed").json()
    seated = [e for e in feed["entries"] if e["kind"] == "tournament_seated"]
    assert seated and seated[0]["data"]["tournament_id"] == arena_id
    standings = players[0].client.get(f"/api/v1/tournaments/{arena_id}/standings").json()
    assert standings["tables_playing"] == 1 and len(standings["results"]) == 3
    newcomer = players[3].client.post(f"/api/v1/tournaments/{arena_id}/join")
    assert_problem(newcomer, 409, "tournament_started")
