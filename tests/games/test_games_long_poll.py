"""Long polls under ASGI (games/live/long_poll.py, games/live/subscription.py): they wait in the event
loop, not in a thread, hold no database connection, wake every waiter of a hand at once from the
feed (Redis pub/sub, or PostgreSQL reads without Redis), and answer exactly as the view does."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from unittest.mock import patch

import httpx
import pytest
from django.conf import settings
from django.db import connection

from core import metrics
from games.services.quan_booking import hand_settle
from tests.games.conftest import Player, start_table
from tests.games.decks import WIN_DECK
from tests.games.test_games_hands_api import play_to_end

pytestmark = pytest.mark.django_db(transaction=True)

# Headers whose values differ between two answers of the same content.
_PER_REQUEST = {"date", "x-request-id", "ratelimit-remaining", "ratelimit-reset", "ratelimit"}


@pytest.fixture(params=["redis", "postgresql"])
def feed(request: pytest.FixtureRequest, settings: Any, tmp_path: Any) -> Iterator[str]:
    """The hand feed under test: Redis pub/sub, or reads of PostgreSQL (no Redis)."""
    if request.param == "postgresql":
        settings.HAND_FEED_URL = ""
        settings.HAND_FEED_POLL_SECONDS = 0.1
        yield "postgresql"
        return
    from tests.faults.harness import suite_redis

    with suite_redis(tmp_path) as url:
        settings.HAND_FEED_URL = url
        yield "redis"


def _move(view: dict[str, Any]) -> dict[str, Any]:
    """A move that does not end the hand."""
    for wanted in ("draw", "pass", "discard", "eat"):
        for move in view["legal_moves"]:
            if move["type"] == wanted:
                return move
    raise AssertionError(f"no quiet move in {view['legal_moves']}")


def _turn(players: list[Player], hand_id: int) -> tuple[Player, dict[str, Any]]:
    for p in players:
        view = p.client.get(f"/api/v1/hands/{hand_id}").json()
        if view["legal_moves"]:
            return p, view
    raise AssertionError("nobody may move")


def _http(server: Any, player: Player) -> httpx.Client:
    return httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {player.token}"}, timeout=40
    )


def _same_answer(a: httpx.Response, b: httpx.Response) -> None:
    """Two answers are the same but for the per-request headers."""
    assert a.status_code == b.status_code
    assert a.content == b.content
    heads = [{k: v for k, v in r.headers.items() if k not in _PER_REQUEST} for r in (a, b)]
    assert heads[0] == heads[1]


def _until_waiting(n: int, timeout: float = 10.0) -> None:
    """Wait until ``n`` long polls wait in the in-process ASGI app (its gauge), not a fixed time."""
    by = time.monotonic() + timeout
    while metrics.LONG_POLLS_WAITING._value.get() != n and time.monotonic() < by:
        time.sleep(0.02)
    assert metrics.LONG_POLLS_WAITING._value.get() == n, "the long polls never all waited"


def _database_sessions() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        return cursor.fetchone()[0]


def test_a_move_wakes_every_player_and_spectator_at_once_with_their_own_view(
    asgi_live_server: Any, feed: str, players: list[Player], make_player: Callable[..., Player]
) -> None:
    # Given a live hand, its four players and two spectators each waiting in a long poll
    hand_id = start_table(players)["hand"]
    watchers = [*players, make_player(), make_player()]
    mover, view = _turn(players, hand_id)
    seq = view["seq"]
    url = f"/api/v1/hands/{hand_id}?wait=20&after_seq={seq}"
    clients = [_http(asgi_live_server, p) for p in watchers]
    with ThreadPoolExecutor(len(clients)) as pool:
        started = time.monotonic()
        polls = [pool.submit(c.get, url) for c in clients]
        _until_waiting(len(clients))
        assert not any(p.done() for p in polls), "a long poll answered before anything happened"
        assert metrics.LONG_POLLS_WAITING._value.get() == len(clients)  # in the ASGI app
        # When one of them moves
        r = mover.client.post(f"/api/v1/hands/{hand_id}/moves", _move(view), format="json")
        assert r.status_code == 201, r.content
        answers = [p.result(timeout=10) for p in polls]
    # Then all of them are answered at once with the new seq, each with the view a plain read
    # gives it (its own hand for a player, none for a spectator), headers and all
    assert time.monotonic() - started < 5
    for client, answer in zip(clients, answers, strict=True):
        assert answer.status_code == 200, answer.text
        assert answer.json()["seq"] == seq + 1
        assert answer.headers["etag"] == f'"{hand_id}-{seq + 1}"'
        _same_answer(answer, client.get(f"/api/v1/hands/{hand_id}"))
    hands = [a.json()["hand"] for a in answers]
    assert all(hands[:4]) and hands[4:] == [[], []]
    assert len({tuple(h) for h in hands[:4]}) == 4  # each player its own hand
    assert [a.json()["my_seat"] for a in answers] == [0, 1, 2, 3, None, None]
    for c in clients:
        c.close()


def test_the_logs_say_a_poll_waits_and_one_line_per_wake_up_says_how_many_it_answered(
    asgi_live_server: Any, feed: str, players: list[Player], caplog: Any
) -> None:
    # Given a live hand and three long polls waiting on it (two from one player)
    hand_id = start_table(players)["hand"]
    mover, view = _turn(players, hand_id)
    url = f"/api/v1/hands/{hand_id}?wait=20&after_seq={view['seq']}"
    clients = [_http(asgi_live_server, p) for p in (players[0], players[0], players[1])]
    with caplog.at_level(logging.INFO), ThreadPoolExecutor(3) as pool:
        polls = [pool.submit(c.get, url) for c in clients]
        _until_waiting(len(clients))
        # when a move wakes them,
        r = mover.client.post(f"/api/v1/hands/{hand_id}/moves", _move(view), format="json")
        assert r.status_code == 201, r.content
        assert {p.result(timeout=10).status_code for p in polls} == {200}
    # then each poll's request line says it went on waiting, and the wake-up logs one line:
    # three polls woken, two answers rendered (one per seat).
    waiting = [r for r in caplog.records if "'long_poll': 'waiting'" in str(r.msg)]
    assert len(waiting) == 3
    (woken,) = [r.getMessage() for r in caplog.records if r.name == "games.live.long_poll"]
    expected = (
        rf"hand {hand_id} at seq {view['seq'] + 1}: "
        r"waking 3 long polls \(2 answers rendered in \d+ ms\)"
    )
    assert re.fullmatch(expected, woken), woken
    for c in clients:
        c.close()


def test_waiting_polls_hold_no_thread_and_no_database_connection(
    asgi_live_server: Any,
    feed: str,
    players: list[Player],
    make_player: Callable[..., Player],
    settings: Any,
) -> None:
    # Given a live hand and 40 long polls waiting on it (4 spectators, 10 polls each)
    hand_id = start_table(players)["hand"]
    seq = _turn(players, hand_id)[1]["seq"]
    spectators = [make_player() for _ in range(4)]
    threads_before, sessions_before = threading.active_count(), _database_sessions()
    clients = [_http(asgi_live_server, p) for p in spectators]
    url = f"/api/v1/hands/{hand_id}?wait=3&after_seq={seq}"
    with ThreadPoolExecutor(40) as pool:
        polls = [pool.submit(clients[i % 4].get, url) for i in range(40)]
        _until_waiting(40)
        # Then all 40 wait at once, more than the server has threads for Django, and the server
        # holds no thread and no database session per waiting poll (the test's own 40 client
        # threads aside; Django's threads and the default executor's are made on demand)
        waiting = metrics.LONG_POLLS_WAITING._value.get()
        server_threads = threading.active_count() - threads_before - 40
        sessions = _database_sessions() - sessions_before
        answers = [p.result(timeout=10) for p in polls]
    assert waiting == 40 > settings.WEB_THREADS
    assert server_threads <= settings.WEB_THREADS + 6, server_threads
    assert sessions < 10, sessions
    # And on the timeout they answer the hand as it is: 200 (no ETag was sent)
    assert {a.status_code for a in answers} == {200}
    assert {a.json()["seq"] for a in answers} == {seq}


def test_a_timed_out_poll_with_a_matching_etag_is_a_304_like_the_views(
    asgi_live_server: Any, feed: str, players: list[Player]
) -> None:
    hand_id = start_table(players)["hand"]
    client = _http(asgi_live_server, players[0])
    plain = client.get(f"/api/v1/hands/{hand_id}")
    etag = plain.headers["etag"]
    seq = plain.json()["seq"]
    started = time.monotonic()
    waited = client.get(
        f"/api/v1/hands/{hand_id}?wait=1&after_seq={seq}", headers={"If-None-Match": etag}
    )
    assert time.monotonic() - started >= 1
    assert waited.status_code == 304 and waited.headers["etag"] == etag
    _same_answer(waited, client.get(f"/api/v1/hands/{hand_id}", headers={"If-None-Match": etag}))


@pytest.mark.parametrize("feed", ["redis"], indirect=True)  # (announcements travel by Redis)
def test_a_move_announced_for_another_database_wakes_nobody_here(
    asgi_live_server: Any, feed: str, players: list[Player]
) -> None:
    import redis

    from games.live.announce import feed_channel

    # Given a poll waiting for 2 s on a hand of this database,
    hand_id = start_table(players)["hand"]
    seq = _turn(players, hand_id)[1]["seq"]
    client = _http(asgi_live_server, players[0])
    with ThreadPoolExecutor(1) as pool:
        started = time.monotonic()
        poll = pool.submit(client.get, f"/api/v1/hands/{hand_id}?wait=2&after_seq={seq}")
        _until_waiting(1)
        # when another deployment on the same Redis server (another database, hands with the
        # same ids) announces a move of its hand with that id,
        with patch.dict(connection.settings_dict, NAME="another_deployment"):
            other_channel = feed_channel()
        assert other_channel != feed_channel()
        redis.Redis.from_url(settings.HAND_FEED_URL).publish(other_channel, f"{hand_id}:99")
        answer = poll.result(timeout=10)
    # then the poll goes on waiting to its timeout, and answers the hand as it is.
    assert time.monotonic() - started >= 1.9
    assert answer.status_code == 200 and answer.json()["seq"] == seq
    client.close()


def test_the_events_long_poll_wakes_with_the_new_events(
    asgi_live_server: Any, feed: str, players: list[Player]
) -> None:
    hand_id = start_table(players)["hand"]
    mover, view = _turn(players, hand_id)
    seq = view["seq"]
    watcher = next(p for p in players if p is not mover)
    client = _http(asgi_live_server, watcher)
    url = f"/api/v1/hands/{hand_id}/events?after_seq={seq}"
    with ThreadPoolExecutor(1) as pool:
        poll = pool.submit(client.get, url + "&wait=20")
        _until_waiting(1)
        assert not poll.done()
        mover.client.post(f"/api/v1/hands/{hand_id}/moves", _move(view), format="json")
        answer = poll.result(timeout=10)
    assert answer.status_code == 200
    page = answer.json()
    assert [e["seq"] for e in page["events"]] == [seq + 1] and page["seq"] == seq + 1
    _same_answer(answer, client.get(url))


def test_a_long_poll_on_an_ended_hand_wakes_when_its_settlement_lands(
    asgi_live_server: Any, feed: str, players: list[Player], make_player: Callable[..., Player]
) -> None:
    # Given a hand played to its end, not settled yet, a player holding its ETag in a long
    # poll of the view and a spectator in a long poll of the events after its last move,
    hand = start_table(players, WIN_DECK)
    hand_id = hand["hand"]
    play_to_end(players, hand)
    player, spectator = _http(asgi_live_server, players[1]), _http(asgi_live_server, make_player())
    ended = player.get(f"/api/v1/hands/{hand_id}")
    etag, seq = ended.headers["etag"], ended.json()["seq"]
    assert ended.json()["status"] == "ended" and ended.json()["settlement"]["quan"] is None
    with ThreadPoolExecutor(2) as pool:
        view = pool.submit(
            player.get, f"/api/v1/hands/{hand_id}?wait=20", headers={"If-None-Match": etag}
        )
        events = pool.submit(
            spectator.get, f"/api/v1/hands/{hand_id}/events?after_seq={seq}&wait=20"
        )
        _until_waiting(2)
        assert not view.done() and not events.done(), "an ended, unsettled hand answered at once"
        # when its settlement is booked,
        started = time.monotonic()
        hand_settle(hand_id=hand_id)
        answers = view.result(timeout=10), events.result(timeout=10)
    # both wake at once: the view with its Quan and a new ETag, the events with the record.
    assert time.monotonic() - started < 5
    answer = answers[0]
    assert answer.status_code == 200, answer.text
    assert answer.headers["etag"] == f'"{hand_id}-{seq + 1}"'
    assert answer.json()["settlement"]["quan"] is not None
    _same_answer(answer, player.get(f"/api/v1/hands/{hand_id}"))
    page = answers[1].json()
    assert [(e["seq"], e["type"]) for e in page["events"]] == [(seq + 1, "settled")]
    # A long poll on the settled hand answers at once (only a void could still change it).
    started = time.monotonic()
    again = player.get(
        f"/api/v1/hands/{hand_id}?wait=20", headers={"If-None-Match": answer.headers["etag"]}
    )
    assert again.status_code == 304 and time.monotonic() - started < 2
    player.close()
    spectator.close()


def test_a_token_may_keep_ten_polls_waiting_and_gets_them_back_when_they_end(
    asgi_live_server: Any, feed: str, players: list[Player]
) -> None:
    hand_id = start_table(players)["hand"]
    seq = _turn(players, hand_id)[1]["seq"]
    client = _http(asgi_live_server, players[0])
    url = f"/api/v1/hands/{hand_id}?wait=2&after_seq={seq}"
    with ThreadPoolExecutor(10) as pool:
        polls = [pool.submit(client.get, url) for _ in range(10)]
        _until_waiting(10)
        eleventh = client.get(url)
        assert eleventh.status_code == 429, eleventh.text
        assert eleventh.headers["content-type"] == "application/problem+json"
        assert eleventh.headers["retry-after"] == "1"
        assert [p.result(timeout=10).status_code for p in polls] == [200] * 10
    time.sleep(0.3)  # the slots are given back in a batch after the answers
    assert client.get(f"/api/v1/hands/{hand_id}?wait=1&after_seq={seq}").status_code == 200


@pytest.mark.slow
def test_a_client_that_goes_away_gives_its_slot_back(
    asgi_live_server: Any, feed: str, players: list[Player]
) -> None:
    hand_id = start_table(players)["hand"]
    seq = _turn(players, hand_id)[1]["seq"]
    url = f"/api/v1/hands/{hand_id}?wait=30&after_seq={seq}"
    impatient = httpx.Client(
        base_url=asgi_live_server.url,
        headers={"Authorization": f"Bearer {players[0].token}"},
        timeout=0.5,
    )
    for _ in range(10):
        with pytest.raises(httpx.ReadTimeout):
            impatient.get(url)
        impatient.close()
        impatient = httpx.Client(
            base_url=asgi_live_server.url,
            headers={"Authorization": f"Bearer {players[0].token}"},
            timeout=0.5,
        )
    time.sleep(0.5)
    client = _http(asgi_live_server, players[0])
    assert client.get(f"/api/v1/hands/{hand_id}?wait=1&after_seq={seq}").status_code == 200


@pytest.mark.parametrize(
    ("path", "who", "status", "code"),
    [
        ("/api/v1/hands/{hand}?wait=abc", "player", 400, "invalid"),
        ("/api/v1/hands/{hand}?wait=31", "player", 400, "invalid"),
        ("/api/v1/hands/999999?wait=5", "player", 404, "not_found"),
        ("/api/v1/hands/{hand}?wait=5", "nobody", 401, "not_authenticated"),
        ("/api/v1/hands/{hand}/events?after_seq=x&wait=5", "player", 400, "invalid"),
    ],
)
def test_a_bad_long_poll_gets_the_views_problem_at_once(
    asgi_live_server: Any, players: list[Player], path: str, who: str, status: int, code: str
) -> None:
    hand_id = start_table(players)["hand"]
    headers = {"Authorization": f"Bearer {players[0].token}"} if who == "player" else {}
    started = time.monotonic()
    r = httpx.get(asgi_live_server.url + path.format(hand=hand_id), headers=headers, timeout=10)
    assert time.monotonic() - started < 2
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["code"] == code


def test_a_spectator_of_a_table_closed_to_spectators_gets_403_not_a_wait(
    asgi_live_server: Any, players: list[Player], make_player: Callable[..., Player]
) -> None:
    hand_id = start_table(players, spectators=False)["hand"]
    r = _http(asgi_live_server, make_player()).get(f"/api/v1/hands/{hand_id}?wait=5")
    assert r.status_code == 403 and r.json()["code"] == "not_a_participant"


@pytest.mark.slow
def test_a_server_told_to_stop_answers_its_waiting_polls_at_once(
    players: list[Player], tmp_path: Any
) -> None:
    # Given the production server (gunicorn, one uvicorn worker) on the test database
    from tests.faults.harness import free_port
    from tests.games.test_games_tasks import database_url

    hand_id = start_table(players)["hand"]
    seq = _turn(players, hand_id)[1]["seq"]
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url(), "SECRET_KEY": "test-only"}
    log = tmp_path / "gunicorn.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "--workers", "1"]
            + ["--bind", f"127.0.0.1:{port}", "chan_api.asgi:application"],
            cwd=Path(__file__).resolve().parents[2],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=out,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        # and a long poll waiting there for up to 30 s,
        client = httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {players[1].token}"}, timeout=40
        )
        with ThreadPoolExecutor(1) as pool:
            poll = pool.submit(client.get, f"/api/v1/hands/{hand_id}?wait=30&after_seq={seq}")
            time.sleep(1.5)
            assert not poll.done(), log.read_text()[-3000:]
            # when the server is told to stop (a deploy),
            server.send_signal(signal.SIGTERM)
            stopped = time.monotonic()
            answer = poll.result(timeout=20)
        # then the poll is answered at once with the hand as it is, as on its timeout,
        assert time.monotonic() - stopped < 5, log.read_text()[-3000:]
        assert answer.status_code == 200 and answer.json()["seq"] == seq
        # and the server stops well within its graceful timeout.
        assert server.wait(timeout=20) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
