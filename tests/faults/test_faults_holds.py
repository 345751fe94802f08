"""A worker killed between a hold and a settlement: players hold seats at two tables,
one leaves in the middle of a hand (its hold there waits for the settlement), the hand ends and
the worker that would book it is killed (kill -9). Once a worker runs again, the settlement is
booked once, the leaver's hold released, the holds at the other table untouched, and the books
reconcile (``ledger_check`` clean) — before the restart too: a hold awaiting its settlement is
not a hold without a seat."""

from __future__ import annotations

import random
import time

import pytest
from django.core.management import call_command

from accounts.hold_selectors import HOLD_CHECKS, hold_amount, wallet_funds
from accounts.ledger import wallet_for
from accounts.ledger_selectors import ledger_problems
from chan_api.celery import app
from games.management.commands.play_bots import hand_play_out
from games.models import Hand, Seat
from games.rules.bots import make_bot
from games.selectors.seat_holds import check_holds_have_seats
from games.services.tables import seat_join, seat_leave, seat_ready, table_create
from tests.faults.test_faults_worker import kill_9, start_worker, stop
from tests.games.test_games_tasks import (  # noqa: F401 (broker_env is a fixture)
    assert_booked_once,
    broker_env,
    wait_for,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_worker_killed_between_a_hold_and_its_settlement_leaves_the_books_whole(
    broker_env,  # noqa: F811
    make_user,
    settings,
) -> None:
    settings.CHAN_CLOCK = True
    # Given four players seated at two tables (stake 10 and 20: each seat holds 15 × stake),
    users = [make_user()[0] for _ in range(4)]
    here = table_create(owner=users[0], name="here", stake=10)
    there = table_create(owner=users[1], name="there", stake=20)
    for user in users[1:]:
        seat_join(table_id=here.pk, user=user)
    for user in [users[0], *users[2:]]:
        seat_join(table_id=there.pk, user=user)
    hand = None
    for user in users:
        hand = seat_ready(table_id=here.pk, user=user) or hand
    assert hand is not None
    leaver = users[3]
    wallet = wallet_for(leaver)
    assert hold_amount(account_id=wallet.pk, table_id=here.pk) == 150
    assert hold_amount(account_id=wallet.pk, table_id=there.pk) == 300
    # one of them leaves in the middle of the hand (its hold stays until the settlement),
    seat_leave(table_id=here.pk, user=leaver)
    hand_play_out(hand.pk, make_bot("heuristic", random.Random(21)))
    assert not Seat.objects.filter(table=here, player=leaver).exists()
    assert hold_amount(account_id=wallet.pk, table_id=here.pk) == 150
    # a hold awaiting its hand's settlement has its seat (the settlement is not booked yet)
    assert ledger_problems([*HOLD_CHECKS, check_holds_have_seats]) == []
    # and the worker that starts on the queued settlement is killed (kill -9),
    worker = start_worker(broker_env, "--pool=solo")
    time.sleep(0.3)
    kill_9(worker)
    # when a worker runs again and the beat's sweep comes,
    worker = start_worker(broker_env, "--pool=solo")
    try:
        booked = False
        for _ in range(20):
            app.send_task("games.tasks.clock_sweep")
            if wait_for(lambda: Hand.objects.get(pk=hand.pk).settled_at is not None, 2):
                booked = True
                break
        # then the settlement is booked once, the leaver's hold here released, its hold at the
        # other table untouched, and the books reconcile.
        assert booked
        assert_booked_once(hand)
        assert hold_amount(account_id=wallet.pk, table_id=here.pk) == 0
        assert hold_amount(account_id=wallet.pk, table_id=there.pk) == 300
        assert wallet_funds(leaver).held == 300
        call_command("ledger_check")
    finally:
        stop(worker)
