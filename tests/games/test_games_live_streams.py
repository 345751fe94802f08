"""Push streams (games/live/streams.py): a hand's events and a player's feed as Server-Sent
Events and NDJSON. Over WSGI (Django's test client) a stream sends what there is and ends; the
ASGI tests hold one open while moves land.

The property: over random hands (hypothesis: seats, preferences, moves), a seat's stream never
shows another seat's cards, the stock's order or the seed — the approach of
tests/faults/test_hidden_information.py, whose check this reuses. ``HIDDEN_INFO_STREAM_HANDS``
sets how many hands (4 by default)."""

from __future__ import annotations

import json
import os
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import metrics
from games.hand_store import hand_state
from games.models import Hand
from tests.faults.test_hidden_information import assert_hides
from tests.games.conftest import Player, start_table

pytestmark = pytest.mark.django_db
HANDS = int(os.environ.get("HIDDEN_INFO_STREAM_HANDS", "4"))
SSE = "text/event-stream"
NDJSON = "application/x-ndjson"


def parse_sse(raw: bytes) -> list[tuple[int, str, Any]]:
    """(id, event, data) of every frame with data; comments and ``retry`` dropped."""
    frames = []
    for block in raw.decode().split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if line.startswith(":") or ": " not in line:
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        if "data" in fields:
            frames.append((int(fields["id"]), fields["event"], json.loads(fields["data"])))
    return frames


def parse_ndjson(raw: bytes) -> list[Any]:
    lines = [json.loads(line) for line in raw.decode().splitlines() if line]
    return [line for line in lines if "heartbeat" not in line]


def read(player: Player, url: str, accept: str, **headers: str) -> bytes:
    r = player.client.get(url, HTTP_ACCEPT=accept, **headers)
    assert r.status_code == 200, r.content
    assert r["Content-Type"] == accept
    return b"".join(r.streaming_content)


# ------------------------------------------------------------------------------- over WSGI


def test_a_hands_stream_is_its_events_page_frame_by_frame(players) -> None:
    ids = start_table(players)
    url = f"/api/v1/hands/{ids['hand']}/events"
    for p in players:
        page = p.client.get(url).json()["events"]
        frames = parse_sse(read(p, url, SSE))
        assert [(i, name) for i, name, _ in frames] == [(e["seq"], e["type"]) for e in page]
        assert [data for _, _, data in frames] == page
        assert parse_ndjson(read(p, url, NDJSON)) == page


def test_last_event_id_resumes_a_stream(players) -> None:
    ids = start_table(players)
    hand = Hand.objects.get(pk=ids["hand"])
    mover = next(
        p for p in players if p.client.get(f"/api/v1/hands/{hand.pk}").json()["legal_moves"]
    )
    legal = mover.client.get(f"/api/v1/hands/{hand.pk}").json()["legal_moves"]
    mover.client.post(f"/api/v1/hands/{hand.pk}/moves", legal[0], format="json")
    url = f"/api/v1/hands/{hand.pk}/events"
    frames = parse_sse(read(mover, url, SSE, HTTP_LAST_EVENT_ID="0"))
    assert [i for i, _, _ in frames] == [1]
    assert [e["seq"] for e in parse_ndjson(read(mover, url + "?after_seq=0", NDJSON))] == [1]


def test_the_feed_streams_too(players) -> None:
    start_table(players)
    p = players[0]
    page = p.client.get("/api/v1/me/feed").json()["entries"]
    frames = parse_sse(read(p, "/api/v1/me/feed", SSE))
    assert [(i, kind) for i, kind, _ in frames] == [(e["seq"], e["kind"]) for e in page]
    resumed = parse_sse(read(p, "/api/v1/me/feed", SSE, HTTP_LAST_EVENT_ID="2"))
    assert [i for i, _, _ in resumed] == [e["seq"] for e in page if e["seq"] > 2]


def test_a_stranger_gets_a_problem_not_a_stream(players, make_player, no_spectators) -> None:
    ids = start_table(players)
    r = make_player().client.get(f"/api/v1/hands/{ids['hand']}/events", HTTP_ACCEPT=SSE)
    assert r.status_code == 403
    assert not r.streaming
    r = players[0].client.get("/api/v1/hands/999999/events", HTTP_ACCEPT=NDJSON)
    assert r.status_code == 404


# ------------------------------------------------------------------------------- the property


def _play_and_watch(make_player: Any, rng: random.Random, n: int) -> int:
    players = [make_player() for _ in range(n)]
    r = players[0].client.post(
        "/api/v1/tables",
        {"name": "hide", "stake": 10, "max_seats": n, "mode": rng.choice(["basic", "advanced"])},
        format="json",
    )
    table_id = r.json()["id"]
    for p in players[1:]:
        prefs = {"auto_u": rng.random() < 0.7, "auto_chiu": rng.random() < 0.7}
        p.client.post(f"/api/v1/tables/{table_id}/join", prefs, format="json")
    hand_id = None
    for p in players:
        r = p.client.post(f"/api/v1/tables/{table_id}/ready", {}, format="json")
        hand_id = r.json()["hand_id"] or hand_id
    hand = Hand.objects.get(pk=hand_id)
    by_seat = [next(p for p in players if p.user.pk == s.user_id) for s in hand.seat_list()]
    url = f"/api/v1/hands/{hand_id}"
    for moves in range(600):
        hand.refresh_from_db()
        if hand.status == "ended":
            return moves
        state = hand_state(hand)
        if moves % 6 == 0:
            for seat, p in enumerate(by_seat):
                for _, _, data in parse_sse(read(p, url + "/events", SSE)):
                    assert_hides(json.dumps(data).encode(), seat, hand, state, f"sse {seat}")
                for data in parse_ndjson(read(p, url + "/events", NDJSON)):
                    assert_hides(json.dumps(data).encode(), seat, hand, state, f"ndjson {seat}")
                assert_hides(
                    read(p, "/api/v1/me/feed", NDJSON).replace(b"\n", b",").join([b"[", b"null]"]),
                    seat,
                    hand,
                    state,
                    f"feed {seat}",
                )
        mover = by_seat[state.turn]
        legal = mover.client.get(url).json()["legal_moves"]
        r = mover.client.post(url + "/moves", rng.choice(legal), format="json")
        assert r.status_code == 201, r.content
    raise AssertionError("the hand did not end")


