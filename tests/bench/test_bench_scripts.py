"""The bench scripts still run end to end (their figures are read by people, not asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]


def server_url() -> str:
    """The PostgreSQL server the suite runs on: DATABASE_URL's, else the embedded one's socket."""
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    from django.db import connection

    host = quote(connection.settings_dict["HOST"], safe="")
    return f"postgres://{connection.settings_dict['USER']}@{host}/postgres"


def test_api_bench_plays_hands_through_gunicorn_and_prints_every_ratio() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "bench/api_bench.py",
            "--hands",
            "1",
            "--rounds",
            "10",
            "--db",
            server_url(),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr[-2000:]
    lines = {line.split("  ")[0].strip() for line in result.stdout.splitlines()}
    assert {"floor", "state read", "304 poll", "move"} <= lines, result.stdout
