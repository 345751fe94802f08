"""Board writes queue behind one another (games/services/leaderboards.py, ``BOARDS_LOCK_SPACE``):
the histogram's bucket rows are shared by every player and its triggers take them in no one
order, so two settlements writing at once could deadlock ("deadlock detected" under the load
bench, a ready's inline settlement answered 503). Two writes for different players — rows and
buckets of their own, nothing a row lock would queue — now wait for each other's commit."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection, transaction

from games.services.leaderboards import _upsert

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_board_write_waits_for_the_one_before_it_to_commit(make_player: Any) -> None:
    first_user, second_user = make_player().user, make_player().user
    assert first_user.pk % 8 != second_user.pk % 8  # (their buckets' shards differ too)
    wrote = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def first() -> None:
        try:
            with transaction.atomic():
                _upsert([("quan", "all", "", first_user.pk, 5, 1)])
                order.append("first wrote")
                wrote.set()
                release.wait(10)
                order.append("first commits")
        finally:
            connection.close()

    def second() -> None:
        try:
            wrote.wait(10)
            with transaction.atomic():
                _upsert([("quan", "all", "", second_user.pk, 7, 1)])
                order.append("second wrote")
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    assert wrote.wait(10)
    time.sleep(0.5)
    assert order == ["first wrote"]  # the second waits for the first's commit
    release.set()
    for t in threads:
        t.join(10)
    assert order == ["first wrote", "first commits", "second wrote"]
