"""Hands settled in Quan (RULES.md §10–11): booked once per hand in the ledger, stake limits at
the table, players unseated when they cannot pay."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from accounts.hold_selectors import wallet_funds
from accounts.ledger import balance_adjust
from accounts.ledger_selectors import wallet_balance
from accounts.models import LedgerAccount, LedgerTransaction
from core.errors import Conflict
from games.models import Hand, PotShare, Seat, Table
from games.services.quan_booking import hand_settle, hands_unsettled, settlement_key
from games.services.tables import table_deal_if_due
from tests.games.conftest import start_table
from tests.games.decks import HOA_DECK, WIN_DECK
from tests.games.test_games_hands_api import assert_problem, play_to_end

pytestmark = pytest.mark.django_db

WELCOME = 50_000


def balances(players: list[Any]) -> list[int]:
    return [wallet_balance(p.user) for p in players]


def test_a_won_hand_is_booked_once_in_quan_and_shown_in_the_view(players, win_hand) -> None:
    # Given the scripted hand played to its win at stake 10,
    play_to_end(players, win_hand)
    hand = Hand.objects.get(pk=win_hand["hand"])
    assert hand.settled_at is None and hand.pk in hands_unsettled()
    # when its settlement is booked (twice: the task is safe to repeat),
    tx = hand_settle(hand_id=hand.pk)
    assert hand_settle(hand_id=hand.pk) == tx
    hand.refresh_from_db()
    # one transaction moved the points × stake, less the Nền đất fee, to the winner,
    assert LedgerTransaction.objects.filter(idempotency_key=settlement_key(hand.pk)).count() == 1
    quan = hand.quan
    net = {s["seat"]: s["net"] for s in quan["seats"]}
    order = [s.user_id for s in hand.seat_list()]
    by_user = {p.user.pk: WELCOME + net[order.index(p.user.pk)] for p in players}
    assert balances(players) == [by_user[p.user.pk] for p in players]
    points = hand.result["settlement"]["transfers"]
    winner = hand.result["outcome"]["seat"]
    gross = sum(t["points"] for t in points if t["to"] == winner) * hand.stake
    assert quan["fees"] == gross * quan["fee_percent"] // 100 and quan["fee_percent"] in (5, 10)
    assert sum(s["net"] for s in quan["seats"]) + quan["fees"] == 0
    # and every seat sees it in the hand's view.
    view = players[0].client.get(f"/api/v1/hands/{hand.pk}").json()
    assert view["settlement"]["quan"] == quan
    call_command("ledger_check")


def test_a_hands_fee_goes_to_its_tables_house_shard_and_the_audit_names_that_shard(
    players, win_hand, settings
) -> None:
    from accounts.ledger import house_account
    from games.rules.quan import HOUSE
    from games.services.settlement_parties import settlement_accounts

    settings.CHAN_HOUSE_SHARDS = 8
    play_to_end(players, win_hand)
    hand = Hand.objects.get(pk=win_hand["hand"])
    tx = hand_settle(hand_id=hand.pk)
    hand.refresh_from_db()
    # the fee went to the house's sub-account table id mod 8, on that shard's chain
    shard = house_account(hand=hand)
    assert (shard.shard, tx.chain) == (hand.table_id % 8, hand.table_id % 8)
    assert shard.balance == hand.quan["fees"] > 0
    assert settlement_accounts(hand)[HOUSE] == shard  # what the audit and the export read
    call_command("ledger_check")
    call_command("check_hands")


def test_a_hand_booked_to_the_house_before_the_split_is_audited_against_the_parent(
    players, win_hand
) -> None:
    from accounts.ledger import house_account, ledger_post, wallet_for
    from games.rules.quan import HOUSE
    from games.services.settlement_parties import settlement_accounts

    play_to_end(players, win_hand)
    hand = Hand.objects.get(pk=win_hand["hand"])
    # given a hand whose fee was booked to the one house row of before accounts 0017
    ledger_post(
        kind="hand_settlement",
        key=f"legacy:{hand.pk}",
        legs=[(wallet_for(players[0].user), -5), (house_account(), 5)],
        hand=hand,
    )
    # then its parties name that row, not the table's shard
    assert settlement_accounts(hand)[HOUSE] == house_account()
    assert settlement_accounts(hand, create=True)[HOUSE] == house_account(hand=hand)


def test_creating_needs_10_stakes_and_sitting_15(make_player) -> None:
    poor = make_player()
    r = poor.client.post("/api/v1/tables", {"name": "t", "stake": 5001}, format="json")
    body = assert_problem(r, 409, "insufficient_balance")
    assert (body["needed"], body["balance"]) == (50_010, WELCOME)
    table = poor.client.post("/api/v1/tables", {"name": "t", "stake": 4000}, format="json").json()
    other = make_player()
    r = other.client.post(f"/api/v1/tables/{table['id']}/join", {}, format="json")
    assert assert_problem(r, 409, "insufficient_balance")["needed"] == 60_000


def test_a_room_asks_for_its_minimum_balance(make_player) -> None:
    player = make_player()
    r = player.client.post(
        "/api/v1/tables", {"name": "t", "stake": 1, "room": "chieu-coi"}, format="json"
    )
    body = assert_problem(r, 409, "room_requirements_not_met")
    assert body["missing"] == [{"requirement": "balance", "needed": 150_000, "have": WELCOME}]


def test_a_player_under_15_stakes_is_unseated_before_the_deal(players, start_hand) -> None:
    # Given a table at stake 10 where one player has spent all its free Quan since sitting
    # down (only its hold, 15 × stake, is left: that one cannot be spent) and then loses,
    ids = start_hand(WIN_DECK)
    poor = players[3].user
    assert wallet_funds(poor).held == 150
    balance_adjust(
        user=poor,
        amount=-wallet_funds(poor).available,
        reason="t",
        staff=players[0].user,
        key="test:spent",
    )
    with pytest.raises(Conflict) as refused:  # the hold is not to be spent
        balance_adjust(user=poor, amount=-1, reason="t", staff=players[0].user, key="t:2")
    assert refused.value.extra["held"] == 150 and refused.value.extra["available"] == 0
    play_to_end(players, ids)
    # when everyone says ready again, the previous hand is settled first and the poor player
    # is unseated; the three others are dealt.
    hand_id = None
    for p in players:
        r = p.client.post(f"/api/v1/tables/{ids['table']}/ready", {}, format="json")
        hand_id = r.json().get("hand_id") or hand_id
    assert Hand.objects.get(pk=ids["hand"]).settled_at is not None
    assert not Seat.objects.filter(table_id=ids["table"], player=players[3].user).exists()
    assert hand_id is not None and Hand.objects.get(pk=hand_id).n_seats == 3
    assert wallet_funds(poor).held == 0  # its hold went with its seat
    call_command("ledger_check")


@pytest.mark.django_db(transaction=True)
def test_two_hands_settling_for_the_same_wallet_at_once_both_book(make_player) -> None:
    # Given one player who ended two hands at two tables, against different opponents,
    hero = make_player()
    hands = []
    for _ in range(2):
        others = [make_player() for _ in range(3)]
        ids = start_table([hero, *others], WIN_DECK)
        play_to_end([hero, *others], ids)
        hands.append(ids["hand"])
    # when both settlements run at the same moment in two threads,
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def settle(hand_id: int) -> None:
        try:
            barrier.wait()
            hand_settle(hand_id=hand_id)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=settle, args=(h,)) for h in hands]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    # both are booked, nobody is below zero, and the ledger reconciles.
    assert errors == []
    assert all(Hand.objects.get(pk=h).settled_at is not None for h in hands)
    call_command("ledger_check")


def test_the_deal_clock_settles_an_unbooked_hand_first(players, start_hand) -> None:
    ids = start_hand(WIN_DECK)
    play_to_end(players, ids)
    table = Table.objects.get(pk=ids["table"])
    assert table_deal_if_due(table_id=table.pk) is None
    assert Hand.objects.get(pk=ids["hand"]).settled_at is None  # nobody is ready yet


def pot_of(table_id: int) -> int:
    return LedgerAccount.objects.get(kind="pot", table_id=table_id).balance


def test_ga_gop_pot_refunds_a_leaver_and_charges_a_newcomer(players, make_player) -> None:
    # Given a gà góp table (stake 10) whose first hand was a hòa: each seat paid 1 point in.
    ids = start_table(
        players, HOA_DECK, ruleset={"preset": "chan_van_van", "overrides": {"ga_gop": True}}
    )
    play_to_end(players, ids)
    hand_settle(hand_id=ids["hand"])
    shares = dict(PotShare.objects.filter(table_id=ids["table"]).values_list("user_id", "amount"))
    assert pot_of(ids["table"]) == sum(shares.values()) > 0
    assert set(shares) == {p.user.pk for p in players}
    # When one player stands up between hands, its share comes back to it,
    before = wallet_balance(players[3].user)
    leaving_share = shares[players[3].user.pk]
    r = players[3].client.post(f"/api/v1/tables/{ids['table']}/leave", {}, format="json")
    assert r.status_code == 200
    assert wallet_balance(players[3].user) == before + leaving_share
    assert pot_of(ids["table"]) == sum(shares.values()) - leaving_share
    # and a newcomer pays in as much as the smallest share of those seated.
    newcomer = make_player()
    paid_before = wallet_balance(newcomer.user)
    r = newcomer.client.post(f"/api/v1/tables/{ids['table']}/join", {}, format="json")
    assert r.status_code == 200, r.content
    smallest = min(v for k, v in shares.items() if k != players[3].user.pk)
    assert wallet_balance(newcomer.user) == paid_before - smallest
    assert r.json()["pot"] == pot_of(ids["table"])
    call_command("ledger_check")


def test_a_hand_that_takes_the_pot_empties_it_and_the_shares() -> None:
    from games.rules.quan import settle_quan

    stakes = [{"from": s, "to": "pot", "points": 1, "reason": "ga_gop_stake"} for s in range(2)]
    booked = settle_quan(
        transfers=stakes, n_seats=2, stake=5, balances=[100, 100], pot_balance=30, takes_pot=1
    )
    assert booked.pot_out == 40 and [s.to_pot for s in booked.seats] == [5, 5]
