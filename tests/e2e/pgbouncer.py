"""A private PgBouncer in transaction mode (Debian's ``pgbouncer``) on a free port, in front of a
private PostgreSQL, with its own ini, log and pid file in a scratch directory; and a sampler of
the connections on both sides of it, for the topology test.

PgBouncer refuses to run as root: as root it runs as the system user that owns the server's
data directory (``pgserver`` for the embedded server), which can also reach its unix socket."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.core.pg_cluster import in_ci
from tests.faults.harness import free_port

INI = """\
[databases]
{database} = host={host} port={port} dbname={database}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {listen_port}
unix_socket_dir =
auth_type = trust
auth_file = {dir}/userlist.txt
admin_users = postgres
pool_mode = transaction
default_pool_size = {pool_size}
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 1000
max_db_connections = {pool_size}
server_idle_timeout = 30
logfile = {dir}/pgbouncer.log
pidfile = {dir}/pgbouncer.pid
"""


def pgbouncer_or_skip() -> str:
    found = shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin")
    if found:
        return found
    if in_ci():
        pytest.fail("pgbouncer is missing in CI: .ci/run installs it (apt-get install pgbouncer)")
    pytest.skip("pgbouncer is not installed (apt-get install pgbouncer)")


@dataclass
class PgBouncer:
    proc: subprocess.Popen[bytes]
    port: int
    dir: Path

    def url(self, user: str, database: str) -> str:
        return f"postgres://{user}@127.0.0.1:{self.port}/{database}"

    def admin(self) -> psycopg.Connection[Any]:
        """A connection to the admin console (simple query protocol: a client-side cursor)."""
        return psycopg.connect(
            host="127.0.0.1",
            port=self.port,
            user="postgres",
            dbname="pgbouncer",
            autocommit=True,
            cursor_factory=psycopg.ClientCursor,
        )

    def pools(self, admin: psycopg.Connection[Any] | None = None) -> list[dict[str, Any]]:
        """``SHOW POOLS``, on ``admin`` or a connection of its own."""
        if admin is None:
            with self.admin() as conn:
                return self.pools(conn)
        cur = admin.execute("SHOW POOLS")
        names = [c.name for c in cur.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def pgbouncer_start(
    workdir: Path, *, database: str, host: str, port: int, pool_size: int, run_as: Path
) -> PgBouncer:
    """Start PgBouncer for ``database`` at ``host``/``port`` (a socket directory or an address),
    at most ``pool_size`` server connections; as root, as the owner of ``run_as``."""
    binary = pgbouncer_or_skip()
    directory = workdir / "pgbouncer"
    directory.mkdir()
    listen_port = free_port()
    (directory / "userlist.txt").write_text('"chan_app" ""\n"postgres" ""\n')
    (directory / "pgbouncer.ini").write_text(
        INI.format(
            database=database,
            host=host,
            port=port,
            listen_port=listen_port,
            dir=directory,
            pool_size=pool_size,
        )
    )
    kw: dict[str, Any] = {}
    if os.geteuid() == 0:
        owner = pwd.getpwuid(run_as.stat().st_uid)
        os.chown(directory, owner.pw_uid, owner.pw_gid)
        for name in ("userlist.txt", "pgbouncer.ini"):
            os.chown(directory / name, owner.pw_uid, owner.pw_gid)
        kw = {"user": owner.pw_uid, "group": owner.pw_gid}
    proc = subprocess.Popen(
        [binary, str(directory / "pgbouncer.ini")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd="/",
        **kw,
    )
    bouncer = PgBouncer(proc, listen_port, directory)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            bouncer.pools()
            return bouncer
        except psycopg.OperationalError:
            time.sleep(0.1)
    bouncer.stop()
    log = directory / "pgbouncer.log"
    raise RuntimeError(f"pgbouncer did not start: {log.read_text() if log.exists() else ''}")


@dataclass
class ConnectionSampler:
    """Every ``period`` seconds, the client backends of ``database`` on the server (this
    sampler's own left out) and, behind PgBouncer, its clients: the highest of each."""

    server: dict[str, Any]
    database: str
    bouncer: PgBouncer | None = None
    period: float = 0.25
    max_server: int = 0
    max_clients: int = 0
    samples: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> ConnectionSampler:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        admin = self.bouncer.admin() if self.bouncer is not None else None
        with psycopg.connect(**self.server, autocommit=True) as conn:
            while not self._stop.wait(self.period):
                (n,) = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s "
                    "AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
                    [self.database],
                ).fetchone() or (0,)
                self.max_server = max(self.max_server, n)
                if self.bouncer is not None:
                    clients = sum(
                        p["cl_active"] + p["cl_waiting"]
                        for p in self.bouncer.pools(admin)
                        if p["database"] == self.database
                    )
                    self.max_clients = max(self.max_clients, clients)
                self.samples += 1
        if admin is not None:
            admin.close()
