"""The verifier holds a hand's settlement to the seats its deal bound (games.rules.seating): the
deal event's ``payload.seats`` names each seat's player and account inside the hash chain, and
the ledger's entries must go to those accounts."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from games.rules.seating import BindingError, BoundSeat, booking_unbound, seats_bound
from games.rules.verify import Discrepancy, log_break, verify_export
from tests.rules.test_verify import SEED, chained, export_of, rehashed, stored_log

ACCOUNT = 100  # seat s's wallet is account ACCOUNT + s; the pot and the house keep theirs


def bound(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as the server exports a hand dealt with the binding: the deal binds seat s to
    player 10 + s and account ACCOUNT + s, the players list them, each seat's entry is on its
    account."""
    doc["events"][0]["payload"] = {
        **doc["events"][0]["payload"],
        "seats": [{"position": s, "player": 10 + s, "account": ACCOUNT + s} for s in range(4)],
    }
    for player in doc["players"]:
        player.update(user_id=10 + player["seat"], account=ACCOUNT + player["seat"])
    for entry in doc["ledger"]["entries"]:
        if isinstance(entry["party"], int):
            entry["account"] = ACCOUNT + entry["party"]
    return doc


@pytest.fixture(scope="module")
def clean() -> dict[str, Any]:
    return chained(bound(export_of(SEED)))


@pytest.fixture
def doc(clean: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(clean)


def winner_entry(doc: dict[str, Any]) -> dict[str, Any]:
    return next(
        e for e in doc["ledger"]["entries"] if isinstance(e["party"], int) and e["amount"] > 0
    )


def test_an_export_whose_deal_binds_its_seats_verifies(doc: dict[str, Any]) -> None:
    assert verify_export(doc) is None


def test_an_edited_binding_breaks_the_chain_at_the_deal_and_a_rehashed_one_the_booking(
    doc: dict[str, Any],
) -> None:
    # the winner's seat bound to another account (say, an outsider's) after the fact
    entry = winner_entry(doc)
    seat, amount = entry["party"], entry["amount"]
    doc["events"][0]["payload"]["seats"][seat]["account"] = 999
    doc["players"][seat]["account"] = 999
    assert verify_export(doc) == Discrepancy(0, "its hash is not the SHA-256 of its content")
    assert log_break(**stored_log(doc)) == Discrepancy(
        0, "its hash is not the SHA-256 of its content"
    )
    # with the chain recomputed over the edit, the booking no longer goes where the deal says
    assert verify_export(rehashed(doc)) == Discrepancy(
        doc["events"][-1]["seq"],
        f"seat {seat}'s {amount:+} is booked to account {ACCOUNT + seat}, its deal bound "
        "account 999",
    )


def test_a_booking_to_another_account_than_the_bound_one_is_found(doc: dict[str, Any]) -> None:
    entry = winner_entry(doc)
    seat, amount = entry["party"], entry["amount"]
    # the winner's entry moved to an outsider's account, still labelled as its seat,
    entry["account"] = 999
    assert verify_export(doc) == Discrepancy(
        doc["events"][-1]["seq"],
        f"seat {seat}'s {amount:+} is booked to account 999, its deal bound account "
        f"{ACCOUNT + seat}",
    )
    # and labelled as no party: the outsider is no seat the deal bound.
    entry["party"] = None
    assert verify_export(doc) == Discrepancy(
        doc["events"][-1]["seq"],
        f"account 999 is booked {amount:+}, but the deal bound no seat to it",
    )


def test_a_bound_account_booked_as_the_house_is_found(doc: dict[str, Any]) -> None:
    house = next(e for e in doc["ledger"]["entries"] if e["party"] == "house")
    house["account"] = ACCOUNT + 1
    found = verify_export(doc)
    assert found is not None and "bound to seat 1 at the deal" in found.reason


def test_the_players_listed_are_the_ones_the_deal_bound(doc: dict[str, Any]) -> None:
    doc["players"][2]["user_id"] = 77
    assert verify_export(doc) == Discrepancy(
        0, "the players listed are not the ones the deal bound (seat 2)"
    )


def test_a_malformed_binding_is_the_deal_even_with_its_chain_recomputed(
    doc: dict[str, Any],
) -> None:
    del doc["events"][0]["payload"]["seats"][3]
    doc = rehashed(doc)
    assert verify_export(doc) == Discrepancy(0, "the deal binds 3 seats, the hand has 4")
    assert log_break(**stored_log(doc)) == Discrepancy(0, "the deal binds 3 seats, the hand has 4")


def test_seats_bound_reads_the_binding_or_none_for_deals_before_it() -> None:
    assert seats_bound({"deck_hash": "ab"}, 2) is None
    assert seats_bound(None, 2) is None
    payload = {
        "seats": [
            {"position": 0, "player": 5, "account": 9},
            {"position": 1, "player": 6, "account": None},
        ]
    }
    assert seats_bound(payload, 2) == (BoundSeat(0, 5, 9), BoundSeat(1, 6, None))
    for seats, why in (
        ([{"position": 1, "player": 5, "account": 9}] * 2, "out of play order"),
        (
            [
                {"position": 0, "player": True, "account": 9},
                {"position": 1, "player": 6, "account": 8},
            ],
            "no player",
        ),
        (
            [
                {"position": 0, "player": 5, "account": 9},
                {"position": 1, "player": 6, "account": 9},
            ],
            "two seats",
        ),
        ("everyone", "no list of"),
    ):
        with pytest.raises(BindingError, match=why):
            seats_bound({"seats": seats}, 2)


def test_booking_unbound_accepts_the_pot_and_the_house() -> None:
    seats = (BoundSeat(0, 5, 9), BoundSeat(1, 6, 8))
    entries = [
        {"account": 9, "party": 0, "amount": -10},
        {"account": 8, "party": 1, "amount": 9},
        {"account": 1, "party": "house", "amount": 1},
    ]
    assert booking_unbound(seats, entries) is None
    entries[1]["party"] = 7
    assert (
        booking_unbound(seats, entries)
        == "seat 7's +9 is booked to account 8, its deal bound account None"
    )
