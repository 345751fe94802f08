"""Real threads against the real database: concurrent moves, retries, and long polls."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connections

from games.models import Hand, HandEvent, HandSeat, Seat
from tests.games.conftest import client_with
from tests.games.decks import WIN_DECK

pytestmark = pytest.mark.django_db(transaction=True)
N_CLIENTS = 8


def at_once(n: int, call: Callable[[int], Any]) -> list[Any]:
    """Run ``call(i)`` in ``n`` threads released together; return their results in order."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = call(i)
        except BaseException as exc:  # noqa: BLE001 (reported below, not lost in a thread)
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    return results


def test_the_same_move_sent_at_once_is_applied_exactly_once(players, win_hand) -> None:
    url = f"/api/v1/hands/{win_hand['hand']}/moves"
    clients = [client_with(players[0].token) for _ in range(N_CLIENTS)]
    body = {"type": "discard", "card": "2N", "expected_seq": 0}
    responses = at_once(N_CLIENTS, lambda i: clients[i].post(url, body, format="json"))
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] + [409] * (N_CLIENTS - 1)
    assert {r.json()["code"] for r in responses if r.status_code == 409} == {"stale_seq"}
    assert HandEvent.objects.filter(hand_id=win_hand["hand"]).count() == 2


def test_concurrent_moves_without_expected_seq_still_apply_once(players, win_hand) -> None:
    url = f"/api/v1/hands/{win_hand['hand']}/moves"
    players[0].client.post(url, {"type": "discard", "card": "2N"}, format="json")
    clients = [client_with(players[1].token) for _ in range(N_CLIENTS)]
    responses = at_once(N_CLIENTS, lambda i: clients[i].post(url, {"type": "draw"}, format="json"))
    assert sorted(r.status_code for r in responses) == [201] + [409] * (N_CLIENTS - 1)
    assert HandEvent.objects.filter(hand_id=win_hand["hand"]).count() == 3


def test_retries_with_one_idempotency_key_give_one_event_and_one_answer(players, win_hand) -> None:
    url = f"/api/v1/hands/{win_hand['hand']}/moves"
    clients = [client_with(players[0].token) for _ in range(N_CLIENTS)]
    body = {"type": "discard", "card": "2N"}
    responses = at_once(
        N_CLIENTS,
        lambda i: clients[i].post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="lost-response"),
    )
    assert {r.status_code for r in responses} == {201}
    first = responses[0].json()
    assert all(r.json() == first for r in responses)
    assert sum(r.get("Idempotent-Replayed") == "true" for r in responses) == N_CLIENTS - 1
    assert HandEvent.objects.filter(hand_id=win_hand["hand"]).count() == 2


def test_one_idempotency_key_sent_to_two_hands_at_once_is_applied_once(players, start_hand) -> None:
    # Given a player dealing at two tables, sending the same key to both hands at once,
    hands = [start_hand(WIN_DECK), start_hand(WIN_DECK)]
    clients = [client_with(players[0].token) for _ in hands]
    body = {"type": "discard", "card": "2N"}
    responses = at_once(
        len(hands),
        lambda i: clients[i].post(
            f"/api/v1/hands/{hands[i]['hand']}/moves",
            body,
            format="json",
            HTTP_IDEMPOTENCY_KEY="one-key",
        ),
    )
    # one move is applied and the other refused, never a 500, and the refused one kept nothing.
    assert sorted(r.status_code for r in responses) == [201, 422]
    refused = next(i for i, r in enumerate(responses) if r.status_code == 422)
    assert responses[refused].json()["code"] == "idempotency_key_reused"
    assert HandEvent.objects.filter(hand_id=hands[refused]["hand"]).count() == 1
    assert HandEvent.objects.filter(hand_id=hands[1 - refused]["hand"]).count() == 2


