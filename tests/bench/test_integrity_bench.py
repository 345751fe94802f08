"""bench/integrity_bench.py runs end to end, tiny, and prints its three figures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_integrity_bench_prints_precision_recall_and_false_flag_rate() -> None:
    args = ["--honest", "8", "--pairs", "1", "--timers", "1", "--sessions", "8"]
    result = subprocess.run(
        [sys.executable, "bench/integrity_bench.py", *args, "--hands-per-session", "20"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = re.search(
        r"precision: ([\d.]+) recall: ([\d.]+) false-flag rate: ([\d.]+)", result.stdout
    )
    assert found, result.stdout
    precision, recall, false_rate = map(float, found.groups())
    assert 0.0 <= precision <= 1.0 and 0.0 <= false_rate <= 1.0
    assert recall > 0.0  # the timing bot at least is caught in a tiny run
