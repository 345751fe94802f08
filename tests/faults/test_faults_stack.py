"""The whole stack as ``make serve`` runs it (the Procfile under chan_api/supervisor.py, on a
private Redis) losing one process at a time while the clock plays hands: the Celery worker
killed (kill -9), Redis stopped and started again, a web worker killed, the web server's master
killed. Each time the service answers again and the clock plays on with no hand's help; no hand
is left stuck and the books are exact."""

from __future__ import annotations

import os
import re
import signal
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from games.models import Hand, HandEvent
from games.services.tables import seat_join, seat_ready, table_create
from tests.chan_api.test_deploy import supervisor_start
from tests.chan_api.test_supervisor import cmdline
from tests.faults.harness import (
    ROOT,
    free_port,
    one_stack_at_a_time,
    redis_server,
    redis_stack_env,
)
from tests.games.test_games_tasks import database_url, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow(seconds=150)]
SWEEP_SECONDS = 2.0  # the beat's period here (CHAN_SWEEP_SECONDS), to keep the test short
REDIS_OUTAGE_SECONDS = 20


def healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=2) as r:
            return r.status == 200
    except (OSError, urllib.error.URLError):
        return False


def pids(output: str, name: str) -> list[int]:
    """The pids the supervisor started ``name`` with, in order."""
    return [int(p) for p in re.findall(rf"\| {re.escape(name)} started \(pid=(\d+)\)", output)]


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


def program(pid: int) -> int:
    """The process a Procfile line runs: the supervisor's ``sh -c`` itself, or its child."""
    if cmdline(pid).startswith(b"/bin/sh\x00"):
        assert wait_for(lambda: children(pid), 30)
        return children(pid)[0]
    return pid


def clock_played_hands(make_user, count: int) -> list[int]:
    """Two-seat hands whose every decision times out after a second (the clock plays them)."""
    one_second = {"turn": 1, "tra_cua": 1, "declare": 1}
    hands = []
    for i in range(count):
        owner, other = (make_user()[0] for _ in range(2))
        table = table_create(
            owner=owner, name=f"stack{i}", stake=1, max_seats=2, timeouts=one_second
        )
        seat_join(table_id=table.pk, user=other)
        seat_ready(table_id=table.pk, user=owner)
        hands.append(seat_ready(table_id=table.pk, user=other).pk)
    return hands


def playing_seqs(hands: list[int]) -> dict[int, int]:
    playing = Hand.objects.filter(pk__in=hands, status=Hand.Status.PLAYING)
    return dict(playing.values_list("pk", "seq"))


def all_moved(hands: list[int], since: dict[int, int]) -> bool:
    return all(seq > since[h] for h, seq in playing_seqs(hands).items() if h in since)


def test_the_stack_recovers_from_each_process_dying_with_no_hand_stuck(
    make_user, private_dir
) -> None:
    # Given the stack of `make serve` on the test database and a private Redis, its clock
    # playing hands of one-second decisions (the beat's sweep arms them),
    port, web_port = free_port(), free_port()
    redis = redis_server(port, private_dir)
    env = redis_stack_env(
        private_dir,
        port,
        DATABASE_URL=database_url(),
        CHAN_CLOCK="1",
        CHAN_SWEEP_SECONDS=str(SWEEP_SECONDS),
        BIND=f"127.0.0.1:{web_port}",
        WEB_WORKERS="2",
        PROMETHEUS_MULTIPROC_DIR=str(private_dir / "prometheus"),
        PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    )
    env.pop("DEBUG", None)
    (private_dir / "prometheus").mkdir()
    base = f"http://127.0.0.1:{web_port}"
    bound = SWEEP_SECONDS + settings.CHAN_AUTO_PLAY_DELAY + 2
    log = private_dir / "stack.log"
    hands = clock_played_hands(make_user, 3)
    with one_stack_at_a_time(), log.open("wb") as out:
        stack = supervisor_start(env, out, ROOT / "Procfile")
        try:

            def output() -> str:
                return log.read_text(errors="replace")

            def readies() -> int:
                return output().count(" ready.")

            assert wait_for(lambda: healthy(base) and readies() == 1, 90), output()[-3000:]
            since = playing_seqs(hands)
            assert wait_for(lambda: all_moved(hands, since), 30), output()[-3000:]

            # When the worker is killed (kill -9),
            (worker,) = pids(output(), "worker.1")
            assert b"celery" in cmdline(program(worker))
            os.kill(program(worker), signal.SIGKILL)
            at_kill = playing_seqs(hands)
            # then the supervisor starts it again and the clock plays every overdue hand within
            # sweep + auto-play delay + 2 s of its being ready, the web server untouched.
            assert wait_for(lambda: readies() == 2, 90), output()[-3000:]
            ready = time.monotonic()
            assert wait_for(lambda: all_moved(hands, at_kill), bound + 30), output()[-3000:]
            assert time.monotonic() - ready <= bound
            assert len(pids(output(), "worker.1")) == 2 and len(pids(output(), "web.1")) == 1

            # When Redis stops for a while and starts again,
            redis.terminate()
            redis.wait(timeout=10)
            time.sleep(REDIS_OUTAGE_SECONDS)
            redis = redis_server(port, private_dir)
            back = playing_seqs(hands)
            # then the worker reconnects (no process was started again) and the clock plays on.
            assert wait_for(lambda: all_moved(hands, back), 60), output()[-3000:]
            assert len(pids(output(), "worker.1")) == 2 and len(pids(output(), "beat.1")) == 1
            assert healthy(base)

            # When a web worker is killed, the web master starts another and the service answers.
            web = program(pids(output(), "web.1")[0])
            workers = children(web)
            assert len(workers) == 2, (workers, [cmdline(p) for p in workers])
            os.kill(workers[0], signal.SIGKILL)
            assert wait_for(
                lambda: workers[0] not in children(web) and len(children(web)) == 2, 60
            ), [cmdline(p) for p in children(web)]
            assert wait_for(lambda: healthy(base), 30)

            # When the web server's master is killed, the supervisor starts it again.
            assert b"gunicorn" in cmdline(web)
            os.kill(web, signal.SIGKILL)
            assert wait_for(lambda: len(pids(output(), "web.1")) == 2 and healthy(base), 90), (
                output()[-3000:]
            )
            assert stack.poll() is None
        finally:
            stack.send_signal(signal.SIGTERM)
            returncode = stack.wait(timeout=60)
            redis.kill()
    # Then it stopped cleanly, no hand is stuck (each moved since the last outage), every event
    # is in order and the books balance.
    assert returncode == 0, log.read_text()[-3000:]
    assert "Unrecoverable error" not in log.read_text()
    for hand in hands:
        seqs = list(HandEvent.objects.filter(hand_id=hand).values_list("seq", flat=True))
        assert seqs == list(range(len(seqs)))
    call_command("check_hands")
    call_command("ledger_check")
