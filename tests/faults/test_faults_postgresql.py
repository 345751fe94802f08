"""PostgreSQL stopped mid-play (a private cluster, pgserver in a scratch directory): requests
get 503 problem+json with Retry-After, never a 500; play resumes after; nothing is lost."""

from __future__ import annotations

import random
import time

import pytest

from chan_api import embedded_db
from tests.faults.harness import (
    manage,
    play_on,
    seat_two_players,
    stack_env,
    web_server,
)

OUTAGE_SECONDS = 10


@pytest.mark.slow(seconds=50)
def test_a_database_outage_is_503_and_play_resumes_with_nothing_lost(private_dir) -> None:
    env = stack_env(private_dir)
    try:
        assert manage(env, "migrate", "--noinput").returncode == 0
        with web_server(env) as base:
            table = seat_two_players(base, "pgfault")
            rng = random.Random(11)
            play_on(table, rng, seconds=2)
            # When the database stops for OUTAGE_SECONDS while the bots keep playing,
            assert embedded_db.stop(private_dir)
            stopped = time.monotonic()
            during = dict(table.statuses)
            play_on(table, rng, seconds=OUTAGE_SECONDS)
            outage_requests = sum(table.statuses.values()) - sum(during.values())
            # (restarted by the next command that needs it)
            assert manage(env, "check_hands").returncode == 0
            recovery = time.monotonic() - stopped - OUTAGE_SECONDS
            # play resumes: moves are committed again.
            committed = table.statuses[201]
            play_on(table, rng, seconds=5)
            assert table.statuses[201] > committed, table.statuses
        # then every answer was a success, a 4xx or a 503 problem (never another 5xx),
        assert table.problems == []
        assert table.statuses[503] > 0 and outage_requests > 0
        # and nothing was lost: every hand is its log's replay, settled, the books balance.
        assert manage(env, "settle_hands").returncode == 0
        checked = manage(env, "check_hands")
        assert checked.returncode == 0, checked.stderr
        books = manage(env, "ledger_check")
        assert books.returncode == 0, books.stdout + books.stderr
        print(
            f"postgresql outage {OUTAGE_SECONDS}s: {outage_requests} requests during it, "
            f"{table.statuses[503]} answered 503, 5xx otherwise: {len(table.problems)}, "
            f"recovered in {recovery:.1f}s, statuses {dict(table.statuses)}"
        )
    finally:
        embedded_db.stop(private_dir)
