"""Fuzz every operation of the OpenAPI schema: whatever the body, content type, query string,
headers, caller and path ids, no answer is a 5xx, and every error is ``application/problem+json``
with a non-empty ``code`` and ``detail``.

The operations are read from the generated schema, so a new endpoint is fuzzed without touching
this file. Path ids are real (a live hand, an ended one, another table's hand, tokens) or hostile;
callers are the hand's players, other users, anonymous or forged tokens. Requests are built with
the request class of chan_api.wsgi (the test client speaks WSGI); the crashes this fuzz found
inside Django's own request parsing are kept as regression tests at the end of the file, against
both entry points (production serves chan_api.asgi).
"""

from __future__ import annotations

import asyncio
import json
import re
import wsgiref.util
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote

import hypothesis
import pytest
from django.core.cache import cache
from django.db import transaction
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, given, note
from hypothesis import strategies as st
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.services import token_create
from chan_api.wsgi import ChanWSGIRequest, application
from games.rules.cards import CODES
from games.rules.ruleset import CUOC_SLUGS, OVERRIDE_KEYS, PRESETS
from tests.games.conftest import client_with
from tests.games.decks import WIN_DECK, scripted_move

pytestmark = pytest.mark.django_db

PROBLEM = "application/problem+json"


@pytest.fixture(autouse=True)
def _production_request_class(monkeypatch: Any) -> None:
    """Django's test client builds a plain WSGIRequest; a WSGI server builds chan_api.wsgi's."""
    monkeypatch.setattr("django.test.client.WSGIRequest", ChanWSGIRequest)


HTTP_METHODS = ("get", "post", "put", "patch", "delete", "head", "options")
EXAMPLES_PER_OPERATION = 25  # twice that for operations that take a body
# ``?wait=N`` long-polls for N seconds when nothing happens: at most this many 1 s polls a test.
LONG_POLL_PARAM = "wait"
LONG_POLLS_PER_TEST = 2
MAX_QUERY_FIELDS = 1000  # Django's DATA_UPLOAD_MAX_NUMBER_FIELDS

SCHEMA: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    spec: dict[str, Any] = field(hash=False, compare=False)

    @property
    def params(self) -> list[dict[str, Any]]:
        return self.spec.get("parameters", [])

    def params_in(self, where: str) -> list[dict[str, Any]]:
        return [p for p in self.params if p["in"] == where]

    @property
    def body_schema(self) -> dict[str, Any] | None:
        content = self.spec.get("requestBody", {}).get("content", {})
        media = content.get("application/json") or next(iter(content.values()), None)
        return media["schema"] if media else None


OPERATIONS = [
    Operation(method, path, spec)
    for path, item in SCHEMA["paths"].items()
    for method, spec in item.items()
    if method in HTTP_METHODS
]


