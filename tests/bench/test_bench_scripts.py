"""The bench scripts still run end to end (their figures are read by people, not asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATABASE_URL = os.environ.get("DATABASE_URL", "")


@pytest.mark.skipif(
    not DATABASE_URL.startswith(("postgres://", "postgresql://")),
    reason="api_bench.py drives gunicorn on PostgreSQL",
)
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
            DATABASE_URL,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr[-2000:]
    lines = {line.split("  ")[0].strip() for line in result.stdout.splitlines()}
    assert {"floor", "state read", "304 poll", "move"} <= lines, result.stdout