def test_a_long_poll_returns_soon_after_another_seats_move(players, win_hand) -> None:
    hand_url = f"/api/v1/hands/{win_hand['hand']}"
    waiter = client_with(players[2].token)
    answered: dict[str, Any] = {}

    def poll() -> None:
        try:
            response = waiter.get(hand_url + "?wait=10&after_seq=0")
            answered["at"] = time.monotonic()
            answered["response"] = response
        finally:
            connections.close_all()

    from django.core.cache import cache

    from accounts.models import ApiToken

    slot = f"games:long-polls:t{ApiToken.objects.get(user=players[2].user).pk}"
    thread = threading.Thread(target=poll)
    thread.start()
    # Wait until the poll holds its waiting slot (it is waiting), not for a fixed time.
    waiting_by = time.monotonic() + 10
    while not cache.get(slot) and time.monotonic() < waiting_by:
        time.sleep(0.01)
    assert cache.get(slot) == 1, "the poll never started waiting"
    r = players[0].client.post(
        hand_url + "/moves", {"type": "discard", "card": "2N"}, format="json"
    )
    moved_at = time.monotonic()
    assert r.status_code == 201
    thread.join(timeout=15)
    assert answered["response"].status_code == 200
    assert answered["response"].json()["seq"] == 1
    # Woken by the move, not by its 10 s timeout: it watches the seq every 20 ms (the bound
    # leaves room for a loaded machine's scheduling and the view's render).
    assert answered["at"] - moved_at < 1.0


def test_a_timer_firing_during_a_move_applies_exactly_one_of_them(players, win_hand) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from games.models import Hand
    from games.services.hands import hand_clock_tick

    # Given the dealer's deadline has passed, when its own discard and the clock race,
    Hand.objects.filter(pk=win_hand["hand"]).update(deadline_at=timezone.now() - timedelta(hours=1))
    url = f"/api/v1/hands/{win_hand['hand']}/moves"
    client = client_with(players[0].token)

    def race(i: int) -> Any:
        if i % 2:
            return hand_clock_tick(hand_id=win_hand["hand"])
        return client.post(url, {"type": "discard", "card": "2N"}, format="json").status_code

    results = at_once(N_CLIENTS, race)
    # then exactly one move is appended: either the player's or the server's.
    events = HandEvent.objects.filter(hand_id=win_hand["hand"])
    assert events.count() == 2
    ticks = [r for i, r in enumerate(results) if i % 2]
    posts = [r for i, r in enumerate(results) if not i % 2]
    assert ticks.count(1) + posts.count(201) == 1
    assert set(posts) <= {201, 409}


def _leave_and_ready(a: Any, b: Any, table_id: int) -> Callable[[int], Any]:
    def call(i: int) -> Any:
        who, what = (a, "leave") if i == 0 else (b, "ready")
        return who.client.post(f"/api/v1/tables/{table_id}/{what}", {}, format="json")

    return call


@pytest.mark.slow
def test_a_leave_racing_a_deal_lands_wholly_before_or_after_it(make_player) -> None:
    # Given, 25 times, a two-seat table where A sits and B is about to complete the ready seats,
    anomalies = []
    for trial in range(25):
        a, b = make_player(), make_player()
        table_id = a.client.post(
            "/api/v1/tables", {"name": f"race {trial}", "stake": 10, "max_seats": 2}, format="json"
        ).json()["id"]
        b.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
        a.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
        # when A's leave and B's ready are released together,
        responses = at_once(2, _leave_and_ready(a, b, table_id))
        assert [r.status_code for r in responses] == [200, 200], [r.content for r in responses]
        # either A left before the deal (no hand, A's seat freed) or after it (dealt, marked
        # as gone from the hand, its seat kept until the hand ends).
        hand = Hand.objects.filter(table_id=table_id).first()
        seated = Seat.objects.filter(table_id=table_id, player=a.user).exists()
        if hand is None:
            ok = not seated
        else:
            left = HandSeat.objects.get(hand=hand, user=a.user).left_at is not None
            ok = seated and left
        if not ok:
            anomalies.append((trial, hand and hand.pk, seated))
    # then there is never a half of each.
    assert anomalies == []


@pytest.mark.slow
def test_one_token_holds_at_most_ten_waiting_long_polls(players, win_hand) -> None:
    # Given eleven long polls of one token released together on a hand where nothing moves,
    url = f"/api/v1/hands/{win_hand['hand']}?wait=2&after_seq=0"
    clients = [client_with(players[2].token) for _ in range(11)]
    responses = at_once(11, lambda i: clients[i].get(url))
    # then ten wait (and answer when their time is up) and the eleventh is refused at once.
    refused = [r for r in responses if r.status_code == 429]
    assert len(refused) == 1 and refused[0]["Retry-After"] == "1"
    assert refused[0].json()["code"] == "throttled"
    assert sorted(r.status_code for r in responses if r.status_code != 429) == [200] * 10
    # A poll of another token is not counted against this one.
    assert client_with(players[3].token).get(url).status_code == 200
