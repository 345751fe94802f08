"""The Celery clock with a real worker on the real broker and database.

The broker is Redis when ``CELERY_BROKER_URL`` names it (CI, production), else the filesystem
broker of the embedded default (``make run``) in folders private to each test.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from accounts.models import LedgerTransaction
from chan_api.celery import app
from chan_api.settings import filesystem_broker_options
from games.management.commands.play_bots import hand_play_out
from games.models import Hand, HandEvent
from games.rules.bots import make_bot
from games.services.tables import seat_join, seat_ready, table_create
from tests.faults.harness import process_stop

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)


def database_url() -> str:
    """The test database, for the worker (a unix socket's directory goes in the host, quoted)."""
    db = connection.settings_dict
    auth = quote(db["USER"], safe="") + (
        f":{quote(db['PASSWORD'], safe='')}" if db["PASSWORD"] else ""
    )
    host = quote(db["HOST"], safe="") if db["HOST"].startswith("/") else db["HOST"] or "127.0.0.1"
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgres://{auth}@{host}{port}/{db['NAME']}"


@pytest.fixture
def broker_env(tmp_path) -> Iterator[dict[str, str]]:
    """The worker's broker settings; a filesystem broker lives in this test's tmp dir, for this
    process's Celery app (which sends the clock's tasks) as for the worker."""
    if settings.CELERY_BROKER_URL != "filesystem://":
        yield {"CELERY_BROKER_URL": settings.CELERY_BROKER_URL}
        return
    options = filesystem_broker_options(tmp_path / "broker")
    for key in ("data_folder_in", "processed_folder", "control_folder"):
        os.makedirs(options[key], exist_ok=True)
    saved = app.conf.broker_transport_options
    # The producer pool (app.amqp's, made on first send) keeps its channels and their folders:
    # drop it, so that the next task goes through the new folders.
    app.conf.broker_transport_options = options
    del app.amqp
    # The worker reads its folders from CHAN_VAR_DIR (its database comes from DATABASE_URL).
    yield {"CELERY_BROKER_URL": "filesystem://", "CHAN_VAR_DIR": str(tmp_path)}
    app.conf.broker_transport_options = saved
    del app.amqp


def worker_start(env: dict[str, str], log: Path) -> subprocess.Popen:
    """A solo Celery worker with ``env``, its log in the file ``log``: a pipe nobody reads fills
    up (64 KiB, a few hundred tasks at ``info``) and then blocks the worker in mid-log."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "chan_api",
                "worker",
                "--pool=solo",
                "-l",
                "info",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=out,
        )
    proc.log = log  # type: ignore[attr-defined]
    return proc


def worker_log(proc: subprocess.Popen) -> str:
    """The end of the worker's log, and whether it is still running: an assertion's message."""
    state = "running" if proc.poll() is None else f"exited {proc.returncode}"
    return f"worker {state}; its log ends:\n" + proc.log.read_bytes()[-20000:].decode(
        errors="replace"
    )


@pytest.fixture
def worker(settings, broker_env, tmp_path) -> Iterator[subprocess.Popen]:
    settings.CHAN_CLOCK = True  # wake the clock through the broker after each commit
    env = {
        **os.environ,
        **broker_env,
        "DATABASE_URL": database_url(),
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "CHAN_CLOCK": "1",  # the worker's own moves wake the clock again
    }
    proc = worker_start(env, tmp_path / "worker.log")
    yield proc
    process_stop(proc)


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_the_worker_deals_when_the_ready_deadline_passes(worker, make_user) -> None:
    assert settings.CELERY_TASK_ALWAYS_EAGER is False
    # Given three seated players with a 1-second ready timeout, two of them ready,
    owner, other, idle = (make_user()[0] for _ in range(3))
    table = table_create(owner=owner, name="clock", stake=1, timeouts={"ready": 1})
    seat_join(table_id=table.pk, user=other)
    seat_join(table_id=table.pk, user=idle)
    assert seat_ready(table_id=table.pk, user=owner) is None
    assert seat_ready(table_id=table.pk, user=other) is None  # committed: the clock is queued
    assert not Hand.objects.filter(table=table).exists()
    # when the worker's clock fires, the two ready players are dealt a hand without the third.
    dealt = wait_for(lambda: Hand.objects.filter(table=table).exists(), timeout=30)
    assert dealt, worker_log(worker)
    hand = Hand.objects.get(table=table)
    assert [s.user_id for s in hand.seat_list()] == [owner.pk, other.pk]


@pytest.mark.slow
def test_the_worker_plays_for_a_seat_that_lets_its_turn_time_out(worker, make_user) -> None:
    # Given a two-seat hand with a 1-second turn timeout where nobody ever moves,
    owner, other = (make_user()[0] for _ in range(2))
    table = table_create(owner=owner, name="idle", stake=1, max_seats=2, timeouts={"turn": 1})
    seat_join(table_id=table.pk, user=other)
    seat_ready(table_id=table.pk, user=owner)
    hand = seat_ready(table_id=table.pk, user=other)
    assert hand is not None
    # the worker's clock plays the dealer's discard, then the next seat's draw and pass.
    moved = wait_for(lambda: Hand.objects.get(pk=hand.pk).seq >= 3, timeout=40)
    assert moved, worker_log(worker)
    events = HandEvent.objects.filter(hand=hand, seq__in=(1, 2, 3)).order_by("seq")
    assert [(e.type, e.system) for e in events][:2] == [("discard", True), ("draw", True)]


def assert_booked_once(hand: Hand) -> None:
    """One settlement transaction, or none for a hand that moved no Quan (a hòa without gà)."""
    quan = Hand.objects.get(pk=hand.pk).quan
    moved = quan["fees"] or quan["pot"]["in"] or any(s["net"] for s in quan["seats"])
    booked = LedgerTransaction.objects.filter(hand=hand, kind="hand_settlement").count()
    assert booked == (1 if moved else 0)


def four_players_hand(make_user) -> Hand:
    users = [make_user()[0] for _ in range(4)]
    table = table_create(owner=users[0], name="books", stake=10)
    for user in users[1:]:
        seat_join(table_id=table.pk, user=user)
    hand = None
    for user in users:
        hand = seat_ready(table_id=table.pk, user=user) or hand
    assert hand is not None
    return hand


@pytest.mark.slow
def test_the_worker_books_a_hand_settlement_when_the_hand_ends(worker, make_user) -> None:
    # Given a hand played to its end here (the clock on: the end queues the settlement),
    hand = four_players_hand(make_user)
    hand_play_out(hand.pk, make_bot("heuristic", random.Random(5)))
    # the worker books it in the ledger, once.
    booked = wait_for(lambda: Hand.objects.get(pk=hand.pk).settled_at is not None, timeout=30)
    assert booked, worker_log(worker)
    assert_booked_once(hand)
    call_command("ledger_check")


@pytest.mark.slow
def test_a_lost_settlement_is_booked_by_the_sweep(
    settings, broker_env, make_user, tmp_path
) -> None:
    # Given a hand that ended while its settlement message was lost (the clock off: a worker
    # killed, a broker down),
    settings.CHAN_CLOCK = False
    hand = four_players_hand(make_user)
    hand_play_out(hand.pk, make_bot("heuristic", random.Random(6)))
    assert Hand.objects.get(pk=hand.pk).settled_at is None
    # when a worker comes back and the beat's sweep runs,
    env = {**os.environ, **broker_env, "DATABASE_URL": database_url(), "CHAN_CLOCK": "1"}
    proc = worker_start(env, tmp_path / "worker.log")
    try:
        app.send_task("games.tasks.clock_sweep")
        booked = wait_for(lambda: Hand.objects.get(pk=hand.pk).settled_at is not None, 30)
        assert booked, worker_log(proc)
    finally:
        process_stop(proc)
    # the hand is booked, exactly once.
    assert_booked_once(hand)
    call_command("ledger_check")


def test_a_sweep_that_expired_in_the_queue_is_logged_at_warning(worker) -> None:
    # Given a sweep that waited in the queue past its expiry (no worker, or workers behind),
    app.send_task("games.tasks.clock_sweep", expires=timezone.now() - timedelta(seconds=1))

    # the worker drops it and says so at WARNING: the quiet filter hides Celery's INFO line.
    def dropped() -> list[str]:
        lines = worker.log.read_text(errors="replace").splitlines()
        return [line for line in lines if "clock sweep dropped" in line]

    assert wait_for(dropped, 30), worker_log(worker)
    assert "warning" in dropped()[0].lower(), dropped()
