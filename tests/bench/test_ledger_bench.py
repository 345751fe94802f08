"""bench/ledger_bench.py still runs end to end (its figures are read by people, not asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.test_bench_scripts import server_url

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.django_db
def test_ledger_bench_writes_concurrently_loads_checks_and_prints_every_ratio() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "bench/ledger_bench.py",
            "--entries",
            "3000",
            "--small",
            "100",
            "--postings",
            "10",
            "--rounds",
            "5",
            "--writers",
            "2",
            "--seconds",
            "1",
            "--write-rounds",
            "1",
            "--db",
            server_url(),
            "--scratch",  # apart from other worktrees' and a bench run by hand
            f"{os.environ.get('TEST_DATABASE_NAME') or 'test'}_ledger_bench",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "ledger_check  clean" in out, out
    for line in ("write floor", "posting", "balance read", "GET /me ", "GET /me/ledger"):
        assert line in out, out
    assert out.count("ratio small/big") == 3, out
    # the concurrent settlements: a rate, its same-run floor, and nothing lost on the way
    for line in ("settlements/s: ", "floor/s: ", "ratio: ", "deadlocks: 0\n", "errors: 0\n"):
        assert line in out, out
    assert "ledger_check  clean (after the concurrent settlements)" in out, out
