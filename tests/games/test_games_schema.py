"""The OpenAPI schema documents every endpoint, its request, its errors and its headers, and the
responses the server really sends match it: required fields present, no undocumented field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft7Validator
from rest_framework.test import APIClient

from chan_api.problems import flatten_errors
from games.rules.cuoc import WIN_SOURCES
from tests.games.decks import WIN_DECK, scripted_move

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"
HAND = "/api/v1/hands/{hand_id}"
MOVES = "/api/v1/hands/{hand_id}/moves"
EVENTS = "/api/v1/hands/{hand_id}/events"
REPLAY = "/api/v1/hands/{hand_id}/replay"
TABLES = "/api/v1/tables"
TABLE = "/api/v1/tables/{table_id}"

ENDPOINTS = {
    ("/api/v1/", "get"): {"200"},
    ("/api/v1/tables", "get"): {"200", "304", "400", "401"},
    ("/api/v1/tables", "post"): {"201", "400", "401", "409", "413", "415"},
    ("/api/v1/tables/{table_id}", "get"): {"200", "304", "400", "404"},
    ("/api/v1/tables/{table_id}/join", "post"): {
        "200",
        "400",
        "403",
        "404",
        "409",
        "413",
        "415",
    },
    ("/api/v1/tables/{table_id}/leave", "post"): {"200", "404", "409"},
    ("/api/v1/tables/{table_id}/ready", "post"): {"200", "400", "409", "413", "415"},
    ("/api/v1/tables/{table_id}/hand", "get"): {"302", "404"},
    ("/api/v1/tables/{table_id}/hands", "get"): {"200", "404"},
    ("/api/v1/me/bonus", "post"): {"201", "401", "409"},
    ("/api/v1/me/ledger", "get"): {"200", "400", "401"},
    ("/api/v1/me/limits", "get"): {"200", "401"},
    ("/api/v1/me/limits", "put"): {"200", "400", "401"},
    ("/api/v1/me/cool-off", "post"): {"201", "400", "401"},
    ("/api/v1/me/self-exclusion", "post"): {"201", "400", "401"},
    ("/api/v1/ledger/head", "get"): {"200", "401"},
    ("/api/v1/hands/{hand_id}", "get"): {"200", "304", "400", "403", "404"},
    ("/api/v1/hands/{hand_id}/events", "get"): {"200", "400", "403", "404"},
    ("/api/v1/hands/{hand_id}/moves", "post"): {"201", "400", "403", "404", "409", "413", "422"},
    ("/api/v1/hands/{hand_id}/replay", "get"): {"200", "400", "403", "404"},
    ("/api/v1/hands/{hand_id}/export", "get"): {"200", "403", "404"},
    ("/api/v1/rules/presets", "get"): {"200", "401"},
    ("/api/v1/rules/score", "post"): {"200", "400", "401", "413", "415"},
    ("/api/v1/rules/evaluate", "post"): {"200", "400", "401", "413", "415"},
    ("/api/v1/auth/register", "post"): {"201", "400", "409", "413", "415"},
    ("/api/v1/auth/token", "post"): {"201", "400", "401", "413", "415"},
    ("/api/v1/auth/logout", "post"): {"204", "401"},
    ("/api/v1/auth/check", "get"): {"200", "401"},
    ("/api/v1/auth/tokens", "get"): {"200", "401"},
    ("/api/v1/auth/tokens/{token_id}", "delete"): {"204", "401", "404"},
    ("/api/v1/me/tokens", "get"): {"200", "401", "403"},
    ("/api/v1/me/tokens", "post"): {"201", "400", "401", "403", "413", "415"},
    ("/api/v1/me/tokens/{token_id}", "delete"): {"204", "401", "403", "404"},
    ("/api/v1/me", "get"): {"200", "401"},
    ("/api/v1/rooms", "get"): {"200", "401"},
    ("/api/v1/rooms/{slug}/quick-join", "post"): {
        "200",
        "201",
        "400",
        "401",
        "404",
        "409",
        "413",
        "415",
    },
    ("/api/v1/me/hands", "get"): {"200", "400", "401"},
    ("/api/v1/me/feed", "get"): {"200", "304", "400", "401", "429"},
    ("/api/v1/integrity/flags", "get"): {"200", "400", "401", "403", "429"},
    ("/api/v1/leaderboards/{board}", "get"): {"200", "304", "400", "401", "403", "404", "429"},
    ("/api/v1/integrity/flags/{flag_id}", "get"): {"200", "401", "403", "404", "429"},
    # tables among friends
    ("/api/v1/tournaments", "get"): {"200", "400", "401"},
    ("/api/v1/tournaments", "post"): {"201", "400", "401", "403", "413", "415"},
    ("/api/v1/tournaments/{tournament_id}", "get"): {"200", "401", "404"},
    ("/api/v1/tournaments/{tournament_id}/join", "post"): {"200", "401", "403", "404", "409"},
    ("/api/v1/tournaments/{tournament_id}/leave", "post"): {"200", "401", "404", "409"},
    ("/api/v1/tournaments/{tournament_id}/standings", "get"): {"200", "304", "400", "401", "404"},
    ("/api/v1/challenges", "get"): {"200", "400", "401"},
    ("/api/v1/challenges", "post"): {"201", "400", "401", "403", "404", "409", "413", "415"},
    ("/api/v1/challenges/{challenge_id}", "get"): {"200", "401", "404"},
    ("/api/v1/challenges/{challenge_id}/accept", "post"): {"200", "401", "403", "404", "409"},
    ("/api/v1/challenges/{challenge_id}/decline", "post"): {"200", "401", "403", "404", "409"},
    ("/api/v1/challenges/{challenge_id}/cancel", "post"): {"200", "401", "403", "404", "409"},
    ("/api/v1/me/blocks", "get"): {"200", "401"},
    ("/api/v1/me/blocks/{username}", "put"): {"200", "201", "400", "401", "404"},
    ("/api/v1/me/blocks/{username}", "delete"): {"204", "401", "404"},
    ("/api/v1/players/{username}", "get"): {"200", "401", "404"},
    ("/api/v1/players/{username}/hands", "get"): {"200", "400", "401", "404"},
    # the transparency log (docs/audit.md)
    ("/api/v1/log/head", "get"): {"200", "401", "404"},
    ("/api/v1/log/key", "get"): {"200", "401", "404"},
    ("/api/v1/log/proof/consistency", "get"): {"200", "400", "401"},
    ("/api/v1/log/proof/inclusion", "get"): {"200", "400", "401", "404"},
}


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    """The schema as served (no database needed)."""
    r = APIClient().get("/api/schema/?format=json")
    assert r.status_code == 200
    return r.json()


def operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in schema["paths"].items()
        for method, op in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]


# --------------------------------------------------------------------------- a validator


_NOT_JSON_SCHEMA = {"nullable", "readOnly", "writeOnly", "example", "deprecated", "discriminator"}


def json_schema(node: Any) -> Any:
    """An OpenAPI 3.0 schema as a JSON Schema (draft 7), strict about undocumented properties:
    ``nullable`` becomes a null alternative, refs point at ``definitions``, and an object that
    lists its ``properties`` refuses any other (unless it says ``additionalProperties``)."""
    if isinstance(node, list):
        return [json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NOT_JSON_SCHEMA:
            continue
        if key == "$ref":
            out[key] = value.replace("#/components/schemas/", "#/definitions/")
        elif key == "properties":
            out[key] = {name: json_schema(s) for name, s in value.items()}
        elif key in ("enum", "required", "default", "description"):
            out[key] = value
        else:
            out[key] = json_schema(value)
    if "properties" in node and "additionalProperties" not in node:
        out["additionalProperties"] = False
    if node.get("nullable"):
        out = {"anyOf": [out, {"type": "null"}]}
    return out


class Checker:
    """Checks real responses against the operation's documented response for their status."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.definitions = {
            name: json_schema(s) for name, s in schema["components"]["schemas"].items()
        }
        self.checked: list[tuple[str, str, int]] = []

    def errors(self, body: Any, schema: dict[str, Any]) -> list[str]:
        root = {"allOf": [json_schema(schema)], "definitions": self.definitions}
        return [
            f"/{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in Draft7Validator(root).iter_errors(body)
        ]

    def component(self, response: Any, name: str) -> Any:
        body = response.json()
        assert not self.errors(body, {"$ref": f"#/components/schemas/{name}"}), self.errors(
            body, {"$ref": f"#/components/schemas/{name}"}
        )
        return body

    def __call__(self, response: Any, path: str, method: str) -> Any:
        operation = self.schema["paths"][path][method.lower()]
        status = str(response.status_code)
        assert status in operation["responses"], (method, path, status, response.content[:300])
        documented = operation["responses"][status]
        self.checked.append((path, method.lower(), response.status_code))
        for name, header in documented.get("headers", {}).items():
            if header.get("required"):
                assert name in response, (method, path, status, name)
        if status == "429":
            assert "Retry-After" in documented["headers"] and "Retry-After" in response
        if "content" not in documented:
            assert not response.content, (method, path, status)
            return None
        media_type = response["Content-Type"].split(";")[0].strip()
        assert media_type in documented["content"], (method, path, status, media_type)
        body = response.json()
        problems = self.errors(body, documented["content"][media_type]["schema"])
        assert not problems, (method, path, status, problems, body)
        return body


