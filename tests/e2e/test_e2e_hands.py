"""Register four players, open a table with a scripted deck, play whole hands over HTTP
(real sockets to a live server on the test database, as a third-party client would).

After every move each seat's view is compared with the rules core's own view of a local replay
of the same moves, and checked for hidden information (no other seat's hand, no stock order).
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from http_client import HttpClient

from games.hand_store import hand_store_problems
from games.models import Hand
from games.rules import HandConfig, apply, move_from_dict, new_hand, parse_deck
from games.rules.ruleset import build_ruleset
from games.rules.views import view_for
from tests.games.decks import HOA_DECK, HOA_MOVES, WIN_DECK, WIN_MOVES, WIN_SEAT, scripted_move

pytestmark = pytest.mark.django_db(transaction=True)
PASSWORD = "a-long-enough-Passw0rd!"


def register(base_url: str, name: str) -> HttpClient:
    client = HttpClient(base_url)
    r = client.post("/api/v1/auth/register", {"username": name, "password": PASSWORD})
    assert r.status_code == 201, r.content
    client.token = r.json()["token"]
    return client


def assert_hides_other_hands(view: dict[str, Any], seat: int) -> None:
    """Before the end a seat sees its own hand and public things only."""
    assert view["my_seat"] == seat
    assert "stock" not in view
    assert view["seed"] is None and view["result"] is None
    for other in view["seats"]:
        assert "hand" not in other and "dealt" not in other, other
    for move in view["legal_moves"]:
        assert move["seat"] == seat


def assert_events_hide_other_hands(client: HttpClient, hand_id: int, seat: int) -> list[dict]:
    r = client.get(f"/api/v1/hands/{hand_id}/events")
    assert r.status_code == 200, r.content
    events = r.json()["events"]
    deal = events[0]
    assert deal["seq"] == 0 and deal["type"] == "deal"
    (effect,) = deal["effects"]
    assert set(effect) == {"type", "dealer", "stock_count", "hand"}
    return events


def play_through_the_api(
    base_url: str, deck: list[str], expected_moves: int
) -> tuple[list[HttpClient], int]:
    # Given four registered players, a table with a fixed deck and the creator dealing,
    clients = [register(base_url, f"e2e_player_{i}") for i in range(4)]
    r = clients[0].post("/api/v1/tables", {"name": "e2e", "stake": 5, "deck": deck, "dealer": 0})
    assert r.status_code == 201, r.content
    table = r.json()
    assert table["seats"][0]["username"] == "e2e_player_0" and table["fixed_deck"] is True
    for client in clients[1:]:
        r = client.post(f"/api/v1/tables/{table['id']}/join", {})
        assert r.status_code == 200, r.content
    assert [s["number"] for s in r.json()["seats"]] == [0, 1, 2, 3]
    # when all four say ready, the last one deals the hand,
    hand_ids = []
    for client in clients:
        r = client.post(f"/api/v1/tables/{table['id']}/ready", {})
        assert r.status_code == 200, r.content
        hand_ids.append(r.json()["hand_id"])
    assert hand_ids[:3] == [None, None, None] and hand_ids[3] is not None
    hand_id = hand_ids[3]
    r = clients[1].get(f"/api/v1/tables/{table['id']}/hand")
    assert r.status_code == 302 and r["Location"] == f"/api/v1/hands/{hand_id}"

    # then every move, chosen from the turn seat's own legal moves, is accepted, and every
    # seat's view equals the rules core's view of the same moves, hiding the other hands.
    state = new_hand(HandConfig(4, ruleset=build_ruleset({})), parse_deck(deck), 0)
    seq = 0
    while True:
        views = []
        for seat, client in enumerate(clients):
            r = client.get(f"/api/v1/hands/{hand_id}")
            assert r.status_code == 200, r.content
            assert r["ETag"] == f'"{hand_id}-{seq}"'
            view = r.json()
            expected = view_for(state, seat)
            if view.get("settlement") is not None:  # the server adds the booked Quan
                assert set(view["settlement"]) - set(expected["settlement"]) == {"quan"}
                view["settlement"] = {k: view["settlement"][k] for k in expected["settlement"]}
            assert {k: view[k] for k in expected} == expected
            assert view["seq"] == seq
            if view["status"] == "playing":
                assert_hides_other_hands(view, seat)
            views.append(view)
        if views[0]["status"] == "ended":
            break
        turn = views[0]["turn_seat"]
        move = scripted_move(views[turn]["legal_moves"])
        r = clients[turn].post(f"/api/v1/hands/{hand_id}/moves", {**move, "expected_seq": seq})
        assert r.status_code == 201, r.content
        seq += 1
        state = apply(state, move_from_dict(move))
        assert r.json()["seq"] == seq
        assert r.json()["state"]["hand"] == view_for(state, turn)["hand"]
        if seq == 3:
            for seat, client in enumerate(clients):
                events = assert_events_hide_other_hands(client, hand_id, seat)
                assert [e["seq"] for e in events] == [0, 1, 2, 3]
    assert seq == expected_moves

    # Finally the seed is revealed and matches the hash published at the deal; the table is
    # open again and nobody is ready.
    final = views[0]
    assert hashlib.sha256(bytes.fromhex(final["seed"])).hexdigest() == final["seed_hash"]
    assert all("hand" in s for s in final["seats"])
    r = clients[0].get(f"/api/v1/tables/{table['id']}")
    assert r.json()["status"] == "open" and r.json()["current_hand_id"] is None
    assert not any(s["ready"] for s in r.json()["seats"])
    events = clients[2].get(f"/api/v1/hands/{hand_id}/events").json()["events"]
    assert len(events[0]["effects"][0]["hands"]) == 4
    assert [e["seq"] for e in events] == list(range(expected_moves + 1))
    # and the hand's cached state is the replay of its log.
    assert hand_store_problems(Hand.objects.get(pk=hand_id)) == []
    return clients, hand_id


@pytest.mark.slow
def test_a_fixed_deck_hand_played_to_a_win_through_the_api(live_server) -> None:
    clients, hand_id = play_through_the_api(live_server.url, WIN_DECK, WIN_MOVES)
    view = clients[0].get(f"/api/v1/hands/{hand_id}").json()
    assert view["result"]["outcome"] == {"result": "u", "seat": WIN_SEAT}
    assert view["result"]["win"]["source"] == "own_draw"
    assert view["result"]["win"]["card"] == "9V"


@pytest.mark.slow
def test_a_fixed_deck_hand_played_to_a_hoa_through_the_api(live_server) -> None:
    clients, hand_id = play_through_the_api(live_server.url, HOA_DECK, HOA_MOVES)
    view = clients[3].get(f"/api/v1/hands/{hand_id}").json()
    assert view["result"]["outcome"] == {"result": "hoa"}
    assert view["result"]["win"] is None
    assert view["stock_count"] == 1
