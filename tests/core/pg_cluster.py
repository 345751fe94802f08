"""A private PostgreSQL primary and its streaming replica (``pg_basebackup -R``), each on a free
port in a scratch directory, from the machine's PostgreSQL binaries (Debian's
``/usr/lib/postgresql/<version>/bin``). Never the machine's shared server.

As root the servers run as the ``postgres`` system user (initdb refuses root)."""

from __future__ import annotations

import os
import pwd
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.faults.harness import free_port

# The newest installed major version wins.
PG_BINARIES = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true")


def pg_bin_or_skip(name: str = "initdb") -> Path:
    """The directory of the server's binaries; skips without them (fails under CI)."""
    for directory in reversed(PG_BINARIES):
        if (directory / name).exists() and (directory / "pg_basebackup").exists():
            return directory
    if in_ci():
        pytest.fail("PostgreSQL's server binaries are missing in CI (apt-get install postgresql)")
    pytest.skip("no PostgreSQL server binaries under /usr/lib/postgresql")


def _run_as() -> dict[str, Any]:
    return {"user": "postgres", "group": "postgres"} if os.geteuid() == 0 else {}


def own_dir(path: Path) -> Path:
    """A directory the servers' user owns (``postgres`` as root)."""
    path.mkdir(mode=0o700, exist_ok=True)
    if os.geteuid() == 0:
        entry = pwd.getpwnam("postgres")
        os.chown(path, entry.pw_uid, entry.pw_gid)
    return path


@dataclass
class Server:
    bindir: Path
    data: Path
    port: int

    def url(self, user: str, database: str) -> str:
        return f"postgres://{user}@127.0.0.1:{self.port}/{database}"

    def run(self, program: str, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bindir / program), *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
            cwd="/",
            **_run_as(),
            **kw,
        )

    def start(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.data / "server.log"), "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"],
                capture_output=True,
                timeout=60,
                cwd="/",
                **_run_as(),
            )

    def sql(self, statement: str, database: str = "postgres") -> str:
        """One statement as the superuser, its first column of the first row (or '')."""
        out = self.run(
            "psql",
            "-X",
            "-qAt",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-d",
            database,
            "-c",
            statement,
        )
        return out.stdout.strip().splitlines()[0] if out.stdout.strip() else ""


SERVER_SETTINGS = """
listen_addresses = '127.0.0.1'
port = {port}
unix_socket_directories = '{socket_dir}'
wal_level = replica
max_wal_senders = 4
hot_standby = on
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 32MB
max_connections = 40
"""


def primary_start(bindir: Path, root: Path) -> Server:
    """initdb (trust for local TCP, replication included) and start a primary."""
    data = own_dir(root / "primary")
    server = Server(bindir, data, free_port())
    server.run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
    with (data / "postgresql.conf").open("a") as conf:
        conf.write(SERVER_SETTINGS.format(port=server.port, socket_dir=data))
    server.start()
    return server


def replica_start(primary: Server, root: Path) -> Server:
    """pg_basebackup -R from ``primary`` (the replica streams from it), then start it."""
    data = root / "replica"
    own_dir(data)
    server = Server(primary.bindir, data, free_port())
    server.run(
        "pg_basebackup",
        "-h",
        "127.0.0.1",
        "-p",
        str(primary.port),
        "-U",
        "postgres",
        "-D",
        str(data),
        "-R",
        "-X",
        "stream",
    )
    with (data / "postgresql.conf").open("a") as conf:
        conf.write(f"port = {server.port}\nunix_socket_directories = '{data}'\n")
    server.start()
    return server


def replica_catch_up(primary: Server, replica: Server, seconds: float = 30) -> None:
    """Wait until the replica has replayed everything the primary has written so far."""
    target = primary.sql("SELECT pg_current_wal_lsn()")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if replica.sql(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn") == "t":
            return
        time.sleep(0.1)
    raise AssertionError("the replica did not catch up")
