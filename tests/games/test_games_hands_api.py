"""The hand endpoints over HTTP: moves and their errors, idempotency, ETags, polling, replay."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from games.models import Hand, HandEvent
from games.rules import HandConfig, apply, move_from_dict, new_hand, parse_deck
from games.rules.ruleset import build_ruleset
from games.rules.views import full_view
from games.services.quan_booking import hand_settle
from tests.games.decks import BO_U_DECK, WIN_DECK, WIN_MOVES, WIN_SEAT, scripted_move

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"
# WIN_DECK, dealer 0: the dealer holds 2N but no 2V; its scripted first move discards 2N.
DEALER_CARD, NOT_HELD = "2N", "2V"


def moves_url(hand: dict[str, Any]) -> str:
    return f"/api/v1/hands/{hand['hand']}/moves"


def post_move(player: Any, hand: dict[str, Any], body: Any, **headers: str) -> Any:
    return player.client.post(moves_url(hand), body, format="json", **headers)


def assert_problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["code"] == code and body["status"] == status and body["detail"]
    return body


def play(players: list[Any], hand: dict[str, Any], n: int) -> None:
    """Play ``n`` scripted moves."""
    for _ in range(n):
        view = players[0].client.get(f"/api/v1/hands/{hand['hand']}").json()
        turn = view["turn_seat"]
        mine = players[turn].client.get(f"/api/v1/hands/{hand['hand']}").json()
        r = post_move(players[turn], hand, scripted_move(mine["legal_moves"]))
        assert r.status_code == 201, r.content


def play_to_end(players: list[Any], hand: dict[str, Any]) -> None:
    for _ in range(200):
        view = players[0].client.get(f"/api/v1/hands/{hand['hand']}").json()
        if view["status"] == "ended":
            return
        play(players, hand, 1)
    raise AssertionError("the hand did not end")


def event_count(hand: dict[str, Any]) -> int:
    return HandEvent.objects.filter(hand_id=hand["hand"]).count()


# --------------------------------------------------------------------------- moves


def test_a_legal_move_answers_201_with_the_new_seq_and_my_view(players, win_hand) -> None:
    r = post_move(players[0], win_hand, {"type": "discard", "card": DEALER_CARD})
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["seq"] == 1
    assert body["state"]["seq"] == 1 and body["state"]["my_seat"] == 0
    assert body["state"]["doors"][0] == [DEALER_CARD]
    assert body["state"]["turn_seat"] == 1


def test_a_move_out_of_turn_is_409_not_your_turn(players, win_hand) -> None:
    body = assert_problem(post_move(players[1], win_hand, {"type": "draw"}), 409, "not_your_turn")
    assert body["seq"] == 0
    assert event_count(win_hand) == 1


def test_a_move_of_the_wrong_phase_is_409(players, win_hand) -> None:
    assert_problem(post_move(players[0], win_hand, {"type": "draw"}), 409, "wrong_phase")


def test_a_non_participant_gets_403_everywhere_without_spectators(
    make_player, win_hand, no_spectators
) -> None:
    outsider = make_player()
    hand_id = win_hand["hand"]
    assert_problem(
        post_move(outsider, win_hand, {"type": "discard", "card": DEALER_CARD}),
        403,
        "not_a_participant",
    )
    for url in (f"/api/v1/hands/{hand_id}", f"/api/v1/hands/{hand_id}/events"):
        assert_problem(outsider.client.get(url), 403, "not_a_participant")
    assert_problem(outsider.client.get(f"/api/v1/hands/{hand_id}/replay"), 403, "not_a_participant")


def test_moving_for_another_seat_is_403_not_your_seat(players, win_hand) -> None:
    body = {"type": "draw", "seat": 0}
    assert assert_problem(post_move(players[1], win_hand, body), 403, "not_your_seat")["seq"] == 0
    body = {"type": "discard", "card": DEALER_CARD, "seat": 1}
    refused = assert_problem(post_move(players[0], win_hand, body), 403, "not_your_seat")
    assert refused["seq"] == 0  # every refused move carries the hand's seq
    # naming one's own seat is fine
    body = {"type": "discard", "card": DEALER_CARD, "seat": 0}
    assert post_move(players[0], win_hand, body).status_code == 201


def test_an_unknown_card_is_400(players, win_hand) -> None:
    r = post_move(players[0], win_hand, {"type": "discard", "card": "XX"})
    assert_problem(r, 400, "unknown_card")


def test_a_card_not_in_hand_is_422(players, win_hand) -> None:
    r = post_move(players[0], win_hand, {"type": "discard", "card": NOT_HELD})
    assert_problem(r, 422, "card_not_in_hand")


def test_a_false_u_by_the_dealer_is_refused_with_the_fault_u_lao_in_basic_mode(
    players, win_hand
) -> None:
    # Given the dealer at its start, whose 20 cards do not win …
    # … when it claims ù, basic mode refuses the fault by its slug (RULES.md §9) …
    problem = assert_problem(post_move(players[0], win_hand, {"type": "u"}), 422, "u_lao")
    assert problem["seq"] == 0 and event_count(win_hand) == 1
    view = players[0].client.get(f"/api/v1/hands/{win_hand['hand']}").json()
    assert view["status"] == "playing" and view["phase"] == "dealer_start" and not view["my_faults"]
    # … and the hand goes on.
    assert (
        post_move(players[0], win_hand, {"type": "discard", "card": DEALER_CARD}).status_code == 201
    )


def test_a_false_u_after_a_draw_is_refused_with_the_fault_u_lao_in_basic_mode(
    players, win_hand
) -> None:
    assert (
        post_move(players[0], win_hand, {"type": "discard", "card": DEALER_CARD}).status_code == 201
    )
    assert post_move(players[1], win_hand, {"type": "draw"}).status_code == 201
    problem = assert_problem(post_move(players[1], win_hand, {"type": "u"}), 422, "u_lao")
    assert problem["seq"] == 2 and event_count(win_hand) == 3
    view = players[1].client.get(f"/api/v1/hands/{win_hand['hand']}").json()
    assert view["phase"] == "after_draw" and view["turn_seat"] == 1 and not view["seats"][1]["bao"]
    assert post_move(players[1], win_hand, {"type": "pass"}).status_code == 201


def test_a_false_u_in_advanced_mode_is_u_lao_and_ends_the_hand(players, start_hand) -> None:
    # Advanced mode does not refuse faults (RULES.md §9): the claim is ù láo, the claimer pays 17.
    hand = start_hand(WIN_DECK, mode="advanced")
    r = post_move(players[0], hand, {"type": "u"})
    assert r.status_code == 201, r.content
    view = players[0].client.get(f"/api/v1/hands/{hand['hand']}").json()
    assert view["status"] == "ended" and view["outcome"] == {"result": "u_lao", "seat": 0}
    assert [f["slug"] for f in view["seats"][0]["faults"]] == ["u_lao"]


def test_a_stale_expected_seq_is_409_with_the_current_seq(players, win_hand) -> None:
    body = {"type": "discard", "card": DEALER_CARD, "expected_seq": 3}
    problem = assert_problem(post_move(players[0], win_hand, body), 409, "stale_seq")
    assert problem["seq"] == 0
    body["expected_seq"] = 0
    assert post_move(players[0], win_hand, body).status_code == 201


def test_an_unknown_move_type_is_400(players, win_hand) -> None:
    r = post_move(players[0], win_hand, {"type": "teleport"})
    assert_problem(r, 400, "unknown_move_type")


def test_malformed_json_is_400_parse_error(players, win_hand) -> None:
    r = players[0].client.post(
        moves_url(win_hand), data=b'{"type": "discard", ', content_type="application/json"
    )
    assert_problem(r, 400, "parse_error")


def test_json_nested_too_deep_is_400_not_500(players, win_hand) -> None:
    body = b"[" * 30_000 + b"]" * 30_000  # under the size limit
    r = players[0].client.post(moves_url(win_hand), data=body, content_type="application/json")
    assert_problem(r, 400, "parse_error")


def test_a_huge_body_is_413_problem_json(players, win_hand) -> None:
    body = json.dumps({"type": "discard", "card": "2N", "pad": "x" * 200_000})
    r = players[0].client.post(moves_url(win_hand), data=body, content_type="application/json")
    assert_problem(r, 413, "body_too_large")


def test_a_body_that_is_not_json_is_415(players, win_hand) -> None:
    r = players[0].client.post(moves_url(win_hand), data="type=draw", content_type="text/plain")
    assert_problem(r, 415, "unsupported_media_type")


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ([{"type": "draw"}], "invalid_move"),
        ("draw", "invalid_move"),
        (None, "invalid_move"),
        (42, "invalid_move"),
        ({}, "unknown_move_type"),
        ({"type": 5}, "unknown_move_type"),
        ({"type": ["discard"]}, "unknown_move_type"),
        ({"type": "discard"}, "invalid_move"),
        ({"type": "discard", "card": 7}, "unknown_card"),
        ({"type": "discard", "card": None}, "unknown_card"),
        ({"type": "discard", "card": ["2N"]}, "unknown_card"),
        ({"type": "discard", "card": "2N", "extra": 1}, "invalid_move"),
        ({"type": "discard", "card": "2N", "system": True}, "invalid_move"),
        ({"type": "discard", "card": "2N", "seat": "0"}, "invalid_move"),
        ({"type": "discard", "card": "2N", "seat": True}, "invalid_move"),
        ({"type": "discard", "card": "2N", "expected_seq": "0"}, "invalid"),
        ({"type": "discard", "card": "2N", "expected_seq": True}, "invalid"),
        ({"type": "discard", "card": "2N", "expected_seq": -1}, "invalid"),
        ({"type": "discard", "card": "2N", "expected_seq": 1.5}, "invalid"),
        ({"type": "discard", "card": "2N", "expected_seq": 10**30}, "invalid"),
        ({"type": "declare", "cuoc": "chi"}, "invalid_move"),
        ({"type": "set_prefs", "auto_u": "yes"}, "invalid_move"),
    ],
)
def test_wrong_types_are_400_and_append_nothing(players, win_hand, body, code) -> None:
    r = players[0].client.post(
        moves_url(win_hand), data=json.dumps(body), content_type="application/json"
    )
    assert_problem(r, 400, code)
    assert event_count(win_hand) == 1


def test_errors_speak_vietnamese_when_asked(players, win_hand) -> None:
    r = post_move(players[1], win_hand, {"type": "draw"}, HTTP_ACCEPT_LANGUAGE="vi")
    assert assert_problem(r, 409, "not_your_turn")["detail"] == "Chưa đến lượt bạn."


def test_an_unknown_hand_is_404_and_an_absurd_id_too(players) -> None:
    assert_problem(players[0].client.get("/api/v1/hands/999999"), 404, "not_found")
    r = players[0].client.get("/api/v1/hands/" + "9" * 40)
    assert r.status_code == 404
    r = players[0].client.post("/api/v1/hands/999999/moves", {"type": "draw"}, format="json")
    assert_problem(r, 404, "not_found")


@pytest.mark.parametrize(
    ("cuoc", "code"),
    [
        ({"zz": 1}, "unknown_cuoc"),
        ({"tom": 5}, "invalid_cuoc_count"),
        ({"chi": 3}, "invalid_cuoc_count"),
    ],
)
def test_declaring_an_unknown_or_impossible_cuoc_is_400_with_the_seq(
    players, win_hand, cuoc, code
) -> None:
    # Given the winner in the declare phase,
    play(players, win_hand, WIN_MOVES - 1)
    # when it declares a cước that does not exist or a count no win can reach,
    r = post_move(players[WIN_SEAT], win_hand, {"type": "declare", "cuoc": cuoc})
    # then the move is refused as bad input, the hand is unchanged and may still be declared.
    assert assert_problem(r, 400, code)["seq"] == WIN_MOVES - 1
    assert event_count(win_hand) == WIN_MOVES
    r = post_move(players[WIN_SEAT], win_hand, {"type": "declare", "auto": True})
    assert r.status_code == 201 and r.json()["state"]["status"] == "ended"


@pytest.mark.parametrize("named", ["ca_loi_san_dinh", "ca_nhay_dau_thuyen"])
def test_tied_named_hands_either_declaration_is_dung_and_pays_the_same(
    players, named_tie_hand, named
) -> None:
    # Given the thapthanh hand whose chì bạch thủ on 8V is both cá lội sân đình and cá nhảy đầu
    # thuyền (24/21 and 1 gà each), when its winner, seat 1, declares either one,
    hand = named_tie_hand({named: 1})
    # it is đúng and says which reading was as right as the true cước,
    view = players[1].client.get(f"/api/v1/hands/{hand['hand']}").json()
    declaration = view["declaration"]
    assert declaration["verdict"] == "dung"
    assert declaration["cuoc"] == {named: 1}
    assert declaration["true_cuoc"] == {"ca_loi_san_dinh": 1}
    assert declaration["equally_right"] == [{"ca_nhay_dau_thuyen": 1}]
    # every other seat pays it 24 + 5 = 29, whichever it named,
    assert view["settlement"]["transfers"] == [
        {"from": seat, "to": 1, "points": 29, "reason": "win"} for seat in (0, 2, 3)
    ]
    # and the Quan booked are the same too: 3 × 29 × stake 10, less the 5 % fee.
    hand_settle(hand_id=hand["hand"])
    quan = Hand.objects.get(pk=hand["hand"]).quan
    assert {s["seat"]: s["net"] for s in quan["seats"]} == {0: -290, 1: 870 - 43, 2: -290, 3: -290}


def test_set_prefs_is_logged_and_kept_for_the_next_hands(players, win_hand) -> None:
    # Given seat 3 turns automatic chíu off out of turn,
    r = post_move(players[3], win_hand, {"type": "set_prefs", "auto_chiu": False})
    assert r.status_code == 201, r.content
    # then its public seat shows it, the log has it, and its table seat remembers it.
    assert r.json()["state"]["seats"][3]["auto_chiu"] is False
    assert HandEvent.objects.get(hand_id=win_hand["hand"], seq=1).type == "set_prefs"
    table = players[3].client.get(f"/api/v1/tables/{win_hand['table']}").json()
    assert table["seats"][3]["auto_chiu"] is False


@pytest.mark.parametrize(
    "body",
    [
        {"type": "set_prefs", "auto_chiu": True},
        {"type": "set_prefs", "auto_u": True, "auto_chiu": True},
        {"type": "set_prefs", "auto_u": True},
    ],
)
def test_set_prefs_that_changes_nothing_is_409_and_appends_nothing(players, win_hand, body) -> None:
    # Given seat 3 with both automatic ù and chíu on (the defaults),
    view = players[3].client.get(f"/api/v1/hands/{win_hand['hand']}").json()
    assert view["seats"][3]["auto_u"] is True and view["seats"][3]["auto_chiu"] is True
    # a set_prefs that leaves them as they are is refused and does not move the seq.
    problem = assert_problem(post_move(players[3], win_hand, body), 409, "prefs_unchanged")
    assert problem["seq"] == 0
    assert event_count(win_hand) == 1
    # The turn seat's expected_seq still holds.
    body = {"type": "discard", "card": DEALER_CARD, "expected_seq": 0}
    assert post_move(players[0], win_hand, body).status_code == 201


def test_set_prefs_of_another_seat_does_not_push_back_the_turn_deadline(players, win_hand) -> None:
    # Given the dealer's turn started 10 seconds ago,
    url = f"/api/v1/hands/{win_hand['hand']}"
    Hand.objects.filter(pk=win_hand["hand"]).update(
        last_event_at=timezone.now() - timedelta(seconds=10)
    )
    deadline = players[0].client.get(url).json()["deadline"]
    # when seat 3 changes its preferences,
    r = post_move(players[3], win_hand, {"type": "set_prefs", "auto_u": False})
    assert r.status_code == 201, r.content
    # then the set_prefs is in the log, but the dealer's deadline stays where it was,
    assert r.json()["state"]["deadline"] == deadline
    assert players[0].client.get(url).json()["deadline"] == deadline
    # and the next turn's deadline is counted from the move that started it.
    r = post_move(players[0], win_hand, {"type": "discard", "card": DEALER_CARD})
    assert r.json()["state"]["deadline"] > deadline


# --------------------------------------------------------------------------- idempotency


def test_an_idempotent_retry_returns_the_same_response_and_appends_one_event(
    players, win_hand
) -> None:
    body = {"type": "discard", "card": DEALER_CARD}
    first = post_move(players[0], win_hand, body, HTTP_IDEMPOTENCY_KEY="move-1")
    again = post_move(players[0], win_hand, body, HTTP_IDEMPOTENCY_KEY="move-1")
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert again["Idempotent-Replayed"] == "true"
    assert event_count(win_hand) == 2  # the deal and one discard


def test_the_same_key_with_another_body_is_422(players, win_hand) -> None:
    post_move(
        players[0], win_hand, {"type": "discard", "card": DEALER_CARD}, HTTP_IDEMPOTENCY_KEY="k"
    )
    r = post_move(players[0], win_hand, {"type": "discard", "card": "2S"}, HTTP_IDEMPOTENCY_KEY="k")
    assert assert_problem(r, 422, "idempotency_key_reused")["seq"] == 1
    assert event_count(win_hand) == 2


def test_keys_belong_to_their_user(players, win_hand) -> None:
    r = post_move(
        players[0], win_hand, {"type": "discard", "card": DEALER_CARD}, HTTP_IDEMPOTENCY_KEY="k"
    )
    assert r.status_code == 201
    r = post_move(players[1], win_hand, {"type": "draw"}, HTTP_IDEMPOTENCY_KEY="k")
    assert r.status_code == 201 and r.json()["seq"] == 2


def test_a_refused_move_is_not_remembered_under_its_key(players, win_hand) -> None:
    r = post_move(players[1], win_hand, {"type": "draw"}, HTTP_IDEMPOTENCY_KEY="early")
    assert_problem(r, 409, "not_your_turn")
    post_move(players[0], win_hand, {"type": "discard", "card": DEALER_CARD})
    r = post_move(players[1], win_hand, {"type": "draw"}, HTTP_IDEMPOTENCY_KEY="early")
    assert r.status_code == 201


class _BrokenCache:
    """The version cache failing after the COMMIT (Redis gone), while reads find nothing."""

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return None

    def set(self, *args: Any, **kwargs: Any) -> None:
        raise ConnectionError("the cache is down")

    delete = set


@pytest.mark.django_db(transaction=True)
def test_a_committed_move_answers_201_when_the_cache_fails_after_commit(
    players, win_hand, monkeypatch
) -> None:
    # Given the cache failing once the move has committed,
    monkeypatch.setattr("games.hand_store.cache", _BrokenCache())
    body = {"type": "discard", "card": DEALER_CARD}
    # the move still answers 201 (it is in the log),
    first = post_move(players[0], win_hand, body, HTTP_IDEMPOTENCY_KEY="after-commit")
    assert first.status_code == 201, first.content
    assert event_count(win_hand) == 2
    # and a retry with the same key replays it.
    again = post_move(players[0], win_hand, body, HTTP_IDEMPOTENCY_KEY="after-commit")
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert event_count(win_hand) == 2


def test_a_malformed_idempotency_key_is_400(players, win_hand) -> None:
    body = {"type": "discard", "card": DEALER_CARD}
    r = post_move(players[0], win_hand, body, HTTP_IDEMPOTENCY_KEY="x" * 200)
    assert assert_problem(r, 400, "invalid_idempotency_key")["seq"] == 0
    assert event_count(win_hand) == 1


@pytest.mark.parametrize(
    ("body", "code"),
    [([1, 2], "invalid_move"), ({"type": "draw", "expected_seq": "0"}, "invalid")],
)
def test_a_malformed_move_body_carries_the_seq(players, win_hand, body, code) -> None:
    assert assert_problem(post_move(players[0], win_hand, body), 400, code)["seq"] == 0


# --------------------------------------------------------------------------- polling


def test_an_unchanged_hand_answers_304_to_its_etag(players, win_hand) -> None:
    url = f"/api/v1/hands/{win_hand['hand']}"
    r = players[2].client.get(url)
    etag = r["ETag"]
    assert etag == f'"{win_hand["hand"]}-0"'
    r = players[2].client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert r.status_code == 304 and r["ETag"] == etag and not r.content
    post_move(players[0], win_hand, {"type": "discard", "card": DEALER_CARD})
    r = players[2].client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert r.status_code == 200 and r["ETag"] == f'"{win_hand["hand"]}-1"'


def test_the_304_still_needs_a_participant_without_spectators(
    make_player, players, win_hand, no_spectators
) -> None:
    url = f"/api/v1/hands/{win_hand['hand']}"
    etag = players[0].client.get(url)["ETag"]
    assert_problem(make_player().client.get(url, HTTP_IF_NONE_MATCH=etag), 403, "not_a_participant")


def test_a_long_poll_on_an_unchanged_hand_waits_then_answers(players, win_hand) -> None:
    start = time.monotonic()
    r = players[1].client.get(f"/api/v1/hands/{win_hand['hand']}?wait=1&after_seq=0")
    assert time.monotonic() - start >= 0.9
    assert r.status_code == 200 and r.json()["seq"] == 0


def test_a_long_poll_behind_the_hand_answers_at_once(players, win_hand) -> None:
    post_move(players[0], win_hand, {"type": "discard", "card": DEALER_CARD})
    start = time.monotonic()
    r = players[1].client.get(f"/api/v1/hands/{win_hand['hand']}?wait=30&after_seq=0")
    assert time.monotonic() - start < 1
    assert r.json()["seq"] == 1


def test_a_long_poll_with_a_stale_etag_answers_at_once(players, win_hand) -> None:
    # Given a client whose last view is at seq 0 while the hand moved on,
    url = f"/api/v1/hands/{win_hand['hand']}"
    etag = players[1].client.get(url)["ETag"]
    post_move(players[0], win_hand, {"type": "discard", "card": DEALER_CARD})
    # its long poll with that ETag answers the new view at once instead of waiting.
    start = time.monotonic()
    r = players[1].client.get(url + "?wait=5", HTTP_IF_NONE_MATCH=etag)
    assert time.monotonic() - start < 1
    assert r.status_code == 200 and r.json()["seq"] == 1
    assert r["ETag"] == f'"{win_hand["hand"]}-1"'


@pytest.mark.parametrize(
    "header",
    ['W/"{etag}"', '"{etag}"', '"0-0", W/"{etag}"', 'W/"0-0" , "{etag}"', "*", " * "],
)
def test_if_none_match_compares_weakly_and_takes_lists(players, win_hand, header) -> None:
    # A proxy that compresses the body (nginx gzip) weakens the ETag: W/"…" still matches.
    url = f"/api/v1/hands/{win_hand['hand']}"
    header = header.format(etag=f"{win_hand['hand']}-0")
    r = players[2].client.get(url, HTTP_IF_NONE_MATCH=header)
    assert r.status_code == 304 and r["ETag"] == f'"{win_hand["hand"]}-0"'
    post_move(players[0], win_hand, {"type": "discard", "card": DEALER_CARD})
    r = players[2].client.get(url, HTTP_IF_NONE_MATCH=header)
    assert r.status_code == (304 if "*" in header else 200)


@pytest.mark.parametrize("header", ['W/"0-0"', '"{hand}-00"', 'W/"{hand}-0'])
def test_if_none_match_of_another_version_is_200(players, win_hand, header) -> None:
    url = f"/api/v1/hands/{win_hand['hand']}"
    r = players[2].client.get(url, HTTP_IF_NONE_MATCH=header.format(hand=win_hand["hand"]))
    assert r.status_code == 200 and r.json()["seq"] == 0


def test_a_long_poll_on_an_ended_hand_waits_for_its_settlement_then_answers_at_once(
    players, win_hand
) -> None:
    # Given a hand that has ended but whose settlement is not booked yet,
    play_to_end(players, win_hand)
    url = f"/api/v1/hands/{win_hand['hand']}"
    etag = players[1].client.get(url)["ETag"]
    # a long poll waits for it (its settled record is still to come): a 304 after the wait;
    start = time.monotonic()
    r = players[1].client.get(url + "?wait=1", HTTP_IF_NONE_MATCH=etag)
    assert r.status_code == 304 and time.monotonic() - start >= 1
    # once settled (it changes no more but for a void), a long poll answers at once: the
    # view without an ETag, a 304 with the current one.
    hand_settle(hand_id=win_hand["hand"])
    start = time.monotonic()
    r = players[1].client.get(url + "?wait=5")
    assert r.status_code == 200 and r.json()["status"] == "ended" and r["ETag"] != etag
    seq = r.json()["seq"]
    r = players[1].client.get(url + "?wait=5", HTTP_IF_NONE_MATCH=r["ETag"])
    assert r.status_code == 304
    r = players[1].client.get(url + f"/events?wait=5&after_seq={seq}")
    assert r.status_code == 200 and r.json()["events"] == []
    assert time.monotonic() - start < 1


@pytest.mark.parametrize("query", ["wait=31", "wait=-1", "wait=x", "after_seq=-2&wait=1"])
def test_bad_poll_parameters_are_400(players, win_hand, query) -> None:
    r = players[1].client.get(f"/api/v1/hands/{win_hand['hand']}?{query}")
    assert_problem(r, 400, "invalid")


# --------------------------------------------------------------------------- events


def test_events_are_paged_by_seq(players, win_hand) -> None:
    play(players, win_hand, 5)
    url = f"/api/v1/hands/{win_hand['hand']}/events"
    page = players[1].client.get(url + "?after_seq=1&limit=2").json()
    assert [e["seq"] for e in page["events"]] == [2, 3]
    assert page["has_more"] is True and page["next_after_seq"] == 3
    page = players[1].client.get(url + "?after_seq=3").json()
    assert [e["seq"] for e in page["events"]] == [4, 5]
    assert page["has_more"] is False
    drawn, passed = page["events"]
    assert drawn["move"] == {"type": "draw", "seat": 2} and drawn["actor_seat"] == 2
    assert drawn["effects"][0] == drawn["move"] and drawn["effects"][1]["type"] == "drawn"
    assert passed["move"] == {"type": "pass", "seat": 2}
    assert_problem(players[1].client.get(url + "?limit=101"), 400, "invalid")


def test_the_deal_event_shows_only_my_cards_until_the_end(players, win_hand) -> None:
    hands = []
    for p in players:
        deal = p.client.get(f"/api/v1/hands/{win_hand['hand']}/events").json()["events"][0]
        (effect,) = deal["effects"]
        assert "hands" not in effect and "deck" not in effect
        hands.append(effect["hand"])
    assert sorted(hands[0] + hands[1] + hands[2] + hands[3]) != sorted(WIN_DECK)
    assert [len(h) for h in hands] == [20, 19, 19, 19]
    play_to_end(players, win_hand)
    deal = players[0].client.get(f"/api/v1/hands/{win_hand['hand']}/events").json()["events"][0]
    assert deal["effects"][0]["hands"] == hands and deal["effects"][0]["deck"] == WIN_DECK


# --------------------------------------------------------------------------- replay


def make_auditor(make_player: Any) -> Any:
    auditor = make_player()
    perm = Permission.objects.get(codename="audit_hands", content_type__app_label="accounts")
    auditor.user.user_permissions.add(perm)
    return auditor


def test_replay_is_for_auditors_any_time_and_participants_after_the_end(
    make_player, players, win_hand
) -> None:
    url = f"/api/v1/hands/{win_hand['hand']}/replay"
    play(players, win_hand, 3)
    # While the hand is played: participants and strangers are refused, auditors see it all.
    assert_problem(players[0].client.get(url), 403, "hand_not_ended")
    assert_problem(make_player().client.get(url), 403, "not_a_participant")
    auditor = make_auditor(make_player)
    r = auditor.client.get(url + "?seq=2")
    assert r.status_code == 200, r.content
    state = new_hand(HandConfig(4, ruleset=build_ruleset({})), parse_deck(WIN_DECK), 0)
    for event in HandEvent.objects.filter(hand_id=win_hand["hand"], seq__in=[1, 2]):
        state = apply(state, move_from_dict(event.payload))
    expected = full_view(state)
    assert {k: r.json()[k] for k in expected} == expected
    assert r.json()["seq"] == 2 and r.json()["last_seq"] == 3
    assert_problem(auditor.client.get(url + "?seq=4"), 400, "seq_out_of_range")
    # After the end every participant may replay any seq.
    play_to_end(players, win_hand)
    r = players[3].client.get(url + "?seq=0")
    assert r.status_code == 200 and r.json()["stock_count"] == 23
    assert len(r.json()["stock"]) == 23


# --------------------------------------------------------------------------- tables → hand


def test_the_table_hand_link_redirects_to_the_current_hand(players, win_hand) -> None:
    r = players[0].client.get(f"/api/v1/tables/{win_hand['table']}/hand")
    assert r.status_code == 302
    assert r["Location"] == f"/api/v1/hands/{win_hand['hand']}"


def test_a_table_that_never_dealt_has_no_hand(players) -> None:
    table = players[0].client.post("/api/v1/tables", {"stake": 1}, format="json").json()
    assert_problem(players[0].client.get(f"/api/v1/tables/{table['id']}/hand"), 404, "no_hand")


def test_set_prefs_spam_is_429_with_retry_after(players, win_hand) -> None:
    url = f"/api/v1/hands/{win_hand['hand']}/moves"
    for i in range(6):
        r = players[1].client.post(url, {"type": "set_prefs", "auto_u": i % 2 == 1}, format="json")
        assert r.status_code == 201, r.content
    r = players[1].client.post(url, {"type": "set_prefs", "auto_u": False}, format="json")
    assert_problem(r, 429, "throttled")
    assert r["Retry-After"] == "60"


# --------------------------------------------------------------------------- bỏ ù (RULES.md §4)


def hand_view(player: Any, hand: dict[str, Any]) -> dict[str, Any]:
    return player.client.get(f"/api/v1/hands/{hand['hand']}").json()


def events_of(player: Any, hand: dict[str, Any]) -> list[dict[str, Any]]:
    return player.client.get(f"/api/v1/hands/{hand['hand']}/events").json()["events"]


def drawer_passes_its_win(players: list[Any], hand: dict[str, Any]) -> None:
    """The dealer discards, seat 1 draws 2V (a win for it and for seat 2) and passes."""
    moves = hand_view(players[0], hand)["legal_moves"]
    dealer_discard = next(m for m in moves if m["type"] == "discard")
    assert post_move(players[0], hand, dealer_discard).status_code == 201
    assert post_move(players[1], hand, {"type": "draw"}).status_code == 201
    mine = hand_view(players[1], hand)
    assert {"type": "u", "seat": 1} in mine["legal_moves"]
    assert post_move(players[1], hand, {"type": "pass"}).status_code == 201


@pytest.mark.parametrize("mode", ["basic", "advanced"])
def test_the_drawers_bo_u_replaced_by_another_win_is_in_its_view_and_its_event(
    players, start_hand, mode, make_player
) -> None:
    from tests.games.test_games_schema import Checker

    check = Checker(players[0].client.get("/api/schema/?format=json").json())
    hand = start_hand(BO_U_DECK, mode=mode)
    # Given the drawer could win on its own draw and passes, seat 2's win replaces the pass …
    drawer_passes_its_win(players, hand)
    mine = {"card": "2V", "seq": 3, "replaced_by": 2}
    view = check(
        players[1].client.get(f"/api/v1/hands/{hand['hand']}"), "/api/v1/hands/{hand_id}", "get"
    )
    assert view["phase"] == "declare" and view["win"]["seat"] == 2
    # … the drawer sees its bỏ ù in its view …
    assert view["my_bo_u"] == [mine]
    # … and in the event of its pass, before the win.
    effects = next(e for e in events_of(players[1], hand) if e["seq"] == 3)["effects"]
    assert [e["type"] for e in effects] == ["pass", "bo_u", "win", "claim"]
    assert effects[1] == {"type": "bo_u", "seat": 1, "card": "2V", "replaced_by": 2}
    # While the hand is live no other seat, and no spectator, learns of it.
    spectator = make_player()
    for other in (players[0], players[2], players[3], spectator):
        assert "bo_u" not in json.dumps(hand_view(other, hand)["seats"])
        assert hand_view(other, hand).get("my_bo_u", []) == []
        assert all(e["type"] != "bo_u" for ev in events_of(other, hand) for e in ev["effects"])
    # After the end the players see it with every hand; a spectator still does not.
    assert post_move(players[2], hand, {"type": "declare", "auto": True}).status_code == 201
    for p in players:
        ended = hand_view(p, hand)
        assert ended["status"] == "ended" and ended["seats"][1]["bo_u"] == [mine]
        assert any(e["type"] == "bo_u" for ev in events_of(p, hand) for e in ev["effects"])
    assert "bo_u" not in json.dumps(hand_view(spectator, hand))
    assert all(e["type"] != "bo_u" for ev in events_of(spectator, hand) for e in ev["effects"])
    # It changes no payment (§4): seat 2 is paid as for any clean win.
    assert hand_view(players[0], hand)["settlement"]["facts"]["winner_faults"] == []
