"""Voiding a hand (``games.services.void.hand_void``): the settlement reversed by one ledger
transaction, the hand marked void with its reason, its moves kept and a ``voided`` record appended
to its log; ``ledger_check`` clean."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.test import Client

from accounts.hold_selectors import wallet_funds
from accounts.ledger import balance_adjust
from accounts.ledger_selectors import wallet_balance
from accounts.models import LedgerTransaction
from core.errors import Conflict, InvalidInput
from games.audit import hand_settlement_problems
from games.models import Hand, HandEvent
from games.services.quan_booking import hand_settle, settlement_key
from games.services.void import hand_void, void_key
from tests.games.test_games_hands_api import play_to_end

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user):
    user, _ = make_user(username="boss", is_staff=True, is_superuser=True)
    return user


@pytest.fixture
def settled(players, win_hand) -> Hand:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    return Hand.objects.get(pk=win_hand["hand"])


def test_voiding_books_the_reversal_and_keeps_the_log(players, settled, staff) -> None:
    # Given a settled hand and the balances it left,
    before = [wallet_balance(p.user) for p in players]
    log = list(HandEvent.objects.filter(hand=settled).values_list("seq", "payload"))
    settlement = LedgerTransaction.objects.get(idempotency_key=settlement_key(settled.pk))
    paid = {e.account_id: e.amount for e in settlement.entries.all()}
    # when staff void it (twice: a repeat changes nothing),
    tx = hand_void(hand_id=settled.pk, staff=staff, reason="collusion proven")
    assert hand_void(hand_id=settled.pk, staff=staff, reason="again") == tx
    # one transaction negates each entry of the settlement,
    assert tx is not None and tx.idempotency_key == void_key(settled.pk)
    assert tx.kind == LedgerTransaction.Kind.HAND_VOID and tx.user == staff
    assert {e.account_id: e.amount for e in tx.entries.all()} == {a: -m for a, m in paid.items()}
    assert LedgerTransaction.objects.filter(idempotency_key=void_key(settled.pk)).count() == 1
    after = [wallet_balance(p.user) for p in players]
    assert after != before
    assert after == [50_000, 50_000, 50_000, 50_000]  # back to the welcome grants
    # the hand is void with its reason, its log and its settlement kept,
    settled.refresh_from_db()
    assert settled.voided_at is not None and settled.void_reason.startswith("collusion proven")
    # every move of its log kept, and one voided record after them (the repeat added none),
    events = list(HandEvent.objects.filter(hand=settled).values_list("seq", "payload"))
    assert events[:-1] == log
    assert events[-1] == (
        settled.seq,
        {"type": "voided", "by": "boss", "reason": "collusion proven", "transaction": tx.pk},
    )
    assert LedgerTransaction.objects.filter(idempotency_key=settlement_key(settled.pk)).exists()
    # and the books still balance, the voided hand included.
    assert hand_settlement_problems(settled) == []
    call_command("ledger_check")


def test_a_reversal_a_wallet_cannot_pay_is_refused_whole(players, settled, staff) -> None:
    winner = settled.seat_list()[settled.result["outcome"]["seat"]].user
    # It spent all it may (what its seat holds cannot be spent): the reversal would need more.
    balance_adjust(
        user=winner,
        amount=-wallet_funds(winner).available,
        reason="spent",
        staff=staff,
        key="spend",
    )
    with pytest.raises(Conflict) as refused:
        hand_void(hand_id=settled.pk, staff=staff, reason="collusion")
    assert refused.value.code == "hand_void_insufficient"
    settled.refresh_from_db()
    assert settled.voided_at is None
    assert not LedgerTransaction.objects.filter(idempotency_key=void_key(settled.pk)).exists()


def test_only_a_settled_hand_with_a_reason_can_be_voided(players, win_hand, staff) -> None:
    with pytest.raises(Conflict) as refused:
        hand_void(hand_id=win_hand["hand"], staff=staff, reason="early")
    assert refused.value.code == "hand_not_settled"
    with pytest.raises(InvalidInput):
        hand_void(hand_id=win_hand["hand"], staff=staff, reason="  ")


def test_the_admin_action_voids_with_a_reason_and_logs_it(players, settled, staff) -> None:
    client = Client()
    client.force_login(staff)
    url = "/admin/games/hand/"
    form = {"action": "void", "_selected_action": [settled.pk]}
    r = client.post(url, form)
    assert r.status_code == 200 and b"reason" in r.content  # the reason form
    r = client.post(url, {**form, "apply": "Void", "reason": "dispute 42"})
    assert r.status_code == 302
    settled.refresh_from_db()
    assert settled.voided_at is not None and "dispute 42" in settled.void_reason
    from django.contrib.admin.models import LogEntry

    entry = LogEntry.objects.get(object_id=str(settled.pk), content_type__model="hand")
    assert "dispute 42" in entry.change_message
    # the history keeps the void's old and new values, with who did it,
    from games.models import HandVoidEvent

    event = HandVoidEvent.objects.get(pgh_obj=settled)
    assert (
        event.void_reason == settled.void_reason and event.pgh_context.metadata["user"] == staff.pk
    )
    # and staff without games.change_hand cannot void.
    clerk = Client()
    user = type(staff).objects.create_user(username="clerk2", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename="view_hand"))
    clerk.force_login(user)
    assert b'value="void"' not in clerk.get(url).content
    clerk.post(url, {**form, "apply": "Void", "reason": "x"})
    assert not LogEntry.objects.filter(user=user).exists()
    assert Hand.objects.get(pk=settled.pk).void_reason == settled.void_reason
