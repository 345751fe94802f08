"""The table endpoints over HTTP: create, list, join, leave, ready — and when hands are dealt."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.conf import settings
from django.utils import timezone

from accounts.ledger import balance_adjust
from accounts.models import ApiToken
from games.clock import clock_overdue
from games.models import Hand, Seat, Table
from games.services.tables import table_deal_if_due
from games.tasks import table_deal_due
from tests.games.decks import HOA_DECK, WIN_DECK, scripted_move

pytestmark = pytest.mark.django_db
PROBLEM = "application/problem+json"


def assert_problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == code
    return response.json()


@pytest.fixture(autouse=True)
def _rich_enough_for_chieu_coi(players) -> None:
    """Chiếu cói asks for 150,000 Quan (RULES.md §11): top the players up beyond the grant."""
    for p in players:
        balance_adjust(user=p.user, amount=200_000, reason="test", key=f"test:rich:{p.id}")


def create(player: Any, **body: Any) -> Any:
    return player.client.post("/api/v1/tables", {"stake": 10, **body}, format="json")


def join(player: Any, table_id: int, **body: Any) -> Any:
    return player.client.post(f"/api/v1/tables/{table_id}/join", body, format="json")


def ready(player: Any, table_id: int, **body: Any) -> Any:
    return player.client.post(f"/api/v1/tables/{table_id}/ready", body, format="json")


def play_to_end(players: list[Any], hand_id: int) -> dict[str, Any]:
    by_user = {p.id: p for p in players}
    for _ in range(300):
        any_view = None
        for p in players:
            r = p.client.get(f"/api/v1/hands/{hand_id}")
            if r.status_code == 200:
                any_view = r.json()
                break
        assert any_view is not None
        if any_view["status"] == "ended":
            return any_view
        turn = any_view["turn_seat"]
        player = by_user[any_view["players"][turn]["user_id"]]
        mine = player.client.get(f"/api/v1/hands/{hand_id}").json()
        move = scripted_move(mine["legal_moves"])
        r = player.client.post(f"/api/v1/hands/{hand_id}/moves", move, format="json")
        assert r.status_code == 201, r.content
    raise AssertionError("the hand did not end")


# --------------------------------------------------------------------------- create


def test_the_creator_sits_at_seat_0_of_a_table_with_defaults(players) -> None:
    r = create(players[0], name="Bàn 1")
    assert r.status_code == 201, r.content
    table = r.json()
    assert r["Location"] == f"/api/v1/tables/{table['id']}"
    assert table["name"] == "Bàn 1" and table["room"] == "nen-dat" and table["stake"] == 10
    assert table["max_seats"] == 4 and table["mode"] == "basic" and table["status"] == "open"
    assert table["ruleset"] == {"preset": "chan_van_van", "overrides": {}}
    assert table["timeouts"] == {"turn": 30, "tra_cua": 15, "declare": 60, "ready": 60}
    assert table["owner"] == {"id": players[0].id, "username": players[0].user.username}
    assert [(s["number"], s["user_id"]) for s in table["seats"]] == [(0, players[0].id)]
    assert table["open_seats"] == 3 and table["current_hand_id"] is None
    assert table["fixed_deck"] is False


def test_a_creator_may_ask_for_another_seat_and_options(players) -> None:
    r = create(
        players[0],
        seat=2,
        max_seats=3,
        mode="advanced",
        room="chieu-coi",
        ruleset={"preset": "vinagames", "overrides": {"ga_points": 3}},
        timeouts={"turn": 20, "ready": 90},
    )
    assert r.status_code == 201, r.content
    table = r.json()
    assert table["seats"][0]["number"] == 2
    assert table["ruleset"] == {"preset": "vinagames", "overrides": {"ga_points": 3}}
    assert table["timeouts"] == {"turn": 20, "tra_cua": 15, "declare": 60, "ready": 90}
    assert table["mode"] == "advanced" and table["max_seats"] == 3


def test_a_bad_ruleset_is_400_naming_the_key(players) -> None:
    r = create(players[0], ruleset={"preset": "chan_van_van", "overrides": {"ga_points": -4}})
    body = assert_problem(r, 400, "invalid_ruleset")
    assert list(body["errors"]) == ["ruleset.overrides.ga_points"]
    body = assert_problem(create(players[0], ruleset={"preset": "nope"}), 400, "invalid_ruleset")
    assert list(body["errors"]) == ["ruleset.preset"]
    assert_problem(create(players[0], ruleset="chan_van_van"), 400, "invalid_ruleset")
    assert not Table.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"stake": 0},
        {"stake": -5},
        {"stake": "10"},
        {"stake": 1.5},
        {"stake": True},
        {"stake": 10**20},
        {"max_seats": 5},
        {"max_seats": 1},
        {"mode": "expert"},
        {"seat": 4},
        {"seat": 3, "max_seats": 2},
        {"name": 7},
        {"name": "x" * 65},
        {"room": "has space"},
        {"timeouts": {"turn": 0}},
        {"timeouts": {"turn": "30"}},
        {"timeouts": {"lunch": 30}},
        {"colour": "red"},
    ],
)
def test_bad_table_options_are_400(players, body) -> None:
    r = players[0].client.post("/api/v1/tables", {"stake": 10, **body}, format="json")
    assert r.status_code == 400, r.content
    assert r["Content-Type"] == PROBLEM
    assert not Table.objects.exists()


@pytest.mark.parametrize(
    "deck",
    [WIN_DECK, WIN_DECK[:99], ["XX"] * 100, [], None, "2V" * 50, [7] * 100, {"a": 1}],
    ids=["valid", "short", "unknown-cards", "empty", "null", "string", "numbers", "object"],
)
def test_a_production_table_refuses_any_deck_as_not_allowed(players, settings, deck) -> None:
    # Given a production server (no fixed decks), whatever deck a client sends, with or
    # without a dealer, is fixed_deck_not_allowed, not a validation error of the deck itself
    settings.CHAN_ALLOW_FIXED_DECK = False
    for extra in ({}, {"dealer": 0}, {"dealer": 9}):
        assert_problem(create(players[0], deck=deck, **extra), 400, "fixed_deck_not_allowed")
    assert not Table.objects.exists()


def test_a_fixed_deck_is_refused_unless_the_setting_allows_it(players, settings) -> None:
    settings.CHAN_ALLOW_FIXED_DECK = False
    assert_problem(create(players[0], deck=WIN_DECK, dealer=0), 400, "fixed_deck_not_allowed")
    assert_problem(create(players[0], dealer=1), 400, "fixed_deck_not_allowed")
    settings.CHAN_ALLOW_FIXED_DECK = True
    r = create(players[0], deck=WIN_DECK, dealer=0)
    assert r.status_code == 201 and r.json()["fixed_deck"] is True


@pytest.mark.parametrize(
    ("deck", "code"),
    [
        (["XX"] + WIN_DECK[1:], "unknown_card"),
        (["2V"] + WIN_DECK[1:], "invalid_deck"),
        (WIN_DECK[:99], "invalid"),
        (WIN_DECK + ["2V"], "invalid"),
        ("2V 2V", "invalid"),
    ],
)
def test_a_bad_fixed_deck_is_400(players, deck, code) -> None:
    assert_problem(create(players[0], deck=deck, dealer=0), 400, code)


def test_a_fixed_dealer_needs_a_deck_and_a_seat_of_the_table(players) -> None:
    assert_problem(create(players[0], dealer=0), 400, "invalid")
    assert_problem(create(players[0], deck=WIN_DECK, dealer=3, max_seats=2), 400, "invalid")


def test_an_unauthenticated_client_gets_401(api_client) -> None:
    r = api_client.get("/api/v1/tables")
    assert r.status_code == 401 and r["Content-Type"] == PROBLEM


# --------------------------------------------------------------------------- list


def test_tables_are_listed_and_filtered(players) -> None:
    a = create(players[0], room="nen-dat", stake=10).json()
    b = create(players[1], room="chieu-coi", stake=100, max_seats=2).json()
    join(players[2], b["id"])
    c = create(players[3], room="chieu-coi", stake=10).json()
    client = players[0].client
    ids = [t["id"] for t in client.get("/api/v1/tables").json()]
    assert ids == [c["id"], b["id"], a["id"]]
    ids = [t["id"] for t in client.get("/api/v1/tables?room=chieu-coi").json()]
    assert ids == [c["id"], b["id"]]
    ids = [t["id"] for t in client.get("/api/v1/tables?stake=10").json()]
    assert ids == [c["id"], a["id"]]
    ids = [t["id"] for t in client.get("/api/v1/tables?open_seats=1").json()]
    assert ids == [c["id"], a["id"]]
    ids = [t["id"] for t in client.get("/api/v1/tables?open_seats=3&room=chieu-coi").json()]
    assert ids == [c["id"]]
    r = client.get("/api/v1/tables?stake=abc")
    assert_problem(r, 400, "invalid")


def test_an_unknown_table_is_404(players) -> None:
    assert_problem(players[0].client.get("/api/v1/tables/424242"), 404, "not_found")
    assert_problem(join(players[0], 424242), 404, "not_found")


# --------------------------------------------------------------------------- join / leave


def test_joining_takes_the_lowest_free_seat_or_the_one_asked(players) -> None:
    table = create(players[0], seat=1).json()
    assert join(players[1], table["id"]).json()["seats"][0]["number"] == 0
    r = join(players[2], table["id"], seat=3, auto_chiu=False)
    seats = {s["number"]: s for s in r.json()["seats"]}
    assert seats[3]["user_id"] == players[2].id and seats[3]["auto_chiu"] is False
    assert_problem(join(players[3], table["id"], seat=3), 409, "seat_taken")
    assert_problem(join(players[2], table["id"]), 409, "already_seated")
    assert_problem(join(players[3], table["id"], seat=7), 400, "invalid")
    r = join(players[3], table["id"])
    assert {s["number"] for s in r.json()["seats"]} == {0, 1, 2, 3}


def test_a_full_table_refuses_another_player(players, make_player) -> None:
    table = create(players[0], max_seats=2).json()
    join(players[1], table["id"])
    assert_problem(join(players[2], table["id"]), 409, "table_full")
    assert_problem(join(players[2], table["id"], seat=2), 400, "invalid_seat")


def test_leaving_between_hands_frees_the_seat(players) -> None:
    table = create(players[0]).json()
    join(players[1], table["id"])
    r = players[1].client.post(f"/api/v1/tables/{table['id']}/leave")
    assert r.status_code == 200 and [s["number"] for s in r.json()["seats"]] == [0]
    r = players[1].client.post(f"/api/v1/tables/{table['id']}/leave")
    assert_problem(r, 409, "not_seated")


def test_leaving_mid_hand_marks_the_seat_until_the_hand_ends(players, start_hand) -> None:
    ids = start_hand(HOA_DECK)
    r = players[2].client.post(f"/api/v1/tables/{ids['table']}/leave")
    seats = {s["number"]: s for s in r.json()["seats"]}
    assert seats[2]["leaving"] is True and len(seats) == 4
    # The leaver is still a participant until the end; then its seat is freed.
    assert players[2].client.get(f"/api/v1/hands/{ids['hand']}").status_code == 200
    assert_problem(ready(players[2], ids["table"]), 409, "seat_leaving")
    play_to_end(players, ids["hand"])
    seats = players[0].client.get(f"/api/v1/tables/{ids['table']}").json()["seats"]
    assert [s["number"] for s in seats] == [0, 1, 3]


# --------------------------------------------------------------------------- ready / deal


def test_a_hand_is_dealt_when_two_seated_players_are_all_ready(players) -> None:
    table = create(players[0]).json()
    r = ready(players[0], table["id"])
    assert r.status_code == 200 and r.json()["hand_id"] is None  # alone at the table
    join(players[1], table["id"], seat=2)
    r = ready(players[1], table["id"])
    hand_id = r.json()["hand_id"]
    assert hand_id is not None
    assert r.json()["table"]["status"] == "playing"
    assert r.json()["table"]["current_hand_id"] == hand_id
    hand = Hand.objects.get(pk=hand_id)
    # seats are compacted to 0..n-1 in seat-number order
    assert hand.n_seats == 2
    assert [(s.user_id, s.table_seat) for s in hand.seat_list()] == [
        (players[0].id, 0),
        (players[1].id, 2),
    ]
    assert hand.seed_hash == hashlib.sha256(bytes.fromhex(hand.seed)).hexdigest()
    view = players[1].client.get(f"/api/v1/hands/{hand_id}").json()
    assert view["my_seat"] == 1 and view["n_seats"] == 2 and view["stock_count"] == 61
    assert view["seed"] is None and hand.seed not in json.dumps(view)
    assert view["seed_hash"] == hand.seed_hash
    # A player joining now waits for the next hand; nobody may say ready mid-hand.
    join(players[2], table["id"])
    assert_problem(ready(players[2], table["id"]), 409, "hand_in_progress")


def test_not_ready_does_not_deal(players) -> None:
    table = create(players[0]).json()
    join(players[1], table["id"])
    ready(players[0], table["id"])
    r = ready(players[1], table["id"], ready=False)
    assert r.json()["hand_id"] is None
    assert_problem(ready(players[2], table["id"]), 409, "not_seated")
    assert_problem(ready(players[1], table["id"], ready="yes"), 400, "invalid")


def test_the_winner_deals_the_next_hand(players, start_hand) -> None:
    ids = start_hand(WIN_DECK)
    end = play_to_end(players, ids["hand"])
    assert end["result"]["outcome"] == {"result": "u", "seat": 2}
    hand_id = None
    for p in players:
        hand_id = ready(p, ids["table"]).json()["hand_id"] or hand_id
    second = Hand.objects.get(pk=hand_id)
    assert second.number == 2 and second.dealer == 2 and second.previous_winner == 2


def test_after_a_hoa_the_seat_after_the_dealer_deals(players, start_hand) -> None:
    ids = start_hand(HOA_DECK)
    play_to_end(players, ids["hand"])
    hand_id = None
    for p in players:
        hand_id = ready(p, ids["table"]).json()["hand_id"] or hand_id
    second = Hand.objects.get(pk=hand_id)
    assert second.dealer == 1 and second.previous_winner is None


def test_after_a_hoa_a_departed_next_dealer_is_skipped(players, start_hand) -> None:
    ids = start_hand(HOA_DECK)
    players[1].client.post(f"/api/v1/tables/{ids['table']}/leave")
    play_to_end(players, ids["hand"])
    assert not Seat.objects.filter(table_id=ids["table"], player=players[1].user).exists()
    hand_id = None
    for p in (players[0], players[2], players[3]):
        hand_id = ready(p, ids["table"]).json()["hand_id"] or hand_id
    second = Hand.objects.get(pk=hand_id)
    assert second.n_seats == 3
    assert second.seat_list()[second.dealer].table_seat == 2


# --------------------------------------------------------------------------- the ready clock


def seat_three(players: list[Any], **options: Any) -> int:
    """players[0..2] at a new table; players[0] and [1] ready, players[2] not."""
    table_id = create(players[0], **options).json()["id"]
    join(players[1], table_id)
    join(players[2], table_id)
    assert ready(players[0], table_id).json()["hand_id"] is None
    r = ready(players[1], table_id)
    assert r.json()["hand_id"] is None  # players[2] is not ready yet
    return table_id


def test_two_ready_of_three_wait_for_the_ready_deadline(players) -> None:
    # Given three seated players, two of them ready,
    table_id = seat_three(players, timeouts={"ready": 30})
    # the table shows when the ready ones will be dealt without the third,
    summary = players[2].client.get(f"/api/v1/tables/{table_id}").json()
    first = Seat.objects.get(table_id=table_id, player_id=players[0].id).ready_at
    assert datetime.fromisoformat(summary["ready_deadline"]) == first + timedelta(seconds=30)
    # and before that deadline the clock deals nothing.
    assert table_deal_if_due(table_id=table_id) is None
    assert Table.objects.get(pk=table_id).status == "open"


def test_at_the_ready_deadline_the_ready_players_are_dealt_and_the_others_unseated(
    players,
) -> None:
    table_id = seat_three(players, timeouts={"ready": 30})
    # Given the deadline has passed (both said ready a minute ago, all sat down before that),
    minute_ago = timezone.now() - timedelta(seconds=60)
    Seat.objects.filter(table_id=table_id).update(created_at=minute_ago - timedelta(seconds=5))
    Seat.objects.filter(table_id=table_id, ready=True).update(ready_at=minute_ago)
    # when the ready clock fires (twice: the task is safe to repeat),
    hand = table_deal_if_due(table_id=table_id)
    assert table_deal_if_due(table_id=table_id) is None
    # the two ready players are dealt a two-seat hand; the third is unseated (RULES.md §12).
    assert hand is not None and hand.n_seats == 2
    assert [s.user_id for s in hand.seat_list()] == [players[0].id, players[1].id]
    assert players[2].client.get(f"/api/v1/hands/{hand.pk}").json()["spectator"] is True
    summary = players[2].client.get(f"/api/v1/tables/{table_id}").json()
    assert summary["current_hand_id"] == hand.pk and summary["ready_deadline"] is None
    assert [s["user_id"] for s in summary["seats"]] == [players[0].id, players[1].id]


def test_when_the_player_not_ready_leaves_the_ready_ones_are_dealt_at_once(players) -> None:
    table_id = seat_three(players, timeouts={"ready": 600})
    r = players[2].client.post(f"/api/v1/tables/{table_id}/leave", {}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["status"] == "playing"
    hand = Hand.objects.get(table_id=table_id)
    assert [s.user_id for s in hand.seat_list()] == [players[0].id, players[1].id]


def test_saying_not_ready_clears_the_ready_time_and_the_deadline(players) -> None:
    table_id = seat_three(players)
    ready(players[1], table_id, ready=False)
    ready(players[0], table_id, ready=False)
    seat = Seat.objects.get(table_id=table_id, player_id=players[1].id)
    assert (seat.ready, seat.ready_at) == (False, None)
    assert players[0].client.get(f"/api/v1/tables/{table_id}").json()["ready_deadline"] is None


def test_an_idle_player_is_unseated_at_the_ready_deadline_even_without_a_hand(players) -> None:
    # Given a two-seat table where only one player said ready, long ago,
    table_id = create(players[0], max_seats=2, timeouts={"ready": 30}).json()["id"]
    join(players[1], table_id)
    ready(players[0], table_id)
    minute_ago = timezone.now() - timedelta(seconds=60)
    Seat.objects.filter(table_id=table_id).update(created_at=minute_ago)
    Seat.objects.filter(table_id=table_id, ready=True).update(ready_at=minute_ago)
    # when the ready clock fires, the idle player is unseated and nobody is dealt.
    assert table_deal_if_due(table_id=table_id) is None
    summary = players[0].client.get(f"/api/v1/tables/{table_id}").json()
    assert [s["user_id"] for s in summary["seats"]] == [players[0].id]
    assert summary["status"] == "open" and summary["ready_deadline"] is None
    # and both players' feeds say why: it was not ready in time
    for reader in players[:2]:
        feed = reader.client.get("/api/v1/me/feed").json()["entries"]
        left = [e["data"] for e in feed if e["kind"] == "seats_changed"][-1]
        assert (left["change"], left["user_id"], left["reason"]) == ("left", players[1].id, "idle")


def gone_quiet(player: Any, table_id: int) -> None:
    """As if the player had said ready and done nothing since, a minute past the ready's
    expiry: neither its seat nor its token has moved."""
    since = timezone.now() - timedelta(seconds=settings.CHAN_READY_EXPIRY_SECONDS + 60)
    Seat.objects.filter(table_id=table_id, player=player.user).update(
        ready_at=since, updated_at=since, created_at=since
    )
    ApiToken.objects.filter(user=player.user).update(last_used_at=since)


def last_left(player: Any) -> dict[str, Any]:
    """The last ``seats_changed`` of a player leaving in ``player``'s feed."""
    feed = player.client.get("/api/v1/me/feed").json()["entries"]
    changes = [e["data"] for e in feed if e["kind"] == "seats_changed"]
    return [c for c in changes if c["change"] == "left"][-1]


