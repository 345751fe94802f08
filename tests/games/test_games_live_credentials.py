"""Streams and long polls judge their credential again while they are open
(games/live/credentials.py): a token revoked or expired, its player banned, or its scope gone
after Django let a stream and a long poll in, then a move: nothing of the hand reaches either
after the re-check, the stream ends with a last event naming the reason, the long poll is
Django's 401 (403 for a scope). A hand's stream ends after its settlement."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.utils import timezone

from accounts.models import ApiToken
from accounts.services import token_revoke, user_ban
from core import metrics
from games.services.quan_booking import hand_settle
from tests.games.conftest import Player, start_table
from tests.games.decks import WIN_DECK
from tests.games.test_games_hands_api import play_to_end

pytestmark = pytest.mark.django_db(transaction=True)

SSE = "text/event-stream"
NDJSON = "application/x-ndjson"


def _http(server: Any, player: Player) -> httpx.Client:
    return httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {player.token}"}, timeout=10
    )


def _until_waiting(n: int, timeout: float = 10.0) -> None:
    by = time.monotonic() + timeout
    while metrics.LONG_POLLS_WAITING._value.get() < n and time.monotonic() < by:
        time.sleep(0.02)
    assert metrics.LONG_POLLS_WAITING._value.get() >= n, "they never all waited"


def _whole_stream(client: httpx.Client, url: str, accept: str) -> bytes:
    """Everything the stream sends until the server ends it (a read timeout otherwise)."""
    with client.stream("GET", url, headers={"Accept": accept}) as r:
        assert r.status_code == 200, r.read()
        return b"".join(r.iter_bytes())


def _events(raw: bytes, accept: str) -> tuple[list[tuple[int, str]], str | None]:
    """The (seq, type) of the events a stream sent, and its closing reason (None: none)."""
    events, closed = [], None
    if accept == SSE:
        for block in raw.decode().split("\n\n"):
            fields = dict(
                line.split(": ", 1) for line in block.split("\n") if ": " in line and line[0] != ":"
            )
            if fields.get("event") == "closed":
                closed = json.loads(fields["data"])["closed"]
            elif "data" in fields:
                events.append((int(fields["id"]), fields["event"]))
        return events, closed
    for line in raw.decode().splitlines():
        data = json.loads(line)
        if "closed" in data:
            closed = data["closed"]
        elif "heartbeat" not in data:
            events.append((data["seq"], data["type"]))
    return events, closed


def _mover(players: list[Player], hand_id: int) -> tuple[Player, dict[str, Any]]:
    for p in players:
        view = p.client.get(f"/api/v1/hands/{hand_id}").json()
        if view["legal_moves"]:
            return p, view
    raise AssertionError("nobody may move")


def _revoked(player: Player, staff: Any) -> None:
    token = ApiToken.objects.get(user=player.user)
    token_revoke(user=player.user, token_id=token.pk)


def _banned(player: Player, staff: Any) -> None:
    user_ban(user_id=player.user.pk, staff=staff, reason="tests")


def _expired(player: Player, staff: Any) -> None:
    past = timezone.now() - timedelta(seconds=1)
    ApiToken.objects.filter(user=player.user).update(expires_at=past)


def _scope_narrowed(player: Player, staff: Any) -> None:
    ApiToken.objects.filter(user=player.user).update(scopes=["ledger:read"])


CHANGES = {
    "token_revoked": (_revoked, 401),
    "player_banned": (_banned, 401),
    "token_expired": (_expired, 401),
    "missing_scope": (_scope_narrowed, 403),
}


@pytest.mark.parametrize("accept", [SSE, NDJSON])
@pytest.mark.parametrize("change", list(CHANGES))
def test_a_stream_and_a_long_poll_opened_before_the_credential_changed_deliver_nothing_after(
    asgi_live_server: Any, players: list[Player], make_user: Any, change: str, accept: str
) -> None:
    staff, _ = make_user(is_staff=True)
    hand_id = start_table(players)["hand"]
    mover, view = _mover(players, hand_id)
    watcher = next(p for p in players if p is not mover)
    seq = view["seq"]
    streamer, poller = _http(asgi_live_server, watcher), _http(asgi_live_server, watcher)
    with ThreadPoolExecutor(2) as pool:
        # Given a player's stream of the hand's events and its long poll of the hand, open,
        stream = pool.submit(_whole_stream, streamer, f"/api/v1/hands/{hand_id}/events", accept)
        poll = pool.submit(poller.get, f"/api/v1/hands/{hand_id}?wait=20&after_seq={seq}")
        _until_waiting(2)
        time.sleep(0.2)
        assert not stream.done() and not poll.done()
        # when its token is revoked or expires, its player is banned or its scope goes,
        do, status = CHANGES[change]
        do(watcher, staff)
        # and another player moves,
        moved = mover.client.post(
            f"/api/v1/hands/{hand_id}/moves", view["legal_moves"][0], format="json"
        )
        assert moved.status_code == 201, moved.content
        raw, answer = stream.result(timeout=20), poll.result(timeout=20)
    # then the stream sent nothing after the deal it had, and ended saying why,
    events, closed = _events(raw, accept)
    assert all(event_seq <= seq for event_seq, _ in events), events
    assert closed == change, raw[-300:]
    # and the long poll is Django's refusal, with nothing of the hand.
    assert answer.status_code == status, answer.text
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert "legal_moves" not in answer.text and "bo_u" not in answer.text
    streamer.close()
    poller.close()


@pytest.mark.parametrize("accept", [SSE, NDJSON])
def test_a_hands_stream_ends_after_its_settlement(
    asgi_live_server: Any, players: list[Player], accept: str
) -> None:
    # Given a hand played to its end, not settled yet, and a player's stream of its events,
    hand = start_table(players, WIN_DECK)
    hand_id = hand["hand"]
    play_to_end(players, hand)
    seq = players[1].client.get(f"/api/v1/hands/{hand_id}").json()["seq"]
    client = _http(asgi_live_server, players[1])
    url = f"/api/v1/hands/{hand_id}/events?after_seq={seq}"
    with ThreadPoolExecutor(1) as pool:
        stream = pool.submit(_whole_stream, client, url, accept)
        _until_waiting(1)
        assert not stream.done(), "an ended, unsettled hand's stream ended"
        # when its settlement is booked,
        hand_settle(hand_id=hand_id)
        raw = stream.result(timeout=20)
    # then the stream sends it and ends, saying the hand ended.
    assert _events(raw, accept) == ([(seq + 1, "settled")], "hand_ended")
    # A stream of the settled hand sends what there is and ends at once.
    again = _whole_stream(client, f"/api/v1/hands/{hand_id}/events", accept)
    events, closed = _events(again, accept)
    assert events[-1] == (seq + 1, "settled") and closed == "hand_ended"
    client.close()
