"""The schema is fit for client generators: valid OpenAPI, nothing left untyped, the move and the
effects a union by ``type`` matching the rules core, and a valid example on every operation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft7Validator
from openapi_spec_validator import validate
from rest_framework.test import APIClient

from chan_api.schema import attach_examples
from games.api.schema import EFFECT_TYPES, MOVE_FIELDS, MOVE_REQUIRED
from games.rules import moves
from tests.games.test_games_schema import json_schema

METHODS = ("get", "post", "put", "patch", "delete")
# A schema is typed when it says what it is.
TYPED = ("type", "$ref", "oneOf", "anyOf", "allOf", "enum", "not")


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    r = APIClient().get("/api/schema/?format=json")
    assert r.status_code == 200
    return r.json()


def operations(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return [op for item in schema["paths"].values() for m, op in item.items() if m in METHODS]


def untyped(schema: dict[str, Any]) -> list[str]:
    """Where a property, an item or a map value says nothing of its type, or is an object or an
    array of nothing in particular (`items: {}`, an object without properties)."""
    found: list[str] = []

    def check(node: Any, path: str) -> None:
        if not isinstance(node, dict):
            return
        if (
            not any(key in node for key in TYPED)
            or node.get("type") == "object"
            and not any(
                key in node for key in ("properties", "additionalProperties", "oneOf", "anyOf")
            )
            or node.get("type") == "array"
            and not node.get("items")
        ):
            found.append(path)

    def walk(node: Any, path: str) -> None:
        if isinstance(node, list):
            for i, child in enumerate(node):
                walk(child, f"{path}[{i}]")
            return
        if not isinstance(node, dict):
            return
        for name, prop in (node.get("properties") or {}).items():
            check(prop, f"{path}/properties/{name}")
        for key in ("items", "additionalProperties", "schema"):
            if isinstance(node.get(key), dict):
                check(node[key], f"{path}/{key}")
        for key, child in node.items():
            if key not in ("example", "examples"):
                walk(child, f"{path}/{key}")

    walk(schema, "")
    return found


def test_the_schema_is_valid_openapi(openapi) -> None:
    validate(openapi)  # raises on an invalid document


def test_nothing_in_the_schema_is_left_untyped(openapi) -> None:
    assert untyped(openapi) == []


def test_the_untyped_check_finds_free_json() -> None:
    schema = {
        "components": {
            "schemas": {
                "A": {"type": "object", "properties": {"x": {"description": "free"}}},
                "B": {"type": "array", "items": {}},
                "C": {"type": "object", "properties": {"m": {"type": "object"}}},
            }
        }
    }
    assert untyped(schema) == [
        "/components/schemas/A/properties/x",
        "/components/schemas/B/items",
        "/components/schemas/C/properties/m",
    ]


def _component(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    target = node.get("$ref") or node["allOf"][0]["$ref"]
    return schema["components"]["schemas"][target.rsplit("/", 1)[1]]


def test_a_move_is_a_union_by_type_of_the_rules_cores_moves(openapi) -> None:
    schemas = openapi["components"]["schemas"]
    assert set(MOVE_FIELDS) == set(moves.MOVE_TYPES)
    for union, extra in (("MoveInput", {"expected_seq"}), ("Move", {"system"})):
        mapping = schemas[union]["discriminator"]["mapping"]
        assert schemas[union]["discriminator"]["propertyName"] == "type"
        assert set(mapping) == set(moves.MOVE_TYPES)
        assert len(schemas[union]["oneOf"]) == len(moves.MOVE_TYPES)
        for mtype, target in mapping.items():
            variant = _component(openapi, {"$ref": target})
            # exactly the fields the rules core parses for this type (games/rules/moves.py)
            assert set(variant["properties"]) == {"type", "seat", *moves._FIELDS[mtype], *extra}
            assert variant["properties"]["type"]["enum"] == [mtype]
            assert variant["additionalProperties"] is False
            assert set(MOVE_REQUIRED.get(mtype, [])) <= set(variant["required"])
    body = openapi["paths"]["/api/v1/hands/{hand_id}/moves"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"]["$ref"].endswith("/MoveInput")


def test_each_effect_is_typed_by_its_type(openapi) -> None:
    schemas = openapi["components"]["schemas"]
    event = schemas["HandEvent"]["properties"]
    assert event["effects"]["items"]["$ref"].endswith("/HandEffect")
    mapping = schemas["HandEffect"]["discriminator"]["mapping"]
    assert set(mapping) == set(moves.MOVE_TYPES) | set(EFFECT_TYPES)
    for etype, target in mapping.items():
        assert _component(openapi, {"$ref": target})["properties"]["type"]["enum"] == [etype]
    assert event["move"]["allOf"][0]["$ref"].endswith("/Move")
    assert event["record"]["allOf"][0]["$ref"].endswith("/HandRecord")


def test_the_root_lists_its_links_by_name(openapi) -> None:
    from chan_api.api_root import RESOURCES, TEMPLATES

    schemas = openapi["components"]["schemas"]
    root = schemas["ApiRootOutput"]["properties"]
    assert set(_component(openapi, root["resources"])["properties"]) == set(RESOURCES)
    assert set(_component(openapi, root["templates"])["properties"]) == set(TEMPLATES)


def _examples(op: dict[str, Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """The operation's request, 2xx response and parameter examples."""
    request = [
        e["value"]
        for media in op.get("requestBody", {}).get("content", {}).values()
        for e in media.get("examples", {}).values()
    ]
    response = [
        e["value"]
        for status, r in op["responses"].items()
        if status.startswith("2")
        for media_type, media in r.get("content", {}).items()
        if "problem" not in media_type
        for e in media.get("examples", {}).values()
    ]
    params = [p["example"] for p in op.get("parameters", []) if "example" in p]
    return request, response, params


