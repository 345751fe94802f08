"""Redis stopped mid-play (a private redis-server used as cache and broker): the API keeps
working on the database alone — throttles fail open, long polls read the row, moves commit
(their wake-ups are lost and re-armed by the sweep) — with no 5xx; after Redis comes back,
polls are woken through it again."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from chan_api import embedded_db
from tests.e2e.http_client import HttpClient
from tests.faults.harness import (
    ROOT,
    deal_next,
    free_port,
    manage,
    play_on,
    process_stop,
    redis_server,
    redis_stack_env,
    seat_two_players,
    web_server,
)
from tests.games.test_games_tasks import database_url, wait_for

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
    # every move wakes the clock through the broker
    env = redis_stack_env(private_dir, port, CHAN_CLOCK="1")
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


BROKER_OUTAGE_SECONDS = 20
SEND = """
import sys, json, datetime
import django
django.setup()
from chan_api.celery import app
marks, eta_seconds, count = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
eta = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=eta_seconds)
with app.producer_or_acquire() as producer:
    for _ in range(count):
        app.send_task("tests.faults.poison_tasks.mark", args=(marks,), eta=eta, producer=producer)
"""


def celery_process(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=out,
            start_new_session=True,
        )


def marks_send(env: dict[str, str], marks: Path, *, eta_seconds: float, count: int = 1) -> None:
    sent = subprocess.run(
        [sys.executable, "-c", SEND, str(marks), str(eta_seconds), str(count)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert sent.returncode == 0, sent.stderr[-2000:]


def healthy_marks(marks: Path) -> int:
    return marks.read_text().count("healthy") if marks.exists() else 0


@pytest.mark.slow(seconds=60)
@pytest.mark.django_db
def test_the_worker_and_the_beat_live_through_a_broker_outage(private_dir) -> None:
    # Given the Procfile's worker (threads) and beat on a private Redis, the worker holding
    # messages it reserved and has not acknowledged (wake-ups waiting for their ETA),
    port = free_port()
    redis = redis_server(port, private_dir)
    env = redis_stack_env(private_dir, port, DATABASE_URL=database_url(), CHAN_CLOCK="1")
    log, marks = private_dir / "celery.log", private_dir / "marks"
    worker = celery_process(
        env,
        log,
        *("-A", "chan_api", "worker", "--pool", "threads", "--concurrency", "4", "-l", "info"),
        *("-I", "tests.faults.poison_tasks"),
    )
    beat = celery_process(
        env,
        log,
        *("-A", "chan_api.beat", "beat", "-l", "info"),
        *("--schedule", str(private_dir / "celerybeat-schedule")),
    )
    try:
        assert wait_for(lambda: " ready." in log.read_text(), 60), log.read_text()[-3000:]
        marks_send(env, marks, eta_seconds=0)
        assert wait_for(lambda: healthy_marks(marks) == 1, 30), log.read_text()[-3000:]
        marks_send(env, marks, eta_seconds=3600, count=3)
        assert wait_for(lambda: log.read_text().count(" received") >= 4, 30)
        # when Redis stops for a while and starts again,
        redis.terminate()
        redis.wait(timeout=10)
        time.sleep(BROKER_OUTAGE_SECONDS)
        redis = redis_server(port, private_dir)
        # then the worker reconnects and runs the next task, and neither process stopped.
        marks_send(env, marks, eta_seconds=0)
        assert wait_for(lambda: healthy_marks(marks) == 2, 60), log.read_text()[-5000:]
        assert worker.poll() is None and beat.poll() is None, log.read_text()[-5000:]
        assert "Unrecoverable error" not in log.read_text()
    finally:
        for proc in (worker, beat):
            process_stop(proc)
        redis.kill()