@settings(
    max_examples=HANDS,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(min_value=0, max_value=2**32), n=st.sampled_from([2, 3, 4]))
def test_a_seats_stream_never_shows_another_seats_cards(make_player, seed: int, n: int) -> None:
    assert _play_and_watch(make_player, random.Random(seed), n) > 0


# ------------------------------------------------------------------------------- under ASGI


def _http(server: Any, player: Player) -> httpx.Client:
    return httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {player.token}"}, timeout=30
    )


def _until_waiting(n: int, timeout: float = 10.0) -> None:
    by = time.monotonic() + timeout
    while metrics.LONG_POLLS_WAITING._value.get() < n and time.monotonic() < by:
        time.sleep(0.02)
    assert metrics.LONG_POLLS_WAITING._value.get() >= n


def _collect(client: httpx.Client, url: str, accept: str, want: int, out: list[Any]) -> None:
    """Read a stream until ``want`` data frames came (SSE) or lines (NDJSON), then go."""
    with client.stream("GET", url, headers={"Accept": accept}) as r:
        assert r.status_code == 200
        buffer = ""
        for text in r.iter_text():
            buffer += text
            out[:] = parse_sse(buffer.encode()) if accept == SSE else parse_ndjson(buffer.encode())
            if len(out) >= want:
                return


@pytest.mark.django_db(transaction=True)
def test_a_move_reaches_every_open_stream_of_the_hand(asgi_live_server: Any, players) -> None:
    # Given a live hand and each player holding an SSE or NDJSON stream of its events
    hand_id = start_table(players)["hand"]
    url = f"/api/v1/hands/{hand_id}/events"
    mover = next(
        p for p in players if p.client.get(f"/api/v1/hands/{hand_id}").json()["legal_moves"]
    )
    legal = mover.client.get(f"/api/v1/hands/{hand_id}").json()["legal_moves"]
    clients = [_http(asgi_live_server, p) for p in players]
    outs: list[list[Any]] = [[] for _ in players]
    with ThreadPoolExecutor(len(players)) as pool:
        streams = [
            pool.submit(_collect, c, url, SSE if i % 2 else NDJSON, 2, outs[i])
            for i, c in enumerate(clients)
        ]
        _until_waiting(len(players))
        time.sleep(0.2)
        assert all(len(o) == 1 for o in outs)  # the deal, then nothing yet
        # When one moves
        started = time.monotonic()
        r = mover.client.post(f"/api/v1/hands/{hand_id}/moves", legal[0], format="json")
        assert r.status_code == 201
        for s in streams:
            s.result(timeout=10)
    # Then every stream got it at once, as its own events page has it
    assert time.monotonic() - started < 5
    for p, out in zip(players, outs, strict=True):
        page = p.client.get(url).json()["events"]
        events = [e if isinstance(e, dict) and "seq" in e else e[2] for e in out]
        assert events == page[:2]
    for c in clients:
        c.close()


@pytest.mark.django_db(transaction=True)
def test_feed_and_table_long_polls_wait_without_a_thread(asgi_live_server: Any, players) -> None:
    owner, guest = players[0], players[1]
    table_id = owner.client.post(
        "/api/v1/tables", {"name": "w", "stake": 10}, format="json"
    ).json()["id"]
    head = owner.client.get("/api/v1/me/feed").json()["head"]
    etag = owner.client.get(f"/api/v1/tables/{table_id}")["ETag"]
    c = _http(asgi_live_server, owner)
    with ThreadPoolExecutor(3) as pool:
        waits = [
            pool.submit(c.get, f"/api/v1/me/feed?after={head}&wait=20"),
            pool.submit(
                c.get, f"/api/v1/tables/{table_id}?wait=20", headers={"If-None-Match": etag}
            ),
            pool.submit(
                c.get, f"/api/v1/tables/{table_id}?wait=1", headers={"If-None-Match": etag}
            ),
        ]
        _until_waiting(3)
        # the table's short wait ends empty: 304, the same ETag
        quiet = waits[2].result(timeout=10)
        assert quiet.status_code == 304 and quiet.headers["ETag"] == etag
        assert not waits[0].done() and not waits[1].done()
        started = time.monotonic()
        guest.client.post(f"/api/v1/tables/{table_id}/join", {}, format="json")
        feed, table = waits[0].result(timeout=10), waits[1].result(timeout=10)
    assert time.monotonic() - started < 5
    assert [e["kind"] for e in feed.json()["entries"]] == ["seats_changed"]
    assert table.status_code == 200 and table.headers["ETag"] != etag
    assert [s["user_id"] for s in table.json()["seats"]] == [owner.user.pk, guest.user.pk]
    c.close()
