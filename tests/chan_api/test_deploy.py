"""The production stack: the Procfile's three processes are what ``make serve`` and deploy/ run,
and the stack serves, answers its probes and stops whole on SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from email.message import Message
from pathlib import Path
from typing import IO

import pytest

from tests.games.test_games_tasks import database_url

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BIN = Path(sys.executable).parent


def procfile() -> dict[str, str]:
    entries = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, command = line.split(":", 1)
            entries[name.strip()] = command.strip()
    return entries


def test_the_procfile_runs_gunicorn_a_worker_and_exactly_one_beat() -> None:
    entries = procfile()
    assert set(entries) == {"web", "worker", "beat"}
    assert entries["web"].startswith(
        "gunicorn -c deploy/gunicorn.conf.py chan_api.asgi:application"
    )
    assert entries["worker"].startswith("celery -A chan_api worker")
    assert entries["beat"].startswith("celery -A chan_api.beat beat")
    assert sum("beat" in command for command in entries.values()) == 1  # no worker --beat


def test_deploy_runs_the_procfile_lines_and_nothing_else() -> None:
    compose = (DEPLOY / "compose.yaml").read_text()
    for name in ("web", "worker", "beat"):
        assert f"command: honcho start --no-prefix {name}\n" in compose
        unit = (DEPLOY / f"chan-{name}.service").read_text()
        (exec_start,) = re.findall(r"^ExecStart=(.*)$", unit, re.MULTILINE)
        assert exec_start.endswith(f"honcho start --no-prefix --procfile /srv/chan/Procfile {name}")
    assert "beat: " in compose and "replicas" not in compose.split("beat: ")[1].split("\n  ")[0]
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "manage.py collectstatic" in dockerfile
    assert "Procfile" in dockerfile
    makefile = (ROOT / "Makefile").read_text()
    assert "-m chan_api.supervisor Procfile" in makefile


def test_deploy_starts_again_a_process_that_dies() -> None:
    # systemd starts a unit's process again whatever ended it, and compose its container (the
    # stack under `make serve` has the supervisor: tests/chan_api/test_supervisor.py).
    import yaml

    for name in ("web", "worker", "beat"):
        unit = (DEPLOY / f"chan-{name}.service").read_text()
        assert re.findall(r"^Restart=(.*)$", unit, re.MULTILINE) == ["always"]
        assert re.findall(r"^RestartSec=(.*)$", unit, re.MULTILINE) == ["1"]
    services = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    for name, service in services.items():
        if name != "migrate":  # a one-off: runs once before the others start
            assert service.get("restart") == "unless-stopped", name


def supervisor_start(env: dict[str, str], out: IO[bytes], procfile: Path) -> subprocess.Popen:
    """``python -m chan_api.supervisor PROCFILE`` as ``make serve`` runs it, its output to
    ``out`` (a file: a pipe read only at the end would block it once full)."""
    return subprocess.Popen(
        [sys.executable, "-m", "chan_api.supervisor", str(procfile)],
        cwd=ROOT,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> tuple[int, bytes, Message]:
    """Status, body and headers (looked up by any case: uvicorn sends them in lower case)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read(), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers


