"""A long poll's re-arm answered without Django (games/live/rearm.py): the same answer, header
for header, the same log line and metrics, the same throttle accounting as Django's; and
Django answers whenever something it checks may have changed."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY

from accounts.token_cache import token_cache_clear
from games.live import rearm
from tests.games.conftest import Player, answers_spied, start_table
from tests.games.test_games_long_poll import _http, _move, _turn, _until_waiting

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("production_memories"),
]

# Made per request: the date, the request's id (a new one unless the client sent one) and the
# throttle's count.
_PER_REQUEST = {"date", "x-request-id", "ratelimit-remaining", "ratelimit-reset"}


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each long poll was answered here (True) or by Django (False), in order."""
    return answers_spied(monkeypatch, rearm.Rearms, "answer")


def _heads(r: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in r.headers.items() if k not in _PER_REQUEST}


def _poll(client: httpx.Client, hand_id: int, seq: int, etag: str, **headers: str) -> Any:
    return client.get(
        f"/api/v1/hands/{hand_id}?wait=1&after_seq={seq}",
        headers={"If-None-Match": etag, **headers},
    )


def _off_then_on(
    settings: Any, request: Callable[[], httpx.Response]
) -> tuple[httpx.Response, httpx.Response]:
    """``request`` answered by Django (the re-arm answered here off), then with it on."""
    settings.LONG_POLL_REARM = False
    by_django = request()
    settings.LONG_POLL_REARM = True
    return by_django, request()


def _waiter(
    server: Any, players: list[Player]
) -> tuple[int, Player, dict[str, Any], Player, Any, str]:
    """A live hand, the player who may move and its view, another player with its client and
    ETag, whose first long poll Django answered (the template)."""
    hand_id = start_table(players)["hand"]
    mover, view = _turn(players, hand_id)
    waiter = next(p for p in players if p is not mover)
    client = _http(server, waiter)
    etag = client.get(f"/api/v1/hands/{hand_id}").headers["etag"]
    _poll(client, hand_id, view["seq"], etag)
    return hand_id, mover, view, waiter, client, etag


def woken_by_move(
    client: httpx.Client, mover: Player, hand_id: int, view: dict[str, Any], etag: str
) -> httpx.Response:
    """``client``'s long poll at ``view``'s seq, woken by ``mover``'s move."""
    url = f"/api/v1/hands/{hand_id}?wait=20&after_seq={view['seq']}"
    with ThreadPoolExecutor(1) as pool:
        poll = pool.submit(client.get, url, headers={"If-None-Match": etag})
        _until_waiting(1)
        r = mover.client.post(f"/api/v1/hands/{hand_id}/moves", _move(view), format="json")
        assert r.status_code == 201, r.content
        return poll.result(timeout=10)


VARIANTS = {
    "plain": {},
    "cross-origin app": {"Origin": "https://app.example"},
    "vietnamese": {"Accept-Language": "vi"},
    "english, its own request id": {"Accept-Language": "en", "X-Request-ID": "bot-7-req-0042"},
}


