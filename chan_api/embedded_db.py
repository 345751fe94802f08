"""The embedded development database: a PostgreSQL 16 from the ``pgserver`` package in ``var/pg``.

The settings call :func:`database_settings` when ``DATABASE_URL`` is unset. The first process that
needs the server starts it (``initdb`` on first use, about half a second); every other process — the
web server, the Celery worker, pytest and the subprocesses its tests start — attaches to the same
server through its unix socket (no TCP port, so it never meets a system PostgreSQL) in a few
milliseconds. pgserver's ``cleanup_mode=None``: no process stops the server when it exits (the
default, ``"stop"``, stops it when the last process that attached exits, and so cold-starts it
again for the next command); it runs until ``make db-stop`` or ``make clean`` (``python -m
chan_api.embedded_db stop``) or a reboot.

A ``postmaster.pid`` left by a crash or a ``kill -9`` is removed before pgserver reads it: pgserver
trusts any live process with that pid (a zombie, or an unrelated process that reused the pid) and
would hand out the socket of a dead server.
"""

from __future__ import annotations

import logging
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

DATABASE = "postgres"  # the development data lives in the server's default database
APP_ROLE = "chan_app"  # the role the application connects as (chan_api/settings.py)
_ATTEMPTS = 3  # a restart right after a kill -9 can race the old server's last processes


def database_settings(var_dir: Path) -> dict[str, Any]:
    """Start (or attach to) the server for ``var_dir / "pg"``; return a ``DATABASES`` entry for it."""
    pgdata = (var_dir / "pg").resolve()
    pgserver = _import_pgserver()
    for attempt in range(_ATTEMPTS):
        with pgserver.PostgresServer._lock:  # pgserver's own lock, held while it starts a server
            _clear_stale_pid_file(pgdata)
        try:
            server = pgserver.get_server(pgdata, cleanup_mode=None)
            break
        except Exception:
            if attempt == _ATTEMPTS - 1:
                raise
            time.sleep(0.5 * (attempt + 1))
    info = server.get_postmaster_info()
    _app_role_create(str(info.socket_dir), info.port)
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": DATABASE,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": str(info.socket_dir),  # a directory: psycopg connects through the unix socket
        "PORT": str(info.port or ""),
    }


def _app_role_create(host: str, port: int | None) -> None:
    """Make the application's role (``APP_ROLE``: login, no rights until ``migrate`` grants them)
    if the server lacks it, so that any command connects before the first migrate: a fresh clone's
    ``manage.py shell`` says a table is missing, not that the role is."""
    import psycopg

    with psycopg.connect(
        host=host, port=port or None, user="postgres", dbname=DATABASE, autocommit=True
    ) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [APP_ROLE]).fetchone():
            return
        conn.execute(  # another process may make it meanwhile
            f"DO $do$ BEGIN CREATE ROLE {APP_ROLE} LOGIN;"
            " EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $do$"
        )


def stop(var_dir: Path) -> bool:
    """Stop the server for ``var_dir / "pg"`` if it runs; return whether it did."""
    pgdata = (var_dir / "pg").resolve()
    if not (pgdata / "postmaster.pid").exists():
        return False
    pgserver = _import_pgserver()
    with pgserver.PostgresServer._lock:
        if _clear_stale_pid_file(pgdata):
            return False
        # As root, pgserver runs the server as the user "pgserver", who owns the data directory.
        user = pgdata.owner() if os.geteuid() == 0 else None
        pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    return True


def _import_pgserver() -> Any:
    # pgserver logs every attach at INFO and, without XDG_RUNTIME_DIR, platformdirs warns at import.
    logging.getLogger("pgserver").setLevel(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
    return pgserver


def _clear_stale_pid_file(pgdata: Path) -> bool:
    """Remove ``postmaster.pid`` (and the socket's lock) unless a live postmaster for ``pgdata``
    owns it; return whether it was stale. Call with pgserver's lock held."""
    import psutil

    pid_file = pgdata / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
    except FileNotFoundError:
        return False
    if len(lines) >= 8 and lines[0].strip().isdigit():
        try:
            proc = psutil.Process(int(lines[0]))
            if (
                proc.status() != psutil.STATUS_ZOMBIE
                and proc.name() == "postgres"
                and str(pgdata) in proc.cmdline()
            ):
                return False
        except psutil.Error:
            pass
    pid_file.unlink(missing_ok=True)
    for lock in pgdata.glob(".s.PGSQL.*.lock"):
        lock.unlink(missing_ok=True)
    return True


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    var = Path(os.environ.get("CHAN_VAR_DIR", root / "var"))
    if sys.argv[1:] == ["stop"]:
        print("embedded PostgreSQL:", "stopped" if stop(var) else "not running")
    elif sys.argv[1:] == ["start"]:
        print("embedded PostgreSQL:", database_settings(var)["HOST"])
    else:
        sys.exit("usage: python -m chan_api.embedded_db start|stop")
