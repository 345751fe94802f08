"""The supervisor of ``make serve`` (chan_api/supervisor.py) on small shell processes: a process
that dies is started again alone, what it left behind is killed, SIGTERM stops every process
with status 0, and a process that keeps dying at start stops the whole stack. The real stack
under it is tests/faults/test_faults_stack.py."""

from __future__ import annotations

import io
import os
import re
import signal
import time
import uuid
from pathlib import Path

import pytest

from chan_api import supervisor
from chan_api.supervisor import Supervisor, procfile_read
from tests.chan_api.test_deploy import processes_marked, supervisor_start
from tests.games.test_games_tasks import wait_for

ROOT = Path(__file__).resolve().parents[2]


def started_pids(output: str, name: str) -> list[int]:
    return [int(pid) for pid in re.findall(rf"\| {re.escape(name)} started \(pid=(\d+)\)", output)]


def test_the_procfile_is_read_in_order_without_comments(tmp_path) -> None:
    path = tmp_path / "Procfile"
    path.write_text("# a comment\n\nweb: gunicorn -c x: y\nworker: celery worker\n")
    assert procfile_read(path) == {"web": "gunicorn -c x: y", "worker": "celery worker"}
    path.write_text("web gunicorn\n")
    with pytest.raises(ValueError, match="not a 'name: command' line"):
        procfile_read(path)


def test_the_repository_procfile_is_what_make_serve_supervises() -> None:
    assert list(procfile_read(ROOT / "Procfile")) == ["web", "worker", "beat"]
    assert "$(BIN)/python -m chan_api.supervisor Procfile" in (ROOT / "Makefile").read_text()


@pytest.mark.slow(seconds=5)
def test_a_process_that_dies_is_started_again_alone_and_sigterm_stops_all(tmp_path) -> None:
    # Given two processes under the supervisor, the second with a child in its group,
    marker = f"CHAN_SUPERVISOR_TEST={uuid.uuid4().hex}"
    procfile = tmp_path / "Procfile"
    procfile.write_text("steady: echo up; exec sleep 300\nfragile: sleep 301 & exec sleep 302\n")
    log = tmp_path / "out.log"
    env = {**os.environ, **dict([marker.split("=")])}
    with log.open("w") as out:
        stack = supervisor_start(env, out, procfile)
    try:
        assert wait_for(lambda: len(processes_marked(marker)) == 4, 10), log.read_text()
        assert re.search(r"steady\.1 +\| up", log.read_text())
        (steady,) = started_pids(log.read_text(), "steady.1")
        (fragile,) = started_pids(log.read_text(), "fragile.1")
        orphan = next(p for p in processes_marked(marker) if b"301" in cmdline(p))
        # when one is killed (kill -9),
        os.kill(fragile, signal.SIGKILL)
        # then it is started again, what it left in its group is gone, the other one is the same
        # process, and the stack goes on;
        assert wait_for(lambda: len(started_pids(log.read_text(), "fragile.1")) == 2, 10)
        output = log.read_text()
        assert "fragile.1 stopped (rc=-9)" in output and "fragile.1 restarting in 1 s" in output
        assert wait_for(lambda: not Path(f"/proc/{orphan}").exists(), 5)
        assert started_pids(output, "steady.1") == [steady]
        assert Path(f"/proc/{steady}").exists() and stack.poll() is None
        # and SIGTERM stops every process, with status 0.
        stack.send_signal(signal.SIGTERM)
        assert stack.wait(timeout=20) == 0
    finally:
        if stack.poll() is None:
            stack.kill()
            stack.wait()
    output = log.read_text()
    assert "SIGTERM received" in output
    assert "steady.1 stopped" in output and output.count("fragile.1 stopped") == 2
    assert wait_for(lambda: processes_marked(marker) == [], 5), processes_marked(marker)


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_a_process_that_keeps_dying_at_start_stops_the_stack(tmp_path, monkeypatch) -> None:
    # Given a process that exits at once (a configuration error, say) beside a steady one,
    monkeypatch.setattr(supervisor, "FIRST_DELAY", 0.01)
    out = io.StringIO()
    stack = Supervisor({"steady": "exec sleep 300", "broken": "echo no key; exit 3"}, out=out)
    # when the supervisor runs them,
    started = time.monotonic()
    status = stack.run()
    # then it starts it again, sooner than a second at first and later each time, until it has
    # died GIVE_UP_AFTER times in a row; then it stops everything with its status.
    output = out.getvalue()
    assert status == 3
    assert output.count("broken.1 started") == supervisor.GIVE_UP_AFTER
    delays = [float(d) for d in re.findall(r"broken\.1 restarting in ([\d.]+) s", output)]
    assert delays == sorted(delays) and delays[0] < delays[-1]
    assert "broken.1 died 5 times at start: giving up" in output
    assert "sending SIGTERM to steady.1" in output and "steady.1 stopped" in output
    assert time.monotonic() - started < 15
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
