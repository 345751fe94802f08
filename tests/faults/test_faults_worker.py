"""Workers killed: a message that kills its worker is delivered a bounded number of times then
dropped; a worker killed mid-hand (kill -9) loses nothing once one runs again — the clock and the
settlement resume, each move and each settlement exactly once."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from chan_api.celery import app
from games.clock import HAND_TURN_TASK, SWEEP_GRACE
from games.management.commands.play_bots import hand_play_out
from games.models import Hand, HandEvent
from games.rules.bots import make_bot
from games.services.tables import seat_join, seat_ready, table_create
from tests.games.test_games_tasks import (  # noqa: F401 (broker_env is a fixture)
    assert_booked_once,
    broker_env,
    database_url,
    four_players_hand,
    wait_for,
)

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def start_worker(broker_env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:  # noqa: F811
    env = {**os.environ, **broker_env, "DATABASE_URL": database_url(), "CHAN_CLOCK": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "chan_api", "worker", "-l", "info", *extra],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # kill -9 reaches the worker's whole process group
    )


def kill_9(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            kill_9(proc)


def test_a_message_that_kills_its_worker_is_dropped_after_a_few_deliveries(
    broker_env,  # noqa: F811
    tmp_path,
    settings,
) -> None:
    # Given a prefork worker (its parent survives a child's death and redelivers the message),
    marks = tmp_path / "marks"
    worker = start_worker(
        broker_env, "--pool=prefork", "-c", "1", "-I", "tests.faults.poison_tasks"
    )
    try:
        # when a task kills the process running it, every time,
        app.send_task("tests.faults.poison_tasks.poison", args=(str(marks),))

        def deliveries() -> int:
            return marks.read_text().count("delivery") if marks.exists() else 0

        most = settings.CHAN_MAX_DELIVERIES
        assert wait_for(lambda: deliveries() >= most, 60), deliveries()
        # then it is delivered CHAN_MAX_DELIVERIES times and dropped (never again),
        time.sleep(5)
        assert deliveries() == most
        # and the worker goes on with the next task.
        app.send_task("tests.faults.poison_tasks.mark", args=(str(marks),))
        assert wait_for(lambda: "healthy" in marks.read_text(), 30)
        assert worker.poll() is None
    finally:
        stop(worker)


def test_a_worker_killed_mid_hand_loses_nothing_once_one_runs_again(
    broker_env,  # noqa: F811
    make_user,
    settings,
) -> None:
    settings.CHAN_CLOCK = True
    # Given a two-seat hand with a 1-second turn timeout played by the clock alone,
    owner, other = (make_user()[0] for _ in range(2))
    table = table_create(owner=owner, name="k9", stake=1, max_seats=2, timeouts={"turn": 1})
    seat_join(table_id=table.pk, user=other)
    seat_ready(table_id=table.pk, user=owner)
    worker = start_worker(broker_env, "--pool=solo")
    hand = seat_ready(table_id=table.pk, user=other)
    assert hand is not None
    try:
        assert wait_for(lambda: Hand.objects.get(pk=hand.pk).seq >= 2, 40)
        # when the worker is killed (kill -9) in the middle of the hand, its reserved wake-up
        # lost with it,
        kill_9(worker)
        seq_at_kill = Hand.objects.get(pk=hand.pk).seq
        time.sleep(2.5)  # deadlines pass with no worker
        # and a new worker starts, with the beat's sweep re-arming what was lost,
        worker = start_worker(broker_env, "--pool=solo")
        app.send_task("games.tasks.clock_sweep")
        resumed = wait_for(lambda: Hand.objects.get(pk=hand.pk).seq >= seq_at_kill + 2, 40)
        # then the clock plays on, every move once, in order.
        assert resumed
        seqs = list(HandEvent.objects.filter(hand=hand).values_list("seq", flat=True))
        assert seqs == list(range(len(seqs)))
        call_command("check_hands")
    finally:
        stop(worker)


def test_a_settlement_pending_when_its_worker_is_killed_is_booked_once(
    broker_env,  # noqa: F811
    make_user,
    settings,
) -> None:
    # Given a hand that ended (its settlement queued) and a worker killed as it starts on it,
    settings.CHAN_CLOCK = True
    hand = four_players_hand(make_user)
    hand_play_out(hand.pk, make_bot("heuristic", random.Random(8)))
    worker = start_worker(broker_env, "--pool=solo")
    time.sleep(0.3)
    kill_9(worker)
    # when a worker runs again and the beat's sweep comes,
    worker = start_worker(broker_env, "--pool=solo")
    try:
        booked = False
        for _ in range(20):
            app.send_task("games.tasks.clock_sweep")
            if wait_for(lambda: Hand.objects.get(pk=hand.pk).settled_at is not None, 2):
                booked = True
                break
        # then the settlement is booked, exactly once, and the books balance.
        assert booked
        assert_booked_once(hand)
        call_command("ledger_check")
    finally:
        stop(worker)


def start_beat(broker_env: dict[str, str], workdir: Path) -> subprocess.Popen[bytes]:  # noqa: F811
    """The beat of production (the clock sweep every CHAN_SWEEP_SECONDS), its schedule and log
    in ``workdir``."""
    env = {
        **os.environ,
        **broker_env,
        "DATABASE_URL": database_url(),
        "CHAN_SWEEP_SECONDS": str(SWEEP_SECONDS),
    }
    with open(workdir / "beat.log", "ab") as log:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "chan_api",
                "beat",
                "-l",
                "info",
                "--schedule",
                str(workdir / "celerybeat-schedule"),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )


def start_prefork_worker(broker_env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:  # noqa: F811
    """The worker of production (``celery -A chan_api worker``: prefork, two processes), its
    log appended to ``log``."""
    env = {**os.environ, **broker_env, "DATABASE_URL": database_url(), "CHAN_CLOCK": "1"}
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "chan_api", "worker", "-l", "info", "-c", "2"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=out,
            start_new_session=True,
        )


KILLS = 5
SWEEP_SECONDS = 2.0  # the beat's period here (CHAN_SWEEP_SECONDS), to keep the test short
# Wake-ups queued while the worker is down, each round: what bots playing fast at many tables
# leave behind (one wake-up a move, most stale by the restart). A worker drains them at a few
# hundred a second on this machine, far slower than the bound.
BACKLOG = 4000


def backlog_send(hand_ids: list[int], count: int) -> None:
    """``count`` wake-ups (``hand_turn_due`` with an ETA now past) for hands that moved on."""
    with app.producer_or_acquire() as producer:
        for i in range(count):
            app.send_task(
                HAND_TURN_TASK,
                args=(hand_ids[i % len(hand_ids)],),
                eta=timezone.now(),
                producer=producer,
            )


def broker_purge() -> None:
    """Empty every queue of the private broker (the next test starts with none of ours)."""
    with app.connection_for_write() as conn:
        for queue in ("celery", "clock"):
            conn.default_channel.queue_purge(queue)


def test_overdue_hands_move_soon_after_each_restart_of_a_killed_worker(
    broker_env,  # noqa: F811
    make_user,
    settings,
    tmp_path,
) -> None:
    settings.CHAN_CLOCK = True
    if broker_env["CELERY_BROKER_URL"] == "filesystem://":
        pytest.skip("the production broker (Redis) is what this test is about")
    # Given hands played by the clock alone (1-second decisions), a real beat and a real worker,
    bound = SWEEP_SECONDS + settings.CHAN_AUTO_PLAY_DELAY + 2
    tables = []
    one_second = {"turn": 1, "tra_cua": 1, "declare": 1}
    for i in range(3):
        owner, other = (make_user()[0] for _ in range(2))
        table = table_create(
            owner=owner, name=f"restart{i}", stake=1, max_seats=2, timeouts=one_second
        )
        seat_join(table_id=table.pk, user=other)
        tables.append((table.pk, owner, other))
    hands: list[int] = []

    def deal_where_ended() -> None:
        """A new hand at each table whose hand ended (the clock plays a hand out in minutes)."""
        playing = set(
            Hand.objects.filter(pk__in=hands, status=Hand.Status.PLAYING).values_list(
                "table_id", flat=True
            )
        )
        hands[:] = [h for h in hands if Hand.objects.get(pk=h).table_id in playing]
        for table_id, owner, other in tables:
            if table_id not in playing:
                seat_ready(table_id=table_id, user=owner)
                hands.append(seat_ready(table_id=table_id, user=other).pk)

    deal_where_ended()
    log = tmp_path / "worker.log"
    broker_purge()
    beat = start_beat(broker_env, tmp_path)
    worker = start_prefork_worker(broker_env, log)
    recoveries: list[float] = []
    startups: list[float] = []

    def seqs() -> dict[int, int]:  # of the hands still playing (a clock-played hand may end)
        playing = Hand.objects.filter(pk__in=hands, status=Hand.Status.PLAYING)
        return dict(playing.values_list("pk", "seq"))

    try:
        for _ in range(KILLS):
            # the clock is running (every hand moved since the last restart),
            deal_where_ended()
            before = seqs()
            assert wait_for(lambda b=before: all(s > b[h] for h, s in seqs().items()), 30), (
                log.read_text()[-3000:]
            )
            # when a hand ends elsewhere (its settlement queued) and the worker is killed a
            # second later,
            ended = four_players_hand(make_user)
            hand_play_out(ended.pk, make_bot("heuristic", random.Random(len(recoveries))))
            time.sleep(1)
            kill_9(worker)
            at_kill = seqs()
            assert at_kill  # overdue hands to watch
            # stays down while wake-ups pile up in the queue (bots play on at busy tables)
            # and until every hand is overdue for the sweep,
            backlog_send([ended.pk], BACKLOG)
            assert wait_for(
                lambda: all(
                    h.deadline_at <= timezone.now() - SWEEP_GRACE
                    for h in Hand.objects.filter(pk__in=hands, status=Hand.Status.PLAYING)
                ),
                10,
            )
            # and is started again (restarted: once it says it is ready; loading Django and
            # the tasks takes 2-5 s here, more on a loaded machine, and is not the clock's),
            readies = log.read_text().count(" ready.")
            worker = start_prefork_worker(broker_env, log)
            started = time.monotonic()
            assert wait_for(lambda n=readies: log.read_text().count(" ready.") > n, 120), (
                log.read_text()[-3000:]
            )
            restarted = time.monotonic()
            startups.append(round(restarted - started, 1))
            moved = wait_for(lambda k=at_kill: all(s > k[h] for h, s in seqs().items()), bound + 60)
            recoveries.append(round(time.monotonic() - restarted, 1))
            assert moved, (recoveries, log.read_text()[-3000:])
        # then every overdue hand moved within sweep + auto-play delay + 2 s of each restart,
        print("worker startups", startups, "recoveries", recoveries)
        assert max(recoveries) <= bound, (recoveries, startups)
        # and the sweeps the beat sent while no worker ran were dropped where an operator sees
        # it: one WARNING line each (not the INFO lines the quiet filter hides).
        dropped = [line for line in log.read_text().splitlines() if "clock sweep dropped" in line]
        assert len(dropped) >= KILLS, log.read_text()[-3000:]
        assert all("warning" in line.lower() for line in dropped), dropped[:3]
    finally:
        stop(worker)
        stop(beat)
        broker_purge()