def processes_marked(marker: str) -> list[int]:
    """Live processes whose environment carries ``marker`` (the ones this test started)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@pytest.mark.slow
@pytest.mark.django_db
def test_the_stack_serves_and_stops_whole_on_sigterm(tmp_path) -> None:
    # Given the Procfile run by the supervisor as `make serve` runs it, in production mode (no pytest,
    # DEBUG off, collected static files), on the test database,
    port = free_port()
    marker = f"CHAN_STACK_TEST={uuid.uuid4().hex}"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTEST_VERSION", "DEBUG"}}
    env.update(
        dict([marker.split("=")]),
        SECRET_KEY="stack-test-key",
        DATABASE_URL=database_url(),  # the embedded server's socket directory quoted too
        CHAN_VAR_DIR=str(tmp_path / "var"),
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "prometheus"),
        BIND=f"127.0.0.1:{port}",
        WEB_WORKERS="2",
        CHAN_CLOCK="0",
        PATH=f"{BIN}:{os.environ['PATH']}",
    )
    (tmp_path / "prometheus").mkdir()
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
        cwd=ROOT,
        env={k: v for k, v in env.items() if k != "PROMETHEUS_MULTIPROC_DIR"},
        check=True,
        timeout=120,
    )
    log = tmp_path / "stack.log"
    with open(log, "wb") as out:
        stack = supervisor_start(env, out, ROOT / "Procfile")
    base = f"http://127.0.0.1:{port}"
    try:
        # when it is up,
        deadline = time.monotonic() + 60
        while True:
            try:
                if get(f"{base}/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline and stack.poll() is None, "the stack did not start"
            time.sleep(0.3)
        # then it answers its probes, the API root and the admin with its styles,
        assert get(f"{base}/readyz")[0] == 200
        status, body, _ = get(f"{base}/api/v1/")
        assert status == 200 and b"/api/v1/tables" in body
        status, page, _ = get(f"{base}/admin/login/")
        assert status == 200
        (css,) = re.findall(rb'href="(/static/admin/css/base\.[0-9a-f]{12}\.css)"', page)
        status, _, headers = get(base + css.decode())
        assert status == 200 and headers["Content-Type"].startswith("text/css")
        assert "immutable" in headers["Cache-Control"]
        # A request line over the server's limit is refused before the application sees it
        # (uvicorn's httptools: a URL over 65,535 bytes; deploy/gunicorn.conf.py), one under it
        # is the application's.
        status, body, _ = get(f"{base}/healthz?{'a' * 70_000}")
        assert (status, body) == (400, b"Invalid HTTP request received.")
        assert get(f"{base}/healthz?{'a' * 8_000}")[0] == 200
        # and its /metrics sums the web processes' requests.
        status, text, _ = get(f"{base}/metrics")
        assert status == 200
        assert b"django_http_requests_total_by_method_total" in text
        # (the web workers and the Celery worker all write their metrics there)
        writers = {p.stem.rsplit("_", 1)[1] for p in (tmp_path / "prometheus").glob("*.db")}
        assert len(writers) >= 3, writers
        assert len(processes_marked(marker)) >= 5  # supervisor, gunicorn x3, worker(s), beat
    finally:
        # When it gets SIGTERM, every process it started stops.
        stack.send_signal(signal.SIGTERM)
        returncode = stack.wait(timeout=30)
        output = log.read_text(errors="replace")
    deadline = time.monotonic() + 15
    while processes_marked(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_marked(marker) == [], output[-3000:]
    assert "web.1 stopped" in output and "worker.1 stopped" in output and "beat.1 stopped" in output
    assert returncode == 0, output[-3000:]


@pytest.mark.slow
@pytest.mark.django_db
@pytest.mark.parametrize("target", ["stack", "make"])
def test_make_serve_stopped_by_sigterm_is_a_clean_stop(tmp_path, target) -> None:
    # Given `make serve` up (on its own database and directory),
    port = free_port()
    marker = f"CHAN_STACK_TEST={uuid.uuid4().hex}"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTEST_VERSION", "DEBUG"}}
    env.update(
        dict([marker.split("=")]),
        SECRET_KEY="stack-test-key",
        DATABASE_URL=database_url(),
        CHAN_VAR_DIR=str(tmp_path / "var"),
        HOST="127.0.0.1",
        PORT=str(port),
        WEB_WORKERS="1",
        CHAN_CLOCK="0",
    )
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        make = subprocess.Popen(
            ["make", "serve"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if get(f"http://127.0.0.1:{port}/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline and make.poll() is None, log.read_text()[-3000:]
            time.sleep(0.3)
        # when SIGTERM stops it (sent to the stack, make's recipe, or to make itself),
        if target == "stack":
            (child,) = (Path(f"/proc/{make.pid}/task/{make.pid}/children").read_text()).split()
            os.kill(int(child), signal.SIGTERM)
        else:
            make.send_signal(signal.SIGTERM)
        make.wait(timeout=60)
    finally:
        if make.poll() is None:
            make.kill()
            make.wait()
    output = log.read_text(errors="replace")
    # then every process stops, make reports no error, and a stop of the stack exits 0 (make
    # itself, signalled, ends by that signal once the stack stopped: GNU make re-raises it).
    assert "Error" not in "".join(line for line in output.splitlines() if "make:" in line)
    assert "web.1 stopped" in output and "worker.1 stopped" in output and "beat.1 stopped" in output
    assert make.returncode == (0 if target == "stack" else -signal.SIGTERM), output[-3000:]
    deadline = time.monotonic() + 15
    while processes_marked(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_marked(marker) == []


def test_deploy_puts_pgbouncer_in_transaction_mode_before_postgresql_but_not_the_migration() -> (
    None
):
    import configparser

    import yaml

    ini = configparser.ConfigParser(delimiters=("=",), comment_prefixes=(";",))
    ini.read(DEPLOY / "pgbouncer.ini")
    assert ini["pgbouncer"]["pool_mode"] == "transaction"
    assert "chan" in ini["databases"]
    services = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    for name in ("web", "worker", "beat"):
        env = services[name]["environment"]
        assert (
            "@pgbouncer:6432/chan" in env["DATABASE_URL"] and env["DATABASE_POOLER"] == "pgbouncer"
        )
    migrate = services["migrate"]["environment"]
    assert "@db:5432/" in migrate["DATABASE_URL"] and "@db:5432/" in migrate["DATABASE_OWNER_URL"]
    assert not migrate["DATABASE_POOLER"]
    assert services["pgbouncer"]["build"]["dockerfile"] == "deploy/pgbouncer.Dockerfile"


def test_the_beat_sends_what_the_workers_know_without_setting_django_up() -> None:
    # The beat's own application (chan_api/beat.py) reads the schedule, queues and routes of the
    # settings as the workers' does, and imports no Django app (a third of the memory).
    code = (
        "import sys, json; import chan_api.beat as b; c = b.app.conf; "
        "print(json.dumps({'django': 'django.apps' in sys.modules and __import__('django.apps')"
        ".apps.ready, 'models': 'games.models' in sys.modules, "
        "'schedule': {k: [v['task'], str(v['schedule']), v.get('options')] "
        "for k, v in c.beat_schedule.items()}, 'routes': c.task_routes, "
        "'queues': sorted(q.name for q in c.task_queues), 'tz': c.timezone}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    beat = json.loads(out.stdout.strip().splitlines()[-1])
    assert beat["django"] is False and beat["models"] is False

    from chan_api.celery import app

    c = app.conf
    assert beat["schedule"] == {
        k: [v["task"], str(v["schedule"]), v.get("options")] for k, v in c.beat_schedule.items()
    }
    assert beat["routes"] == c.task_routes
    assert beat["queues"] == sorted(q.name for q in c.task_queues)
    assert beat["tz"] == c.timezone
    app.loader.import_default_modules()  # the workers' task modules (autodiscovered)
    for entry in c.beat_schedule.values():  # each name is a task the workers register
        assert entry["task"] in app.tasks


def test_gunicorn_s_master_reads_its_configuration_without_celery_and_django_loads_the_app() -> (
    None
):
    # The master only reads deploy/gunicorn.conf.py (and the worker class): it imports no
    # Celery (chan_api/__init__.py), while a process that sets Django up sends its tasks
    # through the project's app (GamesConfig.ready), not Celery's default one.
    master = (
        "import sys, runpy; runpy.run_path('deploy/gunicorn.conf.py'); "
        "import chan_api.uvicorn_worker; print('celery' in sys.modules, 'kombu' in sys.modules)"
    )
    django_process = (
        "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'chan_api.settings'); "
        "django.setup(); from celery import current_app; from games.tasks import hand_turn_due; "
        "print(current_app.main, hand_turn_due.app.main, hand_turn_due.app is current_app._get_current_object())"
    )
    env = {**os.environ, "SECRET_KEY": os.environ.get("SECRET_KEY") or "test-only-secret"}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
        )
        for code in (master, django_process)
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr[-2000:]
    assert runs[0].stdout.split() == ["False", "False"]
    assert runs[1].stdout.strip().splitlines()[-1].split() == ["chan_api", "chan_api", "True"]


def test_the_system_checks_pass_here_since_the_worker_skips_them() -> None:
    # A worker skips Django's system checks (chan_api/celery.py: they load every view), as
    # gunicorn does; `migrate` runs them before the stack starts, and so does the suite.
    from django.core.management import call_command

    import chan_api.celery  # noqa: F401  (sets the worker's default)

    assert os.environ["CELERY_SKIP_CHECKS"] == "1"
    call_command("check", fail_level="ERROR")
