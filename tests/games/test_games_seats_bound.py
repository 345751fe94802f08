"""Who sits where is part of the hand's record (games.rules.seating): the deal binds each seat to
its player and wallet inside the log's hash chain; the settlement, the checkers and the export
name a seat's account from that binding, never from a seat row changed since the deal."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction

from accounts.ledger import wallet_for
from accounts.ledger_selectors import wallet_balance
from accounts.models import LedgerEntry
from games.audit import check_hand_settlements
from games.export import hand_export
from games.models import Hand, HandEvent
from games.rules.chain import event_hash
from games.rules.verify import verify_export
from games.services.quan_booking import hand_settle, settlement_key
from games.services.settlement_parties import settlement_accounts
from tests.games.tampering import as_replicating_owner
from tests.games.test_games_hands_api import play_to_end

pytestmark = pytest.mark.django_db

WELCOME = 50_000


def deal_payload(hand_id: int) -> dict[str, Any]:
    return HandEvent.objects.get(hand_id=hand_id, seq=0).payload


def winner_of(hand: Hand) -> int:
    return hand.result["outcome"]["seat"]


def seat_row_moved(hand: Hand, position: int, user_id: int) -> None:
    """The issue's attack: ``chan_app`` points a seat row at another user between the hand's end
    and its booking. Where the database refuses that statement outright, the owner makes the
    same change with the triggers off: what is tested is that the booking follows the record."""
    statement = "UPDATE games_handseat SET user_id = %s WHERE hand_id = %s AND position = %s"
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, [user_id, hand.pk, position])
    except DatabaseError:
        as_replicating_owner(statement, [user_id, hand.pk, position])


def test_the_deal_binds_each_seat_to_its_player_and_wallet_in_play_order(players, win_hand) -> None:
    hand = Hand.objects.get(pk=win_hand["hand"])
    seats = hand.seat_list()
    binding = deal_payload(hand.pk)["seats"]
    assert binding == [
        {"position": s.position, "player": s.user_id, "account": wallet_for(s.user).pk}
        for s in seats
    ]
    # and the export lists them with its players
    listed = [(p["seat"], p["user_id"], p["account"]) for p in hand_export(hand)["players"]]
    assert listed == [(b["position"], b["player"], b["account"]) for b in binding]


def test_a_seat_row_moved_to_an_outsider_before_the_booking_still_pays_the_bound_player(
    players, win_hand, make_player
) -> None:
    # Given the scripted hand played to its win, not yet booked,
    play_to_end(players, win_hand)
    hand = Hand.objects.get(pk=win_hand["hand"])
    winner = hand.seat_list()[winner_of(hand)].user
    outsider = make_player()
    # when the winner's seat row is pointed at an outsider before the booking runs,
    seat_row_moved(hand, winner_of(hand), outsider.user.pk)
    hand_settle(hand_id=hand.pk)
    hand.refresh_from_db()
    # the settlement pays the player the deal bound, and the outsider nothing.
    net = hand.quan["seats"][winner_of(hand)]["net"]
    assert net > 0
    assert wallet_balance(winner) == WELCOME + net
    assert wallet_balance(outsider.user) == WELCOME
    entries = LedgerEntry.objects.filter(transaction__idempotency_key=settlement_key(hand.pk))
    assert wallet_for(outsider.user).pk not in {e.account_id for e in entries}
    # The changed row itself is reported where the deal bound another player.
    details = [p.detail for p in check_hand_settlements()]
    assert (
        f"hand {hand.pk}: discrepancy at seq 0: seat {winner_of(hand)}'s row names user "
        f"{outsider.user.pk}, the deal bound user {winner.pk}"
    ) in details


def test_settlement_accounts_are_the_bound_wallets_when_the_rows_say_otherwise(
    players, win_hand, make_player
) -> None:
    play_to_end(players, win_hand)
    hand = Hand.objects.get(pk=win_hand["hand"])
    bound = deal_payload(hand.pk)["seats"]
    outsider = make_player()
    # every seat row pointed at someone else (the owner, triggers off)
    as_replicating_owner(
        "UPDATE games_handseat SET user_id = %s WHERE hand_id = %s AND position = %s",
        [outsider.user.pk, hand.pk, 2],
    )
    fresh = Hand.objects.prefetch_related("hand_seats__user").get(pk=hand.pk)
    assert fresh.seat_list()[2].user_id == outsider.user.pk  # the row says the outsider
    for create in (False, True):
        accounts = settlement_accounts(fresh, create=create)
        assert [accounts[s["position"]].pk for s in bound] == [s["account"] for s in bound]


def booked_to_outsider(players: list[Any], win_hand: dict[str, Any], outsider: Any) -> Hand:
    """The hand booked, then its winner's settlement entry moved to the outsider's wallet by the
    database owner (triggers off): a booking to an account the deal did not bind."""
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    hand = Hand.objects.get(pk=win_hand["hand"])
    winner = hand.seat_list()[winner_of(hand)].user
    as_replicating_owner(
        "UPDATE accounts_ledgerentry SET account_id = %s WHERE account_id = %s AND"
        " transaction_id IN (SELECT id FROM accounts_ledgertransaction WHERE idempotency_key = %s)",
        [wallet_for(outsider).pk, wallet_for(winner).pk, settlement_key(hand.pk)],
    )
    return hand


def test_the_checkers_report_a_hand_booked_to_an_account_its_deal_did_not_bind(
    players, win_hand, make_player
) -> None:
    outsider = make_player().user
    hand = booked_to_outsider(players, win_hand, outsider)
    settled = HandEvent.objects.get(hand_id=hand.pk, type="settled").seq
    net = hand.quan["seats"][winner_of(hand)]["net"]
    why = (
        f"discrepancy at seq {settled}: account {wallet_for(outsider).pk} is booked {net:+}, "
        "but the deal bound no seat to it"
    )
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("check_hands", hand=[hand.pk], stderr=err)
    assert err.getvalue().splitlines() == [f"hand {hand.pk}: {why}"]
    assert f"hand {hand.pk}: {why}" in [p.detail for p in check_hand_settlements()]
    err = StringIO()
    with pytest.raises(CommandError):
        call_command("audit_hands", hand=[hand.pk], stderr=err)
    assert f"hand {hand.pk}: {why}" in err.getvalue().splitlines()
    # and the export, which names the outsider's entry no party, does not verify there.
    found = verify_export(json.loads(json.dumps(hand_export(hand))))
    assert found is not None and str(found) == why


def unbind(hand: Hand) -> None:
    """The hand as dealt before the binding (and before the record key, which came with it):
    its deal's payload without ``seats``, the chain recomputed from the deal, no MACs (the
    owner, triggers off)."""
    fields = ("seq", "type", "actor_seat", "system", "bot", "payload", "effects")
    events = list(HandEvent.objects.of_hand(hand).order_by("seq").values(*fields))
    events[0]["payload"] = {k: v for k, v in events[0]["payload"].items() if k != "seats"}
    as_replicating_owner(
        "UPDATE games_handevent SET payload = %s::jsonb WHERE hand_id = %s AND seq = 0",
        [json.dumps(events[0]["payload"]), hand.pk],
    )
    prev = hand.seed_hash
    for event in events:
        digest = event_hash(hand=hand.pk, **event, prev=prev)
        as_replicating_owner(
            "UPDATE games_handevent SET prev_hash = %s, hash = %s, mac = '', mac_key = ''"
            " WHERE hand_id = %s AND seq = %s",
            [prev, digest, hand.pk, event["seq"]],
        )
        prev = digest


def test_a_hand_dealt_before_the_binding_settles_from_its_rows_and_the_checkers_say_so(
    players, win_hand
) -> None:
    play_to_end(players, win_hand)
    hand = Hand.objects.get(pk=win_hand["hand"])
    unbind(hand)
    winner = hand.seat_list()[winner_of(hand)].user
    hand_settle(hand_id=hand.pk)
    hand.refresh_from_db()
    assert wallet_balance(winner) == WELCOME + hand.quan["seats"][winner_of(hand)]["net"]
    out = StringIO()
    call_command("check_hands", hand=[hand.pk], stdout=out)
    assert "1 of them dealt before the deal bound its seats" in out.getvalue()
    out = StringIO()
    call_command("audit_hands", hand=[hand.pk], stdout=out)
    assert "1 of them dealt before the deal bound its seats" in out.getvalue()
    call_command("ledger_check")
