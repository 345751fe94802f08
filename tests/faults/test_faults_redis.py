"""Redis stopped mid-play (a private redis-server used as cache and broker): the API keeps
working on the database alone — throttles fail open, long polls read the row, moves commit
(their wake-ups are lost and re-armed by the sweep) — with no 5xx; after Redis comes back,
polls are woken through it again."""

from __future__ import annotations

import random
import threading
import time

import pytest

from chan_api import embedded_db
from tests.e2e.http_client import HttpClient
from tests.faults.harness import (
    deal_next,
    free_port,
    manage,
    play_on,
    redis_server,
    seat_two_players,
    stack_env,
    web_server,
)

OUTAGE_SECONDS = 10


def long_poll_wake_time(table, rng: random.Random) -> float:
    """Seconds a long poll waits when a move comes 0.7 s after it started: about 0.7 when the
    move's publish in Redis wakes it, 1.5 or more when it must fall back to reading the row."""
    url = f"/api/v1/hands/{table.hand_id}"
    view = table.clients[0].get(url).json()
    if view["status"] == "ended":
        assert deal_next(table)
        url = f"/api/v1/hands/{table.hand_id}"
        view = table.clients[0].get(url).json()
    mover = table.clients[view["turn_seat"]]
    watcher = HttpClient(table.base)
    watcher.token = table.clients[1 - view["turn_seat"]].token
    woken: list[float] = []

    def watch() -> None:
        start = time.monotonic()
        r = watcher.get(f"{url}?wait=10&after_seq={view['seq']}")
        assert r.status_code == 200 and r.json()["seq"] > view["seq"]
        woken.append(time.monotonic() - start)

    thread = threading.Thread(target=watch)
    thread.start()
    time.sleep(0.7)
    legal = mover.get(url).json()["legal_moves"]
    r = mover.post(url + "/moves", {**rng.choice(legal), "expected_seq": view["seq"]})
    assert r.status_code == 201, r.content
    thread.join(15)
    watcher.close()
    return woken[0]


@pytest.mark.slow(seconds=35)
def test_a_cache_and_broker_outage_costs_no_request(private_dir) -> None:
    port = free_port()
    redis = redis_server(port, private_dir)
    env = stack_env(
        private_dir,
        CACHE_URL=f"redis://127.0.0.1:{port}/1",
        CELERY_BROKER_URL=f"redis://127.0.0.1:{port}/2",
        CHAN_CLOCK="1",  # every move wakes the clock through the broker
    )
    try:
        assert manage(env, "migrate", "--noinput").returncode == 0
        with web_server(env) as base:
            table = seat_two_players(base, "redisfault")
            rng = random.Random(12)
            play_on(table, rng, seconds=2)
            # When Redis stops while the bots keep playing,
            redis.terminate()
            redis.wait(timeout=10)
            before = sum(table.statuses.values())
            moves_before = table.statuses[201]
            started = time.monotonic()
            play_on(table, rng, seconds=OUTAGE_SECONDS)
            during = sum(table.statuses.values()) - before
            moves_during = table.statuses[201] - moves_before
            per_request = (time.monotonic() - started) / max(1, during)
            # then every request was answered without a 5xx, and moves were committed;
            assert table.problems == [] and table.statuses[500] == 0
            assert moves_during > 0, (during, per_request, dict(table.statuses))
            # and after Redis comes back, a long poll is woken by the next move through it.
            redis = redis_server(port, private_dir)
            play_on(table, rng, seconds=2)
            woken_after = long_poll_wake_time(table, rng)
            assert woken_after < 1.2, woken_after
            assert table.problems == []
        checked = manage(env, "check_hands")
        assert checked.returncode == 0, checked.stderr
        print(
            f"redis outage {OUTAGE_SECONDS}s: {during} requests during it ({moves_during} moves "
            f"committed), 5xx: {len(table.problems)}, {per_request * 1000:.0f} ms a request, "
            f"statuses {dict(table.statuses)}"
        )
    finally:
        redis.kill()
        embedded_db.stop(private_dir)
