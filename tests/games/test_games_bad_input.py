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


# --------------------------------------------------------- integer query parameters: ASCII only

NOT_ASCII_DIGITS = ["١", "１", "²", "٣٠", "1_0", " 1", "+1", "1\n", "𝟙"]


def integer_parameters(hand: dict) -> list[tuple[str, str]]:
    """Every integer the query string carries, on the URL that takes it."""
    h = hand["hand"]
    return [
        (f"/api/v1/hands/{h}?wait=1", "after_seq"),
        (f"/api/v1/hands/{h}", "wait"),
        (f"/api/v1/hands/{h}/events?wait=0", "after_seq"),
        (f"/api/v1/hands/{h}/events", "limit"),
        (f"/api/v1/hands/{h}/events?after_seq=0", "wait"),
        (f"/api/v1/hands/{h}/replay", "seq"),
        ("/api/v1/tables", "stake"),
        ("/api/v1/tables", "open_seats"),
        ("/api/v1/tables", "limit"),
        ("/api/v1/tables", "cursor"),
        ("/api/v1/me/hands", "limit"),
        ("/api/v1/me/hands", "cursor"),
        ("/api/v1/me/ledger", "limit"),
        ("/api/v1/me/ledger", "cursor"),
    ]


@pytest.mark.parametrize("digits", NOT_ASCII_DIGITS)
def test_integer_query_parameters_take_ascii_digits_only(players, win_hand, digits) -> None:
    for url, name in integer_parameters(win_hand):
        value = f"{digits}.1" if name == "cursor" and url.endswith("/tables") else digits
        sep = "&" if "?" in url else "?"
        r = players[0].client.get(url + sep, {name: value})
        assert r.status_code == 400, (url, name, r.status_code, r.content[:300])
        assert r["Content-Type"] == PROBLEM
        assert name in r.json()["errors"], (url, name, r.json())
    # the same parameters in ASCII are taken
    assert (
        players[0].client.get(f"/api/v1/hands/{win_hand['hand']}/events?limit=10").status_code
        == 200
    )
