"""bench/stream_bench.py still runs end to end: every open stream gets the move, every waiting
feed poll gets the entry (its figures are read by people, not asserted)."""

from __future__ import annotations

import pytest

from tests.bench.test_bench_scripts import run_bench


@pytest.mark.slow
def test_stream_bench_reaches_every_stream_and_feed_poll_and_prints_its_lines() -> None:
    result = run_bench(
        "stream_bench.py", "--users", "12", "--streams", "2", scratch="stream_bench", timeout=300
    )

    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "streams: 24 open of 24" in out and "got it 24/24" in out, out
    assert "feed polls: 24 open of 24" in out, out
    assert out.count("got it 24/24") == 2, out
    assert "MiB <= 1024" in out, out
