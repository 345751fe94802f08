"""``manage.py run_dev``: the web server and a Celery worker together, for ``make run``.

The web server is uvicorn serving chan_api.asgi, the application production serves (one process,
no reload; long polls wait in its event loop), in a child process of its own, like the worker.

On the embedded default both share the embedded PostgreSQL in ``var/pg`` (the first to need it
starts it; it keeps running after they stop, see chan_api/embedded_db.py) and the worker uses the
filesystem broker (no server needed); with ``DATABASE_URL`` or ``CELERY_BROKER_URL`` set they use
those. It is a development server: it refuses to run with
``DEBUG`` off (``make run`` sets ``DEBUG=1``). Production runs gunicorn (uvicorn workers) and
Celery workers separately (see deploy/).

``make run`` passes ``--migrate --demo-players``: the migrations and the demo players run in this
process (one Django start instead of three), the migrations before the children start, the demo
players while they start (their tokens are printed once made).
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Run the development web server and one Celery worker."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", default="8000")
        parser.add_argument("--no-worker", action="store_true")
        parser.add_argument("--migrate", action="store_true", help="migrate first")
        parser.add_argument(
            "--demo-players", action="store_true", help="make the demo players, print tokens"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if not settings.DEBUG:
            raise CommandError(
                "run_dev is the development server and needs DEBUG=1 (`make run` sets it); "
                "production runs gunicorn and Celery workers (see deploy/)."
            )
        if settings.CELERY_BROKER_URL == "filesystem://":
            for key in ("data_folder_in", "processed_folder", "control_folder"):
                os.makedirs(settings.CELERY_BROKER_TRANSPORT_OPTIONS[key], exist_ok=True)
        if opts["migrate"]:
            call_command("migrate", interactive=False, stdout=self.stdout._out)  # its own line ends
        env = {**os.environ, "DEBUG": "1"}
        # A SIGTERM (not only Ctrl-C) must stop the children too: exit through atexit.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        if not opts["no_worker"]:
            worker = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "chan_api",
                    "worker",
                    "--pool=solo",
                    "--beat",  # the periodic clock sweep (games.tasks.clock_sweep)
                    "--schedule",
                    str(settings.VAR_DIR / "celerybeat-schedule"),
                    "-l",
                    "info",
                ],
                env=env,
            )
            atexit.register(worker.terminate)
            self.stdout.write(f"Celery worker started (pid {worker.pid}).")
        web = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "chan_api.asgi:application"]
            + ["--host", opts["host"], "--port", str(opts["port"])]
            + ["--no-access-log"],  # the application logs each request once
            env=env,
        )
        atexit.register(web.terminate)
        if opts["demo_players"]:
            call_command("demo_players", stdout=self.stdout._out)
        self.stdout.write(
            f"API on http://{opts['host']}:{opts['port']}/api/v1/ — docs at /api/docs/"
        )
        try:
            status = web.wait()
        except KeyboardInterrupt:  # Ctrl-C reached uvicorn too: let it finish shutting down
            status = web.wait()
        if status not in (0, -signal.SIGINT, -signal.SIGTERM):
            raise CommandError(f"uvicorn exited with status {status}")