@pytest.mark.parametrize("headers", VARIANTS.values(), ids=VARIANTS.keys())
def test_a_rearm_answered_here_is_djangos_answer_header_for_header(
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
    etag, seq = plain.headers["etag"], plain.json()["seq"]
    # When Django answers a long poll that times out (the re-arm answered here off), then the
    # same poll twice with it on (Django's answer becomes the template, the next is answered
    # from it),
    settings.LONG_POLL_REARM = False
    by_django = _poll(client, hand_id, seq, etag, **headers)
    settings.LONG_POLL_REARM = True
    first = _poll(client, hand_id, seq, etag, **headers)
    here = _poll(client, hand_id, seq, etag, **headers)
    assert answered == [False, True]  # (the first of the two made the template)
    # then all three are the same 304, header for header, but for what each request makes anew
    for r in (by_django, first, here):
        assert r.status_code == 304 and r.headers["etag"] == etag
        assert _heads(r) == _heads(by_django)
    if "X-Request-ID" in headers:
        assert here.headers["x-request-id"] == headers["X-Request-ID"]
    else:
        assert len({r.headers["x-request-id"] for r in (by_django, first, here)}) == 3
    # and the throttle counted each of them once.
    remaining = [int(r.headers["ratelimit-remaining"]) for r in (plain, by_django, first, here)]
    assert remaining == [remaining[0] - i for i in range(4)]
    assert here.headers["ratelimit-limit"] == by_django.headers["ratelimit-limit"]
    assert here.headers["ratelimit-policy"] == by_django.headers["ratelimit-policy"]
    assert "access-control-allow-origin" in here.headers or "Origin" not in headers


def test_a_move_wakes_a_rearm_answered_here_with_the_views_answer(
    asgi_live_server: Any, players: list[Player], answered: list[bool]
) -> None:
    # Given a player whose long poll's template Django made
    hand_id, mover, view, _, client, etag = _waiter(asgi_live_server, players)
    # when its re-arm, answered here, waits and a move wakes it
    woken = woken_by_move(client, mover, hand_id, view, etag)
    assert answered == [False, True]
    # then it gets the new view, as a plain read gives it.
    now = client.get(f"/api/v1/hands/{hand_id}")
    assert woken.status_code == 200 and woken.json() == now.json()
    assert woken.json()["seq"] == view["seq"] + 1
    assert _heads(woken) == _heads(now)


def test_a_rearm_after_the_hand_moved_gets_the_new_view_here_as_django_gives_it(
    asgi_live_server: Any, players: list[Player], settings: Any, answered: list[bool], caplog: Any
) -> None:
    # Given a player whose long poll's template Django made, and a move since its last answer
    hand_id, mover, view, _, client, etag = _waiter(asgi_live_server, players)
    seq = view["seq"]
    r = mover.client.post(f"/api/v1/hands/{hand_id}/moves", _move(view), format="json")
    assert r.status_code == 201, r.content
    # When Django answers its re-arm (the re-arm answered here off), then the same re-arm comes
    # with it on
    settings.LONG_POLL_REARM = False
    django_delta, django_lines, by_django = _counted(
        caplog, lambda: _poll(client, hand_id, seq, etag)
    )
    settings.LONG_POLL_REARM = True
    started = time.monotonic()
    here_delta, here_lines, here = _counted(caplog, lambda: _poll(client, hand_id, seq, etag))
    assert time.monotonic() - started < 1  # (at once: not after the wait's second)
    assert answered == [False, True]
    # then it is answered here with the new view: the same bytes, headers, log line and series
    # as Django's answer, and the throttle counts it once.
    assert here.status_code == by_django.status_code == 200
    assert here.json()["seq"] == seq + 1
    assert here.content == by_django.content
    assert _heads(here) == _heads(by_django)
    assert here.headers["etag"] == by_django.headers["etag"] != etag
    remaining = int(by_django.headers["ratelimit-remaining"])
    assert int(here.headers["ratelimit-remaining"]) == remaining - 1
    assert here_delta == django_delta and django_delta
    assert _unstamped(here_lines) == _unstamped(django_lines)
    assert here_lines[0]["seq"] == seq + 1 and "long_poll" not in here_lines[0]


def test_django_answers_when_the_headers_changed_the_query_is_odd_or_the_view_is_indented(
    asgi_live_server: Any, players: list[Player], answered: list[bool]
) -> None:
    hand_id, mover, view, _, client, etag = _waiter(asgi_live_server, players)
    seq = view["seq"]
    # Another language: another template (Django answers, then this one is answered here)
    _poll(client, hand_id, seq, etag, **{"Accept-Language": "vi"})
    assert _poll(client, hand_id, seq, etag, **{"Accept-Language": "vi"}).status_code == 304
    assert answered == [False, False, True]
    # A wait past the limit: Django's 400, at once
    r = client.get(f"/api/v1/hands/{hand_id}?wait=31&after_seq={seq}")
    assert r.status_code == 400 and r.json()["code"] == "invalid"
    assert answered[-1] is False
    # A view asked for with parameters (indented): its re-arms wait here, but once the hand
    # has moved on, the view DRF renders with them is Django's to send.
    indented = {"Accept": "application/json; indent=2"}
    _poll(client, hand_id, seq, etag, **indented)
    assert _poll(client, hand_id, seq, etag, **indented).status_code == 304
    assert answered[-2:] == [False, True]
    r = mover.client.post(f"/api/v1/hands/{hand_id}/moves", _move(view), format="json")
    assert r.status_code == 201, r.content
    moved = _poll(client, hand_id, seq, etag, **indented)
    assert moved.status_code == 200 and moved.json()["seq"] == seq + 1
    assert b'\n  "' in moved.content
    assert answered[-1] is False


def test_a_revoked_token_is_refused_at_once_not_answered_from_the_template(
    asgi_live_server: Any, players: list[Player], answered: list[bool]
) -> None:
    hand_id, _, view, player, client, etag = _waiter(asgi_live_server, players)
    seq = view["seq"]
    assert _poll(client, hand_id, seq, etag).status_code == 304
    assert answered == [False, True]
    # When the token is revoked (by the server the poll goes to: this process forgets it now)
    tokens = client.get("/api/v1/me/tokens").json()
    mine = [t for t in tokens if player.token.startswith(t["key_prefix"])]
    assert len(mine) == 1, tokens
    assert client.delete(f"/api/v1/me/tokens/{mine[0]['id']}").status_code == 204
    # then the next re-arm goes to Django, which refuses it.
    r = _poll(client, hand_id, seq, etag)
    assert r.status_code == 401
    assert answered[-1] is False


def test_a_rearm_answered_here_logs_and_counts_as_djangos(
    asgi_live_server: Any, players: list[Player], settings: Any, answered: list[bool], caplog: Any
) -> None:
    hand_id = start_table(players)["hand"]
    client = _http(asgi_live_server, players[3])
    plain = client.get(f"/api/v1/hands/{hand_id}")
    etag, seq = plain.headers["etag"], plain.json()["seq"]

    settings.LONG_POLL_REARM = False
    django_delta, django_lines, _ = _counted(caplog, lambda: _poll(client, hand_id, seq, etag))
    settings.LONG_POLL_REARM = True
    _poll(client, hand_id, seq, etag)
    here_delta, here_lines, _ = _counted(caplog, lambda: _poll(client, hand_id, seq, etag))
    assert answered == [False, True]
    assert here_delta == django_delta
    assert django_delta  # (it counted something)
    assert _unstamped(here_lines) == _unstamped(django_lines)
    assert here_lines[0]["long_poll"] == "waiting" and here_lines[0]["hand_id"] == hand_id


def _counted(
    caplog: Any, during: Callable[[], Any]
) -> tuple[dict[tuple[Any, ...], float], list[dict[str, Any]], Any]:
    """What ``during()`` added to django-prometheus's series, the request log lines it wrote,
    and what it returned."""
    before = _request_series()
    caplog.clear()
    with caplog.at_level(logging.INFO):
        result = during()
        _moves_answered_finished()
    after = _request_series()
    lines = [
        dict(r.msg) for r in caplog.records if r.name == "chan.request" and isinstance(r.msg, dict)
    ]
    delta = {k: v - before.get(k, 0.0) for k, v in after.items() if v != before.get(k, 0.0)}
    return delta, lines, result


def _moves_answered_finished(timeout: float = 5.0) -> None:
    """Wait until the moves answered on the event loop (games.api.move_direct) are logged and
    counted: that comes right after their answers are written, which the client may read first."""
    from games.api.move_direct import answers_unfinished

    deadline = time.monotonic() + timeout
    while answers_unfinished() and time.monotonic() < deadline:
        time.sleep(0.001)
    assert not answers_unfinished()


def _unstamped(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Log lines without what each request makes anew."""
    per_request = {"latency_ms", "request_id", "timestamp"}
    return [{k: v for k, v in line.items() if k not in per_request} for line in lines]


def _request_series() -> dict[tuple[Any, ...], float]:
    """django-prometheus's request and response series: every counter, and every histogram's
    count (not its sum nor its buckets, which hold latencies) but the body sizes' sum."""
    series: dict[tuple[Any, ...], float] = {}
    for family in REGISTRY.collect():
        if not family.name.startswith("django_http_"):
            continue
        for sample in family.samples:
            keep = (
                sample.name.endswith("_total")
                or sample.name.endswith("_count")
                or (sample.name.endswith("_bytes_sum"))
            )
            if keep:
                series[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return series


def test_a_token_read_again_keeps_its_template_unless_its_scopes_changed(
    asgi_live_server: Any, players: list[Player], answered: list[bool]
) -> None:
    from accounts.models import ApiToken

    hand_id, _, view, player, client, etag = _waiter(asgi_live_server, players)
    seq = view["seq"]
    # When the token memory forgets the token (its seconds ran out) and a read by Django
    # remembers it again, unchanged, the next re-arm is still answered here;
    token_cache_clear()
    assert client.get(f"/api/v1/hands/{hand_id}").status_code == 200
    assert _poll(client, hand_id, seq, etag).status_code == 304
    assert answered == [False, True]
    # when it is read again with other scopes, Django judges the next one.
    ApiToken.objects.filter(user=player.user).update(scopes=["read", "play", "ledger:read"])
    token_cache_clear()
    assert client.get(f"/api/v1/hands/{hand_id}").status_code == 200
    assert _poll(client, hand_id, seq, etag).status_code == 304
    assert answered == [False, True, False]


def test_a_rearm_whose_throttle_exchange_is_due_is_answered_here_and_counted_in_the_cache(
    asgi_live_server: Any, players: list[Player], settings: Any, answered: list[bool]
) -> None:
    from django.core.cache import cache

    # Given budgets exchanged with the cache every 0.1 s (each re-arm waits 1 s: always due)
    settings.THROTTLE_FLUSH_SECONDS = 0.1
    hand_id, _, view, player, client, etag = _waiter(asgi_live_server, players)
    time.sleep(0.2)
    client.get("/api/v1/auth/check")  # (its exchange writes down the requests before it)
    shared_before = len(cache.get(f"throttle_user_{player.id}", []))
    # when two re-arms come, each after its exchange fell due,
    polls = [_poll(client, hand_id, view["seq"], etag) for _ in range(2)]
    time.sleep(0.2)
    client.get("/api/v1/auth/check")  # (Django's request: its exchange writes both down)
    # then both are answered here, counted once each, and the cache's history has them.
    assert answered == [False, True, True]
    assert [r.status_code for r in polls] == [304, 304]
    remaining = [int(r.headers["ratelimit-remaining"]) for r in polls]
    assert remaining[1] == remaining[0] - 1
    assert len(cache.get(f"throttle_user_{player.id}", [])) == shared_before + 3


@pytest.fixture
def template_made(
    asgi_live_server: Any,
    players: list[Player],
    make_player: Callable[..., Player],
    answered: list[bool],
) -> tuple[Player, httpx.Client, str, list[Player]]:
    """A player whose long poll on one hand made its template (its client and its ETag
    there; ``answered`` spies from the start), and three players who are not at that table."""
    _, _, _, waiter, client, etag = _waiter(asgi_live_server, players)
    return waiter, client, etag, [make_player() for _ in range(3)]


def test_the_same_clients_wait_on_its_next_hand_is_answered_here_for_its_seat_there(
    template_made: tuple[Player, httpx.Client, str, list[Player]],
    settings: Any,
    answered: list[bool],
) -> None:
    # Given a player whose long poll on one hand made its template,
    waiter, client, _, others = template_made
    # and a hand at another table where it sits third
    table = [others[0], others[1], waiter, others[2]]
    hand_id = start_table(table)["hand"]
    mover, view = _turn(table, hand_id)
    while mover is waiter:  # (it plays until another seat is to move: its wait then waits)
        r = waiter.client.post(f"/api/v1/hands/{hand_id}/moves", _move(view), format="json")
        assert r.status_code == 201, r.content
        mover, view = _turn(table, hand_id)
    plain = client.get(f"/api/v1/hands/{hand_id}")
    etag, seq = plain.headers["etag"], plain.json()["seq"]
    assert plain.json()["my_seat"] == 2
    # When Django answers its wait there (the re-arm answered here off), then the same wait
    # comes with it on
    by_django, here = _off_then_on(settings, lambda: _poll(client, hand_id, seq, etag))
    # then the first hand's template answers it, as Django did (no new template was needed)
    assert answered == [False, True]
    assert here.status_code == by_django.status_code == 304
    assert _heads(here) == _heads(by_django)
    # and a move there wakes its next wait, answered here with its own seat's view.
    woken = woken_by_move(client, mover, hand_id, view, etag)
    assert answered == [False, True, True]
    now = client.get(f"/api/v1/hands/{hand_id}")
    assert woken.status_code == 200 and woken.json() == now.json()
    assert woken.json()["my_seat"] == 2 and woken.json()["seq"] == seq + 1


def test_a_wait_on_a_hand_the_client_does_not_play_is_djangos(
    template_made: tuple[Player, httpx.Client, str, list[Player]],
    make_player: Callable[..., Player],
    settings: Any,
    answered: list[bool],
) -> None:
    # Given a player whose long poll on one hand made its template, and a hand it does not play
    waiter, client, etag, others = template_made
    others.append(make_player())
    hand_id = start_table(others)["hand"]
    assert waiter not in others
    # when it waits on that hand, with the re-arm answered here off and then on
    by_django, again = _off_then_on(settings, lambda: _poll(client, hand_id, 0, etag))
    # then Django answers both alike (the template is not used for another player's hand)
    assert answered == [False, False]
    assert again.status_code == by_django.status_code
    assert again.content == by_django.content
