"""The OpenAPI schema documents every games endpoint, its request and its errors."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

ENDPOINTS = {
    ("/api/v1/tables", "get"): {"200", "400", "401"},
    ("/api/v1/tables", "post"): {"201", "400", "401", "413"},
    ("/api/v1/tables/{table_id}", "get"): {"200", "404"},
    ("/api/v1/tables/{table_id}/join", "post"): {"200", "400", "404", "409"},
    ("/api/v1/tables/{table_id}/leave", "post"): {"200", "404", "409"},
    ("/api/v1/tables/{table_id}/ready", "post"): {"200", "400", "409"},
    ("/api/v1/tables/{table_id}/hand", "get"): {"302", "404"},
    ("/api/v1/hands/{hand_id}", "get"): {"200", "304", "400", "403", "404"},
    ("/api/v1/hands/{hand_id}/events", "get"): {"200", "400", "403", "404"},
    ("/api/v1/hands/{hand_id}/moves", "post"): {"201", "400", "403", "404", "409", "413", "422"},
    ("/api/v1/hands/{hand_id}/replay", "get"): {"200", "400", "403", "404"},
    ("/api/v1/rules/presets", "get"): {"200", "401"},
    ("/api/v1/rules/score", "post"): {"200", "400", "401"},
}


def test_every_games_endpoint_is_documented_with_its_errors(api_client) -> None:
    r = api_client.get("/api/schema/?format=json")
    assert r.status_code == 200
    schema = r.json()
    for (path, method), statuses in ENDPOINTS.items():
        operation = schema["paths"][path][method]
        assert statuses <= set(operation["responses"]), (path, method)
        for status in statuses - {"200", "201", "302", "304"}:
            content = operation["responses"][status]["content"]
            assert "application/problem+json" in content, (path, method, status)
    moves = schema["paths"]["/api/v1/hands/{hand_id}/moves"]["post"]
    assert "requestBody" in moves
    params = {p["name"] for p in moves["parameters"]}
    assert "Idempotency-Key" in params


def test_the_documented_hand_view_is_the_rendered_one(players, start_hand) -> None:
    """The hand view is rendered without a serializer pass; its serializer must still describe
    every field exactly, mid-hand and after the end."""
    from games.api.serializers import HandViewSerializer, MoveCreatedSerializer
    from tests.games.decks import WIN_DECK, scripted_move

    ids = start_hand(WIN_DECK)
    url = f"/api/v1/hands/{ids['hand']}"
    for _ in range(20):
        views = [p.client.get(url).json() for p in players]
        for view in views:
            assert HandViewSerializer(view).data == view
        if views[0]["status"] == "ended":
            break
        turn = views[0]["turn_seat"]
        move = scripted_move(views[turn]["legal_moves"])
        created = players[turn].client.post(url + "/moves", move, format="json").json()
        assert MoveCreatedSerializer(created).data == created
    assert views[0]["status"] == "ended"
