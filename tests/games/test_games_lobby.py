"""The lobby: the rooms' catalogue, their requirements to create a table or sit, the
table list's cursor pages and filters, and quick-join (RULES.md §11)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

import pytest

from accounts.ledger import balance_adjust
from accounts.models import User
from games.models import Seat, Table
from tests.games.conftest import Player, client_with
from tests.games.test_games_concurrency import at_once
from tests.games.test_games_hands_api import assert_problem

pytestmark = pytest.mark.django_db

WELCOME = 50_000
_keys = itertools.count(1)


def give(player: Player, amount: int) -> None:
    balance_adjust(user=player.user, amount=amount, reason="test", key=f"lobby-{next(_keys)}")


def create(player: Player, **body: Any) -> Any:
    return player.client.post("/api/v1/tables", {"name": "t", "stake": 10, **body}, format="json")


# --------------------------------------------------------------------------- the catalogue


def test_the_rooms_catalogue_lists_requirements_fees_and_what_is_open(players) -> None:
    # Given two tables in Nền đất (one with two players) and one closed,
    table = create(players[0]).json()
    players[1].client.post(f"/api/v1/tables/{table['id']}/join", {}, format="json")
    create(players[2])
    closed = create(players[3]).json()
    players[3].client.post(f"/api/v1/tables/{closed['id']}/leave", format="json")
    # when a player reads the rooms,
    r = players[0].client.get("/api/v1/rooms")
    assert r.status_code == 200
    rooms = {room["slug"]: room for room in r.json()}
    # then they come in lobby order with both names, requirements and fees,
    assert list(rooms) == ["nen-dat", "chieu-coi", "sap-gu-2", "sap-gu-vip"]
    assert rooms["nen-dat"]["name"] == {"vi": "Nền đất", "en": "Earthen floor"}
    assert rooms["chieu-coi"]["requirements"] == {
        "balance": 150_000,
        "level": 0,
        "vip_points": 0,
        "badge": False,
    }
    assert rooms["sap-gu-vip"]["requirements"] == {
        "balance": 40_000_000,
        "level": 50,
        "vip_points": 400,
        "badge": True,
    }
    assert rooms["sap-gu-vip"]["fees"] == {"by_players": {"2": 4, "3": 3, "4": 2}}
    assert rooms["nen-dat"]["xuong_sai_settled"] is False and rooms["sap-gu-vip"]["vip"] is True
    # and the tables that are not closed, and the players at them.
    assert (rooms["nen-dat"]["open_tables"], rooms["nen-dat"]["players_seated"]) == (2, 3)
    assert (rooms["chieu-coi"]["open_tables"], rooms["chieu-coi"]["players_seated"]) == (0, 0)


# --------------------------------------------------------------------------- requirements


def test_a_new_player_cannot_create_in_chieu_coi_until_it_holds_150000(make_player) -> None:
    # Given a new player with its 50,000 Quan,
    player = make_player()
    # when it creates a table in Chiếu cói, the room refuses it, saying what is missing;
    r = create(player, room="chieu-coi", stake=1)
    body = assert_problem(r, 409, "room_requirements_not_met")
    assert body["room"] == "chieu-coi"
    assert body["missing"] == [{"requirement": "balance", "needed": 150_000, "have": WELCOME}]
    assert "balance" in body["detail"]
    # with 150,000 it may.
    give(player, 100_000)
    assert create(player, room="chieu-coi", stake=1000).status_code == 201


def test_the_stake_rule_stays_insufficient_balance_once_the_room_admits(make_player) -> None:
    player = make_player()
    give(player, 150_000)  # 200,000: the room admits it, but 10 × 30,000 is 300,000
    body = assert_problem(
        create(player, room="chieu-coi", stake=30_000), 409, "insufficient_balance"
    )
    assert (body["needed"], body["balance"]) == (300_000, 200_000)


def test_the_vip_room_lists_every_missing_requirement_and_a_badge_counts(make_player) -> None:
    player = make_player()
    r = create(player, room="sap-gu-vip", stake=1)
    missing = assert_problem(r, 409, "room_requirements_not_met")["missing"]
    assert missing == [
        {"requirement": "balance", "needed": 40_000_000, "have": WELCOME},
        {"requirement": "level", "needed": 50, "have": 1},
        {"requirement": "vip_points", "needed": 400, "have": 0},
        {"requirement": "badge", "needed": True, "have": False},
    ]
    # Given staff grant the badge, VIP points and a level, and the Quan,
    User.objects.filter(pk=player.user.pk).update(badge=True, vip_points=400, level=50)
    give(player, 40_000_000)
    # then it may open a table there.
    assert create(player, room="sap-gu-vip", stake=1000).status_code == 201


def test_sitting_down_checks_the_room_too(make_player) -> None:
    # Given a Chiếu cói table opened by a rich player,
    rich, poor = make_player(), make_player()
    give(rich, 1_000_000)
    table = create(rich, room="chieu-coi", stake=100).json()
    # a player below the room's minimum may not sit, though 15 × stake is within its means.
    r = poor.client.post(f"/api/v1/tables/{table['id']}/join", {}, format="json")
    body = assert_problem(r, 409, "room_requirements_not_met")
    assert body["missing"] == [{"requirement": "balance", "needed": 150_000, "have": WELCOME}]
    assert Seat.objects.filter(table_id=table["id"]).count() == 1


# --------------------------------------------------------------------------- the table list


def test_the_table_list_pages_by_cursor_in_a_link_header(make_player) -> None:
    # Given five open tables,
    owners = [make_player() for _ in range(5)]
    ids = [create(p).json()["id"] for p in owners]
    client = owners[0].client
    # when they are read two at a time, following the Link header,
    seen, url, pages = [], "/api/v1/tables?limit=2&page=7", 0
    while url:
        r = client.get(url)
        assert r.status_code == 200
        assert isinstance(r.json(), list)  # the shape of before: a JSON array
        seen += [t["id"] for t in r.json()]
        pages += 1
        link = r.get("Link")
        url = None
        if link:
            target, rel = link.split(";")
            assert rel.strip() == 'rel="next"'
            parsed = urlparse(target.strip()[1:-1])
            url = f"{parsed.path}?{parsed.query}"
            assert "limit=2" in parsed.query
    # then every table comes once, newest first, in three pages.
    assert seen == ids[::-1] and pages == 3
    # Without a limit the first page holds up to 100, as before.
    r = client.get("/api/v1/tables")
    assert [t["id"] for t in r.json()] == ids[::-1] and "Link" not in r
    # A malformed cursor is a 400 naming it.
    body = assert_problem(client.get("/api/v1/tables?cursor=abc"), 400, "invalid")
    assert list(body["errors"]) == ["cursor"]


def test_the_table_list_filters_by_status_room_stake_and_open_seats(
    players, start_hand, make_player
) -> None:
    playing = start_hand()["table"]
    extra = make_player()
    give(extra, 200_000)
    chieu = create(extra, room="chieu-coi", stake=500).json()["id"]

    def ids(query: str) -> list[int]:
        r = players[0].client.get(f"/api/v1/tables?{query}")
        assert r.status_code == 200, r.content
        return [t["id"] for t in r.json()]

    assert ids("status=playing") == [playing]
    assert ids("status=open") == [chieu]
    assert ids("room=chieu-coi&stake=500&open_seats=3") == [chieu]
    assert ids("room=chieu-coi&stake=10") == []
    assert ids("open_seats=1") == [chieu]
    assert_problem(players[0].client.get("/api/v1/tables?status=closed"), 400, "invalid")


# --------------------------------------------------------------------------- quick-join


def quick_join(player: Player, room: str = "nen-dat", **body: Any) -> Any:
    return player.client.post(f"/api/v1/rooms/{room}/quick-join", body, format="json")


def test_quick_join_takes_the_fullest_affordable_table(make_player) -> None:
    # Given an empty-ish table, a fuller one, one too dear and one that is full,
    a, b, c, d, e, f = (make_player() for _ in range(6))
    lonely = create(a, stake=10).json()["id"]
    fuller = create(b, stake=20).json()["id"]
    c.client.post(f"/api/v1/tables/{fuller}/join", {}, format="json")
    give(d, 10_000_000)
    create(d, stake=100_000)  # 15 × 100,000 is beyond a new player
    full = create(e, stake=10, max_seats=2).json()["id"]
    make_player().client.post(f"/api/v1/tables/{full}/join", {}, format="json")
    # when a new player quick-joins Nền đất,
    r = quick_join(f)
    # then it sits at the fuller affordable table;
    assert r.status_code == 200, r.content
    assert r.json()["id"] == fuller
    assert [s["user_id"] for s in r.json()["seats"]] == [b.id, c.id, f.id]
    # asking for a stake picks the table at that stake.
    g = make_player()
    r = quick_join(g, stake=10)
    assert r.status_code == 200 and r.json()["id"] == lonely


def test_quick_join_opens_a_table_when_none_fits(make_player) -> None:
    player = make_player()
    r = quick_join(player)
    assert r.status_code == 201, r.content
    table = r.json()
    assert r["Location"].endswith(f"/api/v1/tables/{table['id']}")
    assert (table["room"], table["stake"], table["name"]) == ("nen-dat", 100, "Nền đất")
    assert [s["user_id"] for s in table["seats"]] == [player.id]
    # A second quick-join by the same player does not sit it twice at that table.
    again = quick_join(player)
    assert again.status_code == 201 and again.json()["id"] != table["id"]
    rich = make_player()
    give(rich, 200_000)
    r = quick_join(rich, room="chieu-coi")
    assert r.status_code == 201 and r.json()["stake"] == 1_500
    r = quick_join(rich, room="chieu-coi", stake=7)
    assert r.status_code == 201 and r.json()["stake"] == 7


def test_quick_join_refuses_what_the_player_lacks_and_unknown_rooms(make_player) -> None:
    player = make_player()
    body = assert_problem(quick_join(player, room="chieu-coi"), 409, "room_requirements_not_met")
    assert body["missing"][0]["requirement"] == "balance"
    assert_problem(quick_join(player, room="no-such-room"), 404, "not_found")
    body = assert_problem(quick_join(player, stake=10_000), 409, "insufficient_balance")
    assert body["needed"] == 100_000
    assert_problem(quick_join(player, stake="10"), 400, "invalid")
    assert not Table.objects.filter(owner=player.user).exists()


@pytest.mark.django_db(transaction=True)
def test_two_quick_joins_for_the_last_seat_seat_one_and_open_a_table_for_the_other(
    make_player: Callable[..., Player],
) -> None:
    # Given a two-seat table with one free seat,
    owner = make_player()
    table = create(owner, stake=10, max_seats=2).json()["id"]
    racers = [make_player(), make_player()]
    clients = [client_with(p.token) for p in racers]
    # when two players quick-join at once,
    responses = at_once(
        2, lambda i: clients[i].post("/api/v1/rooms/nen-dat/quick-join", {}, format="json")
    )
    # then one took the seat and the other was given a table of its own.
    assert sorted(r.status_code for r in responses) == [200, 201], [r.content for r in responses]
    joined = next(r.json() for r in responses if r.status_code == 200)
    opened = next(r.json() for r in responses if r.status_code == 201)
    assert joined["id"] == table and len(joined["seats"]) == 2
    assert opened["id"] != table and len(opened["seats"]) == 1
    assert Seat.objects.filter(table_id=table).count() == 2


# --------------------------------------------------------------------------- the documented shapes


def test_the_lobby_and_history_responses_match_the_schema(players, win_hand, make_player) -> None:
    from rest_framework.test import APIClient

    from games.services.quan_booking import hand_settle
    from tests.games.test_games_hands_api import play_to_end
    from tests.games.test_games_schema import Checker

    check = Checker(APIClient().get("/api/schema/?format=json").json())
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    newcomer = make_player()
    rooms, quick = "/api/v1/rooms", "/api/v1/rooms/{slug}/quick-join"
    check(newcomer.client.get(rooms), rooms, "get")
    check(quick_join(newcomer), quick, "post")  # 201: opens a table
    check(quick_join(make_player()), quick, "post")  # 200: joins it
    problem = check(quick_join(newcomer, room="sap-gu-vip"), quick, "post")
    assert problem["code"] == "room_requirements_not_met" and len(problem["missing"]) == 4
    problem = check(create(newcomer, stake=10_000), "/api/v1/tables", "post")
    assert problem["code"] == "insufficient_balance"
    r = newcomer.client.get("/api/v1/tables?limit=1")
    check(r, "/api/v1/tables", "get")
    assert "Link" in r
    for p in players:
        check(p.client.get("/api/v1/me/hands"), "/api/v1/me/hands", "get")
        check(p.client.get("/api/v1/me"), "/api/v1/me", "get")
        name = p.user.username
        check(newcomer.client.get(f"/api/v1/players/{name}"), "/api/v1/players/{username}", "get")
        r = newcomer.client.get(f"/api/v1/players/{name}/hands?limit=1")
        check(r, "/api/v1/players/{username}/hands", "get")
    r = newcomer.client.get("/api/v1/players/nobody")
    check(r, "/api/v1/players/{username}", "get")