def test_a_ready_player_gone_quiet_is_stood_up_by_the_clock_and_its_table_closes(players) -> None:
    # Given a player alone at its table who said ready and then did nothing,
    table_id = create(players[0], max_seats=2).json()["id"]
    assert ready(players[0], table_id).json()["hand_id"] is None
    gone_quiet(players[0], table_id)
    # when the clock comes (the sweep finds the table; the task stands the player up),
    assert table_id in clock_overdue(now=timezone.now())[1]
    assert table_deal_due(table_id) is None
    # then it is stood up as idle, and its table, deserted, closes
    assert not Seat.objects.filter(table_id=table_id).exists()
    assert Table.objects.get(pk=table_id).status == "closed"
    left = last_left(players[0])
    assert (left["change"], left["user_id"], left["reason"]) == ("left", players[0].id, "idle")
    # and a player quick-joining is never seated with it: it gets a table of its own
    r = players[1].client.post("/api/v1/rooms/nen-dat/quick-join", {"stake": 10}, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["id"] != table_id
    assert table_id not in clock_overdue(now=timezone.now())[1]


def test_a_ready_player_gone_quiet_is_not_dealt_in_with_a_newcomer(players) -> None:
    # Given a player who said ready and went quiet, and a player (a bot program) joining it
    table_id = create(players[0], max_seats=2).json()["id"]
    ready(players[0], table_id)
    gone_quiet(players[0], table_id)
    r = players[1].client.post("/api/v1/rooms/nen-dat/quick-join", {"stake": 10}, format="json")
    assert r.status_code == 200 and r.json()["id"] == table_id
    # when the newcomer says ready, nobody is dealt: the quiet player's ready had lapsed
    assert ready(players[1], table_id).json()["hand_id"] is None
    assert not Hand.objects.filter(table_id=table_id).exists()
    seated = Seat.objects.filter(table_id=table_id).values_list("player_id", flat=True)
    assert list(seated) == [players[1].id]
    # and the newcomer's feed says who stood up, and why
    left = last_left(players[1])
    assert (left["change"], left["user_id"], left["reason"]) == ("left", players[0].id, "idle")


def test_a_ready_player_still_there_keeps_its_seat_and_is_dealt(players) -> None:
    # Given a player whose ready is as old, but who still follows its table (a request),
    table_id = create(players[0], max_seats=2).json()["id"]
    ready(players[0], table_id)
    gone_quiet(players[0], table_id)
    assert players[0].client.get(f"/api/v1/tables/{table_id}").status_code == 200
    # when the clock comes, it keeps its seat and its ready
    assert table_id not in clock_overdue(now=timezone.now())[1]
    assert table_deal_due(table_id) is None
    assert Seat.objects.get(table_id=table_id, player=players[0].user).ready
    # and a newcomer's ready deals the hand to both
    join(players[1], table_id)
    hand_id = ready(players[1], table_id).json()["hand_id"]
    hand = Hand.objects.get(pk=hand_id)
    assert [s.user_id for s in hand.seat_list()] == [players[0].id, players[1].id]


def test_saying_ready_again_keeps_a_ready_from_lapsing(players) -> None:
    table_id = create(players[0], max_seats=2).json()["id"]
    ready(players[0], table_id)
    gone_quiet(players[0], table_id)
    assert ready(players[0], table_id).status_code == 200  # (its token is used: moved back)
    ApiToken.objects.filter(user=players[0].user).update(last_used_at=None)
    assert table_deal_due(table_id) is None
    assert Seat.objects.get(table_id=table_id, player=players[0].user).ready


def test_the_ready_clock_ignores_a_table_that_is_gone_or_playing(players, start_hand) -> None:
    assert table_deal_if_due(table_id=10**9) is None
    hand = start_hand(WIN_DECK)
    assert table_deal_if_due(table_id=hand["table"]) is None


def test_the_last_player_leaving_closes_the_table(players) -> None:
    # Given a table whose two players stand up between hands,
    table_id = create(players[0], room="chieu-coi").json()["id"]
    join(players[1], table_id)
    leave = f"/api/v1/tables/{table_id}/leave"
    assert players[1].client.post(leave, {}, format="json").json()["status"] == "open"
    # the last one to leave closes it: it is no longer listed, and nobody can join it.
    r = players[0].client.post(leave, {}, format="json")
    assert r.status_code == 200 and r.json()["status"] == "closed"
    listed = players[2].client.get("/api/v1/tables?room=chieu-coi").json()
    assert listed == []
    assert_problem(join(players[2], table_id), 409, "table_closed")


def test_a_hands_money_terms_are_frozen_at_the_deal(players, start_hand) -> None:
    # Given a hand dealt at stake 10 in the default room,
    ids = start_hand(HOA_DECK)
    # when the table's stake changes afterwards (an admin, between hands),
    Table.objects.filter(pk=ids["table"]).update(stake=500, room_id="chieu-coi")
    # the hand keeps the terms it was dealt with, and shows them.
    hand = Hand.objects.get(pk=ids["hand"])
    assert (hand.stake, hand.room_id, hand.mode) == (10, "nen-dat", "basic")
    view = players[0].client.get(f"/api/v1/hands/{hand.pk}").json()
    assert (view["stake"], view["room"]) == (10, "nen-dat")
    listed = players[0].client.get(f"/api/v1/tables/{ids['table']}/hands").json()
    assert [(h["id"], h["stake"], h["status"]) for h in listed] == [(hand.pk, 10, "playing")]


def test_every_timestamp_of_the_api_is_utc(players) -> None:
    table = create(players[0], timeouts={"ready": 600}).json()
    join(players[1], table["id"])
    body = ready(players[0], table["id"]).json()["table"]
    assert body["ready_deadline"].endswith("Z") and body["created_at"].endswith("Z")
    assert players[0].client.get("/api/v1/auth/check").json()["now"].endswith("Z")
    tokens = players[0].client.get("/api/v1/auth/tokens").json()
    assert all(t["created_at"].endswith("Z") for t in tokens)


def test_a_newcomer_gets_its_own_ready_timeout_before_it_can_be_unseated(players) -> None:
    # Given two players ready for a minute and a third who sat down just now,
    table_id = seat_three(players, timeouts={"ready": 30})
    minute_ago = timezone.now() - timedelta(seconds=60)
    Seat.objects.filter(table_id=table_id, ready=True).update(
        ready_at=minute_ago, created_at=minute_ago
    )
    # when the ready deadline fires, the ready ones are dealt and the newcomer sits it out,
    hand = table_deal_if_due(table_id=table_id)
    assert hand is not None and [s.user_id for s in hand.seat_list()] == [
        players[0].id,
        players[1].id,
    ]
    assert Seat.objects.filter(table_id=table_id, player=players[2].user).exists()


def test_everyone_leaving_mid_hand_closes_the_table_at_the_end(players, start_hand) -> None:
    ids = start_hand(HOA_DECK)
    for p in players:
        r = p.client.post(f"/api/v1/tables/{ids['table']}/leave", {}, format="json")
        assert r.status_code == 200
    play_to_end(players, ids["hand"])
    assert Table.objects.get(pk=ids["table"]).status == "closed"
    listed = players[0].client.get("/api/v1/tables?open_seats=1").json()
    assert ids["table"] not in [t["id"] for t in listed]


def test_a_view_shows_a_player_who_left_after_its_seats_were_remembered(players, start_hand):
    # Given a hand whose seats this process already remembers (a view was served),
    ids = start_hand(HOA_DECK)
    url = f"/api/v1/hands/{ids['hand']}"
    assert not any(p["left"] for p in players[0].client.get(url).json()["players"])
    # when a player leaves mid-hand, the next view shows it.
    players[2].client.post(f"/api/v1/tables/{ids['table']}/leave", {}, format="json")
    left = [p["user_id"] for p in players[0].client.get(url).json()["players"] if p["left"]]
    assert left == [players[2].id]


def test_an_empty_ready_body_says_ready_and_open_seats_counts_the_free_seats(players) -> None:
    # docs/api.md: `{}` is `{"ready": true}`; open_seats = max_seats − the players seated
    table = create(players[0], max_seats=4).json()
    assert table["open_seats"] == 3
    join(players[1], table["id"])
    r = ready(players[0], table["id"])  # the body is {}
    assert r.status_code == 200
    seats = {s["user_id"]: s["ready"] for s in r.json()["table"]["seats"]}
    assert seats == {players[0].id: True, players[1].id: False}
    assert r.json()["table"]["open_seats"] == 2
    listed = players[2].client.get("/api/v1/tables", {"open_seats": 2}).json()
    assert [t["id"] for t in listed] == [table["id"]]
    assert players[2].client.get("/api/v1/tables", {"open_seats": 3}).json() == []