@pytest.fixture
def check(openapi: dict[str, Any]) -> Checker:
    return Checker(openapi)


def test_the_validator_refuses_missing_undocumented_and_mistyped_fields(openapi) -> None:
    checker = Checker(openapi)
    score = {"$ref": "#/components/schemas/ScoreOutput"}
    assert checker.errors({"base": 1, "ga": 0, "total": 1}, score) == []
    assert checker.errors({"base": 1, "ga": 0}, score)  # total is required
    assert checker.errors({"base": 1, "ga": 0, "total": 1, "extra": 1}, score)
    assert checker.errors({"base": "1", "ga": 0, "total": 1}, score)
    table = {"$ref": "#/components/schemas/TableOutput"}
    assert any("current_hand_id" in e for e in checker.errors({"current_hand_id": "x"}, table))


# --------------------------------------------------------------------------- the document


def test_every_endpoint_is_documented_with_its_errors(openapi) -> None:
    for (path, method), statuses in ENDPOINTS.items():
        operation = openapi["paths"][path][method]
        assert statuses <= set(operation["responses"]), (path, method)
        for status in statuses - {"200", "201", "204", "302", "304"}:
            content = operation["responses"][status]["content"]
            assert PROBLEM in content, (path, method, status)
    assert {(path, method) for path, method, _ in operations(openapi)} == set(ENDPOINTS)


