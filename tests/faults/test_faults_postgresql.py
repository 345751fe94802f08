"""PostgreSQL stopped mid-play (a private cluster, pgserver in a scratch directory): requests
get 503 problem+json with Retry-After, never a 500; play resumes after; nothing is lost."""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from chan_api import embedded_db
from tests.e2e.http_client import HttpClient
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


BURST = 32  # concurrent requests: more than the web process's threads (WEB_THREADS, 8)


def status_of(client: HttpClient, path: str) -> int:
    """GET ``path``'s status, on a new connection if the server closed an idle one (0: none)."""
    for _ in range(2):
        try:
            return client.get(path).status_code
        except (ConnectionError, OSError):
            client.conn.close()
    return 0


def burst(clients: list[HttpClient], path: str) -> list[int]:
    """``path`` requested by every client at once; the statuses."""
    with ThreadPoolExecutor(len(clients)) as pool:
        return list(pool.map(lambda client: status_of(client, path), clients))


@pytest.mark.slow
@pytest.mark.parametrize("pool", ["0", "1"], ids=["persistent", "db_pool"])
def test_requests_get_a_live_connection_within_2_s_of_the_database_coming_back(
    private_dir, pool
) -> None:
    env = stack_env(private_dir, DB_POOL=pool)
    try:
        assert manage(env, "migrate", "--noinput").returncode == 0
        with web_server(env) as base:
            player = seat_two_players(base, "pgback").clients[0]
            clients = [HttpClient(base) for _ in range(BURST)]
            for client in clients:
                client.token = player.token
            path = "/api/v1/tables"
            # Given every thread of the web process holding a database connection,
            assert set(burst(clients, path)) == {200}
            # when PostgreSQL restarts (stopped, started by the next command that needs it),
            assert embedded_db.stop(private_dir)
            assert manage(env, "check").returncode == 0
            back = time.monotonic()
            # and requests keep coming, a few a second, as players' do (each may reach any
            # thread: stale connections are met one by one),
            answers = []
            while time.monotonic() - back < 5:
                answers.append((round(time.monotonic() - back, 2), status_of(player, path)))
                time.sleep(0.2)
            # then a request is answered from a live connection within 2 s of the restart,
            refused = [t for t, status in answers if status != 200]
            assert not refused or max(refused) <= 2, answers
            # and so is every request at once after that.
            assert set(burst(clients, path)) == {200}
            print(f"DB_POOL={pool}: refused after the restart at {refused}")
    finally:
        embedded_db.stop(private_dir)
