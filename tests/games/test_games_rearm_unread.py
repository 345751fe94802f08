"""A re-arm judged with no read (games/live/rearm.py, ``_checked_unread``): right after a
wake-up, a seat's next wait at the seq the subscription heard (and at which a read found that it
waits) is answered in the event loop with no thread and no query; the wait then reads the hand at
its timeout, so an announcement that was never sent delays a client by one wait, never more."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import REGISTRY

from games.live import announce, rearm
from tests.games.conftest import Player, start_table
from tests.games.test_games_long_poll import _move, _turn
from tests.games.test_games_long_poll_rearm import _poll, _waiter, woken_by_move

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("production_memories"),
]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The hands :func:`rearm._checked` judged by a read (in a thread), in order."""
    seen: list[int] = []
    original = rearm._checked

    def spy(template: Any, query: Any) -> Any:
        seen.append(template.hand)
        return original(template, query)

    monkeypatch.setattr(rearm, "_checked", spy)
    return seen


def _unread() -> float:
    return (
        REGISTRY.get_sample_value(
            "chan_long_poll_rearms_total", {"answered_by": "event_loop_no_read"}
        )
        or 0.0
    )


def _woken(client: Any, mover: Player, hand_id: int, view: dict[str, Any], etag: str) -> Any:
    woken = woken_by_move(client, mover, hand_id, view, etag)
    assert woken.status_code == 200, woken.content
    return woken


def _announcements_dropped(monkeypatch: pytest.MonkeyPatch, dropped: list[list[str]]) -> None:
    """From now on the announcements are lost (kept in ``dropped``); the cache keys sent in
    their round trip (the hands' published seqs) are still raised."""
    real = announce._publish

    def lost(messages: list[str], raises: Any = None, route: Any = None) -> None:
        dropped.append(messages)
        if raises:
            real([], raises, route)

    monkeypatch.setattr(announce, "_publish", lost)


def test_the_rearm_after_a_wake_up_waits_with_no_read(
    asgi_live_server: Any, players: list[Player], reads: list[int]
) -> None:
    # Given a player woken by a move (its template made by Django's answer to its first poll)
    hand_id, mover, view, _, client, etag = _waiter(asgi_live_server, players)
    woken = _woken(client, mover, hand_id, view, etag)
    seq, etag = woken.json()["seq"], woken.headers["etag"]
    before, reads_before = _unread(), len(reads)
    # when it re-arms at the seq it was woken at,
    r = _poll(client, hand_id, seq, etag)
    # then the wait is the same as ever (a 304 at its timeout: nothing moved), and it was
    # judged with no read, counted as such.
    assert r.status_code == 304 and r.headers["etag"] == etag
    assert len(reads) == reads_before
    assert _unread() == before + 1


def test_a_rearm_behind_what_was_heard_is_read_as_before(
    asgi_live_server: Any, players: list[Player], reads: list[int]
) -> None:
    hand_id, mover, view, _, client, etag = _waiter(asgi_live_server, players)
    woken = _woken(client, mover, hand_id, view, etag)
    reads_before = len(reads)
    # A re-arm at the seq before the one it was woken at (the hand moved on since): read, and
    # answered at once with the view, as Django would.
    r = _poll(client, hand_id, view["seq"], etag)
    assert r.status_code == 200 and r.json()["seq"] == woken.json()["seq"]
    assert len(reads) == reads_before + 1


def test_a_move_never_announced_reaches_the_waiter_at_its_timeout(
    asgi_live_server: Any,
    players: list[Player],
    reads: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a player woken by a move, whose re-arms are judged with no read
    hand_id, mover, view, waiter, client, etag = _waiter(asgi_live_server, players)
    woken = _woken(client, mover, hand_id, view, etag)
    seq, etag = woken.json()["seq"], woken.headers["etag"]
    # when the next move's announcement is lost (its announcer could not send it)
    dropped: list[list[str]] = []
    _announcements_dropped(monkeypatch, dropped)
    mover, now = _turn(players, hand_id)
    assert now["seq"] == seq
    r = mover.client.post(f"/api/v1/hands/{hand_id}/moves", _move(now), format="json")
    assert r.status_code == 201, r.content
    assert announce.announcements_sent()
    assert any(f"{hand_id}:{seq + 1}" in m for m in dropped)
    # then its re-arm at the seq it knows, judged with no read, still gets the move: the wait
    # reads the hand at its timeout (one second here) and answers the new view.
    reads_before = len(reads)
    r = _poll(client, hand_id, seq, etag)
    assert len(reads) == reads_before  # (judged with no read)
    assert r.status_code == 200, r.content
    assert r.json()["seq"] == seq + 1
    assert r.json() == waiter.client.get(f"/api/v1/hands/{hand_id}").json()


def test_the_movers_own_rearm_after_its_move_waits_with_no_read(
    asgi_live_server: Any, players: list[Player], reads: list[int]
) -> None:
    import time

    from tests.games.test_games_long_poll import _http

    # Given the player to move, whose long poll's template Django made
    hand_id = start_table(players)["hand"]
    mover, view = _turn(players, hand_id)
    client = _http(asgi_live_server, mover)
    etag = client.get(f"/api/v1/hands/{hand_id}").headers["etag"]
    assert _poll(client, hand_id, view["seq"], etag).status_code == 304
    # when it moves (this process commits the hand, still being played) and its move's
    # announcement has come back to this process's subscription,
    r = mover.client.post(f"/api/v1/hands/{hand_id}/moves", _move(view), format="json")
    assert r.status_code == 201, r.content
    seq = r.json()["seq"]
    time.sleep(0.2)
    # then its re-arm at the move's seq waits with no read.
    reads_before = len(reads)
    r = _poll(client, hand_id, seq, f'"{hand_id}-{seq}"')
    assert r.status_code == 304
    assert len(reads) == reads_before


def test_a_wait_django_judged_reads_the_hand_at_its_timeout_too(
    asgi_live_server: Any, players: list[Player], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Django's own pending answer is a template too (its client's next re-arm may be judged with
    no read): a move whose announcement is lost while it waits reaches it at its timeout, not
    one wait later."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.games.test_games_long_poll import _http, _until_waiting

    hand_id = start_table(players)["hand"]
    mover, view = _turn(players, hand_id)
    waiter = next(p for p in players if p is not mover)
    client = _http(asgi_live_server, waiter)
    etag = client.get(f"/api/v1/hands/{hand_id}").headers["etag"]
    dropped: list[list[str]] = []
    with ThreadPoolExecutor(1) as pool:
        # (its first long poll: Django judges it and makes the template)
        poll = pool.submit(_poll, client, hand_id, view["seq"], etag)
        _until_waiting(1)
        _announcements_dropped(monkeypatch, dropped)
        r = mover.client.post(f"/api/v1/hands/{hand_id}/moves", _move(view), format="json")
        assert r.status_code == 201, r.content
        answered = poll.result(timeout=10)
    assert dropped  # (the move was never announced)
    assert answered.status_code == 200, answered.content
    assert answered.json()["seq"] == view["seq"] + 1
