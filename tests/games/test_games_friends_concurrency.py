"""Real threads against the real database: a challenge accepted (and declined) at once opens
exactly one table."""

from __future__ import annotations

import pytest

from accounts.hold_selectors import wallet_funds
from games.models import Challenge, Seat, Table
from tests.games.conftest import client_with
from tests.games.test_games_concurrency import at_once

pytestmark = pytest.mark.django_db(transaction=True)
N_CLIENTS = 6


def test_a_challenge_accepted_at_once_opens_one_table(players) -> None:
    a, b = players[0], players[1]
    r = a.client.post(
        "/api/v1/challenges", {"username": b.user.username, "stake": 10}, format="json"
    )
    challenge_id = r.json()["id"]
    clients = [client_with(b.token) for _ in range(N_CLIENTS)]

    def answer(i: int):
        verb = "accept" if i % 2 == 0 else "decline"
        return clients[i].post(f"/api/v1/challenges/{challenge_id}/{verb}")

    responses = at_once(N_CLIENTS, answer)
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] + [409] * (N_CLIENTS - 1), [r.content for r in responses]
    assert {r.json()["code"] for r in responses if r.status_code == 409} == {"challenge_answered"}
    challenge = Challenge.objects.get(pk=challenge_id)
    tables = Table.objects.filter(owner=a.user)
    if challenge.status == "accepted":
        assert tables.count() == 1
        assert Seat.objects.filter(table=tables.get()).count() == 2
        assert wallet_funds(b.user).held == 15 * 10
    else:
        assert challenge.status == "declined" and not tables.exists()
        assert wallet_funds(b.user).held == 0


def test_accepts_only_at_once_open_one_table(players) -> None:
    a, b = players[0], players[1]
    r = a.client.post(
        "/api/v1/challenges", {"username": b.user.username, "stake": 10}, format="json"
    )
    challenge_id = r.json()["id"]
    clients = [client_with(b.token) for _ in range(N_CLIENTS)]
    responses = at_once(
        N_CLIENTS, lambda i: clients[i].post(f"/api/v1/challenges/{challenge_id}/accept")
    )
    assert sorted(r.status_code for r in responses) == [200] + [409] * (N_CLIENTS - 1)
    assert Table.objects.filter(owner=a.user).count() == 1
    assert wallet_funds(a.user).held == 15 * 10 and wallet_funds(b.user).held == 15 * 10