# --------------------------------------------------------------------------- schema walking


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    """Follow ``$ref`` and merge ``allOf`` so the node says what it is."""
    if "$ref" in node:
        return resolve(SCHEMA["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]])
    if "allOf" in node:
        merged = {k: v for k, v in node.items() if k != "allOf"}
        for part in node["allOf"]:
            merged = {**resolve(part), **merged}
        return merged
    return node


def words_of(node: Any, seen: set[str] | None = None) -> set[str]:
    """Every property name and string enum value reachable from a schema node."""
    seen = set() if seen is None else seen
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if ref:
            if ref in seen:
                return found
            seen.add(ref)
            return words_of(resolve(node), seen)
        found.update(node.get("properties", {}))
        found.update(v for v in node.get("enum", []) if isinstance(v, str))
        for value in node.values():
            found |= words_of(value, seen)
    elif isinstance(node, list):
        for value in node:
            found |= words_of(value, seen)
    return found


# The vocabulary: everything the schema names, and the game's own codes (cards, presets, cước).
WORDS = sorted(
    {p["name"] for op in OPERATIONS for p in op.params}
    | {w for op in OPERATIONS if op.body_schema for w in words_of(op.body_schema)}
    | set(CODES)
    | set(PRESETS)
    | set(CUOC_SLUGS)
    | set(OVERRIDE_KEYS)
)


# --------------------------------------------------------------------------- strategies


def mostly(
    usual: st.SearchStrategy[Any], hostile: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    """Three times in four the usual thing, so that requests get past the first check."""
    return st.sampled_from((usual, usual, usual, hostile)).flatmap(lambda chosen: chosen)


SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
TEXT = mostly(st.text(max_size=24), st.text(st.one_of(st.characters(), SURROGATES), max_size=24))
# Header and query values travel as latin-1 over the wire: no surrogates, no CR/LF.
WIRE_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=40)
BIG_INTS = st.sampled_from(
    [0, -1, 1, 2**31 - 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63) - 1, 10**30, -(10**40)]
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    BIG_INTS,
    mostly(st.floats(allow_nan=False, allow_infinity=False), st.floats()),
    st.sampled_from(WORDS),
    TEXT,
)
KEYS = st.one_of(st.sampled_from(WORDS), TEXT)


def json_values(keys: st.SearchStrategy[str] = KEYS) -> st.SearchStrategy[Any]:
    return st.recursive(
        SCALARS,
        lambda children: st.one_of(
            st.lists(children, max_size=5), st.dictionaries(keys, children, max_size=5)
        ),
        max_leaves=16,
    )


ANY_JSON = json_values()


def integers_near(low: int | None, high: int | None) -> st.SearchStrategy[int]:
    edges = [v for bound in (low, high) if bound is not None for v in (bound - 1, bound, bound + 1)]
    inside = st.integers(min_value=low, max_value=high)
    return st.one_of(inside, st.sampled_from(edges), BIG_INTS) if edges else inside


def typed(node: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values shaped like the schema node says (often valid, often at its edges)."""
    node = resolve(node)
    if "oneOf" in node or "anyOf" in node:
        return st.one_of([typed(n, depth) for n in node.get("oneOf") or node["anyOf"]])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node.get("type")
    if kind == "integer":
        return integers_near(node.get("minimum"), node.get("maximum"))
    if kind == "number":
        return st.floats(allow_nan=True, allow_infinity=True)
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        return st.one_of(
            st.sampled_from(WORDS), TEXT, st.text(max_size=node.get("maxLength", 8) + 2)
        )
    if kind == "array" and depth < 3:
        items = typed(node.get("items", {}), depth + 1)
        size = node.get("minItems", 0)
        if size > 8:  # long arrays (a 100-card deck): a few items repeated, near the right length
            lengths = st.sampled_from([size, size, size - 1, size + 1])
            return st.tuples(st.lists(items, min_size=1, max_size=4), lengths).map(
                lambda drawn: (drawn[0] * drawn[1])[: drawn[1]]
            )
        return st.lists(items, max_size=max(size, node.get("maxItems", 4)))
    if (kind == "object" or "properties" in node) and depth < 3:
        return objects(node, depth)
    return ANY_JSON


def objects(node: dict[str, Any], depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """Any subset of the real fields (typed or arbitrary values) plus, sometimes, junk keys."""
    props = node.get("properties", {})
    real = st.fixed_dictionaries(
        {},
        optional={name: st.one_of(typed(sub, depth + 1), ANY_JSON) for name, sub in props.items()},
    )
    extra_values = node.get("additionalProperties")
    if isinstance(extra_values, dict):
        extra = st.dictionaries(
            KEYS, st.one_of(typed(extra_values, depth + 1), ANY_JSON), max_size=4
        )
    else:
        extra = st.one_of(st.just({}), st.dictionaries(KEYS, ANY_JSON, max_size=2))
    return st.builds(lambda a, b: {**b, **a}, real, extra)


NASTY_BODIES = [
    b"",
    b"null",
    b"{",
    b'{"a": 1,}',
    b"\xef\xbb\xbf{}",
    b'{"a": NaN}',
    b'{"a": -Infinity}',
    b'{"a": 1e999999}',
    b'{"a": 1' + b"0" * 5000 + b"}",
    b'{"\\ud800": 1}',
    b'{"a": "\\udfff\\ud800"}',
    b'{"a": "\xed\xa0\x80"}',
    b'{"a": "\xff"}',
    b'{"a": "\\u0000"}',
    b'{"a": 1, "a": 2}',
    b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 3000 + b"1" + b"}" * 3000,
    b'{"pad": "' + b"x" * 70_000 + b'"}',
]

CONTENT_TYPES = mostly(
    st.sampled_from(["application/json", "application/json; charset=utf-8"]),
    st.sampled_from(
        [
            "application/json; charset=latin-1",
            "application/json; charset=utf-16",
            "application/json; charset=utf-32-be",
            "application/json; charset=ascii",
            "application/json; charset=idna",
            "application/json; charset=punycode",
            "application/json; charset=undefined",
            "application/json; charset=rot13",
            "application/json; charset=zlib",
            "application/json; charset=nope",
            "application/json; charset=",
            "application/json;;;",
            "APPLICATION/JSON",
            PROBLEM,
            "application/vnd.api+json",
            "text/plain",
            "text/html; charset=utf-8",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=xyz",
            "multipart/form-data",
            "application/octet-stream",
            "*/*",
            "",
        ]
    )
    | WIRE_TEXT,
)


def bodies(schema: dict[str, Any] | None) -> st.SearchStrategy[bytes]:
    """Request bodies as raw bytes: JSON shaped by the schema or not, encoded several ways."""
    shaped = typed(schema) if schema else ANY_JSON

    @st.composite
    def draw_body(draw: st.DrawFn) -> bytes:
        how = draw(mostly(st.just("shaped"), st.sampled_from(["any", "nasty", "bytes", "cut"])))
        if how == "nasty":
            return draw(st.sampled_from(NASTY_BODIES))
        if how == "bytes":
            return draw(st.binary(max_size=64))
        value = draw(ANY_JSON if how == "any" else shaped)
        # ensure_ascii sends lone surrogates as \udXXX escapes; otherwise as raw (invalid) UTF-8.
        text = json.dumps(value, ensure_ascii=draw(st.booleans()), allow_nan=True)
        if draw(st.booleans()):
            text = text.replace("Infinity", "1e999")  # a float literal too big for a double
        raw = text.encode("utf-8", "surrogatepass")
        if how == "cut" and raw:
            raw = raw[: draw(st.integers(0, len(raw) - 1))]
        return raw

    return draw_body()


def query_value(param: dict[str, Any]) -> st.SearchStrategy[str]:
    node = resolve(param.get("schema", {}))
    junk = st.one_of(
        WIRE_TEXT,
        st.sampled_from(["", " ", "1.0", "1.5", "+3", "-0", "0x10", "1e3", "١", "true", "null"]),
        st.sampled_from(["%", "%ZZ", "%00", "%ED%A0%80", "%FF", "9" * 30, "a&b=c"]),
    )
    if node.get("type") == "integer":
        return st.one_of(integers_near(node.get("minimum"), node.get("maximum")).map(str), junk)
    return st.one_of(st.sampled_from(WORDS), junk)


@st.composite
def query_strings(draw: st.DrawFn, op: Operation) -> str:
    """The documented parameters with random values, junk parameters, and broken encodings."""
    documented = [p for p in op.params_in("query") if p["name"] != LONG_POLL_PARAM]
    pairs: list[tuple[str, str]] = []
    for param in documented:
        for _ in range(draw(st.integers(0, 2))):
            pairs.append((param["name"], draw(query_value(param))))
    if any(p["name"] == LONG_POLL_PARAM for p in op.params_in("query")) and draw(st.booleans()):
        # Anything the server could take as N > 1 would make it sleep: only 0, 1 and non-numbers.
        pairs.append(
            (LONG_POLL_PARAM, draw(st.sampled_from(["0", "1", "", "-1", "31", "x", "9" * 30])))
        )
    junk_keys = st.one_of(st.sampled_from(WORDS), WIRE_TEXT).filter(lambda k: k != LONG_POLL_PARAM)
    for key in draw(mostly(st.just([]), st.lists(junk_keys, min_size=1, max_size=3))):
        pairs.append((key, draw(WIRE_TEXT)))
    if draw(st.booleans()):
        query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs)
    else:  # unencoded, as a careless client sends it
        query = "&".join(f"{k}={v}" for k, v in pairs)
    hostile_tails = ["&", "&&=", "=&", "%", "x" * 3000, "a=1&" * (MAX_QUERY_FIELDS + 1)]
    return query + draw(mostly(st.just(""), st.sampled_from(hostile_tails)))


def header_values(name: str, etags: list[str]) -> st.SearchStrategy[str]:
    ascii_key = st.text(
        st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=130
    )
    usual: dict[str, st.SearchStrategy[str]] = {
        "If-None-Match": st.one_of(
            st.sampled_from(etags), st.lists(st.sampled_from(etags), min_size=2).map(", ".join)
        ),
        "Idempotency-Key": st.one_of(st.sampled_from(["fuzz-key-1", "fuzz-key-2"]), ascii_key),
        "Accept-Language": st.sampled_from(["vi", "en", "vi-VN,vi;q=0.9", "fr", "*"]),
        "Accept": st.sampled_from(["application/json", "*/*", "application/json; indent=4"]),
        "X-Forwarded-For": st.sampled_from(["1.2.3.4", "::1", "10.0.0.1, 1.2.3.4"]),
    }
    hostile: dict[str, list[str]] = {
        "If-None-Match": ["*", "", '"x"', 'W/"1-0"', ",,,", '"' * 3],
        "Idempotency-Key": ["", " ", "k" * 129, "kéy", "a b", "\t"],
        "Accept-Language": ["", "en;q=abc", "x" * 600, "vi;q=2,,", "*;q=0"],
        "Accept": [
            PROBLEM,
            "application/xml",
            "text/html",
            "application/json; indent=x",
            "application/json; indent=99999999999999999999",
            "application/vnd.oai.openapi+json",
            "",
            ";;",
        ],
        "X-Forwarded-For": ["", "a, b, c", "x" * 300, "1.2.3.4\t5.6.7.8"],
    }
    return mostly(usual.get(name, WIRE_TEXT), st.sampled_from(hostile.get(name, [""])) | WIRE_TEXT)


def long_poll_seconds(query: str) -> int:
    """How long the server would hold this request (as DRF's IntegerField reads ``wait``)."""
    values = [v for k, v in parse_qsl(query, keep_blank_values=True) if k == LONG_POLL_PARAM]
    try:
        seconds = int(re.sub(r"\.0*\s*$", "", values[-1])) if values else 0
    except ValueError:
        return 0
    return seconds if 0 < seconds <= 30 else 0


def environ_key(header: str) -> str:
    return "HTTP_" + header.upper().replace("-", "_")


# --------------------------------------------------------------------------- the world


@dataclass
class World:
    """Who and what the fuzzer may name: the players of table "ours" (a live hand, and maybe an
    ended one), the players of another table's hand, a user seated at a table never dealt,
    and their tables, hands (by name: live, ended, theirs) and first tokens."""

    users: dict[str, Any]
    tables: dict[str, int]
    hands: dict[str, int]
    tokens: dict[str, int]


def play_to_the_end(clients: dict[int, APIClient], hand_id: int) -> None:
    url = f"/api/v1/hands/{hand_id}"
    view = next(iter(clients.values())).get(url).json()
    for _ in range(40):
        if view["status"] == "ended":
            return
        client = clients[view["players"][view["turn_seat"]]["user_id"]]
        move = scripted_move(client.get(url).json()["legal_moves"])
        r = client.post(url + "/moves", move, format="json")
        assert r.status_code == 201, r.content
        view = r.json()["state"]
    raise AssertionError("the scripted hand did not end")


def deal(clients: list[APIClient], body: dict[str, Any]) -> tuple[int, int]:
    r = clients[0].post("/api/v1/tables", body, format="json")
    assert r.status_code == 201, r.content
    table_id = r.json()["id"]
    for client in clients[1:]:
        assert client.post(f"/api/v1/tables/{table_id}/join", {}, format="json").status_code == 200
    hand_id = None
    for client in clients:
        r = client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
        assert r.status_code == 200, r.content
        hand_id = r.json()["hand_id"] or hand_id
    assert hand_id is not None
    return table_id, hand_id


@pytest.fixture
def make_world(make_user: Callable[..., tuple[Any, str]], settings: Any) -> Callable[[bool], World]:
    """Factory: ``make_world(ended)``; with ``ended``, table "ours" first plays a scripted hand
    to its end (only the hand endpoints need one: it costs some 30 requests)."""
    # A register or log-in body that passes validation hashes a password: keep that cheap.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

    def build(ended: bool) -> World:
        made = {
            name: make_user() for name in ("p0", "p1", "p2", "p3", "outsider", "rival", "lurker")
        }
        users = {name: user for name, (user, _) in made.items()}
        clients = {name: client_with(token) for name, (_, token) in made.items()}
        ours = [clients[f"p{i}"] for i in range(4)]
        hands: dict[str, int] = {}

        table, hands["live"] = deal(
            ours, {"name": "ours", "stake": 10, "deck": WIN_DECK, "dealer": 0}
        )
        if ended:
            hands["ended"] = hands["live"]
            play_to_the_end({users[f"p{i}"].pk: ours[i] for i in range(4)}, hands["ended"])
            readied = [c.post(f"/api/v1/tables/{table}/ready", {}, format="json") for c in ours]
            hands["live"] = next(r.json()["hand_id"] for r in readied if r.json()["hand_id"])
        # Table "theirs": two other players in advanced mode; table "undealt": never dealt.
        theirs_table, hands["theirs"] = deal(
            [clients["outsider"], clients["rival"]],
            {"name": "theirs", "stake": 5, "max_seats": 2, "mode": "advanced"},
        )
        r = clients["lurker"].post("/api/v1/tables", {"name": "empty", "stake": 1}, format="json")
        assert r.status_code == 201, r.content

        first_tokens = ApiToken.objects.order_by("pk")
        return World(
            users=users,
            tables={"ours": table, "theirs": theirs_table, "undealt": r.json()["id"]},
            hands=hands,
            tokens={name: first_tokens.filter(user=user)[0].pk for name, user in users.items()},
        )

    return build


ACTORS = ["p0", "p1", "p2", "p3", "turn", "turn", "outsider", "lurker", "anonymous", "forged"]
FORGED_AUTH = [
    "Bearer",
    "Bearer ",
    "Basic dXNlcjpwYXNz",
    "Bearer " + "A" * 43,
    "Bearer " + "A" * 200,
    "Bearer a b",
    "bearer\t" + "B" * 20,
    "Bearer é" + "C" * 20,
    "Token " + "D" * 43,
]


def missing_id(ids: list[int]) -> str:
    return str(max(ids) + 1_000_000)


def path_values(name: str, w: World, actor: str, token_id: int | None) -> st.SearchStrategy[str]:
    hostile = ["0", "-1", "999999999999999999", "9" * 19, "9" * 40, "1.0", "x", "\x00", "٣"]
    real: list[int] = []
    if name == "table_id":
        real = list(w.tables.values())
    elif name == "hand_id":
        real = list(w.hands.values())
    elif name == "token_id":
        real = list(w.tokens.values()) + ([token_id] if token_id else [])
        if actor in w.tokens:
            real += [w.tokens[actor], w.tokens[actor]]
    else:
        real = list(w.tables.values()) + list(w.hands.values()) + list(w.tokens.values())
    return mostly(
        st.sampled_from([str(i) for i in real]), st.sampled_from([missing_id(real), *hostile])
    )


# --------------------------------------------------------------------------- the property


def media_type(response: Any) -> str:
    return response.get("Content-Type", "").split(";")[0].strip().lower()


def check(method: str, response: Any) -> None:
    status = response.status_code
    assert status < 500, (status, response.content[:500])
    content = response.content
    if status >= 400:
        assert media_type(response) == PROBLEM, (
            status,
            response.get("Content-Type"),
            content[:500],
        )
        if method == "HEAD":
            return
        body = json.loads(content)
        assert isinstance(body, dict), body
        assert isinstance(body.get("code"), str) and body["code"], body
        assert isinstance(body.get("detail"), str) and body["detail"], body
        assert body.get("status") == status, body
    elif status in (204, 304) or method == "HEAD":
        assert content == b"", content[:200]
    elif 200 <= status < 300:
        json.loads(content)
    else:
        assert 300 <= status < 400 and response.get("Location"), (status, content[:200])


def whose_turn(w: World, hand: str) -> str:
    """The name of the player to move in one of the world's hands (a participant if nobody)."""
    watcher = "outsider" if hand == "theirs" else "p0"
    _, raw = token_create(user=w.users[watcher])
    view = client_with(raw).get(f"/api/v1/hands/{w.hands[hand]}").json()
    if view.get("turn_seat") is None:
        return watcher
    user_id = view["players"][view["turn_seat"]]["user_id"]
    return next(name for name, user in w.users.items() if user.pk == user_id)


def test_the_fuzzed_operations_are_the_served_schema(api_client: APIClient) -> None:
    r = api_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    assert r.status_code == 200
    served = {(m, p) for p, item in r.json()["paths"].items() for m in item if m in HTTP_METHODS}
    assert served == {(op.method, op.path) for op in OPERATIONS}
    assert len(OPERATIONS) >= 20


@pytest.mark.parametrize("op", OPERATIONS, ids=[op.spec["operationId"] for op in OPERATIONS])
def test_no_request_is_a_5xx_and_every_error_is_a_problem(
    op: Operation, make_world: Callable[[bool], World]
) -> None:
    world = make_world("{hand_id}" in op.path)
    client = APIClient()
    op_bodies = bodies(op.body_schema)
    etags = [f'"{h}-{s}"' for h in world.hands.values() for s in range(4)]
    long_polls = [0]

    @hypothesis.settings(
        max_examples=EXAMPLES_PER_OPERATION * (2 if op.body_schema else 1),
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )
    @given(data=st.data())
    def fuzz(data: st.DataObject) -> None:
        cache.clear()  # throttle counters: keep every example able to reach the view
        # Half the time on a hand's moves: one of the caller's legal moves, so the hand moves on.
        plays = "{hand_id}" in op.path and bool(op.body_schema) and data.draw(st.booleans())
        hand = data.draw(st.sampled_from(sorted(world.hands)), label="hand") if plays else "live"
        actors = st.sampled_from(ACTORS)
        actor = data.draw(mostly(st.just("turn"), actors) if plays else actors, label="actor")
        if actor == "turn":
            actor = whose_turn(world, hand)
        extra: dict[str, str] = {}
        token_id = None
        if actor in world.users:
            token, raw = token_create(user=world.users[actor], name="fuzz")
            token_id = token.pk
            extra["HTTP_AUTHORIZATION"] = f"Bearer {raw}"
        elif actor == "forged":
            auth = data.draw(st.one_of(st.sampled_from(FORGED_AUTH), WIRE_TEXT), label="auth")
            extra["HTTP_AUTHORIZATION"] = auth

        method = op.method.upper()
        if data.draw(st.integers(0, 9), label="method roll") == 0:
            method = data.draw(st.sampled_from([m.upper() for m in HTTP_METHODS]), label="method")

        path = op.path
        for param in op.params_in("path"):
            if plays and param["name"] == "hand_id":
                value = str(world.hands[hand])
            else:
                value = data.draw(path_values(param["name"], world, actor, token_id), param["name"])
            path = path.replace("{" + param["name"] + "}", quote(value, safe=""))
        query = data.draw(query_strings(op), label="query")
        if long_poll_seconds(query):
            long_polls[0] += 1
            if long_polls[0] > LONG_POLLS_PER_TEST or long_poll_seconds(query) > 1:
                query += f"&{LONG_POLL_PARAM}=0"  # the last value is the one the server reads
        url = path + ("?" + query if query else "")

        headers = [p["name"] for p in op.params_in("header")]
        headers += [
            "If-None-Match",
            "Idempotency-Key",
            "Accept-Language",
            "Accept",
            "X-Forwarded-For",
        ]
        for name in dict.fromkeys(headers):
            if data.draw(st.integers(0, 2), label=f"send {name}") == 0:
                extra[environ_key(name)] = data.draw(header_values(name, etags), label=name)

        body = data.draw(op_bodies, label="body")
        if plays and actor in world.users:
            # Drawn whatever the hand's state (which the earlier examples changed): the draws
            # must not depend on it, or hypothesis finds its choices inconsistent between runs.
            pick = data.draw(st.integers(0, 63), label="move (its index in the legal moves)")
            offset = data.draw(st.sampled_from([None, 0, 0, -1, 1]), label="expected_seq - seq")
            auth = extra["HTTP_AUTHORIZATION"]
            view = APIClient().get(f"/api/v1/hands/{world.hands[hand]}", HTTP_AUTHORIZATION=auth)
            if view.status_code == 200 and (legal := view.json()["legal_moves"]):
                move = dict(legal[pick % len(legal)])
                if offset is not None:
                    move["expected_seq"] = view.json()["seq"] + offset
                body = json.dumps(move).encode()
        content_type = data.draw(CONTENT_TYPES, label="content type")

        note(f"{method} {url!r}\nheaders={extra!r}\ncontent_type={content_type!r}\nbody={body!r}")
        with transaction.atomic():  # a failing request must not poison the test's transaction
            response = client.generic(method, url, data=body, content_type=content_type, **extra)
        note(f"-> {response.status_code} {response.get('Content-Type')} {response.content[:300]!r}")
        check(method, response)

    fuzz()


# Crashes this fuzz found outside the project's code, now handled. Django's WSGIRequest.__init__
# reads the Content-Type charset, and HttpRequest.encoding's setter then builds request.GET with
# it, before any middleware or error handler: whatever that raised reached the WSGI server, which
# answered its own text/html 500. chan_api.wsgi.ChanWSGIRequest drops a charset it cannot use.
# Django's test client builds a plain WSGIRequest, so these tests give it ours.
LONG_QUERY = "&".join(["a=1"] * (MAX_QUERY_FIELDS + 1))

FORMER_CRASHES = [
    pytest.param("x=1", "text/plain; charset=rot13", False, id="non-text charset"),
    pytest.param("x=1", "application/json; charset=undefined", False, id="charset undefined"),
    pytest.param("x=%3A", "application/json; charset=idna", False, id="charset idna, an escape"),
    pytest.param("x=%FF", "application/json; charset=punycode", False, id="charset punycode"),
    pytest.param(LONG_QUERY, "application/json; charset=utf-8", False, id="too many fields"),
    pytest.param(LONG_QUERY, "application/json", True, id="too many fields under DEBUG"),
]


@pytest.mark.parametrize(("query", "content_type", "debug"), FORMER_CRASHES)
def test_former_crashes_are_answered(
    query: str, content_type: str, debug: bool, settings: Any, monkeypatch: Any
) -> None:
    settings.DEBUG = debug
    client = APIClient(raise_request_exception=False)

    response = client.generic(
        "GET", f"/api/v1/rules/presets?{query}", data=b"", content_type=content_type
    )

    check("GET", response)


@pytest.mark.parametrize(
    ("query", "content_type"),
    [("x=1", "text/plain; charset=rot13"), (LONG_QUERY, "a/b; charset=utf-8")],
)
def test_the_wsgi_entry_answers_a_charset_it_cannot_use(query: str, content_type: str) -> None:
    # The very application object gunicorn serves, called as a WSGI server would.
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/api/v1/rules/presets",
        "QUERY_STRING": query,
        "CONTENT_TYPE": content_type,
        "HTTP_HOST": "localhost",
    }
    wsgiref.util.setup_testing_defaults(environ)
    started: list[str] = []

    body = b"".join(application(environ, lambda status, headers: started.append(status)))

    status = int(started[0].split()[0])
    assert status in (400, 401), (status, body[:200])
    assert json.loads(body)["code"]


@pytest.fixture
def asgi_application() -> Any:
    """chan_api.asgi's application: what the web workers serve."""
    from chan_api.asgi import application as asgi_app

    return asgi_app


async def asgi_get(app: Any, path: str, query: str, content_type: str) -> tuple[int, bytes]:
    """One GET through an ASGI application, as uvicorn calls it: status and body."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"localhost"), (b"content-type", content_type.encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("localhost", 80),
    }
    received = asyncio.Event()
    messages: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if received.is_set():  # then the client stays connected until the answer is sent
            await asyncio.Event().wait()
        received.set()
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    await app(scope, receive, send)
    return messages[0]["status"], b"".join(m.get("body", b"") for m in messages[1:])


# The served ASGI stack runs Django's WSGI handler in threads (chan_api/wsgi_threads.py): the
# charsets that once crashed it must be answered through it as through gunicorn's WSGI.
@pytest.mark.parametrize(("query", "content_type", "debug"), FORMER_CRASHES)
def test_the_asgi_entry_answers_a_charset_it_cannot_use(
    query: str, content_type: str, debug: bool, settings: Any, asgi_application: Any
) -> None:
    settings.DEBUG = debug

    status, body = asyncio.run(
        asgi_get(asgi_application, "/api/v1/rules/presets", query, content_type)
    )

    assert status in (400, 401), (status, body[:200])
    assert json.loads(body)["code"]
