"""Leaderboard pages kept per process (leaderboards fast at scale): a page is served
again only while its board's version (``games_boardversion``, bumped by the triggers of every
transaction that writes the board's rows) and its query hold — a board read right after a
settlement, a void or any other write of its rows shows it."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from accounts.services import token_create
from games.api.leaderboard_views import board_pages
from games.models import BoardScore, BoardVersion, Hand
from games.selectors.leaderboards import board_versions_forget
from games.services.quan_booking import hand_settle
from games.services.void import hand_void
from tests.games.decks import WIN_SEAT
from tests.games.test_games_hands_api import play_to_end

pytestmark = pytest.mark.django_db


@pytest.fixture
def pages(settings):
    """The page cache on (the suite keeps it off: its rolled-back transactions reuse versions)."""
    settings.CHAN_BOARD_PAGES = 64
    settings.CHAN_BOARD_PAGE_SECONDS = 60
    board_pages.clear()
    board_versions_forget()
    yield board_pages
    board_pages.clear()
    board_versions_forget()


def _board_reads(queries) -> list[str]:
    return [q["sql"] for q in queries if "games_boardscore" in q["sql"]]


def test_a_board_read_right_after_a_settlement_and_a_void_shows_them(
    pages, settings, players, win_hand, make_user
) -> None:
    # (the versions remembered too: the settling process forgets them as it writes a board)
    settings.CHAN_BOARD_VERSION_SECONDS = 60
    staff, _ = make_user(username="boss", is_staff=True, is_superuser=True)
    c = players[0].client
    # Given an empty board,
    assert c.get("/api/v1/leaderboards/quan").json()["results"] == []
    # when the hand is settled, the next read shows it,
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    hand = Hand.objects.get(pk=win_hand["hand"])
    nets = {s["seat"]: s["net"] for s in hand.quan["seats"]}
    first = c.get("/api/v1/leaderboards/quan")
    results = first.json()["results"]
    assert results[0]["username"] == players[WIN_SEAT].user.username
    assert results[0]["score"] == nets[WIN_SEAT]
    # and the reads after it are the kept page (no query of a board, same ETag, a 304),
    with CaptureQueriesContext(connection) as queries:
        again = c.get("/api/v1/leaderboards/quan")
        not_modified = c.get("/api/v1/leaderboards/quan", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.content == first.content and again["ETag"] == first["ETag"]
    assert not_modified.status_code == 304
    assert [q for q in queries.captured_queries if "games_board" in q["sql"]] == []
    # then a void writes the board: the next read shows it and its ETag moves.
    hand_void(hand_id=hand.pk, staff=staff, reason="collusion")
    with CaptureQueriesContext(connection) as queries:
        after = c.get("/api/v1/leaderboards/quan", HTTP_IF_NONE_MATCH=first["ETag"])
    assert after.status_code == 200 and after["ETag"] != first["ETag"]
    assert _board_reads(queries.captured_queries)
    assert {e["score"] for e in after.json()["results"]} == {0}


def test_any_write_of_a_boards_rows_bumps_only_that_boards_version(pages, make_user) -> None:
    # (versions read on every request, as the suite does: CHAN_BOARD_VERSION_SECONDS 0)
    users = [make_user(username=f"v{i}")[0] for i in range(3)]
    for i, user in enumerate(users):
        BoardScore.objects.create(board="quan", period="all", user=user, score=10 * i, hands=1)
    BoardScore.objects.create(board="xp", period="all", user=users[0], score=5, hands=1)
    _, token = make_user(username="reader")
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")

    def version(board: str) -> int:
        return sum(
            BoardVersion.objects.filter(board=board, period="all", room="").values_list(
                "version", flat=True
            )
        )

    before = c.get("/api/v1/leaderboards/quan?limit=2").json()
    assert [e["username"] for e in before["results"]] == ["v2", "v1"]
    with CaptureQueriesContext(connection) as queries:
        assert c.get("/api/v1/leaderboards/quan?limit=2").json() == before
    assert _board_reads(queries.captured_queries) == []
    assert [q["sql"] for q in queries.captured_queries if "games_boardversion" in q["sql"]]
    quan, xp = version("quan"), version("xp")
    assert quan > 0 and xp > 0
    # an update of the rows (as an admin or a repair would write them),
    BoardScore.objects.filter(user=users[0], board="quan").update(score=99)
    assert version("quan") == quan + 1 and version("xp") == xp
    top = c.get("/api/v1/leaderboards/quan?limit=2").json()
    assert [e["username"] for e in top["results"]] == ["v0", "v2"]
    # a delete (an account deleted takes its rows),
    BoardScore.objects.filter(user=users[0]).delete()
    assert version("xp") == xp + 1
    assert c.get("/api/v1/leaderboards/xp").json()["results"] == []
    assert [e["username"] for e in c.get("/api/v1/leaderboards/quan").json()["results"]] == [
        "v2",
        "v1",
    ]
    # and the kept pages are per query: a cursor page and around-me of each player apart.
    page = c.get("/api/v1/leaderboards/quan?limit=1").json()
    rest = c.get(f"/api/v1/leaderboards/quan?limit=1&cursor={page['next']}").json()
    assert [e["username"] for e in page["results"] + rest["results"]] == ["v2", "v1"]
    for user in users[1:]:
        mine = APIClient()
        mine.credentials(HTTP_AUTHORIZATION=f"Bearer {token_create(user=user)[1]}")
        assert mine.get("/api/v1/leaderboards/quan?around=me").json()["me"]["username"] == (
            user.username
        )
