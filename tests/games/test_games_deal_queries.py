"""A deal reads the players' limits, exclusions, wallets and holds once for all of them
(games/services/table_limits.py, games/services/seat_holds.py): its statements do not grow
with the number of players dealt in."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.games.conftest import Player

pytestmark = pytest.mark.django_db(transaction=True)


def _deal_statements(players: list[Player]) -> int:
    """The statements of the ready that deals a hand to ``players`` (every other one ready)."""
    owner, *others = players
    r = owner.client.post("/api/v1/tables", {"name": "q", "stake": 10}, format="json")
    assert r.status_code == 201, r.content
    table_id = r.json()["id"]
    for p in others:
        assert (
            p.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json").status_code == 200
        )
    for p in players[:-1]:
        assert (
            p.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json").status_code == 200
        )
    with CaptureQueriesContext(connection) as ctx:
        r = players[-1].client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
    assert r.status_code == 200 and r.json()["hand_id"], r.content
    return len(ctx.captured_queries)


def test_a_deal_to_four_runs_as_many_statements_as_a_deal_to_two(make_player: Any) -> None:
    two = _deal_statements([make_player() for _ in range(2)])
    four = _deal_statements([make_player() for _ in range(4)])
    assert four == two, (two, four)