def test_every_operation_documents_the_errors_it_can_always_meet(openapi) -> None:
    for path, method, op in operations(openapi):
        responses = op["responses"]
        where = (path, method)
        # any request may be throttled or meet a bug
        for status in ("429", "500"):
            assert PROBLEM in responses[status]["content"], where
        assert "Retry-After" in responses["429"]["headers"], where
        # details follow Accept-Language
        params = {(p["in"], p["name"]) for p in op.get("parameters", [])}
        assert ("header", "Accept-Language") in params, where
        if any(requirement for requirement in op.get("security", [])):
            assert "401" in responses, where
        if "requestBody" in op:
            assert {"400", "413", "415"} <= set(responses), where


def test_request_and_response_headers_are_documented(openapi) -> None:
    paths = openapi["paths"]

    def params(op: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {p["name"]: p for p in op["parameters"] if p["in"] == "header"}

    hand = paths[HAND]["get"]
    assert "If-None-Match" in params(hand)
    for status in ("200", "304"):
        assert hand["responses"][status]["headers"]["ETag"]["required"] is True
    moves = paths[MOVES]["post"]
    assert params(moves)["Idempotency-Key"]["schema"]["pattern"]
    assert "Idempotent-Replayed" in moves["responses"]["201"]["headers"]
    created = paths[TABLES]["post"]["responses"]["201"]
    assert created["headers"]["Location"]["required"] is True
    redirect = paths["/api/v1/tables/{table_id}/hand"]["get"]["responses"]["302"]
    assert redirect["headers"]["Location"]["required"] is True


def test_outputs_document_exactly_what_is_returned(openapi) -> None:
    schemas = openapi["components"]["schemas"]
    # legal moves are moves by type, each with its seat; a move sent never carries `system`
    # (only the server's own moves in the log do); games/api/schema.py
    assert schemas["HandView"]["properties"]["legal_moves"]["items"]["$ref"].endswith("/Move")
    for variant in schemas["Move"]["oneOf"]:
        assert {"type", "seat"} <= set(schemas[variant["$ref"].rsplit("/", 1)[1]]["required"])
    for variant in schemas["MoveInput"]["oneOf"]:
        assert "system" not in schemas[variant["$ref"].rsplit("/", 1)[1]]["properties"]
    # a table always shows every timeout and its ruleset's overrides
    table = schemas["TableOutput"]["properties"]
    timeouts = schemas[table["timeouts"]["$ref"].rsplit("/", 1)[1]]
    assert set(timeouts["required"]) == {"turn", "tra_cua", "declare", "ready"}
    ruleset = schemas[table["ruleset"]["$ref"].rsplit("/", 1)[1]]
    assert set(ruleset["required"]) == {"preset", "overrides"}
    # field errors are flat: {dotted field: [message]}
    errors = schemas["Problem"]["properties"]["errors"]
    assert errors["additionalProperties"] == {"type": "array", "items": {"type": "string"}}


def test_the_calculator_input_is_typed(openapi) -> None:
    schemas = openapi["components"]["schemas"]
    card_code = {"$ref": "#/components/schemas/CardCode"}
    assert len(schemas["CardCode"]["enum"]) == 25
    props = schemas["EvaluateInput"]["properties"]
    assert props["hand"]["items"] == card_code
    assert props["mat"]["items"]["items"] == card_code
    assert props["card"]["allOf"] == [card_code] and props["card"]["nullable"] is True
    source = schemas[props["source"]["allOf"][0]["$ref"].rsplit("/", 1)[1]]
    assert source["enum"] == list(WIN_SOURCES)
    context = schemas[props["context"]["allOf"][0]["$ref"].rsplit("/", 1)[1]]
    assert set(context["properties"]) == {"first_draw", "previous_winner", "dealt_hand", "nhai"}
    assert context["properties"]["dealt_hand"]["items"] == card_code
    reason = schemas["EvaluateOutput"]["properties"]["reason"]
    assert reason["allOf"][0]["$ref"].endswith("NoWinReason")


# --------------------------------------------------------------------------- errors are flat


def test_nested_field_errors_are_flattened_to_dotted_keys() -> None:
    nested = {
        "timeouts": {"turn": ["A valid integer is required."]},
        "deck": {99: ["Not a valid string."]},
        "seats": [{}, {"number": ["bad"]}],
        "stake": "required",
    }
    assert flatten_errors(nested) == {
        "timeouts.turn": ["A valid integer is required."],
        "deck.99": ["Not a valid string."],
        "seats.1.number": ["bad"],
        "stake": ["required"],
    }
    assert flatten_errors(["whole body"]) == {"non_field_errors": ["whole body"]}


def test_nested_errors_come_back_flat_and_as_documented(players, check) -> None:
    body = {"stake": 10, "timeouts": {"turn": "x", "ready": 0}, "deck": ["2V"] * 99 + [5]}
    r = players[0].client.post(TABLES, body, format="json")
    problem = check(r, TABLES, "post")
    assert problem["code"] == "invalid"
    assert set(problem["errors"]) == {"timeouts.turn", "timeouts.ready", "deck.99"}


@pytest.mark.parametrize("room", [123, True, ["main"], "no spaces"])
def test_a_table_room_must_be_a_string_of_the_documented_pattern(players, check, room) -> None:
    r = players[0].client.post(TABLES, {"stake": 10, "room": room}, format="json")
    assert r.status_code == 400
    assert list(check(r, TABLES, "post")["errors"]) == ["room"]


# --------------------------------------------------------------------------- real responses


def test_a_whole_hand_through_the_api_matches_the_schema(players, make_player, check) -> None:
    # given a table created with a fixed deck, three players joining and everyone ready
    r = players[0].client.post(TABLES, {"stake": 10, "deck": WIN_DECK, "dealer": 0}, format="json")
    table = check(r, TABLES, "post")
    assert r["Location"].endswith(f"/tables/{table['id']}")
    for p in players[1:]:
        check(
            p.client.post(f"/api/v1/tables/{table['id']}/join", {}, format="json"),
            TABLE + "/join",
            "post",
        )
    hand_id = None
    for p in players:
        r = p.client.post(f"/api/v1/tables/{table['id']}/ready", {}, format="json")
        hand_id = check(r, TABLE + "/ready", "post")["hand_id"] or hand_id
    check(players[1].client.get(TABLES), TABLES, "get")
    check(players[1].client.get(f"/api/v1/tables/{table['id']}"), TABLE, "get")
    r = players[1].client.get(f"/api/v1/tables/{table['id']}/hand")
    check(r, TABLE + "/hand", "get")
    assert r["Location"].endswith(f"/hands/{hand_id}")
    listed = check(
        players[1].client.get(f"/api/v1/tables/{table['id']}/hands"), TABLE + "/hands", "get"
    )
    assert [(h["id"], h["stake"], h["room"]) for h in listed] == [(hand_id, 10, "nen-dat")]

    url = f"/api/v1/hands/{hand_id}"
    # refusals of a move are documented problems that carry the seq
    check(players[1].client.post(url + "/moves", {"type": "draw"}, format="json"), MOVES, "post")
    r = players[0].client.post(url + "/moves", {"type": "discard", "card": "2V"}, format="json")
    assert check(r, MOVES, "post")["code"] == "card_not_in_hand"
    r = players[0].client.post(url + "/moves", {"type": "teleport"}, format="json")
    assert check(r, MOVES, "post")["code"] == "unknown_move_type"
    r = make_player().client.get(url)
    assert check(r, HAND, "get")["spectator"] is True

    # when the hand is played to its end, every view, move and event page is as documented
    for n in range(40):
        views = [check(p.client.get(url), HAND, "get") for p in players]
        r = players[0].client.get(url, HTTP_IF_NONE_MATCH=f'"{hand_id}-{views[0]["seq"]}"')
        assert r.status_code == 304
        check(r, HAND, "get")
        check(players[n % 4].client.get(url + "/events"), EVENTS, "get")
        if views[0]["status"] == "ended":
            break
        turn = views[0]["turn_seat"]
        move = scripted_move(views[turn]["legal_moves"])
        key = {"HTTP_IDEMPOTENCY_KEY": f"move-{n}"}
        r = players[turn].client.post(url + "/moves", move, format="json", **key)
        created = check(r, MOVES, "post")
        again = players[turn].client.post(url + "/moves", move, format="json", **key)
        assert check(again, MOVES, "post") == created
        assert again["Idempotent-Replayed"] == "true"
    # then the ended views, the full log and the replay are as documented too
    assert views[0]["status"] == "ended" and views[0]["result"] and views[0]["seed"]
    page = check(players[2].client.get(url + "/events?after_seq=0&limit=5"), EVENTS, "get")
    assert page["has_more"] is True
    check(players[1].client.get(url + "/replay?seq=3"), REPLAY, "get")
    check(players[1].client.get(url + "/replay"), REPLAY, "get")
    r = players[1].client.get(url + "/replay?seq=999")
    assert check(r, REPLAY, "get")["code"] == "seq_out_of_range"
    assert check(players[1].client.get("/api/v1/tables/999999"), TABLE, "get")["status"] == 404
    seen = {(path, status) for path, _, status in check.checked}
    assert {(HAND, 200), (HAND, 304), (MOVES, 201), (MOVES, 400)} <= seen
    assert {(MOVES, 409), (MOVES, 422), (EVENTS, 200), (REPLAY, 200), (REPLAY, 400)} <= seen


def test_account_responses_match_the_schema(api_client, check, monkeypatch) -> None:
    # given a player who registers and logs in again
    body = {"username": "lan", "password": "tam-van-cuu-sach-42"}
    issued = check(
        api_client.post("/api/v1/auth/register", body, format="json"),
        "/api/v1/auth/register",
        "post",
    )
    r = api_client.post("/api/v1/auth/register", body, format="json")
    assert check(r, "/api/v1/auth/register", "post")["code"] == "username_taken"
    login = check(
        api_client.post("/api/v1/auth/token", body, format="json"), "/api/v1/auth/token", "post"
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {login['token']}")
    # then everything it reads is as documented
    check(client.get("/api/v1/me"), "/api/v1/me", "get")
    check(client.get("/api/v1/auth/check"), "/api/v1/auth/check", "get")
    check(client.get("/api/v1/auth/tokens"), "/api/v1/auth/tokens", "get")
    revoke = "/api/v1/auth/tokens/{token_id}"
    check(client.delete(f"/api/v1/auth/tokens/{issued['token_id']}"), revoke, "delete")
    assert (
        check(client.delete("/api/v1/auth/tokens/999999"), revoke, "delete")["code"] == "not_found"
    )
    check(client.post("/api/v1/auth/logout"), "/api/v1/auth/logout", "post")
    r = client.get("/api/v1/me")
    assert check(r, "/api/v1/me", "get")["code"] == "authentication_failed"
    assert check(APIClient().get("/api/v1/me"), "/api/v1/me", "get")["code"] == "not_authenticated"
    # a body too large, not JSON, or too many attempts: documented problems too
    huge = json.dumps({"username": "x" * 70_000, "password": "y"})
    r = api_client.post("/api/v1/auth/register", huge, content_type="application/json")
    assert check(r, "/api/v1/auth/register", "post")["code"] == "body_too_large"
    r = api_client.post("/api/v1/auth/token", body)  # multipart
    assert check(r, "/api/v1/auth/token", "post")["code"] == "unsupported_media_type"
    monkeypatch.setenv("THROTTLE_AUTH", "1/min")
    client = APIClient(REMOTE_ADDR="192.0.2.7")
    check(client.post("/api/v1/auth/token", body, format="json"), "/api/v1/auth/token", "post")
    r = client.post("/api/v1/auth/token", body, format="json")
    assert check(r, "/api/v1/auth/token", "post")["code"] == "throttled"


def test_a_method_a_path_does_not_offer_is_a_documented_problem(players, check) -> None:
    r = players[0].client.put("/api/v1/me", {}, format="json")
    assert r.status_code == 405 and "GET" in r["Allow"]
    assert check.component(r, "Problem")["code"] == "method_not_allowed"


def test_rules_responses_match_the_schema(players, check) -> None:
    client = players[0].client
    check(client.get("/api/v1/rules/presets"), "/api/v1/rules/presets", "get")
    score = "/api/v1/rules/score"
    body = {"ruleset": {"preset": "chan_van_van", "overrides": {}}, "cuoc": {"tam_do": 1, "leo": 2}}
    check(client.post(score, body, format="json"), score, "post")
    assert check(client.post(score, {"cuoc": {"tom": 9}}, format="json"), score, "post")["errors"]
    evaluate = "/api/v1/rules/evaluate"
    mat = [["4V", "4V"], ["5V", "5V"]]
    hand = ["CC", "CC", "6N", "6N", "9N", "9N", "3N", "3S"]
    hand += ["7N", "7S", "8N", "8V", "6V", "6S", "2V"]
    body = {"mat": mat, "hand": hand, "card": "2V", "source": "own_draw", "context": {"nhai": 1}}
    assert check(client.post(evaluate, body, format="json"), evaluate, "post")["win"] is True
    no_win = check(
        client.post(evaluate, {**body, "source": "discard"}, format="json"), evaluate, "post"
    )
    assert no_win["reason"]["code"] == "cannot_win_on_discard"
    r = client.post(evaluate, {**body, "hand": hand[:-1]}, format="json")
    assert check(r, evaluate, "post")["errors"] == {
        "hand": ["hand + mat must hold 19 cards (a chíu counts its four), not 18."],
        "mat": ["hand + mat must hold 19 cards (a chíu counts its four), not 18."],
    }


def test_the_documented_hand_view_is_the_rendered_one(players, start_hand) -> None:
    """The hand view is rendered without a serializer pass; its serializer must still describe
    every field exactly, mid-hand and after the end."""
    from games.api.serializers import HandViewSerializer, MoveCreatedSerializer

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
