"""The embedded PostgreSQL (chan_api/embedded_db.py): started on demand, shared, never stopped by a
process exiting, restarted after a crash.

Each case runs its server in a scratch ``CHAN_VAR_DIR`` and stops it at the end. Every start or
attach happens in a fresh interpreter, as with the real commands (pgserver keeps one handle per
data directory and process).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from chan_api import embedded_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def var_dir(private_dir) -> Iterator[Path]:
    yield private_dir
    embedded_db.stop(private_dir)


def start(var_dir: Path) -> subprocess.Popen[str]:
    """``python -m chan_api.embedded_db start`` for ``var_dir``, in the background."""
    env = {**os.environ, "CHAN_VAR_DIR": str(var_dir)}
    env.pop("DATABASE_URL", None)
    return subprocess.Popen(
        [sys.executable, "-m", "chan_api.embedded_db", "start"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def started(var_dir: Path) -> str:
    out, err = start(var_dir).communicate(timeout=60)
    assert "embedded PostgreSQL:" in out, err[-2000:]
    return out


def postmasters(var_dir: Path) -> list[psutil.Process]:
    """The live postmasters serving ``var_dir / "pg"``."""
    pgdata = str((var_dir / "pg").resolve())
    found = []
    for proc in psutil.process_iter(["name", "cmdline", "status"]):
        if (
            proc.info["name"] == "postgres"
            and proc.info["status"] != psutil.STATUS_ZOMBIE
            and pgdata in (proc.info["cmdline"] or [])
        ):
            found.append(proc)
    return found


def server_answers(var_dir: Path) -> int:
    """Connect through the socket; return the server's postmaster pid."""
    pgdata = (var_dir / "pg").resolve()
    with psycopg.connect(host=str(pgdata), user="postgres", dbname="postgres") as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    return int((pgdata / "postmaster.pid").read_text().split()[0])


def test_concurrent_processes_share_one_server_that_outlives_them(var_dir) -> None:
    # Given three processes that need the database at the same moment, on a fresh var dir,
    procs = [start(var_dir) for _ in range(3)]
    outs = [p.communicate(timeout=60) for p in procs]
    # each gets the same unix socket, one server was started for them all,
    assert {out for out, _ in outs} == {f"embedded PostgreSQL: {(var_dir / 'pg').resolve()}\n"}
    (postmaster,) = postmasters(var_dir)
    # and it still serves after they all exited (pgserver's cleanup_mode=None).
    assert server_answers(var_dir) == postmaster.pid
    # A later process attaches to it instead of starting another.
    started(var_dir)
    assert [p.pid for p in postmasters(var_dir)] == [postmaster.pid]


def test_a_server_killed_with_kill_9_is_started_again(var_dir) -> None:
    started(var_dir)
    (postmaster,) = postmasters(var_dir)
    # Given a server killed without a chance to remove its postmaster.pid,
    postmaster.send_signal(signal.SIGKILL)
    deadline = time.monotonic() + 10
    while postmasters(var_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (var_dir / "pg" / "postmaster.pid").exists()
    # the next process starts a new one.
    started(var_dir)
    (restarted,) = postmasters(var_dir)
    assert restarted.pid != postmaster.pid
    assert server_answers(var_dir) == restarted.pid


def test_a_pid_file_naming_another_live_process_is_stale(var_dir) -> None:
    # Given a stopped server whose postmaster.pid names a live process that is not it (a pid
    # reused after a crash: pgserver alone would take it for the server),
    started(var_dir)
    assert embedded_db.stop(var_dir)
    pid_file = var_dir / "pg" / "postmaster.pid"
    pid_file.write_text(f"{os.getpid()}\n{(var_dir / 'pg').resolve()}\n0\n5432\n\n\n0 0\nready\n")
    # the next process starts the server.
    started(var_dir)
    (postmaster,) = postmasters(var_dir)
    assert postmaster.pid != os.getpid()
    assert server_answers(var_dir) == postmaster.pid


def test_the_settings_use_it_only_when_database_url_is_unset(var_dir) -> None:
    script = "import json, chan_api.settings as s; print(json.dumps(s.DATABASES['default']))"
    clean = {"PATH": os.environ.get("PATH", ""), "CHAN_VAR_DIR": str(var_dir), "DEBUG": "1"}

    def databases(**env: str) -> dict:
        result = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env={**clean, **env},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        return json.loads(result.stdout)

    external = databases(DATABASE_URL="postgres://chan@db.example.org:5433/chan")
    assert (external["HOST"], external["PORT"], external["NAME"]) == (
        "db.example.org",
        5433,
        "chan",
    )
    assert not (var_dir / "pg").exists()  # nothing started
    embedded = databases()
    assert embedded["ENGINE"] == "core.db_backend"  # counts queries (django-prometheus underneath)
    assert embedded["HOST"] == str((var_dir / "pg").resolve())
    assert embedded["TEST"] == {"NAME": "test_chan"}
    assert len(postmasters(var_dir)) == 1


def test_a_command_before_the_first_migrate_connects_as_the_application(var_dir) -> None:
    # Given a fresh clone's embedded server, never migrated,
    clean = {"PATH": os.environ.get("PATH", ""), "CHAN_VAR_DIR": str(var_dir), "DEBUG": "1"}
    script = (
        "from django.db import connection; "
        "print(connection.cursor().execute('SELECT current_user').fetchone()[0])"
    )
    # when a manage.py command connects (shell, createsuperuser, ...),
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # it connects as the application's role, which the embedded server made when it started.
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-1] == "chan_app"