def test_every_operation_has_an_example(openapi) -> None:
    missing = []
    for op in operations(openapi):
        request, response, params = _examples(op)
        has_body = "application/json" in op.get("requestBody", {}).get("content", {})
        has_json = any(
            "application/json" in r.get("content", {})
            for s, r in op["responses"].items()
            if s.startswith("2")
        )
        if (
            (has_body and not request)
            or (has_json and not response)
            or not (request or response or params)
        ):
            missing.append(op["operationId"])
    assert missing == []


def test_every_example_is_valid_against_its_schema(openapi) -> None:
    # Read as the response tests read the schema (tests/games/test_games_schema.py): a nullable
    # `allOf` may be null, and an object refuses properties it does not list.
    definitions = {name: json_schema(s) for name, s in openapi["components"]["schemas"].items()}
    bad = []
    for op in operations(openapi):
        bodies = [("request", m) for m in op.get("requestBody", {}).get("content", {}).values()]
        bodies += [
            (s, m) for s, r in op["responses"].items() for m in r.get("content", {}).values()
        ]
        for where, media in bodies:
            root = {"allOf": [json_schema(media["schema"])], "definitions": definitions}
            for name, example in media.get("examples", {}).items():
                bad += [
                    (op["operationId"], where, name, "/".join(map(str, e.absolute_path)), e.message)
                    for e in Draft7Validator(root).iter_errors(example["value"])
                ]
    assert bad == []


def test_a_wrong_example_is_found(openapi) -> None:
    # Given the move's example with a card that is no card, then the check refuses it.
    definitions = {name: json_schema(s) for name, s in openapi["components"]["schemas"].items()}
    root = {"$ref": "#/definitions/MoveInput", "definitions": definitions}
    assert Draft7Validator(root).is_valid({"type": "discard", "card": "7N"})
    assert not Draft7Validator(root).is_valid({"type": "discard", "card": "1X"})
    assert not Draft7Validator(root).is_valid({"type": "draw", "card": "7N"})


def test_an_operation_without_an_example_is_found() -> None:
    # Given an operation that the examples do not name,
    schema = {
        "paths": {
            "/x": {
                "get": {
                    "operationId": "x_get",
                    "responses": {"200": {"content": {"application/json": {"schema": {}}}}},
                }
            }
        }
    }
    # when the examples are attached, then it still has none, and the check names it.
    attach_examples(schema, {"other": {"response": {}}})
    request, response, params = _examples(schema["paths"]["/x"]["get"])
    assert (request, response, params) == ([], [], [])
    attach_examples(schema, {"x_get": {"response": {"ok": True}}})
    assert _examples(schema["paths"]["/x"]["get"])[1] == [{"ok": True}]


@pytest.mark.parametrize("mode", ["basic", "advanced"])
def test_every_effect_and_move_of_self_play_fits_the_schema(openapi, mode) -> None:
    # Given the rules core's own hands (heuristic bots, 2 to 4 seats),
    import random

    from games.rules.bots import make_bot
    from games.rules.deck import first_dealer, shuffle
    from games.rules.engine import apply, legal_moves, new_hand
    from games.rules.replay import CAUSES, system_effect
    from games.rules.ruleset import build_ruleset
    from games.rules.state import HandConfig, Mode, Phase

    definitions = {name: json_schema(s) for name, s in openapi["components"]["schemas"].items()}

    def validator(name: str) -> Draft7Validator:
        return Draft7Validator({"$ref": f"#/definitions/{name}", "definitions": definitions})

    effect, move = validator("HandEffect"), validator("Move")
    shapes: set[str] = set()  # each distinct JSON validated once

    def fits(check: Draft7Validator, value: dict) -> bool:
        key = json.dumps(value, sort_keys=True)
        if key in shapes:
            return True
        shapes.add(key)
        return check.is_valid(value)

    seen: set[str] = set()
    bad: list[tuple[str, object]] = []
    rng = random.Random(7)
    for i in range(24):
        seats = 2 + i % 3
        config = HandConfig(
            n_seats=seats, mode=Mode(mode), ruleset=build_ruleset({"preset": "vinagames"})
        )
        seed = f"schema:{mode}:{i}".encode()
        state = new_hand(config, shuffle(seed), first_dealer(seed, seats))
        # any legal move (odd hands) commits faults, báo, bỏ ù and nhái; heuristic bots win
        bots = {s: make_bot("heuristic", rng) for s in range(seats)}
        events = list(state.events)
        while state.phase is not Phase.ENDED:
            legal = legal_moves(state, state.turn)
            for m in legal:
                if not fits(move, m.to_dict()):
                    bad.append(("legal", m.to_dict()))
            pick = rng.choice(legal) if i % 2 else bots[state.turn].choose(state, state.turn)
            state = apply(state, pick)
            events += state.events
        events += [system_effect(0, cause) for cause in CAUSES]
        # then every effect is one of the schema's, and valid as it.
        for e in events:
            seen.add(e["type"])
            if not fits(effect, e):
                bad.append(("effect", e))
    assert bad == []
    assert {"deal", "discard", "eat", "draw", "drawn", "chiu", "win", "claim", "system"} <= seen
    if mode == "advanced":  # ù láo and what it brings
        assert {"fault", "bao"} <= seen


def test_every_feed_kinds_fields_are_typed() -> None:
    from games.api.schema import FEED_DATA_FIELDS
    from games.live.kinds import FEED_KINDS

    for kind in FEED_KINDS.values():
        assert set(kind.fields) <= set(FEED_DATA_FIELDS), kind.name
