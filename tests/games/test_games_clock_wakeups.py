"""The clock is told only what it does not know (games/clock.py): a move whose deadline comes
after a wake-up this process already queued sends no message; that wake-up, come early, finds
the hand not due and queues the next one at the deadline."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.utils import timezone
from test_games_services import deal, submit

from games import clock
from games.models import Hand, Seat
from games.selectors.hands import hand_view_for_user
from games.services.hands import hand_clock_tick

pytestmark = pytest.mark.django_db


def _wakeups(settings, monkeypatch, task: str) -> Iterator[list[tuple[int, object]]]:
    """The wake-ups of ``task`` sent to the broker: (object id, eta)."""
    settings.CHAN_CLOCK = True
    clock._armed.clear()
    messages: list[tuple[int, object]] = []

    def send_task(name, args=(), eta=None, **kw):
        if name == task:
            messages.append((args[0], eta))

    monkeypatch.setattr(clock.current_app, "send_task", send_task)
    yield messages
    clock._armed.clear()


@pytest.fixture
def sent(settings, monkeypatch) -> Iterator[list[tuple[int, object]]]:
    """The hands' wake-ups sent to the broker: (hand id, eta)."""
    yield from _wakeups(settings, monkeypatch, clock.HAND_TURN_TASK)


def play(hand: Hand, users, n: int, capture) -> Hand:
    """``n`` moves of whoever has one, each committed (its on-commit callbacks run)."""
    for _ in range(n):
        hand.refresh_from_db()
        for user in users:
            legal = hand_view_for_user(hand=hand, user=user)["legal_moves"]
            if legal:
                with capture(execute=True):
                    submit(hand, user, legal[-1])
                break
    hand.refresh_from_db()
    return hand


def test_moves_whose_deadline_comes_later_send_no_wake_up(
    make_user, sent, django_capture_on_commit_callbacks
) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = deal(users, seed=4)
    hand = play(hand, users, 4, django_capture_on_commit_callbacks)
    assert hand.seq == 4
    # One wake-up for the first move's deadline; the next three come after it: nothing sent.
    assert len(sent) == 1
    first_eta = sent[0][1]
    assert first_eta < hand.deadline_at


def test_a_wake_up_come_early_queues_the_next_at_the_deadline(
    make_user, sent, django_capture_on_commit_callbacks
) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = play(deal(users, seed=4), users, 3, django_capture_on_commit_callbacks)
    sent.clear()
    # The first wake-up comes (at its time, before the hand's deadline now):
    with django_capture_on_commit_callbacks(execute=True):
        assert hand_clock_tick(hand_id=hand.pk) is None
    assert sent == [(hand.pk, hand.deadline_at)]
    # and at that deadline the clock moves.
    later = hand.deadline_at + timedelta(milliseconds=1)
    with django_capture_on_commit_callbacks(execute=True):
        assert hand_clock_tick(hand_id=hand.pk, now=later) == hand.seq + 1


def test_a_deadline_brought_forward_is_sent(
    make_user, sent, django_capture_on_commit_callbacks
) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = play(deal(users, seed=4), users, 1, django_capture_on_commit_callbacks)
    assert len(sent) == 1
    # A wake-up remembered for later than the hand's next deadline does not hold it back.
    clock._armed[hand.pk] = timezone.now() + timedelta(hours=1)
    hand = play(hand, users, 1, django_capture_on_commit_callbacks)
    assert len(sent) == 2 and sent[-1] == (hand.pk, hand.deadline_at)


def test_a_wake_up_past_its_time_does_not_hold_back_the_next(
    make_user, sent, django_capture_on_commit_callbacks
) -> None:
    users = [make_user()[0] for _ in range(2)]
    hand = play(deal(users, seed=4), users, 1, django_capture_on_commit_callbacks)
    clock._armed[hand.pk] = timezone.now() - timedelta(seconds=1)  # it has come already
    hand = play(hand, users, 1, django_capture_on_commit_callbacks)
    assert len(sent) == 2


@pytest.fixture
def table_wakeups(settings, monkeypatch) -> Iterator[list[tuple[int, object]]]:
    """The tables' ready wake-ups sent to the broker: (table id, eta)."""
    yield from _wakeups(settings, monkeypatch, clock.TABLE_DEAL_TASK)


def test_readies_after_the_first_send_no_ready_wake_up_and_the_wake_up_re_arms(
    players, table_wakeups, django_capture_on_commit_callbacks
) -> None:
    from games.services.tables import table_deal_if_due
    from tests.games.test_games_tables_api import create, join, ready

    # Given four players at a table with a ready clock, three of them saying ready in turn
    table_id = create(players[0], timeouts={"ready": 30}).json()["id"]
    for p in players[1:]:
        join(p, table_id)
    for p in players[:3]:
        with django_capture_on_commit_callbacks(execute=True):
            assert ready(p, table_id).json()["hand_id"] is None
    # then one wake-up only, at the deadline the first ready started
    first = Seat.objects.get(table_id=table_id, player_id=players[0].id).ready_at
    assert table_wakeups == [(table_id, first + timedelta(seconds=30))]
    # and the wake-up itself, come a hair early, queues the next one although this process
    # remembers one at that time (it may be that one)
    with django_capture_on_commit_callbacks(execute=True):
        assert table_deal_if_due(table_id=table_id) is None
    assert table_wakeups[1:] == [(table_id, first + timedelta(seconds=30))]


def test_a_ready_deadline_earlier_than_the_one_remembered_is_sent(
    players, table_wakeups, django_capture_on_commit_callbacks
) -> None:
    from tests.games.test_games_tables_api import create, join, ready

    table_id = create(players[0], timeouts={"ready": 30}).json()["id"]
    join(players[1], table_id)
    join(players[2], table_id)
    clock._armed[("table", table_id)] = timezone.now() + timedelta(hours=1)
    with django_capture_on_commit_callbacks(execute=True):
        ready(players[0], table_id)
    assert [t for t, _ in table_wakeups] == [table_id]
