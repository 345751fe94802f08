"""``GET /api/v1/hands/{id}/export``: participants once the hand has ended, auditors any time;
the document verifies with the offline verifier, booked Quan and ledger entries included."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from games.models import Hand
from games.rules.verify import FIXED_SHUFFLE, SHUFFLE_ALGORITHM, verify_export
from games.services.settlement import hand_settle
from tests.games.decks import WIN_DECK, WIN_MOVES, WIN_SEAT
from tests.games.test_games_hands_api import assert_problem, make_auditor, play, play_to_end
from tests.games.test_games_schema import Checker

pytestmark = pytest.mark.django_db

EXPORT = "/api/v1/hands/{hand_id}/export"


def export_url(hand_id: int) -> str:
    return EXPORT.format(hand_id=hand_id)


@pytest.fixture
def check() -> Checker:
    return Checker(APIClient().get("/api/schema/?format=json").json())


def test_participants_export_after_the_end_and_auditors_any_time(
    make_player, players, win_hand, check
) -> None:
    url = export_url(win_hand["hand"])
    play(players, win_hand, 3)
    # While the hand is played: participants and strangers are refused and learn nothing.
    r = players[0].client.get(url)
    assert_problem(r, 403, "hand_not_ended")
    check(r, EXPORT, "get")
    assert Hand.objects.get(pk=win_hand["hand"]).seed.encode() not in r.content
    stranger = make_player()
    assert check(stranger.client.get(url), EXPORT, "get")["code"] == "not_a_participant"
    # An auditor reads it at once; it does not verify yet: the hand has not ended.
    auditor = make_auditor(make_player)
    live = check(auditor.client.get(url), EXPORT, "get")
    assert live["status"] == "playing" and live["result"] is None and live["ledger"] is None
    assert [e["seq"] for e in live["events"]] == [0, 1, 2, 3]
    assert verify_export(live).reason == "the hand has not ended after its last event"
    # After the end every participant may export it, and it verifies before and after booking.
    play_to_end(players, win_hand)
    doc = check(players[3].client.get(url), EXPORT, "get")
    assert doc["status"] == "ended" and doc["quan"] is None and doc["ledger"] is None
    assert verify_export(doc) is None
    hand_settle(hand_id=win_hand["hand"])
    doc = check(players[1].client.get(url), EXPORT, "get")
    assert verify_export(doc) is None
    assert_problem(stranger.client.get(url), 403, "not_a_participant")
    assert_problem(players[0].client.get(export_url(999_999)), 404, "not_found")


def test_the_export_holds_the_whole_hand_and_its_books(players, win_hand) -> None:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    doc = players[0].client.get(export_url(win_hand["hand"])).json()
    hand = Hand.objects.get(pk=win_hand["hand"])
    assert (doc["format"], doc["version"], doc["hand_id"]) == ("chan-hand-export", 1, hand.pk)
    assert doc["table"]["id"] == win_hand["table"] and doc["room"]["slug"] == "nen-dat"
    assert doc["room"]["fees"] == {"declared": 5, "auto": 10} and doc["stake"] == 10
    assert [p["username"] for p in doc["players"]] == [p.user.username for p in players]
    assert doc["config"]["seats"] == 4 and doc["config"]["mode"] == "basic"
    assert (doc["seed"], doc["seed_hash"]) == (hand.seed, hand.seed_hash)
    # a fixed-deck test table has no shuffle: the deck itself is in the document
    assert doc["shuffle"] == FIXED_SHUFFLE and doc["deck"] == WIN_DECK
    assert len(doc["events"]) == WIN_MOVES + 1
    declare = doc["events"][-1]
    assert (declare["type"], declare["seat"], declare["system"]) == ("declare", WIN_SEAT, False)
    assert declare["created_at"].endswith("Z")
    assert doc["result"]["declaration"]["verdict"] == "dung"
    assert doc["quan"] == hand.quan
    legs = {str(e["party"]): e["amount"] for e in doc["ledger"]["entries"]}
    assert legs[str(WIN_SEAT)] > 0 and legs["house"] == hand.quan["fees"]
    assert sum(legs.values()) == 0


def test_a_shuffled_hand_with_a_pot_verifies(players, start_hand) -> None:
    # Given a table dealing from secret seeds, with gà góp (the pot is a party of the books)
    ids = start_hand(ruleset={"preset": "thapthanh", "overrides": {"ga_gop": True}})
    play_to_end(players, ids)
    hand_settle(hand_id=ids["hand"])
    doc = players[2].client.get(export_url(ids["hand"])).json()
    assert doc["shuffle"] == SHUFFLE_ALGORITHM and "deck" not in doc
    assert any(e["party"] == "pot" for e in doc["ledger"]["entries"])
    assert verify_export(doc) is None


def test_a_tampered_export_does_not_verify(players, win_hand) -> None:
    play_to_end(players, win_hand)
    hand_settle(hand_id=win_hand["hand"])
    doc: dict[str, Any] = players[0].client.get(export_url(win_hand["hand"])).json()
    doc["ledger"]["entries"][0]["amount"] += 1
    found = verify_export(doc)
    assert found is not None and found.seq == WIN_MOVES
    assert found.reason.startswith("the ledger entries")
