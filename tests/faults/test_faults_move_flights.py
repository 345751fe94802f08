"""Moves made in one flight by two web processes on the same hands (the eighteenth
round; games 0039): each process keeps the hands as it committed them, and the other moves
them on meanwhile. Every move is made once, on the row as it is: real processes, one database."""

from __future__ import annotations

import random
import re
from contextlib import ExitStack

import pytest

from tests.e2e.http_client import HttpClient
from tests.faults.harness import (
    manage,
    play_on,
    seat_two_players,
    stack_env,
    web_server,
)

_FLIGHTS = re.compile(r'^chan_move_flights_total\{made="(\w+)"\} ([0-9.e+]+)$', re.MULTILINE)


def _flights(base: str) -> dict[str, float]:
    """The process's ``chan_move_flights_total`` by ``made`` (its own: one worker, no
    multiprocess directory)."""
    text = HttpClient(base).get("/metrics").content.decode()
    return {made: float(n) for made, n in _FLIGHTS.findall(text)}


@pytest.mark.slow(seconds=40)
def test_two_processes_moving_the_same_hands_make_each_move_once(private_dir) -> None:
    env = stack_env(private_dir)
    assert manage(env, "migrate", "--noinput").returncode == 0
    with ExitStack() as servers:
        # Given two web processes on one database, each player on their own
        first, second = (servers.enter_context(web_server(env)) for _ in range(2))
        table = seat_two_players(first, "flights")
        table.clients[1].conn = HttpClient(second).conn  # on the second process
        # when they play hands for a while (each move with its key and expected seq),
        play_on(table, random.Random(23), seconds=12)
        flights = [_flights(first), _flights(second)]
    # then every answer was a success or a refusal (never a 5xx),
    assert table.problems == [], table.problems
    assert table.statuses[201] > 20, table.statuses
    # each process made moves in one flight on the hands as it kept them and the others the
    # two-flight way (the other process had moved them on),
    made = {k: sum(f.get(k, 0) for f in flights) for k in ("one", "refused", "two")}
    assert made["one"] > 0 and made["two"] > 0, flights
    assert sum(made.values()) >= table.statuses[201], (made, table.statuses)
    # and every hand is its log's replay, its chain unbroken: no move was made twice or lost.
    checked = manage(env, "check_hands")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    print(f"two processes: {dict(table.statuses)}, flights {flights}")
