"""Bad input on every games endpoint that takes a body is a 4xx problem+json, never a 500."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db
PROBLEM = "application/problem+json"

BODIES = {
    "lone surrogate in a key": b'{"stake": 1, "\\ud800": 1}',
    "lone surrogate in a value": b'{"stake": 1, "ruleset": {"preset": "\\ud800"}}',
    "lone surrogate in a nested key": b'{"cuoc": {"\\ud800": 1}}',
    "malformed": b'{"stake": ',
    "not an object": b"[1, 2, 3]",
    "a bare string": b'"hello"',
    "NaN": b'{"stake": NaN}',
    "deep": b"[" * 30_000 + b"]" * 30_000,
    "huge": b'{"pad": "' + b"x" * 100_000 + b'"}',
    "not utf-8": b'{"stake": "\xff\xfe"}',
}


def endpoints(hand: dict) -> list[str]:
    return [
        "/api/v1/tables",
        f"/api/v1/tables/{hand['table']}/join",
        f"/api/v1/tables/{hand['table']}/ready",
        f"/api/v1/hands/{hand['hand']}/moves",
        "/api/v1/rules/score",
    ]


@pytest.mark.parametrize("name", list(BODIES))
def test_bad_bodies_are_problems_everywhere(players, win_hand, name) -> None:
    for url in endpoints(win_hand):
        r = players[1].client.post(url, data=BODIES[name], content_type="application/json")
        assert 400 <= r.status_code < 500, (url, r.status_code, r.content[:200])
        assert r["Content-Type"] == PROBLEM, url
        assert r.json()["code"], url
    assert players[1].client.get(f"/api/v1/hands/{win_hand['hand']}").json()["seq"] == 0
