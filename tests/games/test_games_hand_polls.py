"""A seat's plain poll of a hand (``GET /hands/{id}`` with ``If-None-Match``, no query) answered
without Django while its ETag holds (games/live/rearm.py, from Django's last 304 to the same
client): the same 304, header for header, the same log line and metrics, the same throttle
accounting; and Django answers whenever the answer would be anything else."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from games.live import rearm
from tests.games.conftest import Player, answers_spied, start_table
from tests.games.test_games_long_poll import _http, _move, _turn
from tests.games.test_games_long_poll_rearm import VARIANTS, _counted, _heads, _unstamped

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("production_memories"),
]


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each plain poll (or re-arm) was answered here (True) or by Django (False)."""
    return answers_spied(monkeypatch, rearm.Rearms, "answer")


def _polled(client: httpx.Client, hand_id: int, etag: str, **headers: str) -> Any:
    return client.get(f"/api/v1/hands/{hand_id}", headers={"If-None-Match": etag, **headers})


@pytest.mark.parametrize("headers", VARIANTS.values(), ids=VARIANTS.keys())
def test_a_poll_answered_here_is_djangos_304_header_for_header(
    asgi_live_server: Any,
    players: list[Player],
    settings: Any,
    answered: list[bool],
    headers: dict[str, str],
) -> None:
    # Given a live hand and a player's current view of it
    hand_id = start_table(players)["hand"]
    client = _http(asgi_live_server, players[1])
    plain = client.get(f"/api/v1/hands/{hand_id}")
    etag = plain.headers["etag"]
    # When Django answers a poll (templates off), then the same poll twice with them on (the
    # first's 304 becomes the template, the second is answered from it)
    settings.LONG_POLL_REARM = False
    by_django = _polled(client, hand_id, etag, **headers)
    settings.LONG_POLL_REARM = True
    first = _polled(client, hand_id, etag, **headers)
    here = _polled(client, hand_id, etag, **headers)
    assert answered == [False, True]
    # then all three are the same 304, header for header, but what each request makes anew,
    for r in (by_django, first, here):
        assert r.status_code == 304 and r.headers["etag"] == etag and r.content == b""
        assert _heads(r) == _heads(by_django)
        assert "x-chan-long-poll" not in r.headers
    if "X-Request-ID" in headers:
        assert here.headers["x-request-id"] == headers["X-Request-ID"]
    else:
        assert len({r.headers["x-request-id"] for r in (by_django, first, here)}) == 3
    if "Origin" in headers:
        assert here.headers["access-control-allow-origin"] == headers["Origin"]
    # and the throttle counted each of them once.
    remaining = [int(r.headers["ratelimit-remaining"]) for r in (plain, by_django, first, here)]
    assert remaining == [remaining[0] - i for i in range(4)]


def test_a_poll_answered_here_logs_and_counts_as_djangos(
    asgi_live_server: Any, players: list[Player], settings: Any, answered: list[bool], caplog: Any
) -> None:
    hand_id = start_table(players)["hand"]
    client = _http(asgi_live_server, players[2])
    etag = client.get(f"/api/v1/hands/{hand_id}").headers["etag"]
    settings.LONG_POLL_REARM = False
    django_delta, django_lines, _ = _counted(caplog, lambda: _polled(client, hand_id, etag))
    settings.LONG_POLL_REARM = True
    _polled(client, hand_id, etag)
    here_delta, here_lines, _ = _counted(caplog, lambda: _polled(client, hand_id, etag))
    assert answered == [False, True]
    assert django_delta  # (it counted something)
    assert here_delta == django_delta
    assert _unstamped(here_lines) == _unstamped(django_lines)
    assert here_lines[0]["status"] == 304 and here_lines[0]["hand_id"] == hand_id


def test_after_a_move_django_answers_the_new_view_then_templates_its_next_304(
    asgi_live_server: Any, players: list[Player], answered: list[bool]
) -> None:
    # Given a player whose polls are answered here
    hand_id = start_table(players)["hand"]
    mover, view = _turn(players, hand_id)
    poller = next(p for p in players if p is not mover)
    client = _http(asgi_live_server, poller)
    etag = client.get(f"/api/v1/hands/{hand_id}").headers["etag"]
    assert [_polled(client, hand_id, etag).status_code for _ in range(2)] == [304, 304]
    assert answered == [False, True]
    # when another player moves, its next poll (its ETag stale now) gets the new view from
    # Django, as a plain read gives it,
    r = mover.client.post(f"/api/v1/hands/{hand_id}/moves", _move(view), format="json")
    assert r.status_code == 201, r.content
    moved = _polled(client, hand_id, etag)
    assert answered[-1] is False
    now = client.get(f"/api/v1/hands/{hand_id}")
    assert moved.status_code == 200 and moved.json() == now.json()
    assert moved.json()["seq"] == view["seq"] + 1
    assert moved.headers["etag"] == now.headers["etag"] != etag
    # and its polls with the new ETag are 304s again, answered here.
    new = moved.headers["etag"]
    assert [_polled(client, hand_id, new).status_code for _ in range(2)] == [304, 304]
    assert answered[-1] is True


def test_django_answers_a_poll_once_the_token_is_revoked_or_another_tag_is_sent(
    asgi_live_server: Any, players: list[Player], answered: list[bool]
) -> None:
    hand_id = start_table(players)["hand"]
    player = players[0]
    client = _http(asgi_live_server, player)
    etag = client.get(f"/api/v1/hands/{hand_id}").headers["etag"]
    assert [_polled(client, hand_id, etag).status_code for _ in range(2)] == [304, 304]
    assert answered == [False, True]
    # An ETag that never matched: Django's 200, with the view
    other = _polled(client, hand_id, '"nope"')
    assert other.status_code == 200 and other.json()["hand_id"] == hand_id
    assert answered[-1] is False
    # A query (even an empty wait): not a plain poll, Django judges it
    assert client.get(f"/api/v1/hands/{hand_id}?indent=2").status_code in (200, 400)
    # A revoked token (this process forgets it at once): Django's 401
    tokens = client.get("/api/v1/me/tokens").json()
    mine = [t for t in tokens if player.token.startswith(t["key_prefix"])]
    assert client.delete(f"/api/v1/me/tokens/{mine[0]['id']}").status_code == 204
    assert _polled(client, hand_id, etag).status_code == 401
    assert answered[-1] is False


def test_a_spectators_poll_is_always_djangos(
    asgi_live_server: Any, players: list[Player], answered: list[bool], make_player: Any
) -> None:
    hand_id = start_table(players)["hand"]  # (a table may be watched by default)
    watcher = make_player()
    client = _http(asgi_live_server, watcher)
    etag = client.get(f"/api/v1/hands/{hand_id}").headers["etag"]
    assert [_polled(client, hand_id, etag).status_code for _ in range(3)] == [304, 304, 304]
    assert answered == [False, False, False]  # (no template: a spectator's view is read anew)
