"""Ratings (``games.services.ratings``): openskill Plackett–Luce per ruleset family,
updated once in the settlement's transaction, reversed by a void, append-only history, shown on
``/me``, ``/players/{username}``, my hands and the feed; practice hands unrated."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from games.models import FeedEntry, Hand, PlayerRating, RatingChange, Table
from games.rating_terms import PROVISIONAL_HANDS
from games.services.quan_booking import hand_settle
from games.services.ratings import MU0, SIGMA0, shown_rating
from games.services.void import hand_void
from tests.games.conftest import start_table
from tests.games.decks import HOA_DECK, WIN_SEAT
from tests.games.test_games_hands_api import play_to_end

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user):
    user, _ = make_user(username="boss", is_staff=True, is_superuser=True)
    return user


def _ratings(players) -> list[int]:
    by_user = dict(PlayerRating.objects.values_list("user_id", "rating"))
    return [by_user.get(p.user.pk) for p in players]


def test_a_settled_win_rates_its_players_once_the_winner_up(players, win_hand) -> None:
    # Given the scripted hand played to seat 2's win,
    play_to_end(players, win_hand)
    hand = Hand.objects.get(pk=win_hand["hand"])
    winner = hand.seat_list()[WIN_SEAT].user_id
    # when its settlement runs three times (task, sweep, next deal),
    for _ in range(3):
        hand_settle(hand_id=hand.pk)
    # then each player has one change row and one rating in the hand's family,
    assert RatingChange.objects.filter(hand=hand).count() == 4
    start = shown_rating(MU0, SIGMA0)
    assert start == 1500
    rows = {r.user_id: r for r in PlayerRating.objects.all()}
    assert {r.family for r in rows.values()} == {hand.frozen_ruleset().preset}
    assert all(r.hands == 1 for r in rows.values())
    # the winner went up and every other seat went down.
    assert rows[winner].rating > start
    assert all(r.rating < start for u, r in rows.items() if u != winner)
    assert rows[winner].mu > MU0 and rows[winner].sigma < SIGMA0


def test_me_profile_my_hands_and_the_feed_show_the_rating(players, win_hand) -> None:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    p = players[WIN_SEAT]
    row = PlayerRating.objects.get(user=p.user)
    me = p.client.get("/api/v1/me").json()
    assert me["rating"] == {
        "family": row.family,
        "rating": row.rating,
        "hands": 1,
        "provisional": True,
    }
    assert me["ratings"] == [me["rating"]]
    profile = players[0].client.get(f"/api/v1/players/{p.user.username}").json()
    assert profile["rating"] == me["rating"]
    mine = p.client.get("/api/v1/me/hands").json()["results"][0]
    assert mine["id"] == win_hand["hand"] and mine["rating_change"] == row.rating - 1500
    entry = FeedEntry.objects.get(user=p.user, kind="rating_changed")
    assert entry.hand_id == win_hand["hand"]
    assert entry.data == {
        "family": row.family,
        "rating": row.rating,
        "rating_change": row.rating - 1500,
        "provisional": PROVISIONAL_HANDS > 1,
        "voided": False,
    }
    feed = p.client.get("/api/v1/me/feed?limit=100").json()
    assert "rating_changed" in [e["kind"] for e in feed["entries"]]


def test_a_player_never_rated_shows_null(make_player) -> None:
    p = make_player(username="newcomer")
    assert p.client.get("/api/v1/me").json()["rating"] is None
    body = p.client.get("/api/v1/players/newcomer").json()
    assert body["rating"] is None and body["ratings"] == []


def test_a_void_reverses_the_hands_rating_change(players, win_hand, staff) -> None:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    hand_void(hand_id=win_hand["hand"], staff=staff, reason="collusion")
    hand_void(hand_id=win_hand["hand"], staff=staff, reason="again")  # a no-op
    assert RatingChange.objects.filter(hand_id=win_hand["hand"], reversal=True).count() == 4
    for row in PlayerRating.objects.all():
        assert row.rating == 1500 and row.hands == 0
        assert row.mu == pytest.approx(MU0) and row.sigma == pytest.approx(SIGMA0)
    p = players[WIN_SEAT]
    assert p.client.get("/api/v1/me/hands").json()["results"][0]["rating_change"] == 0
    kinds = list(
        FeedEntry.objects.filter(user=p.user, kind="rating_changed").values_list(
            "data__voided", flat=True
        )
    )
    assert sorted(kinds) == [False, True]


def test_a_hoa_ties_everyone(players) -> None:
    hand = start_table(players, HOA_DECK)
    play_to_end(players, hand)
    hand_settle(hand_id=hand["hand"])
    rows = list(PlayerRating.objects.all())
    assert len(rows) == 4 and len({(r.mu, r.sigma) for r in rows}) == 1
    assert rows[0].mu == pytest.approx(MU0) and rows[0].sigma < SIGMA0


def test_a_practice_hand_is_not_rated(players, win_hand) -> None:
    Table.objects.filter(pk=win_hand["table"]).update(practice=True)
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    assert not PlayerRating.objects.exists() and not RatingChange.objects.exists()
    mine = players[0].client.get("/api/v1/me/hands").json()["results"][0]
    assert mine["rating_change"] is None


def test_the_history_is_append_only(players, win_hand) -> None:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    with pytest.raises(IntegrityError), transaction.atomic():
        RatingChange.objects.filter(hand_id=win_hand["hand"]).update(rating_after=9999)


# --------------------------------------------------------------------------- leaderboards


def test_the_boards_rank_a_settled_hand_overall_by_room_and_season(players, win_hand) -> None:
    from games.rating_terms import month_of, week_of

    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    hand_settle(hand_id=win_hand["hand"])  # once only
    hand = Hand.objects.get(pk=win_hand["hand"])
    winner = players[WIN_SEAT]
    c = players[0].client
    top = c.get("/api/v1/leaderboards/rating").json()
    assert top["board"] == "rating" and top["family"] == hand.frozen_ruleset().preset
    assert [e["rank"] for e in top["results"]] == [1, 2, 3, 4]
    assert top["results"][0]["username"] == winner.user.username
    assert top["results"][0]["score"] == PlayerRating.objects.get(user=winner.user).rating
    assert top["results"][0]["hands"] == 1 and top["results"][0]["provisional"] is True
    quan = c.get("/api/v1/leaderboards/quan").json()["results"]
    nets = {s["seat"]: s["net"] for s in hand.quan["seats"]}
    assert quan[0]["username"] == winner.user.username and quan[0]["score"] == nets[WIN_SEAT]
    assert sum(e["score"] for e in quan) == sum(nets.values())
    xp = c.get("/api/v1/leaderboards/xp").json()["results"]
    assert {e["username"]: e["score"] for e in xp}[
        winner.user.username
    ] == winner.user.__class__.objects.get(pk=winner.user.pk).xp
    for season in (week_of(hand.ended_at), month_of(hand.ended_at)):
        body = c.get(f"/api/v1/leaderboards/quan?season={season}").json()
        assert body["season"] == season and body["results"] == quan
    room = c.get(f"/api/v1/leaderboards/quan?room={hand.room_id}").json()["results"]
    assert room == quan
    assert c.get("/api/v1/leaderboards/quan?season=2020-W01").json()["results"] == []


def test_pages_around_me_and_the_etag(players, win_hand) -> None:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    c = players[0].client
    first = c.get("/api/v1/leaderboards/rating?limit=3")
    body = first.json()
    assert len(body["results"]) == 3 and body["next"]
    rest = c.get(f"/api/v1/leaderboards/rating?limit=3&cursor={body['next']}").json()
    assert [e["rank"] for e in rest["results"]] == [4] and rest["next"] is None
    everyone = [e["username"] for e in body["results"] + rest["results"]]
    assert len(set(everyone)) == 4
    me = c.get("/api/v1/leaderboards/rating?around=me&limit=3").json()
    assert me["me"]["username"] == players[0].user.username
    assert me["me"] in me["results"]
    assert [e["rank"] for e in me["results"]] == list(
        range(me["results"][0]["rank"], me["results"][0]["rank"] + len(me["results"]))
    )
    again = c.get("/api/v1/leaderboards/rating?limit=3", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again["ETag"] == first["ETag"]


@pytest.mark.parametrize(
    ("url", "status", "code"),
    [
        ("/api/v1/leaderboards/karma", 404, "board_not_found"),
        ("/api/v1/leaderboards/rating?family=poker", 400, "board_family_unknown"),
        ("/api/v1/leaderboards/quan?room=nowhere", 404, "room_not_found"),
        ("/api/v1/leaderboards/quan?season=2026-W60", 400, "invalid"),
        ("/api/v1/leaderboards/quan?cursor=abc", 400, "invalid"),
        ("/api/v1/leaderboards/quan?around=you", 400, "invalid"),
        ("/api/v1/leaderboards/quan?limit=101", 400, "invalid"),
    ],
)
def test_bad_boards_and_queries_are_domain_errors(make_player, url, status, code) -> None:
    r = make_player().client.get(url)
    assert r.status_code == status, r.content
    assert r.json()["code"] == code


def test_a_void_takes_the_hand_off_the_quan_board(players, win_hand, staff) -> None:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    hand_void(hand_id=win_hand["hand"], staff=staff, reason="collusion")
    c = players[0].client
    quan = c.get("/api/v1/leaderboards/quan").json()["results"]
    assert {e["score"] for e in quan} == {0} and {e["hands"] for e in quan} == {0}
    rating = c.get("/api/v1/leaderboards/rating").json()["results"]
    assert {e["score"] for e in rating} == {1500}
