"""The bench scripts still run end to end (their figures are read by people, not asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parents[2]


def server_url() -> str:
    """The PostgreSQL server the suite runs on, as the owner of its databases (a bench makes a
    database of its own): the settings' default entry, which the suite keeps the owner's."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    host = quote(db["HOST"], safe="") if db["HOST"].startswith("/") else db["HOST"] or "127.0.0.1"
    auth = quote(db["USER"], safe="") + (
        f":{quote(db['PASSWORD'], safe='')}" if db["PASSWORD"] else ""
    )
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgres://{auth}@{host}{port}/postgres"


def run_bench(
    script: str,
    *args: str,
    scratch: str | None = None,
    timeout: int = 300,
    env: dict[str, str] | None = None,
) -> Any:
    """Run ``bench/<script>`` on the suite's PostgreSQL server (a scratch database of its own,
    apart from other worktrees' and a bench run by hand, when ``scratch`` is given), with
    ``env`` added to this process's environment."""
    command = [sys.executable, f"bench/{script}", *args, "--db", server_url()]
    if scratch is not None:
        command += ["--scratch", f"{os.environ.get('TEST_DATABASE_NAME') or 'test'}_{scratch}"]
    return subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.slow
def test_api_bench_plays_hands_through_gunicorn_and_prints_every_ratio() -> None:
    result = run_bench("api_bench.py", "--hands", "1", "--rounds", "10", timeout=300)

    assert result.returncode == 0, result.stderr[-2000:]
    lines = {line.split("  ")[0].strip() for line in result.stdout.splitlines()}
    assert {"floor", "state read", "304 poll", "move"} <= lines, result.stdout


@pytest.mark.slow(seconds=20)
def test_move_flights_bench_plays_both_ways_and_prints_the_ratios() -> None:
    result = run_bench("move_flights_bench.py", "--hands", "1", scratch="flights_bench")

    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("flights (the code): ") and " 0 moves" not in lines[0], lines
    assert lines[1].startswith("one at a time: ") and " 0 moves" not in lines[1], lines
    assert lines[2].startswith("ratio flights / one at a time: wall "), lines


@pytest.mark.slow(seconds=60)
def test_load_bench_runs_the_procfile_stack_and_prints_every_figure() -> None:
    result = run_bench(
        "load_bench.py",
        *("--tables", "2", "--clock-tables", "1", "--warmup", "2", "--seconds", "4"),
        *("--db-seconds", "0.5"),
        scratch="load_bench",
    )

    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "2 tables x 4 bots + 1 practice tables" in out, out
    assert "errors: none" in out, out
    for line in (
        "moves/s: ",
        "move p50/p99 ms: ",
        "CPU ms/move: ",
        "RSS MB: ",
        "db limit tx/s: ",
        "ratio to db limit: ",
        "clock lateness p99: ",
    ):
        assert any(row.startswith(line) for row in out.splitlines()), (line, out)
    moves = next(row for row in out.splitlines() if row.startswith("moves/s: "))
    assert float(moves.split()[1]) > 0, out
    # the RSS of each command's processes under the stack's, adding up to it
    lines = out.splitlines()
    rss_at = next(i for i, row in enumerate(lines) if row.startswith("RSS MB: "))
    parts = lines[rss_at + 1].removeprefix("  of which: ").split(", ")
    assert [p.split()[0] for p in parts] == ["beat", "web", "worker"], out
    assert "(3 processes)" in lines[rss_at + 1], out  # the web's master and its two workers
    total = sum(float(p.split()[1]) for p in parts)
    assert abs(total - float(lines[rss_at].split()[2])) <= len(parts), out


@pytest.mark.slow(seconds=30)
def test_growth_bench_fills_measures_both_sizes_and_prints_the_ratios() -> None:
    result = run_bench(
        "growth_bench.py",
        "--small",
        "3",
        "--big",
        "40",
        "--played",
        "10",
        "--hands",
        "1",
        "--rounds",
        "5",
        scratch="growth_bench",
    )

    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "finished hands in the database when measured: 3 and 40" in out, out
    rows = {line.split("  ")[0].strip() for line in out.splitlines()}
    assert {"floor", "state read", "304 poll", "move"} <= rows, out
    assert out.count(">=0.9") == 2, out


@pytest.mark.slow
def test_longpoll_bench_wakes_every_waiting_poll_and_prints_its_line() -> None:
    result = run_bench(
        "longpoll_bench.py",
        "--users",
        "20",
        "--polls",
        "3",
        "--moves",
        "3",
        scratch="longpoll_bench",
        timeout=300,
    )

    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "long polls: 60 waiting, woken 60/60, p50 " in out, out
    assert " ms, rss " in out and " x idle" in out, out
    assert "woken 60/60" in out and "MiB <= 1024" in out, out


@pytest.mark.slow(seconds=30)
def test_load_bench_fails_when_a_command_of_the_stack_exits() -> None:
    # A worker that cannot start (as a production install's did without packaging): the
    # figures would describe a stack without a clock, so the bench fails and says which.
    result = run_bench(
        "load_bench.py",
        *("--tables", "1", "--clock-tables", "0", "--warmup", "1", "--seconds", "2"),
        *("--db-seconds", "0.1"),
        scratch="load_bench_exited",
        env={"WORKER_POOL": "no-such-pool"},
    )

    assert result.returncode == 1, result.stdout + result.stderr[-2000:]
    assert "stack: worker exited with status 2" in result.stdout, result.stdout
    assert "moves/s" not in result.stdout
